package drivertest

import (
	"bytes"
	"io"
	"testing"

	"pith/blob"
)

// Abandon leaves in d a temporary the way a writer whose process died leaves it, and
// returns a function that reports whether it is gone.
type Abandon func(t *testing.T, d blob.Driver) (gone func() bool)

// runSweepKeeps checks that a sweep of a blob.Sweeper takes nothing a live writer
// writes, no committed blob and no part.
func runSweepKeeps(t *testing.T, newDriver func(t *testing.T) blob.Driver) {
	t.Run("SweepKeepsLiveWrites", func(t *testing.T) {
		t.Parallel()
		d := newDriver(t)
		sw, ok := d.(blob.Sweeper)
		if !ok {
			t.Skipf("driver %s leaves no temporaries", d.Name())
		}
		ctx := t.Context()
		kept := commit(t, d, []byte("committed before the sweep"), 7)
		live, err := d.Create(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer live.Cancel(ctx)
		data := bytes.Repeat([]byte("in flight "), 200_000) // 2 MB: several database chunks
		if _, err := live.Write(data); err != nil {
			t.Fatal(err)
		}
		st, stages := d.(blob.Stager)
		if stages {
			if err := st.PutPart(ctx, "0b6a4c1e", 42, bytes.NewReader([]byte("part")), 4); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := sw.SweepTemp(ctx); err != nil {
			t.Fatalf("sweep: %v", err)
		}
		if _, err := live.Write([]byte("and more")); err != nil {
			t.Fatalf("write after the sweep: %v", err)
		}
		if err := live.Commit(ctx, sum256(append(data, "and more"...))); err != nil {
			t.Fatalf("commit of a live write after the sweep: %v", err)
		}
		if got := readAll(t, d, kept); string(got) != "committed before the sweep" {
			t.Errorf("committed blob after the sweep: %q", got)
		}
		if stages {
			r, err := st.OpenPart(ctx, "0b6a4c1e", 42)
			if err != nil {
				t.Fatalf("part after the sweep: %v", err)
			}
			defer r.Close()
			if b, _ := io.ReadAll(r); string(b) != "part" {
				t.Errorf("part after the sweep: %q", b)
			}
		}
	})
}

// RunSweep checks a driver that leaves temporaries (a blob.Sweeper): a sweep removes
// what abandon leaves, each time it is left, and a live write beside it stays. Such a
// driver calls it beside Run.
func RunSweep(t *testing.T, newDriver func(t *testing.T) blob.Driver, abandon Abandon) {
	t.Run("SweepRemovesDeadWrites", func(t *testing.T) {
		t.Parallel()
		d := newDriver(t)
		sw, ok := d.(blob.Sweeper)
		if !ok {
			t.Fatalf("driver %s is no blob.Sweeper", d.Name())
		}
		ctx := t.Context()
		live, err := d.Create(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer live.Cancel(ctx)
		live.Write([]byte("live"))
		for round := 0; round < 2; round++ {
			gone := abandon(t, d)
			n, err := sw.SweepTemp(ctx)
			if err != nil {
				t.Fatalf("sweep: %v", err)
			}
			if !gone() || n < 1 {
				t.Fatalf("round %d: a dead writer's temporary is still there after a sweep that removed %d", round, n)
			}
		}
		if err := live.Commit(ctx, sum256([]byte("live"))); err != nil {
			t.Fatalf("commit of a live write after the sweeps: %v", err)
		}
	})
}
