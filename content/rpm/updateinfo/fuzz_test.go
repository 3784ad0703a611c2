package updateinfo

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzUpdateinfo checks that Parse never panics, fails only with an *Error, and that what
// it reads survives a write and a second read unchanged.
func FuzzUpdateinfo(f *testing.F) {
	for _, file := range append(goodFiles,
		"rpm-edge-cases/updateinfo_files/updateinfo_02.xml.xz",
		"rpm-edge-cases/updateinfo_files/updateinfo_03.xml") {
		f.Add(readFile(f, data+file))
	}
	f.Add([]byte(`<updates><update from="a&amp;b"><id>X</id><issued date="2014-09-24T00:00:00Z"/>` +
		`<description>a&#13;b</description><pkglist><collection short="s"><module version="7"/>` +
		`<package name="n"><sum>x</sum><reboot_suggested/></package></collection></pkglist></update></updates>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		us, err := parseAll(doc, "fuzz.xml")
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			}
			return
		}
		var buf bytes.Buffer
		w := NewWriter(&buf)
		for _, u := range us {
			if err := w.Write(u); err != nil {
				t.Fatalf("writing a parsed update: %v", err)
			}
			if u.Sum() != u.Sum() {
				t.Fatal("Sum is not deterministic")
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		again, err := parseAll(buf.Bytes(), "written.xml")
		if err != nil {
			t.Fatalf("reading the written document: %v\n%s", err, buf.Bytes())
		}
		if diff := cmp.Diff(us, again); diff != "" {
			t.Fatalf("parse, write, parse changed the updates (-first +second):\n%s", diff)
		}
	})
}
