package modulemd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxDocumentSize is the largest document accepted, in bytes of YAML text. Real
// module documents are a few KiB; a whole Fedora modules.yaml is a few MiB.
const MaxDocumentSize = 64 << 20

// Document is one decoded document of a modules.yaml; exactly one of Module,
// Defaults and Obsolete is set, as Type says.
type Document struct {
	Type     string // "modulemd", "modulemd-defaults" or "modulemd-obsoletes"
	Line     int    // line of the file where the document starts
	Module   *Modulemd
	Defaults *ModulemdDefaults
	Obsolete *ModulemdObsolete
}

// Skipped is a document of a type this package does not store (modulemd-translations,
// modulemd-packager, ...), left out the way Pulp leaves it out.
type Skipped struct {
	Line int    // line of the file where the document starts
	Type string // its "document:" value
}

// File is everything a modules.yaml holds, in file order per type.
type File struct {
	Modules   []Modulemd
	Defaults  []ModulemdDefaults
	Obsoletes []ModulemdObsolete
	Skipped   []Skipped
}

// Parse reads a whole modules.yaml (already decompressed); name is used in errors.
// It stops at the first invalid document.
func Parse(r io.Reader, name string) (*File, error) {
	d := NewDecoder(r, name)
	f := &File{}
	for {
		doc, err := d.Next()
		if err == io.EOF {
			f.Skipped = d.Skipped()
			return f, nil
		}
		if err != nil {
			return nil, err
		}
		switch {
		case doc.Module != nil:
			f.Modules = append(f.Modules, *doc.Module)
		case doc.Defaults != nil:
			f.Defaults = append(f.Defaults, *doc.Defaults)
		case doc.Obsolete != nil:
			f.Obsoletes = append(f.Obsoletes, *doc.Obsolete)
		}
	}
}

// Decoder reads the documents of a modules.yaml one at a time, holding at most one
// document's text in memory.
type Decoder struct {
	r       *bufio.Reader
	name    string
	max     int
	line    int   // lines read so far
	pending int   // line of a "---" already read that starts the next document
	err     error // sticky: the stream cannot be resynchronised after it
	buf     []byte
	skipped []Skipped
}

// NewDecoder returns a Decoder reading r; name (the file's name) prefixes errors.
func NewDecoder(r io.Reader, name string) *Decoder {
	return &Decoder{r: bufio.NewReaderSize(r, 64<<10), name: name, max: MaxDocumentSize}
}

// Skipped lists the documents Next has skipped so far.
func (d *Decoder) Skipped() []Skipped { return d.skipped }

// Next returns the next document, or io.EOF after the last. An invalid document
// yields an *Error and Next may be called again for the following one; a read error,
// an oversized document or a malformed marker line ends the stream (every later call
// returns the same error).
func (d *Decoder) Next() (Document, error) {
	for {
		body, start, first, err := d.nextText()
		if err != nil {
			return Document{}, err
		}
		snippet, lead := frame(body)
		if snippet == "" {
			continue // only blank lines between two markers
		}
		doc, err := parseSnippet(d.name, snippet, first+lead-2)
		switch {
		case errors.Is(err, errEmpty):
			continue // only comments
		case err != nil:
			return Document{}, err
		case doc.Module == nil && doc.Defaults == nil && doc.Obsolete == nil:
			d.skipped = append(d.skipped, Skipped{Line: start, Type: doc.Type})
			continue
		}
		doc.Line = start
		return doc, nil
	}
}

// ParseSnippet decodes one document (a stored snippet, or one sent to the API). Its
// Snippet is the text re-framed, so it equals snippet when snippet is already framed
// "---\n...\n...". A document of a type this package does not store is an error.
func ParseSnippet(name, snippet string) (Document, error) {
	d := NewDecoder(bytes.NewReader([]byte(snippet)), name)
	doc, err := d.Next()
	if err == io.EOF {
		if len(d.skipped) > 0 {
			s := d.skipped[0]
			return Document{}, &Error{File: name, Line: s.Line, Field: "document", Kind: ErrUnsupported,
				Msg: fmt.Sprintf("%q documents are not stored", s.Type)}
		}
		return Document{}, &Error{File: name, Kind: ErrInvalid, Msg: "no document"}
	}
	if err != nil {
		return Document{}, err
	}
	if second, err := d.Next(); err != io.EOF {
		line := d.line
		if err == nil {
			line = second.Line
		}
		return Document{}, &Error{File: name, Line: line, Kind: ErrInvalid, Msg: "more than one document"}
	}
	return doc, nil
}

