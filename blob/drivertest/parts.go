package drivertest

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"pith/blob"
)

// runParts checks the parts of uploads in progress of a driver that stages them
// (blob.Stager), through a Store so the size checks apply; a store over one that does
// not refuses them.
func runParts(t *testing.T, newDriver func(t *testing.T) blob.Driver) {
	t.Run("Parts", func(t *testing.T) {
		t.Parallel()
		d := newDriver(t)
		if _, ok := d.(blob.Stager); !ok {
			s, _ := blob.New(d, nil)
			if _, err := s.PutPart(t.Context(), "0b6a4c1e", 0, 1, strings.NewReader("x")); !errors.Is(err, blob.ErrNoStaging) {
				t.Errorf("PutPart on a driver that stages nothing: %v, want ErrNoStaging", err)
			}
			t.Skipf("driver %s stages no parts", d.Name())
		}
		s, err := blob.New(d, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		const up = "0b6a4c1e-2f4d-4c51-9d0b-6f1a2b3c4d5e"
		big := bytes.Repeat([]byte("0123456789abcdef"), 150_000) // 2.4 MB: several database chunks
		put := func(off int64, data []byte) {
			t.Helper()
			sum, err := s.PutPart(ctx, up, off, int64(len(data)), bytes.NewReader(data))
			if err != nil {
				t.Fatalf("put part at %d: %v", off, err)
			}
			if sum != sum256(data) {
				t.Fatalf("part sha256 %s, want %s", sum, sum256(data))
			}
		}
		read := func(off int64) ([]byte, error) {
			r, err := s.OpenPart(ctx, up, off)
			if err != nil {
				return nil, err
			}
			defer r.Close()
			return io.ReadAll(r)
		}
		put(0, []byte("first"))
		put(5, big)
		put(int64(5+len(big)), nil)
		put(0, []byte("FIRST")) // replaced
		for off, want := range map[int64][]byte{0: []byte("FIRST"), 5: big, int64(5 + len(big)): {}} {
			got, err := read(off)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("part at %d: %d bytes, %v; want %d bytes", off, len(got), err, len(want))
			}
		}
		if _, err := read(99); !isNotFound(err) {
			t.Errorf("missing part: %v, want ErrNotFound", err)
		}
		// A source shorter or longer than declared stores nothing.
		for _, n := range []int64{4, 6} {
			_, err := s.PutPart(ctx, up, 1000, n, strings.NewReader("12345"))
			var me *blob.MismatchError
			if !errors.As(err, &me) || me.What != "size" {
				t.Errorf("declared %d for 5 bytes: %v, want a size mismatch", n, err)
			}
			if _, err := read(1000); !isNotFound(err) {
				t.Errorf("declared %d for 5 bytes: part stored anyway (%v)", n, err)
			}
		}
		if _, err := s.PutPart(ctx, "../escape", 0, 1, strings.NewReader("x")); !errors.Is(err, blob.ErrInvalidUpload) {
			t.Errorf("bad upload name: %v", err)
		}
		if got := walk(t, d); len(got) != 0 {
			t.Errorf("walk lists parts as blobs: %v", got)
		}
		if err := s.DeleteParts(ctx, up); err != nil {
			t.Fatal(err)
		}
		if _, err := read(5); !isNotFound(err) {
			t.Errorf("part after DeleteParts: %v", err)
		}
		if err := s.DeleteParts(ctx, up); err != nil {
			t.Errorf("DeleteParts of nothing: %v", err)
		}
	})
}
