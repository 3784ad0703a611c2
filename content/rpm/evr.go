package rpm

import "strings"

// vercmp compares two version (or release) strings the way rpm's rpmvercmp does:
// alternating runs of digits and letters compared piecewise (digits numerically, a
// digit run newer than a letter run), separators ignored, "~" sorting before anything
// (pre-releases) and "^" after the base but before anything else.
func vercmp(a, b string) int {
	if a == b {
		return 0
	}
	isAlnum := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	for len(a) > 0 || len(b) > 0 {
		for len(a) > 0 && !isAlnum(a[0]) && a[0] != '~' && a[0] != '^' {
			a = a[1:]
		}
		for len(b) > 0 && !isAlnum(b[0]) && b[0] != '~' && b[0] != '^' {
			b = b[1:]
		}
		// Tilde: older than anything, even the end of the string.
		if strings.HasPrefix(a, "~") || strings.HasPrefix(b, "~") {
			if !strings.HasPrefix(a, "~") {
				return 1
			}
			if !strings.HasPrefix(b, "~") {
				return -1
			}
			a, b = a[1:], b[1:]
			continue
		}
		// Caret: newer than the end of the string, older than anything else.
		if strings.HasPrefix(a, "^") || strings.HasPrefix(b, "^") {
			if len(a) == 0 {
				return -1
			}
			if len(b) == 0 {
				return 1
			}
			if !strings.HasPrefix(a, "^") {
				return 1
			}
			if !strings.HasPrefix(b, "^") {
				return -1
			}
			a, b = a[1:], b[1:]
			continue
		}
		if len(a) == 0 || len(b) == 0 {
			break
		}
		numeric := isDigit(a[0])
		run := func(s string) (string, string) {
			i := 0
			for i < len(s) && isAlnum(s[i]) && isDigit(s[i]) == numeric {
				i++
			}
			return s[:i], s[i:]
		}
		var x, y string
		x, a = run(a)
		y, b = run(b)
		if y == "" {
			// Different kinds of run: a digit run is newer.
			if numeric {
				return 1
			}
			return -1
		}
		if numeric {
			x, y = strings.TrimLeft(x, "0"), strings.TrimLeft(y, "0")
			if len(x) != len(y) {
				if len(x) > len(y) {
					return 1
				}
				return -1
			}
		}
		if c := strings.Compare(x, y); c != 0 {
			return c
		}
	}
	switch {
	case len(a) == 0 && len(b) == 0:
		return 0
	case len(a) == 0:
		return -1
	}
	return 1
}

// compareEVR orders two epoch:version-release triples as rpm does; an empty epoch is 0.
func compareEVR(e1, v1, r1, e2, v2, r2 string) int {
	if e1 == "" {
		e1 = "0"
	}
	if e2 == "" {
		e2 = "0"
	}
	if c := vercmp(e1, e2); c != 0 {
		return c
	}
	if c := vercmp(v1, v2); c != 0 {
		return c
	}
	return vercmp(r1, r2)
}
