package content

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CleanRelativePath checks a unit's relative path (Pulp's relative_path): a non-empty,
// relative, slash-separated path with no empty, "." or ".." segment, no backslash, no
// NUL or other control character, valid UTF-8, at most 4096 bytes. It returns the path
// unchanged when valid; the error quotes the path and says what is wrong.
func CleanRelativePath(p string) (string, error) {
	bad := func(why string) (string, error) { return "", fmt.Errorf("relative path %q: %s", p, why) }
	switch {
	case p == "":
		return bad("is empty")
	case len(p) > 4096:
		return bad("is longer than 4096 bytes")
	case !utf8.ValidString(p):
		return bad("is not valid UTF-8")
	case strings.HasPrefix(p, "/"):
		return bad("is absolute")
	case strings.Contains(p, "\\"):
		return bad("contains a backslash")
	}
	for _, r := range p {
		if r == 0 {
			return bad("contains a NUL character")
		}
		if unicode.IsControl(r) {
			return bad("contains a control character")
		}
	}
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "":
			return bad("contains an empty segment")
		case ".":
			return bad(`contains a "." segment`)
		case "..":
			return bad(`contains a ".." segment`)
		}
	}
	return p, nil
}