// nextText returns the exact text of the next document (the lines between its
// markers), the line it starts on (its "---", or its first line when it has none) and
// the line its text starts on.
func (d *Decoder) nextText() (body []byte, start, first int, err error) {
	if d.err != nil {
		return nil, 0, 0, d.err
	}
	in := false
	if d.pending > 0 {
		in, start, first, d.pending = true, d.pending, d.pending+1, 0
	}
	for {
		line, err := d.readLine(len(body))
		if err == io.EOF {
			if in {
				return body, start, first, nil
			}
			return nil, 0, 0, io.EOF
		}
		if err != nil {
			d.err = err
			return nil, 0, 0, err
		}
		d.line++
		if d.line == 1 {
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
		}
		switch classify(line) {
		case startMarker:
			if in {
				d.pending = d.line
				return body, start, first, nil
			}
			in, start, first = true, d.line, d.line+1
			continue
		case endMarker:
			if in {
				return body, start, first, nil
			}
			continue // a stray end marker ends nothing
		case markerWithContent:
			d.err = &Error{File: d.name, Line: d.line, Kind: ErrSyntax,
				Msg: "content on a document marker line is not supported; put it on the next line"}
			return nil, 0, 0, d.err
		case ignorable:
			if !in {
				continue
			}
		case content:
			if !in {
				in, start, first = true, d.line, d.line
			}
		}
		body = append(body, line...)
	}
}

// readLine returns the next line with its newline, in a buffer reused by the next
// call; have is the size of the document so far, for the size bound.
func (d *Decoder) readLine(have int) ([]byte, error) {
	d.buf = d.buf[:0]
	for {
		chunk, err := d.r.ReadSlice('\n')
		d.buf = append(d.buf, chunk...)
		if have+len(d.buf) > d.max {
			return nil, &Error{File: d.name, Line: d.line + 1, Kind: ErrTooLarge,
				Msg: fmt.Sprintf("document is larger than %d bytes", d.max)}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(d.buf) > 0:
			return d.buf, nil
		case err != nil:
			if err != io.EOF {
				err = &Error{File: d.name, Line: d.line + 1, Kind: ErrSyntax, Msg: "read: " + err.Error(), Err: err}
			}
			return nil, err
		}
		return d.buf, nil
	}
}

type lineKind int

const (
	content lineKind = iota
	ignorable
	startMarker
	endMarker
	markerWithContent
)

// classify tells marker lines ("---", "...", optionally followed by a comment) from
// the rest. A marker only counts at column 0, where YAML forbids it inside content,
// so splitting on it cannot cut a block scalar in two.
func classify(line []byte) lineKind {
	t := bytes.TrimRight(line, " \t\r\n")
	for _, m := range []struct {
		text string
		kind lineKind
	}{{"---", startMarker}, {"...", endMarker}} {
		if !bytes.HasPrefix(t, []byte(m.text)) {
			continue
		}
		rest := t[3:]
		if len(rest) == 0 {
			return m.kind
		}
		if rest[0] != ' ' && rest[0] != '\t' {
			return content // "----" or "...x" is not a marker
		}
		if rest = bytes.TrimLeft(rest, " \t"); rest[0] == '#' {
			return m.kind
		}
		return markerWithContent
	}
	s := bytes.TrimLeft(t, " \t")
	if len(s) == 0 || s[0] == '#' || t[0] == '%' {
		return ignorable // blank, comment, or a directive (only valid before "---")
	}
	return content
}

// frame turns a document's text into its snippet: leading blank lines and trailing
// white space dropped (as Pulp does), then framed by "---" and "...". lead is the
// number of lines dropped. An empty text gives "".
func frame(body []byte) (snippet string, lead int) {
	i := 0
	for i < len(body) {
		j := bytes.IndexByte(body[i:], '\n')
		if j < 0 {
			j = len(body) - i
		}
		if len(bytes.TrimSpace(body[i:i+j])) > 0 {
			break
		}
		i += j + 1
		lead++
	}
	if i > len(body) {
		i = len(body)
	}
	rest := bytes.TrimRight(body[i:], " \t\r\n")
	if len(rest) == 0 {
		return "", lead
	}
	return "---\n" + string(rest) + "\n...", lead
}
