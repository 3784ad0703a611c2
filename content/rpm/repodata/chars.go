package repodata

// XML character rules: what the scanner accepts and decodes, what the writers escape.

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode/utf8"
)

const (
	modeText = iota
	modeAttr
	modeCDATA
)

// Character classes for decode.
const (
	cPlain = iota
	cHigh  // first byte of a multi-byte UTF-8 sequence (or an invalid byte)
	cAmp   // '&'
	cCR    // '\r'
	cCtl   // a control character XML 1.0 forbids
	cWS    // '\t' or '\n': kept in text, a space in attribute values
	cLT    // '<': forbidden in attribute values
)

// charClass holds each byte's class; nameStart and nameChar are 1 for bytes that may
// start or continue a name (any byte of a multi-byte character may).
var charClass, nameStart, nameChar [256]uint8

func init() {
	for c := 0x20; c < 0x80; c++ {
		escPlain[c] = c != '<' && c != '>' && c != '&' && c != '"'
	}
	for c := 0; c < 256; c++ {
		switch {
		case c >= utf8.RuneSelf:
			charClass[c] = cHigh
		case c == '&':
			charClass[c] = cAmp
		case c == '\r':
			charClass[c] = cCR
		case c == '\t' || c == '\n':
			charClass[c] = cWS
		case c < 0x20:
			charClass[c] = cCtl
		case c == '<':
			charClass[c] = cLT
		}
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':' || c >= utf8.RuneSelf
		if letter {
			nameStart[c] = 1
		}
		if letter || c >= '0' && c <= '9' || c == '-' || c == '.' {
			nameChar[c] = 1
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// isXMLChar reports whether r is a character XML 1.0 allows.
func isXMLChar(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD || r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

// decode checks raw (text, an attribute value or CDATA content starting at buffer
// position base) and returns its decoded form: raw itself when nothing changes, else a
// slice appended to t.scratch (copied true).
func (t *scanner) decode(raw []byte, mode int, base int) ([]byte, bool, error) {
	i, n := 0, len(raw)
	for i < n {
		c := raw[i]
		k := charClass[c]
		if k == cPlain || k == cWS && mode != modeAttr || mode == modeCDATA && (k == cAmp || k == cLT) {
			i++
			continue
		}
		if k == cHigh {
			size, err := t.checkRune(raw[i:], base+i)
			if err != nil {
				return nil, false, err
			}
			i += size
			continue
		}
		break
	}
	if i == n {
		return raw, false, nil
	}
	start := len(t.scratch)
	out := append(t.scratch, raw[:i]...)
	for i < n {
		c := raw[i]
		switch charClass[c] {
		case cPlain:
			j := i + 1
			for j < n && charClass[raw[j]] == cPlain {
				j++
			}
			out = append(out, raw[i:j]...)
			i = j
		case cHigh:
			size, err := t.checkRune(raw[i:], base+i)
			if err != nil {
				return nil, false, err
			}
			out = append(out, raw[i:i+size]...)
			i += size
		case cWS:
			if mode == modeAttr {
				c = ' '
			}
			out = append(out, c)
			i++
		case cCR:
			if i+1 < n && raw[i+1] == '\n' {
				i++
			}
			if mode == modeAttr {
				out = append(out, ' ')
			} else {
				out = append(out, '\n')
			}
			i++
		case cAmp:
			if mode == modeCDATA {
				out = append(out, c)
				i++
				continue
			}
			r, size, msg := parseEntity(raw[i:])
			if msg != "" {
				return nil, false, t.synErr(base+i, "%s", msg)
			}
			out = utf8.AppendRune(out, r)
			i += size
		case cLT:
			if mode != modeCDATA {
				return nil, false, t.synErr(base+i, "\"<\" in an attribute value")
			}
			out = append(out, c)
			i++
		default: // cCtl
			return nil, false, t.synErr(base+i, "character %U is not allowed in XML", rune(c))
		}
	}
	t.scratch = out
	return out[start:], true, nil
}

func (t *scanner) checkRune(b []byte, pos int) (int, error) {
	r, size := utf8.DecodeRune(b)
	if r == utf8.RuneError && size == 1 {
		return 0, t.synErr(pos, "invalid UTF-8")
	}
	if !isXMLChar(r) {
		return 0, t.synErr(pos, "character %U is not allowed in XML", r)
	}
	return size, nil
}

// parseEntity decodes the entity or character reference at the start of b ("&...;").
// It returns the character, the bytes consumed, and a message when it is invalid.
func parseEntity(b []byte) (rune, int, string) {
	j := bytes.IndexByte(b[:min(len(b), 32)], ';')
	if j < 0 {
		return 0, 0, "\"&\" not followed by an entity (write &amp;)"
	}
	ent := b[1:j]
	switch string(ent) {
	case "amp":
		return '&', j + 1, ""
	case "lt":
		return '<', j + 1, ""
	case "gt":
		return '>', j + 1, ""
	case "quot":
		return '"', j + 1, ""
	case "apos":
		return '\'', j + 1, ""
	}
	if len(ent) < 2 || ent[0] != '#' {
		return 0, 0, fmt.Sprintf("unknown entity &%s;", ent)
	}
	digits, base := ent[1:], rune(10)
	if digits[0] == 'x' {
		digits, base = digits[1:], 16
	}
	if len(digits) == 0 {
		return 0, 0, fmt.Sprintf("invalid character reference &%s;", ent)
	}
	var r rune
	for _, c := range digits {
		var d rune
		switch {
		case c >= '0' && c <= '9':
			d = rune(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			d = rune(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			d = rune(c-'A') + 10
		default:
			return 0, 0, fmt.Sprintf("invalid character reference &%s;", ent)
		}
		r = r*base + d
		if r > utf8.MaxRune {
			return 0, 0, fmt.Sprintf("invalid character reference &%s;", ent)
		}
	}
	if !isXMLChar(r) {
		return 0, 0, fmt.Sprintf("character reference &%s; is not an XML character", ent)
	}
	return r, j + 1, ""
}

// Escape modes.
const (
	escAttr = 1 << iota // an attribute value: also quote, tab, newline, CR
	escUTF8             // keep non-ASCII as UTF-8 (repomd.xml); else character references
)

// escPlain marks the bytes escape copies as they are.
var escPlain [256]bool

// escape appends s escaped as libxml2 (and so createrepo_c) does, dropping what XML 1.0
// cannot carry: control characters other than tab, newline and CR, U+FFFE and U+FFFF.
// Bytes that are not UTF-8 are taken as Latin-1 (as createrepo_c does for rpm headers
// in legacy encodings), except C1 controls (0x80-0x9F), which are dropped.
func escape(b []byte, s string, mode int) []byte {
	attr := mode&escAttr != 0
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if escPlain[c] {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		i++
		switch c {
		case '<':
			b = append(b, "&lt;"...)
		case '>':
			b = append(b, "&gt;"...)
		case '&':
			b = append(b, "&amp;"...)
		case '"':
			if attr {
				b = append(b, "&quot;"...)
			} else {
				b = append(b, c)
			}
		case '\n':
			if attr {
				b = append(b, "&#10;"...)
			} else {
				b = append(b, c)
			}
		case '\t':
			if attr {
				b = append(b, "&#9;"...)
			} else {
				b = append(b, c)
			}
		case '\r':
			if attr || mode&escUTF8 != 0 {
				b = append(b, "&#13;"...)
			} else {
				b = append(b, "&#xD;"...)
			}
		default:
			if c < 0x20 {
				break // not an XML character
			}
			r, size := utf8.DecodeRuneInString(s[i-1:])
			i += size - 1
			switch {
			case r == utf8.RuneError && size == 1:
				if c < 0xA0 {
					r = -1
				} else {
					r = rune(c)
				}
			case !isXMLChar(r):
				r = -1
			}
			switch {
			case r < 0:
			case mode&escUTF8 != 0:
				b = utf8.AppendRune(b, r)
			default:
				b = append(b, "&#x"...)
				b = strconv.AppendUint(b, uint64(r), 16)
				// libxml2 writes upper-case hex digits.
				for j := len(b) - 1; b[j] != 'x'; j-- {
					if b[j] >= 'a' {
						b[j] -= 'a' - 'A'
					}
				}
				b = append(b, ';')
			}
		}
		start = i
	}
	return append(b, s[start:]...)
}
