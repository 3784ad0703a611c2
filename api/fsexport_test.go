package api

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pith/blob"
	"pith/blob/driver/inmem"
	"pith/meta"
)

// A store without local files (S3, in memory) exports by writing only: links are
// refused with Pulp's message before anything is written.
func TestWriteTreeWithoutLocalFiles(t *testing.T) {
	store, err := blob.New(inmem.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := store.Put(ctx, strings.NewReader("hello\n"), blob.Expect{Size: 6})
	if err != nil {
		t.Fatal(err)
	}
	files := []meta.ExportFile{{RelativePath: "x/hello.txt", SHA256: &d.SHA256, Unit: true}}
	for _, method := range []string{methodHardlink, methodSymlink} {
		dir := filepath.Join(t.TempDir(), method)
		if err := writeTree(ctx, store, dir, dir, method, files); !errors.Is(err, errWriteOnly) || err.Error() != "Only write is supported for non-filesystem storage." {
			t.Errorf("%s: %v", method, err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s: made %s", method, dir)
		}
	}
	dir := filepath.Join(t.TempDir(), "write")
	if err := writeTree(ctx, store, dir, dir, methodWrite, files); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "x", "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("written: %q %v", b, err)
	}
}

// Relative paths that would leave the export directory are refused before anything is
// written.
func TestWriteTreeRelativePaths(t *testing.T) {
	store, err := blob.New(inmem.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := store.Put(ctx, strings.NewReader("x"), blob.Expect{Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"../escape", "/etc/passwd", "a/../../b", "a//b", ""} {
		dir := filepath.Join(t.TempDir(), "out")
		files := []meta.ExportFile{{RelativePath: "fine.txt", SHA256: &d.SHA256}, {RelativePath: rel, SHA256: &d.SHA256}}
		if err := writeTree(ctx, store, dir, dir, methodWrite, files); err == nil {
			t.Errorf("%q: written", rel)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%q: made %s", rel, dir)
		}
	}
}

// Chunk sizes as Pulp parses them: units of 1024, any case, fractions truncated.
func TestParseChunkSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{{"1B", 1}, {"10KB", 10240}, {"10kb", 10240}, {"1.5MB", 1572864}, {"2 GB", 2 << 30}, {"1TB", 1 << 40}, {"0.5B", 0}, {"1000", 0}, {"1e3KB", 1024000}} {
		got, err := parseChunkSize(tc.in)
		if got != tc.want || (err == nil) != (tc.want > 0) {
			t.Errorf("%q: %d %v, want %d", tc.in, got, err, tc.want)
		}
	}
}
