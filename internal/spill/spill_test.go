package spill

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

type rec struct{ key, value string }

// model is what a table must answer: the records with a prefix, sorted stably by key.
func model(all []rec, prefix string) []rec {
	var out []rec
	for _, r := range all {
		if len(r.key) >= len(prefix) && r.key[:len(prefix)] == prefix {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b rec) int { return bytes.Compare([]byte(a.key), []byte(b.key)) })
	return out
}

func each(t *testing.T, tb *Table, prefix string) []rec {
	t.Helper()
	var got []rec
	if err := tb.Each([]byte(prefix), func(k, v []byte) error {
		got = append(got, rec{string(k), string(v)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// Records in any order, with repeated keys and values of any length, read back by
// exact key, by prefix and whole, in key order and, within a key, in the order added;
// whatever the run size (one run, many runs merged, a block per record).
func TestTable(t *testing.T) {
	for _, runBytes := range []int{1 << 20, 4096, 97, 1} {
		t.Run(fmt.Sprint(runBytes), func(t *testing.T) {
			dir := t.TempDir()
			rnd := rand.New(rand.NewPCG(1, uint64(runBytes)))
			tb := New(dir, 4)
			tb.runBytes = runBytes
			defer tb.Close()
			var all []rec
			for i := range 3000 {
				k := []byte{byte(rnd.IntN(4)), byte(rnd.IntN(8)), byte(rnd.IntN(256)), byte(rnd.IntN(3))}
				v := fmt.Sprintf("%d:%s", i, bytes.Repeat([]byte("v"), rnd.IntN(300)))
				if rnd.IntN(20) == 0 {
					v = ""
				}
				all = append(all, rec{string(k), v})
				if err := tb.Add(k, []byte(v)); err != nil {
					t.Fatal(err)
				}
			}
			if names, _ := os.ReadDir(dir); len(names) != 0 {
				t.Errorf("the table's file is in its directory: %v", names)
			}
			if err := tb.Sort(); err != nil {
				t.Fatal(err)
			}
			if err := tb.Sort(); err != nil {
				t.Fatal(err)
			}
			if got, want := each(t, tb, ""), model(all, ""); !slices.Equal(got, want) {
				t.Fatalf("all: %d records, want %d (or not in order)", len(got), len(want))
			}
			for range 60 {
				r := all[rnd.IntN(len(all))]
				for _, p := range []string{r.key, r.key[:3], r.key[:1]} {
					if got, want := each(t, tb, p), model(all, p); !slices.Equal(got, want) {
						t.Fatalf("prefix %x: %d records, want %d (or not in order)", p, len(got), len(want))
					}
				}
			}
			for _, p := range []string{"\xff\xff\xff\xff", "\x00\x00\x00\x00", "\x02\x09"} {
				if got, want := each(t, tb, p), model(all, p); !slices.Equal(got, want) {
					t.Errorf("prefix %x: %v, want %v", p, got, want)
				}
			}
			if err := tb.Add([]byte("abcd"), nil); !errors.Is(err, ErrSorted) {
				t.Errorf("add after sort: %v", err)
			}
		})
	}
}

func TestTableBounds(t *testing.T) {
	tb := New(t.TempDir(), 2)
	defer tb.Close()
	if err := tb.Each(nil, nil); err == nil {
		t.Error("a lookup before Sort answered")
	}
	if err := tb.Add([]byte("abc"), nil); err == nil {
		t.Error("a key of the wrong length was added")
	}
	if err := tb.Add([]byte("ab"), make([]byte, maxValue+1)); err == nil {
		t.Error("a value over the bound was added")
	}
	if err := tb.Sort(); err != nil {
		t.Fatal(err)
	}
	if got := each(t, tb, ""); len(got) != 0 {
		t.Errorf("an empty table has %v", got)
	}
	stop := errors.New("stop")
	tb2 := New(t.TempDir(), 1)
	defer tb2.Close()
	tb2.Add([]byte("a"), []byte("1"))
	tb2.Add([]byte("a"), []byte("2"))
	tb2.Sort()
	n := 0
	if err := tb2.Each([]byte("a"), func(_, _ []byte) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("a callback's error: %v after %d calls", err, n)
	}
}

// The index of an import's 40,000 artifacts: 32-byte keys in random order, a 16-byte
// value each, sorted, then each looked up once.
func BenchmarkTable(b *testing.B) {
	const n = 40000
	rnd := rand.New(rand.NewPCG(1, 2))
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = make([]byte, 32)
		for j := range keys[i] {
			keys[i][j] = byte(rnd.Uint32())
		}
	}
	value := make([]byte, 16)
	for b.Loop() {
		tb := New(b.TempDir(), 32)
		for _, k := range keys {
			tb.Add(k, value)
		}
		tb.Sort()
		for _, k := range keys {
			tb.Each(k, func(_, _ []byte) error { return nil })
		}
		tb.Close()
	}
}
