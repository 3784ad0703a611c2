package modulemd

import (
	"bufio"
	"io"
	"strings"
)

// Writer writes a modules.yaml from stored snippets, the way libmodulemd writes one:
// every document opens with "---" and closes with "...". Pulp writes modules first,
// then defaults, then obsoletes; the order is the caller's.
type Writer struct {
	w   *bufio.Writer
	err error
}

// NewWriter returns a Writer to w; call Close to flush.
func NewWriter(w io.Writer) *Writer { return &Writer{w: bufio.NewWriterSize(w, 64<<10)} }

// WriteSnippet writes one document. A snippet as this package makes it is written
// verbatim; one lacking its markers gets them.
func (w *Writer) WriteSnippet(snippet string) error {
	if w.err != nil {
		return w.err
	}
	s := strings.TrimRight(snippet, " \t\r\n")
	if !strings.HasPrefix(s, "---\n") && s != "---" {
		w.write("---\n")
	}
	w.write(s)
	if !strings.HasSuffix(s, "\n...") {
		w.write("\n...")
	}
	w.write("\n")
	return w.err
}

// Close flushes what is buffered; it does not close the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	w.err = w.w.Flush()
	return w.err
}

func (w *Writer) write(s string) {
	if w.err == nil {
		_, w.err = w.w.WriteString(s)
	}
}
