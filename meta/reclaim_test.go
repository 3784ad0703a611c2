package meta_test

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pith/meta"
)

// ReclaimFiles drops the files of units only the reclaimed repositories hold, that a
// remote can give again and whose type allows it, and keeps every other file: those of
// units another repository or a kept version holds, uploads, and protected types.
func TestReclaimFiles(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		rem, err := meta.CreateRemote(ctx, db, meta.Remote{Type: "file.file", Name: "up", URL: "http://up/", Policy: "immediate"})
		if err != nil {
			t.Fatal(err)
		}
		repoA, _ := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: "a"})
		repoB, _ := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: "b"})
		ids := map[string]int64{}
		put := func(name, typ, sha string, remote bool) {
			t.Helper()
			a, _, err := meta.PutArtifact(ctx, db, meta.Artifact{Size: 1, SHA256: sha})
			if err != nil {
				t.Fatal(err)
			}
			f := meta.ContentFile{RelativePath: name, ArtifactID: &a.ID}
			if remote {
				f.RemoteID, f.URL = &rem.ID, "http://up/"+name
			}
			c, _, err := meta.PutContent(ctx, db, meta.Content{Type: typ, NaturalKey: name, RepoKey: name, RelativePath: name}, []meta.ContentFile{f})
			if err != nil {
				t.Fatal(err)
			}
			ids[name] = c.ID
		}
		sha := func(i int) string { return fmt.Sprintf("%064x", i) }
		put("old", "file.file", sha(1), true)       // in a's version 1 only
		put("latest", "file.file", sha(2), true)    // in a's latest
		put("shared", "file.file", sha(3), true)    // in a and b
		put("uploaded", "file.file", sha(4), false) // no remote to fetch it again
		put("advisory", "rpm.advisory", sha(5), true)
		put("twin-a", "file.file", sha(6), true) // two units of one artifact, in a and in b
		put("twin-b", "file.file", sha(6), true)
		newVersion(t, db, repoA.ID, meta.Change{Add: []int64{ids["old"], ids["shared"], ids["uploaded"], ids["advisory"], ids["twin-a"]}})
		newVersion(t, db, repoA.ID, meta.Change{Add: []int64{ids["latest"]}, Remove: []int64{ids["old"]}})
		newVersion(t, db, repoB.ID, meta.Change{Add: []int64{ids["shared"], ids["twin-b"]}})

		for _, tc := range []struct {
			name    string
			keep    []meta.VersionKey
			dropped []string
			lost    int64
			digests []string
		}{
			{"keep version 1", []meta.VersionKey{{RepositoryID: repoA.ID, Number: 1}}, []string{"latest"}, 1, []string{sha(2)}},
			{"everything reclaimable", nil, []string{"latest", "old", "twin-a"}, 2, []string{sha(1)}},
		} {
			var lost int64
			var digests []string
			err := db.Tx(ctx, func(tx *meta.Tx) error {
				var err error
				lost, digests, err = meta.ReclaimFiles(ctx, tx, meta.Reclaim{Repositories: []int64{repoA.ID}, Keep: tc.keep,
					Types: []string{"file.file"}, Before: meta.Now() + 1})
				return err
			})
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			var dropped []string
			for name, id := range ids {
				files, err := meta.ContentFiles(ctx, db, id)
				if err != nil {
					t.Fatal(err)
				}
				if files[0].Artifact == nil {
					dropped = append(dropped, name)
				}
			}
			sort.Strings(dropped)
			if diff := cmp.Diff(tc.dropped, dropped); diff != "" {
				t.Errorf("%s: files dropped (-want +got):\n%s", tc.name, diff)
			}
			if lost != tc.lost || !cmp.Equal(tc.digests, digests) {
				t.Errorf("%s: lost %d, deleted %v; want %d, %v", tc.name, lost, digests, tc.lost, tc.digests)
			}
		}
		// The artifact twin-b still uses stays; a is marked reclaimed, b is not.
		if _, err := meta.ArtifactBySHA256(ctx, db, sha(6)); err != nil {
			t.Errorf("shared artifact: %v", err)
		}
		var ra, rb int64
		db.QueryRow(ctx, `SELECT reclaimed FROM repositories WHERE id = ?`, repoA.ID).Scan(&ra)
		db.QueryRow(ctx, `SELECT reclaimed FROM repositories WHERE id = ?`, repoB.ID).Scan(&rb)
		if ra == 0 || rb != 0 {
			t.Errorf("reclaimed marks: a %d, b %d", ra, rb)
		}
	})
}
