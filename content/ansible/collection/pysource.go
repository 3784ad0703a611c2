package collection

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// docVars are the module-level names ansible-doc reads from a plugin's source.
var docVars = map[string]bool{"DOCUMENTATION": true, "EXAMPLES": true, "RETURN": true}

// pyDocStrings finds the module-level assignments of string literals to DOCUMENTATION,
// EXAMPLES and RETURN in Python source, as ansible-doc's reader (an ast walk over the
// module body) sees them, without running Python: "NAME = <literal>" at column 0,
// chained targets ("A = B = '...'") and implicit concatenation ("'a' 'b'", also in
// parentheses) included; a later assignment replaces an earlier one. Values that are
// not plain string literals (f-strings, expressions, calls) are skipped.
func pyDocStrings(src string) map[string]string {
	s := &pyScanner{src: src}
	out := map[string]string{}
	for s.pos < len(s.src) {
		if targets, val, ok := s.assignment(); ok {
			for _, t := range targets {
				out[t] = val
			}
			continue
		}
		s.skipLogicalLine()
	}
	return out
}

type pyScanner struct {
	src string
	pos int
}

// assignment reads "NAME = NAME = ... = <string literals>" at the start of a logical
// line at column 0; on any other statement it restores the position and says no.
func (s *pyScanner) assignment() ([]string, string, bool) {
	start := s.pos
	var targets []string
	for {
		name := s.identifier()
		if name == "" {
			break
		}
		s.spaces()
		if !strings.HasPrefix(s.src[s.pos:], "=") || strings.HasPrefix(s.src[s.pos:], "==") {
			break
		}
		s.pos++
		s.spaces()
		targets = append(targets, name)
		mark := s.pos
		if val, ok := s.literalValue(); ok {
			var docs []string
			for _, t := range targets {
				if docVars[t] {
					docs = append(docs, t)
				}
			}
			return docs, val, true
		}
		s.pos = mark // maybe another target: A = B = '...'
	}
	s.pos = start
	return nil, "", false
}

