package api

import (
	"slices"
	"strings"
	"testing"
)

func TestImportUnitState(t *testing.T) {
	a, b, odd := "3f2b8c1e-7d4a-4e0b-9c6f-1a2b3c4d5e6f", "00000000-0000-0000-0000-000000000001", "not-a-uuid"
	if keyOf(a) == keyOf(strings.ToUpper(a)) || keyOf(odd) == keyOf(odd+"x") || keyOf(a) != keyOf(a) {
		t.Fatal("keyOf: distinct ids share a key, or one id has two")
	}

	var fs unitFiles
	for _, f := range []struct {
		unit, rel string
		art       int64
	}{{b, "b/1", 7}, {a, "a/1", 0}, {odd, "odd", 3}, {b, "b/2", 8}} {
		if err := fs.add(keyOf(f.unit), f.rel, f.art); err != nil {
			t.Fatal(err)
		}
	}
	fs.sort()
	got := fs.of(keyOf(b))
	if len(got) != 2 || got[0].RelativePath != "b/1" || *got[0].ArtifactID != 7 || got[1].RelativePath != "b/2" || *got[1].ArtifactID != 8 {
		t.Errorf("files of b = %+v; want b/1 (7), b/2 (8) in row order", got)
	}
	if got := fs.of(keyOf(a)); len(got) != 1 || got[0].ArtifactID != nil {
		t.Errorf("files of a = %+v; want a/1 without an artifact", got)
	}
	if got := fs.of(keyOf("other")); got != nil {
		t.Errorf("files of an unknown unit = %+v", got)
	}

	var lu localUnits
	lu.add(keyOf(a), 1)
	lu.add(keyOf(b), 2)
	if id, ok := lu.get(keyOf(a)); !ok || id != 1 {
		t.Errorf("get(a) = %d, %v", id, ok)
	}
	lu.add(keyOf(a), 5) // a retried transaction records a again: the last counts
	lu.add(keyOf(odd), 3)
	if id, ok := lu.get(keyOf(a)); !ok || id != 5 {
		t.Errorf("get(a) after it was recorded again = %d, %v; want 5", id, ok)
	}
	all := lu.all()
	slices.Sort(all)
	if !slices.Equal(all, []int64{2, 3, 5}) {
		t.Errorf("all = %v; want [2 3 5]", all)
	}

	m := newUnitMapping(map[string][]string{"r": {odd, a}, "s": {b, "missing-one"}})
	if ids, err := m.local("r", &lu); err != nil || !slices.Equal(ids, []int64{3, 5}) {
		t.Errorf("mapped r = %v, %v; want [3 5]", ids, err)
	}
	if _, err := m.local("s", &lu); err == nil || !strings.Contains(err.Error(), "missing-one") {
		t.Errorf("mapped s: %v; want an error naming missing-one", err)
	}
	if newUnitMapping(nil) != nil {
		t.Error("no content_mapping.json: want no mapping")
	}
}
