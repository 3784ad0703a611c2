package file

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"pith/content"
)

// Entry is one line of a PULP_MANIFEST.
type Entry struct {
	RelativePath string
	Digest       string // sha256, lower-case hex
	Size         int64
	Line         int // 1-based line in the manifest; 0 when the entry was not parsed
}

// maxRecord bounds the bytes of one manifest record: a longest relative path, quoted,
// plus digest and size fits easily. It keeps an unterminated quote from pulling the rest
// of the file into memory.
const maxRecord = 2*content.MaxRelativePath + 1024

var errRecordTooLong = errors.New("record too long")

// ParseManifest streams a PULP_MANIFEST ("relative_path,sha256,size" per line, CSV
// quoting as Python's csv module writes it) and calls fn for each entry in file order.
// Blank lines and a leading UTF-8 byte order mark are skipped. The first bad line stops
// the parse with an error naming the line and what is wrong; an error from fn is
// returned as is. Memory stays bounded by the number of distinct paths.
func ParseManifest(r io.Reader, fn func(Entry) error) error {
	br := bufio.NewReader(r)
	if bom, err := br.Peek(3); err == nil && bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
	}
	src := &boundedReader{r: br, max: maxRecord}
	cr := csv.NewReader(src)
	cr.FieldsPerRecord = -1 // counted below, for a clearer message
	cr.ReuseRecord = true
	seen := map[string]int{}
	last := 0 // line of the last good record, for errors without a position
	for {
		src.n = 0
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if errors.Is(err, errRecordTooLong) {
			return fmt.Errorf("after line %d: more than %d bytes without a complete record (unterminated quote?)", last, maxRecord)
		}
		if pe, ok := errors.AsType[*csv.ParseError](err); ok {
			return fmt.Errorf("line %d: %w", pe.StartLine, pe.Err)
		}
		if err != nil {
			return fmt.Errorf("read manifest after line %d: %w", last, err)
		}
		line, _ := cr.FieldPos(0)
		if end, _ := cr.FieldPos(len(rec) - 1); end != line {
			return fmt.Errorf("line %d: a quoted field runs on to line %d", line, end)
		}
		last = line
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) != 3 {
			return fmt.Errorf("line %d: %d fields, want 3 (relative_path,sha256,size)", line, len(rec))
		}
		e, err := entry(rec, line)
		if err != nil {
			return err
		}
		if prev, dup := seen[e.RelativePath]; dup {
			return fmt.Errorf("line %d: %q is listed twice (first on line %d)", line, e.RelativePath, prev)
		}
		seen[e.RelativePath] = line
		if err := fn(e); err != nil {
			return err
		}
	}
}

// entry checks one three-field record.
func entry(rec []string, line int) (Entry, error) {
	e := Entry{RelativePath: rec[0], Digest: strings.ToLower(strings.TrimSpace(rec[1])), Line: line}
	if _, err := content.CleanRelativePath(e.RelativePath); err != nil {
		return Entry{}, fmt.Errorf("line %d: %w", line, err)
	}
	if !isSHA256(e.Digest) {
		return Entry{}, fmt.Errorf("line %d: %q: digest %q is not a sha256 (64 hex digits)", line, e.RelativePath, rec[1])
	}
	size, err := strconv.ParseInt(strings.TrimSpace(rec[2]), 10, 64)
	if err != nil || size < 0 {
		return Entry{}, fmt.Errorf("line %d: %q: size %q is not a non-negative integer", line, e.RelativePath, rec[2])
	}
	e.Size = size
	return e, nil
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// boundedReader fails once more than max bytes are read without the count being reset,
// which the parser does before each record. csv.Reader reads ahead at most one buffer,
// so the bound is approximate, and generous.
type boundedReader struct {
	r   io.Reader
	n   int
	max int
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.n > b.max {
		return 0, errRecordTooLong
	}
	n, err := b.r.Read(p)
	b.n += n
	return n, err
}

// WriteManifest writes entries in PULP_MANIFEST format, in the order given (sorting is
// the caller's job), quoting paths that need it. An entry that ParseManifest would
// reject is an error naming it, and then nothing is written.
func WriteManifest(w io.Writer, entries []Entry) error {
	for i, e := range entries {
		if _, err := content.CleanRelativePath(e.RelativePath); err != nil {
			return fmt.Errorf("manifest entry %d: %w", i, err)
		}
		if !isSHA256(e.Digest) {
			return fmt.Errorf("manifest entry %d: %q: digest %q is not a lower-case sha256", i, e.RelativePath, e.Digest)
		}
		if e.Size < 0 {
			return fmt.Errorf("manifest entry %d: %q: negative size %d", i, e.RelativePath, e.Size)
		}
	}
	cw := csv.NewWriter(w)
	for _, e := range entries {
		cw.Write([]string{e.RelativePath, e.Digest, strconv.FormatInt(e.Size, 10)}) // errors stick; read below
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	return nil
}
