package meta_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"pith/meta"
)

// BenchmarkPromote measures what a bulk promotion costs per repository: a new version
// adding one unit to each of 500 repositories of 190 units, in one transaction (one
// batch of bulk_modify), one NewVersion per repository or one NewVersions for all. One
// op is one version.
//
//	go test -run X -bench Promote -cpuprofile cpu.out ./meta/
func BenchmarkPromote(b *testing.B) {
	b.Run("one by one", func(b *testing.B) { benchPromote(b, false) })
	b.Run("batch", func(b *testing.B) { benchPromote(b, true) })
}

func benchPromote(b *testing.B, batch bool) {
	ctx := context.Background()
	db, err := meta.Open(ctx, filepath.Join(b.TempDir(), "pith.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	const repos, perRepo = 500, 190
	var units []int64
	for i := 0; i < perRepo+b.N/repos+2; i++ {
		p := fmt.Sprintf("f%05d", i)
		c, _, err := meta.PutContent(ctx, db, meta.Content{Type: "file.file", NaturalKey: p, RepoKey: p, RelativePath: p}, nil)
		if err != nil {
			b.Fatal(err)
		}
		units = append(units, c.ID)
	}
	var ids []int64
	for i := 0; i < repos; i++ {
		r, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: fmt.Sprint("r", i)})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, r.ID)
		if err := db.Tx(ctx, func(tx *meta.Tx) error {
			_, _, err := meta.NewVersion(ctx, tx, r.ID, meta.Change{Add: units[:perRepo]})
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for done := 0; done < b.N; {
		unit := units[perRepo+done/repos]
		err := db.Tx(ctx, func(tx *meta.Tx) error {
			if batch {
				k := min(repos, b.N-done)
				vs, err := meta.NewVersions(ctx, tx, ids[:k], meta.Change{Add: []int64{unit}})
				done += k
				if err == nil && len(vs) != k {
					err = fmt.Errorf("%d versions made, want %d", len(vs), k)
				}
				return err
			}
			for i := 0; i < repos && done < b.N; i, done = i+1, done+1 {
				if _, _, err := meta.NewVersion(ctx, tx, ids[i], meta.Change{Add: []int64{unit}}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
