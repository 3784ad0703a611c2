package rpmfile

import "unicode/utf8"

// text makes a header string valid UTF-8 the way createrepo_c's XML writer does: a string
// that is already valid UTF-8 is kept; any other is read as latin-1, dropping the C0
// control characters but tab, LF and CR, and the bytes 0x80-0xBF (C1 controls, in practice
// misencoded cp1252), and encoding 0xC0-0xFF as two UTF-8 bytes.
func text(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	out := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r':
		case c < 0x80:
			out = append(out, c)
		case c < 0xc0:
		default:
			out = utf8.AppendRune(out, rune(c))
		}
	}
	return string(out)
}
