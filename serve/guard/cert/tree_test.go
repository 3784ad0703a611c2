package cert

import (
	"fmt"
	"pith/internal/certgen"
	"strings"
	"testing"
)

// TestAllows runs one table of path checks against the tree of a v1 certificate and
// that of a v3 one granting the same paths: Pulp's semantics, the same for both but
// where noted.
func TestAllows(t *testing.T) {
	t.Parallel()
	granted := []string{
		"/foo/path/never",
		"/foo/path/always/$releasever",
		"/path/to/$basearch/$releasever/awesomeos",
		"/ACME/Library/content/dist/rhel/server/7/$releasever/$basearch/os",
		"/ACME/Library/custom/Product/Repo/",
		"/ACME/Dev/custom/a/b",
		"/ACME/Dev/custom/a/b/c", // under a granted path: changes nothing
		"/v$ar/x",                // a variable inside a segment: v1 only
		"",                       // grants nothing
	}
	v3, err := decodeV3(certgen.EncodeV3(granted))
	if err != nil {
		t.Fatal(err)
	}
	v1, err := v1Tree(granted)
	if err != nil {
		t.Fatal(err)
	}
	both := func(b bool) [2]bool { return [2]bool{b, b} }
	for _, tc := range []struct {
		path string
		want [2]bool // v1, v3
	}{
		{"/foo/path/never", both(true)},
		{"/foo/path/never/", both(true)},
		{"foo/path/never", both(true)},
		{"//foo//path/never///", both(true)},
		{"/foo/path/never/bar/a/b/c", both(true)},
		{"/foo/path/always/7Server", both(true)},
		{"/foo/path/always/7Server/x86_64/os/repodata/repomd.xml", both(true)},
		{"/foo/path/always", both(false)}, // the variable needs a segment
		{"/foo/path/always/", both(false)},
		{"/foo/path/neverland", both(false)}, // segment boundaries
		{"/foo/path/neve", both(false)},
		{"/foo/path", both(false)},
		{"/foo", both(false)},
		{"/", both(false)},
		{"", both(false)},
		{"////", both(false)},
		{"/path/never", both(false)},
		{"/content/foo/path/never", both(false)},
		{"/FOO/path/never", both(false)}, // case matters
		{"/path/to/x86_64/7Server/awesomeos", both(true)},
		{"/path/to/x86_64/7Server/awesomeos1", both(false)},
		{"/path/to/x86_64/awesomeos", both(false)},
		{"/path/to//7Server/awesomeos", both(false)}, // an empty segment is no segment
		{"/ACME/Library/content/dist/rhel/server/7/7.9/x86_64/os/Packages/a.rpm", both(true)},
		{"/ACME/Library/content/dist/rhel/server/7/7.9/x86_64/debug", both(false)},
		{"/ACME/Library/custom/Product/Repo", both(true)},
		{"/ACME/Library/custom/Product/Repo/Packages/a.rpm", both(true)},
		{"/ACME/Library/custom/Product", both(false)},
		{"/ACME/Dev/custom/Product/Repo", both(false)},
		{"/ACME/Dev/custom/a/b/z", both(true)},
		{"/ACME/Dev/custom/a/b/c/z", both(true)},
		// ".." and "." never widen access, nor even stay inside it.
		{"/ACME/Library/custom/Product/Repo/../../Other/Repo", both(false)},
		{"/ACME/Library/custom/Product/Repo/..", both(false)},
		{"/ACME/Library/custom/Product/Repo/./a.rpm", both(false)},
		{"/foo/path/never/../../../ACME/Dev/custom/x", both(false)},
		{"/foo/path/never/a/../../../../ACME/Dev/custom/x", both(false)},
		{"/foo/path/never/a/..", both(false)},
		{"/../foo/path/never", both(false)},
		{"/foo/path/always/..", both(false)}, // not even as a variable's value
		{"/foo/path/always/../never", both(false)},
		// Dots inside a segment are a name.
		{"/foo/path/always/7.9", both(true)},
		{"/foo/path/always/...", both(true)},
		// v1 reads "v$ar" as "v" and a variable (Pulp's regular expression); v3, as
		// Pulp's tree walk, as a plain word.
		{"/vX/x", [2]bool{true, false}},
		{"/v$ar/x", [2]bool{true, true}},
		{"/v/x", both(false)},
		// Longer than a request path can be.
		{"/foo/path/never" + strings.Repeat("/a", maxSegments), both(false)},
	} {
		for i, tr := range []*tree{&v1, &v3} {
			if got := tr.allows(tc.path); got != tc.want[i] {
				t.Errorf("v%d: %q: got %v, want %v", 1+2*i, tc.path, got, tc.want[i])
			}
		}
	}
}

func TestV1Bounds(t *testing.T) {
	t.Parallel()
	many := make([]string, maxNodes/2)
	for i := range many {
		many[i] = fmt.Sprint("/", i, "/x")
	}
	if _, err := v1Tree(many); err == nil {
		t.Error("a v1 tree of more than maxNodes nodes was built")
	}
}
