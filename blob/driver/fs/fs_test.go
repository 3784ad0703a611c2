package fs_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pith/blob"
	"pith/blob/driver/fs"
	"pith/blob/driver/tempfile"
	"pith/blob/drivertest"
)

func newDriver(t testing.TB) *fs.Driver {
	t.Helper()
	d, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestConformance(t *testing.T) {
	t.Parallel()
	drivertest.Run(t, func(t *testing.T) blob.Driver { return newDriver(t) })
}

func BenchmarkPut(b *testing.B) { drivertest.Bench(b, newDriver(b), 10<<20) }

func put(t *testing.T, d *fs.Driver, data string) string {
	t.Helper()
	s, err := blob.New(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	dg, err := s.Put(t.Context(), strings.NewReader(data), blob.Expect{Size: -1})
	if err != nil {
		t.Fatal(err)
	}
	return dg.SHA256
}

func TestLayoutAndOpen(t *testing.T) {
	t.Parallel()
	d := newDriver(t)
	sha := put(t, d, "hello")
	var p blob.Pather = d
	path, ok := p.Path(sha)
	want := filepath.Join(d.Root(), "artifact", sha[:2], sha[2:])
	if !ok || path != want {
		t.Errorf("Path = %q, %v; want %q, true", path, ok, want)
	}
	if b, err := os.ReadFile(want); err != nil || string(b) != "hello" {
		t.Errorf("file at Pulp's path: %q, %v", b, err)
	}
	r, err := d.Open(t.Context(), sha)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, ok := r.(*os.File); !ok {
		t.Errorf("Open returned %T, want *os.File (for sendfile)", r)
	}
	if es, _ := os.ReadDir(filepath.Join(d.Root(), "tmp")); len(es) != 0 {
		t.Errorf("temporaries left after commit: %v", es)
	}
	for _, bad := range []string{"", "../x", strings.Repeat("../", 21) + "x", strings.ToUpper(sha)} {
		if p, ok := d.Path(bad); ok || p != "" {
			t.Errorf("Path(%q) = %q, %v; want \"\", false", bad, p, ok)
		}
	}
}

func TestWalkSkipsStrays(t *testing.T) {
	t.Parallel()
	d := newDriver(t)
	sha := put(t, d, "real")
	art := filepath.Join(d.Root(), "artifact")
	strays := []string{
		filepath.Join(art, "zz", strings.Repeat("0", 62)),       // not hex
		filepath.Join(art, sha[:2], "short"),                    // wrong length
		filepath.Join(art, "abc", strings.Repeat("0", 61)),      // wrong fan-out
		filepath.Join(art, "README"),                            // not in a fan-out directory
		filepath.Join(d.Root(), "tmp", "blob-123"),              // a temporary
		filepath.Join(art, "ab", "cd", strings.Repeat("e", 60)), // too deep
	}
	for _, s := range strays {
		if err := os.MkdirAll(filepath.Dir(s), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s, []byte("stray"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	if err := d.Walk(t.Context(), func(s string, _ blob.Info) error { got = append(got, s); return nil }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{sha}, got); diff != "" {
		t.Errorf("walk (-want +got):\n%s", diff)
	}
}

// What a writer whose process died leaves: a temporary named as this host's (its writer
// held the lock), of a blob and of a part, that no process holds locked any more.
func TestSweep(t *testing.T) {
	t.Parallel()
	drivertest.RunSweep(t, func(t *testing.T) blob.Driver { return newDriver(t) }, func(t *testing.T, d blob.Driver) func() bool {
		root := d.(*fs.Driver).Root()
		part := filepath.Join(root, "parts", "0b6a4c1e")
		os.MkdirAll(part, 0o750)
		var left []string
		for dir, prefix := range map[string]string{filepath.Join(root, "tmp"): "blob-", part: ".tmp-"} {
			f, err := os.CreateTemp(dir, tempfile.Pattern(prefix)+"*")
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("half written")
			f.Close()
			left = append(left, f.Name())
		}
		return func() bool {
			for _, p := range left {
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					return false
				}
			}
			return true
		}
	})
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{"", file, filepath.Join(file, "below")} {
		if _, err := fs.New(root); err == nil {
			t.Errorf("New(%q) succeeded", root)
		}
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	total, used, free, err := newDriver(t).Usage()
	if err != nil || total <= 0 || used < 0 || free < 0 || free > total {
		t.Errorf("Usage() = %d, %d, %d, %v", total, used, free, err)
	}
}

func TestCommitExistingKeepsFile(t *testing.T) {
	t.Parallel()
	d := newDriver(t)
	sha := put(t, d, "once")
	path, _ := d.Path(sha)
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	put(t, d, "once")
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Error("committing existing content replaced the stored file")
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, []byte("once")) {
		t.Errorf("content %q", b)
	}
}
