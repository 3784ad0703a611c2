package collection

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzRead: whatever the bytes, Read returns metadata or an *Error with a kind, and
// never panics. Seeds: the tiny real collections and a synthetic one with every kind
// of content.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"foo-bar-1.0.0.tar.gz", "pulp-testing_asset-1.0.1.tar.gz"} {
		f.Add(readFile(f, name))
	}
	f.Add(build{}.bytes(f))
	f.Add(tarGz(f, []tfile{{name: "a", link: "b"}, {name: "b", link: "a"}, {name: "MANIFEST.json", body: "{}"}}))
	kinds := []error{ErrFormat, ErrLimit, ErrUnsafe, ErrMissing, ErrUnlisted, ErrChecksum, ErrInvalid, ErrMismatch}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Read(bytes.NewReader(data), Options{Limits: Limits{Uncompressed: 8 << 20, Entries: 2000}})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%T %v is not an *Error", err, err)
			}
			for _, k := range kinds {
				if errors.Is(err, k) {
					return
				}
			}
			t.Fatalf("%v has no kind", err)
		}
		if v.Namespace == "" || v.SHA256 == "" || v.Size != int64(len(data)) {
			t.Fatalf("incomplete metadata %+v", v)
		}
	})
}

// FuzzParseRange: an accepted range writes back as it was read.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"*", ">=1.0.0,<2.0.0", "!=1.2.3", "==1.0.0+b.1", "^1.2", "~=2.2", "<1.2.3-", ">=*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRange(s)
		if err != nil {
			return
		}
		if r.String() != s {
			t.Fatalf("ParseRange(%q).String() = %q", s, r.String())
		}
		if _, err := ParseRange(r.String()); err != nil {
			t.Fatalf("round trip of %q: %v", s, err)
		}
	})
}

// FuzzPyDocStrings: the Python scanner never panics and never loops.
func FuzzPyDocStrings(f *testing.F) {
	f.Add(pingModule)
	f.Add("DOCUMENTATION = ('a' \\\n 'b') # c\nx = \"\"\"\n'''\n\"\"\"\n")
	f.Fuzz(func(t *testing.T, src string) {
		pyDocStrings(src)
	})
}
