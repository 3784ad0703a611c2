package meta_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pith/meta"
)

// TestCheckpoints: the checkpoint flags round-trip; a checkpoint distribution serves
// nothing itself, lists its repository's checkpoint publications oldest first, and
// protects their versions (only theirs) from retention while it exists.
func TestCheckpoints(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		repo, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: "r"})
		if err != nil {
			t.Fatal(err)
		}
		other, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: "other"})
		if err != nil {
			t.Fatal(err)
		}
		publish := func(repoID, n int64, checkpoint bool) meta.Publication {
			t.Helper()
			var p meta.Publication
			err := db.Tx(ctx, func(tx *meta.Tx) error {
				var err error
				p, err = meta.CreatePublication(ctx, tx, meta.Publication{Type: "file.file", RepositoryID: repoID, VersionNumber: n, Checkpoint: checkpoint}, nil)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if p.Checkpoint != checkpoint {
				t.Fatalf("publication of version %d: checkpoint %v, want %v", n, p.Checkpoint, checkpoint)
			}
			return p
		}
		for i := range 4 {
			newVersion(t, db, repo.ID, meta.Change{Add: []int64{unit(t, db, "f", string(rune('a'+i))).ID}})
		}
		p1 := publish(repo.ID, 1, true)
		publish(repo.ID, 2, false)
		p3 := publish(repo.ID, 3, true)
		publish(other.ID, 0, true) // no checkpoint distribution serves it

		protected := func() map[int64]bool {
			t.Helper()
			got, err := meta.ProtectedVersions(ctx, db, repo.ID, meta.Now())
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		if got := protected(); len(got) != 0 {
			t.Errorf("protected before any checkpoint distribution: %v, want none", got)
		}
		d, err := meta.CreateDistribution(ctx, db, meta.Distribution{Type: "file.file", Name: "cp", BasePath: "cp", RepositoryID: &repo.ID, Checkpoint: true})
		if err != nil {
			t.Fatal(err)
		}
		if !d.Checkpoint {
			t.Fatal("distribution created with checkpoint reads back without it")
		}
		if diff := cmp.Diff(map[int64]bool{1: true, 3: true}, protected()); diff != "" {
			t.Errorf("protected with a checkpoint distribution (-want +got):\n%s", diff)
		}
		cps, err := meta.CheckpointPublications(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int64][]meta.Checkpoint{repo.ID: {{p1.ID, p1.PulpID, p1.Created}, {p3.ID, p3.PulpID, p3.Created}}}
		if diff := cmp.Diff(want, cps); diff != "" {
			t.Errorf("checkpoint publications (-want +got):\n%s", diff)
		}
		serving, err := meta.DistributionServing(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if s := serving[d.ID]; s.PubID != 0 || s.RepoID != 0 {
			t.Errorf("a checkpoint distribution serves %+v under its base path, want nothing", s)
		}

		d.Checkpoint = false
		if err := meta.UpdateDistribution(ctx, db, d, 0); err != nil {
			t.Fatal(err)
		}
		if got, _ := meta.DistributionByID(ctx, db, d.ID); got.Checkpoint {
			t.Error("checkpoint still set after the update cleared it")
		}
		if diff := cmp.Diff(map[int64]bool{4: true}, protected()); diff != "" {
			t.Errorf("protected with a plain distribution of the repository (-want +got):\n%s", diff)
		}
		if cps, _ := meta.CheckpointPublications(ctx, db); len(cps) != 0 {
			t.Errorf("checkpoint publications without a checkpoint distribution: %v", cps)
		}
	})
}

// TestRetainCheckpoints: with retain_checkpoints in its attrs, a repository's
// checkpoint publications beyond the newest N become plain ones when another is made
// and when the setting changes; other repositories' are untouched.
func TestRetainCheckpoints(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		repo, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: "r", Attrs: []byte(`{"retain_checkpoints": 2}`)})
		if err != nil {
			t.Fatal(err)
		}
		other, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: "other"})
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range []int64{other.ID, repo.ID, repo.ID, repo.ID, other.ID} {
			err := db.Tx(ctx, func(tx *meta.Tx) error {
				p, err := meta.CreatePublication(ctx, tx, meta.Publication{Type: "file.file", RepositoryID: r, Checkpoint: true}, nil)
				ids = append(ids, p.ID)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		flags := func() []bool {
			var out []bool
			for _, id := range ids {
				var cp bool
				if err := db.QueryRow(ctx, `SELECT checkpoint FROM publications WHERE id = ?`, id).Scan(&cp); err != nil {
					t.Fatal(err)
				}
				out = append(out, cp)
			}
			return out
		}
		if got, want := flags(), []bool{true, false, true, true, true}; !cmp.Equal(got, want) {
			t.Errorf("checkpoints %v, want %v", got, want)
		}
		repo.Attrs = []byte(`{"retain_checkpoints": 1}`)
		if err := meta.UpdateRepository(ctx, db, repo); err != nil {
			t.Fatal(err)
		}
		if got, want := flags(), []bool{true, false, false, true, true}; !cmp.Equal(got, want) {
			t.Errorf("after retain_checkpoints 1: %v, want %v", got, want)
		}
	})
}
