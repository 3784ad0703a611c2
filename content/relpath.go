package content

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxRelativePath is the longest relative path accepted, in bytes.
const MaxRelativePath = 4096

// CleanRelativePath checks a unit's relative path (Pulp's relative_path): a non-empty,
// relative, slash-separated path with no empty, "." or ".." segment, no backslash, no
// NUL or other control character, valid UTF-8, at most MaxRelativePath bytes. It returns
// the path unchanged when valid; the error quotes the path and says what is wrong.
func CleanRelativePath(p string) (string, error) {
	bad := func(why string) (string, error) { return "", fmt.Errorf("relative path %q: %s", quoted(p), why) }
	switch {
	case p == "":
		return bad("is empty")
	case len(p) > MaxRelativePath:
		return bad(fmt.Sprintf("is %d bytes long, more than %d", len(p), MaxRelativePath))
	case !utf8.ValidString(p):
		return bad("is not valid UTF-8")
	case p[0] == '/':
		return bad("is absolute")
	}
	for i, r := range p {
		switch {
		case r == 0:
			return bad(fmt.Sprintf("contains a NUL character at byte %d", i))
		case unicode.IsControl(r):
			return bad(fmt.Sprintf("contains control character %U at byte %d", r, i))
		case r == '\\':
			return bad(fmt.Sprintf("contains a backslash at byte %d", i))
		}
	}
	for seg := range strings.SplitSeq(p, "/") {
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

// quoted shortens an overlong path so that an error message stays readable.
func quoted(p string) string {
	const keep = 64
	if len(p) <= MaxRelativePath {
		return p
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return p[:cut] + "..."
}
