package port

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"pith/content"
	"pith/internal/spill"
)

// writeExport writes a small export and returns its result.
func writeExport(t testing.TB, dir string, chunk int64) Result {
	t.Helper()
	e, err := Create(filepath.Join(dir, "export-1-20261126_1200.tar"), chunk)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Abort()
	if err := e.JSON("versions.json", []map[string]string{{"component": "core", "version": "3.105.25"}}); err != nil {
		t.Fatal(err)
	}
	blob := strings.Repeat("pith ", 2000)
	if err := e.Member("artifact/ab/cdef", int64(len(blob)), strings.NewReader(blob)); err != nil {
		t.Fatal(err)
	}
	rw, err := e.Resource("repository-r_1/x.Resource.json", "name", "size", "ok", "files", "none", "empty")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := rw.Row("n<&>"+strconv.Itoa(i), int64(i), i%2 == 0, content.JSON{V: []string{"a", "b"}}, nil, content.JSON{V: []string{}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	empty, _ := e.Resource("repository-r_1/empty.json", "a")
	if err := empty.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := e.Finish(context.Background(), map[string]any{"by": "test"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRoundTrip(t *testing.T) {
	for _, chunk := range []int64{0, 1000} {
		dir := t.TempDir()
		res := writeExport(t, dir, chunk)
		if chunk == 0 && (len(res.Files) != 1 || filepath.Base(res.Files[0].Path) != "export-1-20261126_1200.tar") {
			t.Fatalf("unchunked files %v", res.Files)
		}
		if chunk > 0 {
			if len(res.Files) < 10 || filepath.Base(res.Files[0].Path) != "export-1-20261126_1200.tar.0000" {
				t.Fatalf("chunked files %v", res.Files)
			}
			for _, f := range res.Files[:len(res.Files)-1] {
				if fi, _ := os.Stat(f.Path); fi.Size() != chunk {
					t.Errorf("%s has %d bytes, want %d", f.Path, fi.Size(), chunk)
				}
			}
		}
		for _, f := range res.Files {
			b, _ := os.ReadFile(f.Path)
			if want := strconv.FormatUint(uint64(crc32.ChecksumIEEE(b)), 16); f.CRC != want {
				t.Errorf("%s crc %s, want %s", f.Path, f.CRC, want)
			}
		}
		if filepath.Base(res.TOC) != "export-1-20261126_1200-toc.json" {
			t.Errorf("toc %s", res.TOC)
		}
		raw, _ := os.ReadFile(res.TOC)
		if !strings.HasPrefix(string(raw), `{"meta": {"by": "test", "checksum_type": "crc32"`) {
			t.Errorf("toc %s", raw)
		}
		toc, paths, err := ReadTOC(res.TOC)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckChunks(toc, paths, func() {}); err != nil {
			t.Fatal(err)
		}
		a, err := Open(paths)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(a.Names(), " "); got != "versions.json artifact/ab/cdef repository-r_1/x.Resource.json" {
			t.Errorf("members %s", got)
		}
		r, _, _ := a.Member("artifact/ab/cdef")
		b, _ := io.ReadAll(r)
		if string(b) != strings.Repeat("pith ", 2000) {
			t.Error("artifact bytes differ")
		}
		var rows []content.Row
		if err := a.Rows("repository-r_1/x.Resource.json", func(r content.Row) error { rows = append(rows, r); return nil }); err != nil {
			t.Fatal(err)
		}
		raw2, _ := json.Marshal(rows[1])
		if want := `{"empty":null,"files":"[\"a\",\"b\"]","name":"n<&>1","none":"","ok":"0","size":"1"}`; strings.ReplaceAll(string(raw2), `\u003c\u0026\u003e`, "<&>") != want {
			t.Errorf("row %s\nwant %s", raw2, want)
		}
		var files []string
		if ok, err := rows[1].JSON("files", &files); !ok || err != nil || len(files) != 2 {
			t.Errorf("files %v %v %v", files, ok, err)
		}
		if n, ok, err := rows[2].Int("size"); n != 2 || !ok || err != nil {
			t.Errorf("size %d %v %v", n, ok, err)
		}
		if b, ok, err := rows[2].Bool("ok"); !b || !ok || err != nil {
			t.Errorf("ok %v %v %v", b, ok, err)
		}
		a.Close()
	}
}

func TestBadChunks(t *testing.T) {
	dir := t.TempDir()
	res := writeExport(t, dir, 1000)
	toc, paths, err := ReadTOC(res.TOC)
	if err != nil {
		t.Fatal(err)
	}
	// A chunk altered: its checksum no longer matches.
	b, _ := os.ReadFile(paths[3])
	b[10] ^= 1
	os.WriteFile(paths[3], b, 0o644)
	if err := CheckChunks(toc, paths, func() {}); err == nil || !strings.Contains(err.Error(), "Import chunk hash mismatch") || !strings.Contains(err.Error(), filepath.Base(paths[3])) {
		t.Errorf("altered chunk: %v", err)
	}
	b[10] ^= 1
	os.WriteFile(paths[3], b, 0o644)
	// A chunk missing.
	os.Rename(paths[2], paths[2]+".gone")
	if err := CheckChunks(toc, paths, func() {}); err == nil || !strings.Contains(err.Error(), "Missing import-chunks") {
		t.Errorf("missing chunk: %v", err)
	}
	os.Rename(paths[2]+".gone", paths[2])
	// A truncated last chunk: the tar does not end.
	last := paths[len(paths)-1]
	b, _ = os.ReadFile(paths[len(paths)-2])
	os.WriteFile(last, nil, 0o644)
	os.Remove(last)
	if _, err := Open(paths[:len(paths)-2]); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated: %v", err)
	}
	_ = b
	// A table of contents without its keys.
	bad := filepath.Join(dir, "bad-toc.json")
	os.WriteFile(bad, []byte(`{"files": {}}`), 0o644)
	if _, _, err := ReadTOC(bad); err == nil || !strings.Contains(err.Error(), "Missing 'files' or 'meta'") {
		t.Errorf("toc keys: %v", err)
	}
	os.WriteFile(bad, []byte(`{"meta": {}, "files": {"../etc/passwd": "1"}}`), 0o644)
	if _, _, err := ReadTOC(bad); err == nil {
		t.Error("a chunk outside the toc's directory was accepted")
	}
}

// FuzzArchive: any bytes, as an export's tar or as a resource file in one, are read or
// refused with an error, never a panic or an unbounded read.
func FuzzArchive(f *testing.F) {
	dir := f.TempDir()
	res := writeExport(f, dir, 0)
	good, _ := os.ReadFile(res.Files[0].Path)
	f.Add(good, []byte(`[{"a": "1"}, {"b": [1, 2]}]`))
	f.Add(good[:len(good)/2], []byte(`[{"a": `))
	f.Add([]byte("not a tar"), []byte(`{"a": 1}`))
	f.Fuzz(func(t *testing.T, tarBytes, rows []byte) {
		d := t.TempDir()
		p := filepath.Join(d, "x.tar")
		os.WriteFile(p, tarBytes, 0o644)
		if a, err := Open([]string{p}); err == nil {
			for _, n := range a.Names() {
				a.Rows(n, func(content.Row) error { return nil })
			}
			a.Close()
		}
		e, err := Create(filepath.Join(d, "y.tar"), 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Member("r.json", int64(len(rows)), strings.NewReader(string(rows))); err != nil {
			t.Fatal(err)
		}
		out, err := e.Finish(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := Open([]string{out.Files[0].Path})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		a.Rows("r.json", func(r content.Row) error {
			r.Str("a")
			r.Int("a")
			r.Bool("a")
			var v any
			r.JSON("a", &v)
			return nil
		})
	})
}

func TestArtifactKey(t *testing.T) {
	sum := "ab" + strings.Repeat("0123456789abcdef", 3) + "0123456789abcd"
	k, ok := artifactKey("artifact/" + sum[:2] + "/" + sum[2:])
	if !ok || hex.EncodeToString(k[:]) != sum {
		t.Fatalf("artifactKey = %x, %v; want %s", k, ok, sum)
	}
	for _, name := range []string{
		"artifact/" + sum[:2] + "/" + strings.ToUpper(sum[2:]), // kept by name
		"artifact/" + sum[:2] + "x" + sum[2:],
		"artifact/" + sum[:2] + "/" + sum[2:] + "0",
		"artifact/DOMAIN/" + sum[:2] + "/" + sum[2:],
		"artifact/ab/cdef",
		"repository-r_1/" + sum,
	} {
		if _, ok := artifactKey(name); ok {
			t.Errorf("artifactKey(%q) is a digest", name)
		}
	}
}

// A failed read of the artifacts' index (a temporary file) is an error naming it, not a
// missing member: an import reports the failure, not an export without the artifact.
func TestArchiveIndexError(t *testing.T) {
	arts := spill.New(t.TempDir(), 32)
	defer arts.Close()
	if err := arts.Add(make([]byte, 32), make([]byte, 16)); err != nil {
		t.Fatal(err)
	}
	// Never sorted: every lookup fails.
	a := &Archive{arts: arts, members: map[string]member{}}
	name := "artifact/" + strings.Repeat("0", 2) + "/" + strings.Repeat("0", 62)
	if ok, err := a.Has(name); ok || err == nil || !strings.Contains(err.Error(), "index of artifacts") {
		t.Errorf("Has: %v, %v; want an error naming the index", ok, err)
	}
	if r, ok, err := a.Member(name); r != nil || ok || err == nil {
		t.Errorf("Member: %v, %v, %v; want an error", r, ok, err)
	}
	// Members other than artifacts are not in that index.
	if ok, err := a.Has("versions.json"); ok || err != nil {
		t.Errorf("Has(versions.json): %v, %v; want missing", ok, err)
	}
}
