package meta_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pith/meta"
)

// NewVersions makes, for every repository of a batch, the version NewVersion would make:
// the same memberships and the same summaries, and no version where nothing changes.
func TestNewVersionsMatchesNewVersion(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		u := map[string]meta.Content{}
		for _, name := range []string{"a", "b", "c", "d"} {
			u[name] = unit(t, db, name+".txt", name)
		}
		// Same relative path as a: it replaces a.
		a2, _, err := meta.PutContent(ctx, db, meta.Content{Type: "file.file", NaturalKey: "a2:a.txt", RepoKey: "a.txt", RelativePath: "a.txt", Digest: "a2"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		u["a2"] = a2
		names := map[int64]string{}
		for n, c := range u {
			names[c.ID] = n
		}
		// Pairs of repositories start alike: one gets NewVersion, the other NewVersions.
		starts := [][]string{{}, {"a"}, {"a", "b"}, {"b", "c", "d"}}
		var one, many []int64
		for i, start := range starts {
			for j, list := range []*[]int64{&one, &many} {
				r, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: fmt.Sprintf("r%d-%d", i, j)})
				if err != nil {
					t.Fatal(err)
				}
				var add []int64
				for _, n := range start {
					add = append(add, u[n].ID)
				}
				newVersion(t, db, r.ID, meta.Change{Add: add})
				*list = append(*list, r.ID)
			}
		}
		ids := func(ns ...string) []int64 {
			var out []int64
			for _, n := range ns {
				out = append(out, u[n].ID)
			}
			return out
		}
		for step, ch := range []meta.Change{
			{Add: ids("c")},
			{Add: ids("a2")},        // replaces a where present
			{Remove: ids("b", "d")}, // where present
			{Add: ids("b"), Remove: ids("b")},
			{Add: ids("c")}, // no change anywhere: c is everywhere
			{RemoveAll: true, Add: ids("d")},
		} {
			var want []meta.Version
			for _, id := range one {
				v, created := newVersion(t, db, id, ch)
				if created {
					want = append(want, v)
				}
			}
			var got []meta.Version
			if err := db.Tx(ctx, func(tx *meta.Tx) error {
				var err error
				got, err = meta.NewVersions(ctx, tx, many, ch)
				return err
			}); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			if len(got) != len(want) {
				t.Fatalf("step %d: %d versions made, want %d", step, len(got), len(want))
			}
			for i := range want {
				if got[i].Number != want[i].Number || !cmp.Equal(got[i].Summary, want[i].Summary) {
					t.Errorf("step %d, repository %d: version %d %+v, want %d %+v", step, i, got[i].Number, got[i].Summary, want[i].Number, want[i].Summary)
				}
				stored, err := meta.VersionByNumber(ctx, db, got[i].RepositoryID, got[i].Number)
				if err != nil || stored.ID != got[i].ID || !cmp.Equal(stored.Summary, got[i].Summary) {
					t.Errorf("step %d: stored version %+v (%v), returned %+v", step, stored, err, got[i])
				}
			}
			for i := range one {
				a, _ := meta.RepositoryByID(ctx, db, one[i])
				b, _ := meta.RepositoryByID(ctx, db, many[i])
				for n := int64(0); n < a.LatestVersion+1; n++ {
					if diff := cmp.Diff(members(t, db, a.ID, n, names), members(t, db, b.ID, n, names)); diff != "" {
						t.Errorf("step %d, start %v, version %d (-NewVersion +NewVersions):\n%s", step, starts[i], n, diff)
					}
				}
			}
		}
	})
}
