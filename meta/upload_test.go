package meta_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"pith/meta"
)

// Two overlapping chunks recorded at once: exactly one is recorded, the other is an
// overlap, on both databases and for every way two ranges can overlap.
func TestAddChunkOverlapRace(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		pairs := [][2]meta.Chunk{
			{{Offset: 0, Size: 60}, {Offset: 40, Size: 60}},  // the second starts inside the first
			{{Offset: 40, Size: 60}, {Offset: 0, Size: 41}},  // the second ends inside the first
			{{Offset: 0, Size: 100}, {Offset: 10, Size: 10}}, // one holds the other
			{{Offset: 20, Size: 30}, {Offset: 20, Size: 50}}, // the same offset
		}
		for i := 0; i < 50; i++ {
			pair := pairs[i%len(pairs)]
			u, err := meta.CreateUpload(ctx, db, 100)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for j, c := range pair {
				c.Part = int64(j + 1)
				wg.Add(1)
				go func() { defer wg.Done(); errs[j] = meta.AddChunk(ctx, db, u.ID, c) }()
			}
			wg.Wait()
			var oe *meta.OverlapError
			if (errs[0] == nil) == (errs[1] == nil) || !errors.As(errors.Join(errs...), &oe) || !errors.Is(oe, meta.ErrConflict) {
				t.Fatalf("attempt %d, chunks %+v: errors %v; want exactly one overlap", i, pair, errs)
			}
			chunks, err := meta.Chunks(ctx, db, u.ID)
			if err != nil || len(chunks) != 1 {
				t.Fatalf("attempt %d: chunks recorded %+v, %v; want one", i, chunks, err)
			}
			if winner := pair[chunks[0].Part-1]; chunks[0].Offset != winner.Offset || chunks[0].Size != winner.Size || oe.Received != chunks[0] {
				t.Fatalf("attempt %d: recorded %+v (overlap names %+v), want the winner %+v", i, chunks[0], oe.Received, winner)
			}
		}
	})
}

// Chunks that only touch are both recorded; a chunk of a deleted upload is not.
func TestAddChunk(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		u, err := meta.CreateUpload(ctx, db, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []meta.Chunk{{Offset: 5, Size: 5, Part: 7}, {Offset: 0, Size: 5, Part: 3}} {
			if err := meta.AddChunk(ctx, db, u.ID, c); err != nil {
				t.Fatalf("chunk %+v: %v", c, err)
			}
		}
		chunks, err := meta.Chunks(ctx, db, u.ID)
		if err != nil || len(chunks) != 2 || chunks[0] != (meta.Chunk{Offset: 0, Size: 5, Part: 3}) {
			t.Fatalf("chunks %+v, %v", chunks, err)
		}
		if err := meta.DeleteUpload(ctx, db, u.ID); err != nil {
			t.Fatal(err)
		}
		if err := meta.AddChunk(ctx, db, u.ID, meta.Chunk{Offset: 0, Size: 1}); !errors.Is(err, meta.ErrNotFound) {
			t.Errorf("chunk of a deleted upload: %v, want ErrNotFound", err)
		}
	})
}

// A database that has no room left is told apart from other failures.
func TestIsFull(t *testing.T) {
	err := full(t)
	if !meta.IsFull(err) || meta.IsFull(errors.New("database or disk is full")) || meta.IsFull(nil) {
		t.Errorf("IsFull(%v) = %v; only a real full database is full", err, meta.IsFull(err))
	}
}

// full returns the error of a write to a SQLite database that may not grow.
func full(t *testing.T) error {
	t.Helper()
	ctx := context.Background()
	db := Open(t, filepath.Join(t.TempDir(), "pith.db"))
	err := db.Tx(ctx, func(tx *meta.Tx) error {
		if _, err := tx.Exec(ctx, `PRAGMA max_page_count = 1`); err != nil { // no more than it has
			return err
		}
		for i := 0; i < 1000; i++ {
			if _, err := meta.CreateUpload(ctx, tx, int64(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		t.Fatal("a database that may not grow took 1000 rows")
	}
	return err
}
