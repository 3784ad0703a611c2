package serve

import (
	"strings"
	"testing"

	"pith/meta"
)

func TestMatch(t *testing.T) {
	t.Parallel()
	tab := &distTable{byPath: map[string]meta.Distribution{}}
	for _, d := range []meta.Distribution{{ID: 1, BasePath: "a"}, {ID: 2, BasePath: "a/b/c"}, {ID: 3, BasePath: "x/y"}} {
		tab.add(d)
	}
	for _, tc := range []struct {
		path string
		id   int64
		rest string
	}{
		{"a", 1, ""},
		{"a/file", 1, "file"},
		{"a/b", 1, "b"},
		{"a/b/c", 2, ""},
		{"a/b/c/d/e.rpm", 2, "d/e.rpm"},
		{"a/b/cd", 1, "b/cd"},
		{"x/y/z", 3, "z"},
		{"x", 0, ""},
		{"x/yz", 0, ""},
		{"ab", 0, ""},
		{"x/y/" + strings.Repeat("z/", 1000), 3, strings.Repeat("z/", 1000)},
		{strings.Repeat("q/", 1000), 0, ""},
		{"", 0, ""},
		{"/a", 0, ""},
	} {
		d, rest, ok := tab.match(tc.path)
		if ok != (tc.id != 0) || d.ID != tc.id || rest != tc.rest {
			t.Errorf("match(%q) = %d %q %v, want %d %q", tc.path, d.ID, rest, ok, tc.id, tc.rest)
		}
	}
}

// Files go out as stored, so no charset is ever claimed (the platform's mime tables add
// one for text types).
func TestContentType(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"README.txt": "text/plain", "index.html": "text/html", "noext": "application/octet-stream",
		"x.unknown-extension": "application/octet-stream",
	} {
		if got := contentType(name); got != want {
			t.Errorf("contentType(%q) = %q, want %q", name, got, want)
		}
	}
	if got := contentType("repomd.xml"); strings.Contains(got, ";") || !strings.HasSuffix(got, "/xml") {
		t.Errorf("contentType(repomd.xml) = %q", got)
	}
}
