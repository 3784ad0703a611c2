package api

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pith/content/port"
)

func TestImportUnitState(t *testing.T) {
	a, b, odd := "3f2b8c1e-7d4a-4e0b-9c6f-1a2b3c4d5e6f", "00000000-0000-0000-0000-000000000001", "not-a-uuid"
	if keyOf(a) == keyOf(strings.ToUpper(a)) || keyOf(odd) == keyOf(odd+"x") || keyOf(a) != keyOf(a) {
		t.Fatal("keyOf: distinct ids share a key, or one id has two")
	}

	fs := newUnitFiles()
	defer fs.close()
	for _, f := range []struct {
		unit, rel string
		art       int64
	}{{b, "b/1", 7}, {a, "a/1", 0}, {odd, "odd", 3}, {b, "b/2", 8}} {
		if err := fs.add(keyOf(f.unit), f.rel, f.art); err != nil {
			t.Fatal(err)
		}
	}
	if err := fs.sort(); err != nil {
		t.Fatal(err)
	}
	got, err := fs.of(keyOf(b))
	if err != nil || len(got) != 2 || got[0].RelativePath != "b/1" || *got[0].ArtifactID != 7 || got[1].RelativePath != "b/2" || *got[1].ArtifactID != 8 {
		t.Errorf("files of b = %+v, %v; want b/1 (7), b/2 (8) in row order", got, err)
	}
	if got, err := fs.of(keyOf(a)); err != nil || len(got) != 1 || got[0].ArtifactID != nil {
		t.Errorf("files of a = %+v, %v; want a/1 without an artifact", got, err)
	}
	if got, err := fs.of(keyOf("other")); err != nil || got != nil {
		t.Errorf("files of an unknown unit = %+v, %v", got, err)
	}

	lu := newLocalUnits()
	defer lu.close()
	lu.add(keyOf(a), 1)
	lu.add(keyOf(b), 2)
	lu.add(keyOf(a), 5) // recorded twice: the last counts
	lu.add(keyOf(odd), 3)
	if id, ok, err := lu.get(keyOf(a)); err != nil || !ok || id != 5 {
		t.Errorf("get(a) = %d, %v, %v; want 5", id, ok, err)
	}
	if _, ok, err := lu.get(keyOf("other")); err != nil || ok {
		t.Errorf("get(other) = %v, %v; want none", ok, err)
	}
	all, err := lu.all()
	slices.Sort(all)
	if err != nil || !slices.Equal(all, []int64{2, 3, 5}) {
		t.Errorf("all = %v, %v; want [2 3 5]", all, err)
	}

	ar := mappingArchive(t, `{"r": [`+q(odd)+`, `+q(a)+`], "s": [`+q(b)+`, "missing-one"], "t": null, "u": []}`)
	m, err := readMapping(ar, "content_mapping.json")
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	if ids, err := m.local("r", lu); err != nil || !slices.Equal(slices.Sorted(slices.Values(ids)), []int64{3, 5}) {
		t.Errorf("mapped r = %v, %v; want [3 5]", ids, err)
	}
	if _, err := m.local("s", lu); err == nil || !strings.Contains(err.Error(), "missing-one") {
		t.Errorf("mapped s: %v; want an error naming missing-one", err)
	}
	for _, r := range []string{"t", "u", "absent"} {
		if ids, err := m.local(r, lu); err != nil || len(ids) != 0 {
			t.Errorf("mapped %s = %v, %v; want none", r, ids, err)
		}
	}
	if m, err := readMapping(ar, "absent.json"); m != nil || err != nil {
		t.Errorf("no content_mapping.json: %v, %v; want no mapping", m, err)
	}
	for _, bad := range []string{`[]`, `{"r": "x"}`, `{"r": [1]}`, `{"r": [`, `{"r": {}}`, `{"r": []`} {
		if _, err := readMapping(mappingArchive(t, bad), "content_mapping.json"); err == nil || !strings.Contains(err.Error(), "content_mapping.json") {
			t.Errorf("content_mapping.json %s: %v; want an error naming the file", bad, err)
		}
	}
}

func q(s string) string { return `"` + s + `"` }

// mappingArchive is an export holding only content_mapping.json.
func mappingArchive(t *testing.T, mapping string) *port.Archive {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	if err := tw.WriteHeader(&tar.Header{Name: "content_mapping.json", Mode: 0o644, Size: int64(len(mapping)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte(mapping))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "export.tar")
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ar, err := port.Open([]string{name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ar.Close() })
	return ar
}

// FuzzReadMapping: any content_mapping.json is read into a mapping whose every
// repository answers, or refused with an error naming the file.
func FuzzReadMapping(f *testing.F) {
	for _, s := range []string{`{"r": ["3f2b8c1e-7d4a-4e0b-9c6f-1a2b3c4d5e6f", "x"], "s": null}`, `{}`, `{"r": [1]}`, `[`} {
		f.Add(s)
	}
	lu := newLocalUnits()
	defer lu.close()
	lu.add(keyOf("x"), 1)
	f.Fuzz(func(t *testing.T, mapping string) {
		m, err := readMapping(mappingArchive(t, mapping), "content_mapping.json")
		if err != nil {
			if !strings.Contains(err.Error(), "content_mapping.json") {
				t.Fatalf("%q: %v does not name the file", mapping, err)
			}
			return
		}
		defer m.close()
		var raw map[string][]string
		json.Unmarshal([]byte(mapping), &raw)
		for repo, ids := range raw {
			got, err := m.local(repo, lu)
			if err == nil && len(got) < len(ids) {
				t.Fatalf("%q: %s maps %d units, want %d", mapping, repo, len(got), len(ids))
			}
		}
	})
}
