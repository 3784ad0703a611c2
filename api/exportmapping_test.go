package api

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"testing"

	"pith/meta"
)

// What a type maps is written as content_mapping.json as Python writes the object
// (repositories by name, units by id), and the units mapped outside the version are
// found by merging the two id-ordered lists, whatever the pages' size.
func TestExportMapping(t *testing.T) {
	units := func(ids ...int64) []meta.Content {
		var out []meta.Content
		for _, id := range ids {
			out = append(out, meta.Content{ID: id, PulpID: fmt.Sprintf("u-%d", id)})
		}
		return out
	}
	m := newExportMapping()
	defer m.close()
	m.add("tree", units(9, 2, 5, 7))
	m.add("tree-Everything", units(11, 3, 9))
	m.add("empty", nil)
	m.add("tree", units(1))
	if err := m.failed(); err != nil {
		t.Fatal(err)
	}

	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	if err := m.write(w); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	want := `{"tree": ["u-1", "u-2", "u-5", "u-7", "u-9"], "tree-Everything": ["u-3", "u-9", "u-11"]}`
	if b.String() != want {
		t.Errorf("content_mapping.json\n%s\nwant\n%s", b.String(), want)
	}

	version := []int64{1, 2, 4, 5, 6, 7, 9, 10}
	for _, size := range []int{1, 2, 3, 100} {
		pages := func(after int64) ([]int64, error) {
			i, _ := slices.BinarySearch(version, after+1)
			return version[i:min(i+size, len(version))], nil
		}
		var got []int64
		if err := m.outside(pages, func(ids []int64) error { got = append(got, ids...); return nil }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, []int64{3, 11}) {
			t.Errorf("pages of %d: outside the version %v, want [3 11]", size, got)
		}
	}
	var none *exportMapping
	if err := none.outside(nil, nil); err != nil || none.failed() != nil {
		t.Error("no mapping: want nothing outside and no failure")
	}
}
