package content

import (
	"fmt"
	"path"
	"strings"
)

// URLBase is the directory of a URL, against which relative paths resolve.
func URLBase(u string) string {
	i := strings.LastIndex(u, "/")
	if i < 0 {
		return u
	}
	return u[:i+1]
}

// JoinURL appends a relative path to a base URL ending in "/", escaping each segment.
func JoinURL(base, rel string) string {
	parts := strings.Split(rel, "/")
	for i, s := range parts {
		parts[i] = pathEscape(s)
	}
	return base + path.Join(parts...)
}

func pathEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~!$&'()*+,;=:@", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
