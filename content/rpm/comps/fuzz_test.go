package comps

import (
	"bytes"
	"errors"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// FuzzComps checks that Parse never panics, fails only with an *Error, and that what it
// reads survives a write and a second read unchanged (up to Write's canonical order).
func FuzzComps(f *testing.F) {
	for _, file := range goodFiles {
		f.Add(readFile(f, file))
	}
	f.Add([]byte(`<comps><group><id>g</id><display_order> +3x</display_order><packagelist>` +
		`<packagereq requires="r" basearchonly="true">p</packagereq></packagelist></group>` +
		`<environment><id>e</id><name xml:lang="">n</name><grouplist><groupid default="true">g</groupid>` +
		`</grouplist></environment><langpacks><match name="a" install=""/></langpacks></comps>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		c, err := Parse(bytes.NewReader(doc), "fuzz.xml")
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			}
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, c); err != nil {
			t.Fatalf("writing parsed units: %v", err)
		}
		again, err := Parse(bytes.NewReader(buf.Bytes()), "written.xml")
		if err != nil {
			t.Fatalf("reading the written document: %v\n%s", err, buf.Bytes())
		}
		if diff := gocmp.Diff(canonical(c), again); diff != "" {
			t.Fatalf("parse, write, parse changed the units (-first +second):\n%s\n%s", diff, buf.Bytes())
		}
	})
}
