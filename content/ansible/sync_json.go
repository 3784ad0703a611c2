package ansible

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// A Galaxy's answers are read token by token from the staged file, so that memory holds
// at most one small value at a time whatever the upstream sends: lists are walked
// element by element, small values are decoded within a bound, and large ones (a
// version's files, its manifest, a docs blob) are skipped within theirs and kept as a
// span of the file, read when the unit is stored.

// errValueTooLarge is the error of a value above its bound.
var errValueTooLarge = errors.New("value too large")

// walker reads one JSON document.
type walker struct {
	dec  *json.Decoder
	r    *boundedReader
	file *os.File // what spans point into
	base int64    // where the document starts in file
}

// boundedReader fails reads past end: a value's bound while it is decoded.
type boundedReader struct {
	r        io.Reader
	pos, end int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.pos >= b.end {
		return 0, errValueTooLarge
	}
	if int64(len(p)) > b.end-b.pos {
		p = p[:b.end-b.pos]
	}
	n, err := b.r.Read(p)
	b.pos += int64(n)
	return n, err
}

// spanWalker reads the value of a span.
func spanWalker(s span) *walker {
	var b [64]byte
	for s.n > 0 {
		k, _ := s.f.ReadAt(b[:min(int64(len(b)), s.n)], s.off)
		lead := len(b[:k]) - len(bytes.TrimLeft(b[:k], " \t\r\n,:"))
		s.off, s.n = s.off+int64(lead), s.n-int64(lead)
		if lead < k || k == 0 {
			break
		}
	}
	return newWalker(s.f, s.off, s.n)
}

// newWalker reads the document at [off, off+n) of f.
func newWalker(f *os.File, off, n int64) *walker {
	br := &boundedReader{r: io.NewSectionReader(f, off, n), end: 1<<63 - 1}
	return &walker{dec: json.NewDecoder(br), r: br, file: f, base: off}
}

// within runs fn with reads bounded to limit bytes past the current position.
func (w *walker) within(limit int64, fn func() error) error {
	w.r.end = w.dec.InputOffset() + limit
	err := fn()
	w.r.end = 1<<63 - 1
	if errors.Is(err, errValueTooLarge) {
		return fmt.Errorf("a value is larger than %d bytes", limit)
	}
	return err
}

// decode reads the next value into v, within limit bytes.
func (w *walker) decode(v any, limit int64) error {
	return w.within(limit, func() error { return w.dec.Decode(v) })
}

// object reads an object, calling fn for each member with its key; fn must read the
// value (decode, skip, object or array). A null is an object without members.
func (w *walker) object(fn func(key string) error) error {
	return w.compound('{', '}', func() error {
		var tok json.Token
		err := w.within(maxSmallValue, func() (err error) { tok, err = w.dec.Token(); return err })
		if err != nil {
			return err
		}
		key, _ := tok.(string) // the decoder allows only strings here
		return fn(key)
	})
}

// array reads an array, calling fn for each element, which fn must read. A null is an
// empty array.
func (w *walker) array(fn func() error) error {
	return w.compound('[', ']', fn)
}

func (w *walker) compound(open, closing json.Delim, fn func() error) error {
	var tok json.Token
	err := w.within(maxSmallValue, func() (err error) { tok, err = w.dec.Token(); return err })
	if err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if tok != open {
		return fmt.Errorf("expected %q, found %v", open, tok)
	}
	for w.dec.More() {
		if err := fn(); err != nil {
			return err
		}
	}
	return w.within(maxSmallValue, func() (err error) { tok, err = w.dec.Token(); return err })
}

// skip reads past the next value, which must end within limit bytes, and returns where
// it is in the file.
func (w *walker) skip(limit int64) (span, error) {
	start := w.dec.InputOffset()
	err := w.within(limit, func() error {
		depth := 0
		for {
			tok, err := w.dec.Token()
			if err != nil {
				return err
			}
			switch tok {
			case json.Delim('{'), json.Delim('['):
				depth++
			case json.Delim('}'), json.Delim(']'):
				depth--
			}
			if depth == 0 {
				return nil
			}
		}
	})
	end := w.dec.InputOffset()
	return span{f: w.file, off: w.base + start, n: end - start}, err
}

// span is a value's bytes in a staged file (with the separator before it).
type span struct {
	f      *os.File
	off, n int64
}

// read returns the value.
func (s span) read() ([]byte, error) {
	if s.f == nil {
		return nil, nil
	}
	b := make([]byte, s.n)
	if _, err := s.f.ReadAt(b, s.off); err != nil {
		return nil, fmt.Errorf("read a staged value: %w", err)
	}
	return bytes.TrimLeft(b, " \t\r\n,:"), nil
}

// null reports whether the span holds JSON null (or nothing).
func (s span) null() (bool, error) {
	b, err := s.read()
	return len(b) == 0 || string(b) == "null", err
}
