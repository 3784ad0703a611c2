package collection

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
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

// FuzzGalaxyYML: whatever galaxy.yml holds, parseGalaxyYML returns a checked build
// metadata or an *Error with a kind, never panics; what it accepts writes a
// MANIFEST.json that Read's parser accepts with the same collection.
func FuzzGalaxyYML(f *testing.F) {
	var cases []buildCase
	if err := json.Unmarshal(readFile(f, "build/cases.json"), &cases); err != nil {
		f.Fatal(err)
	}
	for _, c := range cases {
		if s := c.Files[GalaxyYML]; s.Body != nil {
			f.Add(*s.Body)
		}
	}
	f.Add(testGalaxy + "tags: x\nauthors: me\ndependencies:\nmanifest: {directives: ['graft x', y], omit_default_directives: yes}\n")
	f.Add("a: &a [*a]\n")
	f.Fuzz(func(t *testing.T, src string) {
		m, err := parseGalaxyYML([]byte(src))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !(errors.Is(err, ErrFormat) || errors.Is(err, ErrInvalid)) {
				t.Fatalf("%v is not an *Error of a galaxy.yml kind", err)
			}
			return
		}
		b := manifestJSONFor(m, strings.Repeat("0", 64))
		if !json.Valid(b) {
			t.Fatalf("invalid JSON %s", b)
		}
		got, err := parseManifest(b)
		if err != nil {
			t.Fatalf("the MANIFEST.json built does not parse: %v\n%s", err, b)
		}
		if got.info.Namespace != m.namespace || got.info.Name != m.name || got.info.Version != m.version {
			t.Fatalf("round trip: %+v from %s", got.info, b)
		}
	})
}

// FuzzBuildPatterns: every pattern compiles (Python's translate never fails on one) and
// matching ends, within its budget.
func FuzzBuildPatterns(f *testing.F) {
	for _, s := range []string{"*.pyc", "[!]a]*", "[.]x", "*[!x]b*", "a[b-a-a]", "**/x?", "[\\-.]"} {
		f.Add(s, "a/b.pyc")
	}
	f.Fuzz(func(t *testing.T, pat, name string) {
		if len(pat) > 64 || len(name) > 256 {
			return
		}
		b := &budget{1 << 40}
		fm, err := newFnmatcher(pat)
		if err != nil {
			t.Fatalf("fnmatch %q: %v", pat, err)
		}
		fm.match(name, b)
		// distlib's rewrite can turn a set holding a dot into regular expression syntax.
		rewritten := strings.Contains(pat, "[") && strings.Contains(pat, ".")
		for _, prefix := range []*string{nil, &pat} {
			for _, anchor := range []bool{true, false} {
				m, err := newDistlibMatcher(pat, anchor, prefix, "/r")
				if err != nil && !(rewritten && (errors.Is(err, errUnsupported) || errors.Is(err, errPattern))) {
					t.Fatalf("distlib %q: %v", pat, err)
				}
				if err == nil {
					m.match(name, b)
				}
			}
		}
	})
}
