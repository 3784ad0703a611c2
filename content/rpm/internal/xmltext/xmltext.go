// Package xmltext holds what the rpm XML metadata parsers and writers share: a reader
// that refuses huge text runs before the decoder buffers them, latin-1 decoding, and
// escaping that keeps written XML valid.
package xmltext

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// ErrRun is what RunLimiter returns when a run of bytes without '<' is longer than
// its limit: no text node or tag can be that long.
var ErrRun = errors.New("run without markup too long")

// RunLimiter fails the read once more than max bytes pass without a '<', so a single
// huge text node is refused before the XML decoder buffers all of it.
type RunLimiter struct {
	R   io.Reader
	Max int
	run int
	Err error // the last error of R other than io.EOF
}

func (l *RunLimiter) Read(p []byte) (int, error) {
	n, err := l.R.Read(p)
	if err != nil && err != io.EOF {
		l.Err = err
	}
	if i := bytes.LastIndexByte(p[:n], '<'); i >= 0 {
		l.run = n - i - 1
	} else {
		l.run += n
	}
	if l.run > l.Max {
		return n, ErrRun
	}
	return n, err
}

// CharsetReader lets the decoder read documents that declare latin-1 or ASCII; UTF-8 it
// reads itself.
func CharsetReader(label string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "us-ascii", "ascii":
		return in, nil
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1":
		return &latin1Reader{r: in}, nil
	}
	return nil, fmt.Errorf("unsupported encoding %q", label)
}

type latin1Reader struct {
	r   io.Reader
	buf []byte
	out []byte
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	for len(l.out) == 0 {
		if cap(l.buf) == 0 {
			l.buf = make([]byte, 4096)
		}
		n, err := l.r.Read(l.buf)
		for _, b := range l.buf[:n] {
			l.out = utf8.AppendRune(l.out, rune(b))
		}
		if n == 0 && err != nil {
			return 0, err
		}
	}
	n := copy(p, l.out)
	l.out = l.out[n:]
	return n, nil
}

// AppendText appends s escaped for element content. \r is written as a character
// reference because a parser turns a literal one into \n.
func AppendText(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			b = append(b, "&amp;"...)
		case '<':
			b = append(b, "&lt;"...)
		case '>':
			b = append(b, "&gt;"...)
		case '\r':
			b = append(b, "&#13;"...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// AppendAttr appends s escaped for a double-quoted attribute value; tabs and line ends
// become references so that attribute-value normalisation leaves them alone.
func AppendAttr(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			b = append(b, "&amp;"...)
		case '<':
			b = append(b, "&lt;"...)
		case '>':
			b = append(b, "&gt;"...)
		case '"':
			b = append(b, "&quot;"...)
		case '\t':
			b = append(b, "&#9;"...)
		case '\n':
			b = append(b, "&#10;"...)
		case '\r':
			b = append(b, "&#13;"...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// CheckChars reports the first character of s that XML 1.0 cannot carry.
func CheckChars(s string) error {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return fmt.Errorf("invalid UTF-8 at byte %d", i)
			}
		}
		if !(r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF ||
			r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF) {
			return fmt.Errorf("character %U is not allowed in XML", r)
		}
	}
	return nil
}
