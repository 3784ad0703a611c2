package modulemd

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzModules: whatever the input, decoding ends in documents or an *Error; what
// decodes survives write-then-parse unchanged, and each snippet re-parses alone to
// the same value.
func FuzzModules(f *testing.F) {
	for _, rf := range realFiles {
		for _, name := range glob(f, rf.pattern) {
			f.Add(seed(readData(f, name)))
		}
	}
	f.Add([]byte(sample))
	f.Add([]byte("document: modulemd-defaults\nversion: 1\ndata:\n  module: m\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		d := NewDecoder(bytes.NewReader(in), "fuzz.yaml")
		var got File
		for {
			doc, err := d.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("error is not an *Error: %v", err)
				}
				if d.err != nil {
					return // the stream cannot go on
				}
				continue // the next document can still be read
			}
			var snippet string
			switch {
			case doc.Module != nil:
				got.Modules = append(got.Modules, *doc.Module)
				snippet = doc.Module.Snippet
			case doc.Defaults != nil:
				got.Defaults = append(got.Defaults, *doc.Defaults)
				snippet = doc.Defaults.Snippet
			case doc.Obsolete != nil:
				got.Obsoletes = append(got.Obsoletes, *doc.Obsolete)
				snippet = doc.Obsolete.Snippet
			default:
				t.Fatalf("document with no value: %+v", doc)
			}
			alone, err := ParseSnippet("snippet", snippet)
			if err != nil {
				t.Fatalf("snippet does not parse alone: %v\n%q", err, snippet)
			}
			alone.Line = doc.Line
			if diff := cmp.Diff(doc, alone); diff != "" {
				t.Fatalf("snippet parses alone differently (-in file +alone):\n%s", diff)
			}
		}
		written := writeSnippets(t, snippets(&got))
		again, err := Parse(bytes.NewReader([]byte(written)), "written.yaml")
		if err != nil {
			t.Fatalf("written file does not parse: %v\n%s", err, written)
		}
		again.Skipped = nil
		if diff := cmp.Diff(&got, again); diff != "" {
			t.Fatalf("parse(write(parse)) differs (-first +second):\n%s", diff)
		}
	})
}

// seed cuts a large file after a few documents: small seeds fuzz faster, and the
// documents of one file are much alike.
func seed(b []byte) []byte {
	const keep = 8 << 10
	if len(b) <= keep {
		return b
	}
	if i := bytes.Index(b[keep:], []byte("\n...\n")); i >= 0 {
		return b[:keep+i+5]
	}
	return b
}
