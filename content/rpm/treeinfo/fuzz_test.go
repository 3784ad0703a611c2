package treeinfo

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// FuzzTreeinfo: whatever the input, Parse returns a tree or an *Error; a tree always
// writes, what is written parses back to the same tree (remote paths aside), and
// writing that again gives the same bytes.
func FuzzTreeinfo(f *testing.F) {
	for _, path := range fixtures(f) {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		tree, err := Parse(bytes.NewReader(in), ".treeinfo")
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error is not an *Error: %v", err)
			}
			return
		}
		for _, r := range tree.Files() {
			if r.Kind != KindRepository {
				if err := (&builder{ini: &iniFile{}}).treePath(r.Path, entry{}, ""); err != nil {
					t.Fatalf("Files lists an unsafe path: %v", err)
				}
			}
		}
		var buf bytes.Buffer
		if err := Write(&buf, tree, nil); err != nil {
			t.Fatalf("a parsed tree does not write: %v", err)
		}
		checkRoundTrip(t, tree, buf.Bytes())
	})
}