func (s *pyScanner) identifier() string {
	i := s.pos
	for i < len(s.src) {
		c := s.src[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > s.pos && c >= '0' && c <= '9' {
			i++
			continue
		}
		break
	}
	name := s.src[s.pos:i]
	s.pos = i
	return name
}

// spaces skips blanks and backslash line continuations.
func (s *pyScanner) spaces() {
	for s.pos < len(s.src) {
		switch {
		case s.src[s.pos] == ' ' || s.src[s.pos] == '\t' || s.src[s.pos] == '\f':
			s.pos++
		case strings.HasPrefix(s.src[s.pos:], "\\\n"):
			s.pos += 2
		case strings.HasPrefix(s.src[s.pos:], "\\\r\n"):
			s.pos += 3
		default:
			return
		}
	}
}

// literalValue reads one or more adjacent string literals, optionally parenthesized,
// that make the whole rest of the statement.
func (s *pyScanner) literalValue() (string, bool) {
	paren := 0
	var b strings.Builder
	n := 0
	for {
		s.gap(paren > 0)
		if s.pos >= len(s.src) {
			break
		}
		c := s.src[s.pos]
		switch {
		case c == '(' && n == 0:
			paren++
			s.pos++
			continue
		case c == ')' && paren > 0:
			paren--
			s.pos++
			continue
		}
		v, ok := s.stringLiteral()
		if !ok {
			break
		}
		b.WriteString(v)
		n++
	}
	if n == 0 || paren != 0 {
		return "", false
	}
	// The statement must end here: newline, comment, semicolon or end of file.
	if s.pos < len(s.src) && !strings.ContainsRune("\r\n#;", rune(s.src[s.pos])) {
		return "", false
	}
	return b.String(), true
}

// gap skips what may stand between literals: blanks and continuations, and inside
// parentheses newlines and comments too.
func (s *pyScanner) gap(inParens bool) {
	for {
		s.spaces()
		if !inParens || s.pos >= len(s.src) {
			return
		}
		switch c := s.src[s.pos]; {
		case c == '\n' || c == '\r':
			s.pos++
		case c == '#':
			s.skipComment()
		default:
			return
		}
	}
}

func (s *pyScanner) skipComment() {
	if i := strings.IndexByte(s.src[s.pos:], '\n'); i >= 0 {
		s.pos += i
	} else {
		s.pos = len(s.src)
	}
}

// stringLiteral reads one string or bytes literal with its prefix and returns its
// value; f-strings and anything else are refused.
func (s *pyScanner) stringLiteral() (string, bool) {
	i := s.pos
	for i < len(s.src) && i-s.pos < 2 && strings.ContainsRune("rRbBuU", rune(s.src[i])) {
		i++
	}
	prefix := strings.ToLower(s.src[s.pos:i])
	if prefix != "" && prefix != "r" && prefix != "b" && prefix != "u" && prefix != "rb" && prefix != "br" {
		return "", false
	}
	if i >= len(s.src) || s.src[i] != '\'' && s.src[i] != '"' {
		return "", false
	}
	body, end, ok := stringBody(s.src, i)
	if !ok {
		return "", false
	}
	s.pos = end
	if strings.Contains(prefix, "r") {
		return body, true
	}
	return unescape(body, strings.Contains(prefix, "b")), true
}

// stringBody finds the literal starting with the quote at i: its raw body and the
// index after its closing quote. A backslash always escapes the next character (also in
// raw strings, where it stays in the value).
func stringBody(src string, i int) (string, int, bool) {
	q := src[i : i+1]
	if strings.HasPrefix(src[i:], q+q+q) {
		q = q + q + q
	}
	start := i + len(q)
	for j := start; j < len(src); j++ {
		switch {
		case src[j] == '\\':
			j++
		case len(q) == 1 && src[j] == '\n':
			return "", 0, false
		case strings.HasPrefix(src[j:], q):
			return src[start:j], j + len(q), true
		}
	}
	return "", 0, false
}

// unescape applies Python's escape sequences; \N{...} and unknown escapes stay as
// written. In bytes literals \u and \U are not escapes.
func unescape(s string, bytesLit bool) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 32)
			writeCode(&b, rune(n), bytesLit)
			i = j - 1
		case 'x', 'u', 'U':
			width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if bytesLit && e != 'x' || i+1+width > len(s) {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			n, err := strconv.ParseUint(s[i+1:i+1+width], 16, 32)
			if err != nil || n > utf8.MaxRune {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			writeCode(&b, rune(n), bytesLit)
			i += width
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String()
}

// writeCode writes an escaped code point: a byte in a bytes literal (YAML then reads
// the bytes as UTF-8, as PyYAML does), a character in a string.
func writeCode(b *strings.Builder, r rune, bytesLit bool) {
	if bytesLit {
		b.WriteByte(byte(r))
		return
	}
	b.WriteRune(r)
}

// skipLogicalLine moves past the rest of the current logical line: strings (which may
// span lines), comments, bracketed continuations and backslash continuations.
func (s *pyScanner) skipLogicalLine() {
	depth := 0
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case c == '#':
			s.skipComment()
		case c == '\'' || c == '"':
			if _, end, ok := stringBody(s.src, s.pos); ok {
				s.pos = end
			} else {
				s.pos++
			}
		case c == '\\' && s.pos+1 < len(s.src) && (s.src[s.pos+1] == '\n' || s.src[s.pos+1] == '\r'):
			s.pos += 2
		case c == '(' || c == '[' || c == '{':
			depth++
			s.pos++
		case (c == ')' || c == ']' || c == '}') && depth > 0:
			depth--
			s.pos++
		case c == '\n' && depth == 0:
			s.pos++
			return
		default:
			s.pos++
		}
	}
}
