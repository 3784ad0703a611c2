package meta_test

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pith/meta"
)

// TestExportArtifacts pins which artifacts an export writes, against a model: every
// artifact of the files of the versions' units once, less those of the base versions'
// units, whatever the page size; an artifact held by several units, by two files of one
// unit, by two versions of the list, or by a unit removed before the version, and a
// file without an artifact.
func TestExportArtifacts(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		arts := make([]int64, 12)
		for i := range arts {
			a, _, err := meta.PutArtifact(ctx, db, meta.Artifact{Size: int64(i), SHA256: fmt.Sprintf("%064x", i+1)})
			if err != nil {
				t.Fatal(err)
			}
			arts[i] = a.ID
		}
		// files: path → artifact index, -1 for none.
		units := map[string]map[string]int{
			"u0": {"a": 0},
			"u1": {"a": 1, "b": 2},         // two files
			"u2": {"a": 1},                 // shares u1's artifact
			"u3": {"a": 3, "b": 3, "c": 4}, // two files of one artifact
			"u4": {"a": -1},                // no artifact
			"u5": {"a": 5},
			"u6": {"a": 6}, // only in repository s
			"u7": {"a": 7}, // removed before the version exported
			"u8": {"a": 8},
			"u9": {"a": 9, "b": 10},
		}
		ids := map[string]int64{}
		for _, name := range []string{"u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9"} {
			var files []meta.ContentFile
			for path, ai := range units[name] {
				f := meta.ContentFile{RelativePath: path}
				if ai >= 0 {
					f.ArtifactID = &arts[ai]
				}
				files = append(files, f)
			}
			c, _, err := meta.PutContent(ctx, db, meta.Content{Type: "file.file", NaturalKey: name, RepoKey: name, RelativePath: name, Digest: name}, files)
			if err != nil {
				t.Fatal(err)
			}
			ids[name] = c.ID
		}
		of := func(names ...string) []int64 {
			var out []int64
			for _, n := range names {
				out = append(out, ids[n])
			}
			return out
		}
		r, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: "r"})
		if err != nil {
			t.Fatal(err)
		}
		s, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: "s"})
		if err != nil {
			t.Fatal(err)
		}
		r1, _ := newVersion(t, db, r.ID, meta.Change{Add: of("u0", "u1", "u7")})
		r2, _ := newVersion(t, db, r.ID, meta.Change{Add: of("u2", "u3", "u4", "u5", "u9"), Remove: of("u7")})
		s1, _ := newVersion(t, db, s.ID, meta.Change{Add: of("u1", "u5", "u6", "u8")})
		key := func(repo, n int64) meta.VersionKey { return meta.VersionKey{RepositoryID: repo, Number: n} }

		for _, tc := range []struct {
			name           string
			versions, base []meta.VersionKey
			want           []int
		}{
			{"one version", []meta.VersionKey{key(r.ID, r2.Number)}, nil, []int{0, 1, 2, 3, 4, 5, 9, 10}},
			{"an older version", []meta.VersionKey{key(r.ID, r1.Number)}, nil, []int{0, 1, 2, 7}},
			{"two repositories", []meta.VersionKey{key(r.ID, r2.Number), key(s.ID, s1.Number)}, nil, []int{0, 1, 2, 3, 4, 5, 6, 8, 9, 10}},
			{"the other order", []meta.VersionKey{key(s.ID, s1.Number), key(r.ID, r2.Number)}, nil, []int{0, 1, 2, 3, 4, 5, 6, 8, 9, 10}},
			{"incremental", []meta.VersionKey{key(r.ID, r2.Number)}, []meta.VersionKey{key(r.ID, r1.Number)}, []int{3, 4, 5, 9, 10}},
			{"incremental, two", []meta.VersionKey{key(r.ID, r2.Number), key(s.ID, s1.Number)},
				[]meta.VersionKey{key(r.ID, r1.Number), key(s.ID, s1.Number)}, []int{3, 4, 9, 10}},
			{"an empty version", []meta.VersionKey{key(s.ID, 0), key(r.ID, r1.Number)}, nil, []int{0, 1, 2, 7}},
			{"none", nil, nil, nil},
		} {
			var want []int64
			for _, i := range tc.want {
				want = append(want, arts[i])
			}
			for _, limit := range []int{1, 2, 3, 7, 100} {
				var got []int64
				var pages int
				for at := (meta.ExportCursor{}); at.Version < len(tc.versions); pages++ {
					if pages > 100 {
						t.Fatalf("%s, pages of %d: no end (at %+v)", tc.name, limit, at)
					}
					var page []meta.Artifact
					page, at, err = meta.ExportArtifacts(ctx, db, tc.versions, tc.base, at, limit)
					if err != nil {
						t.Fatal(err)
					}
					if len(page) > limit {
						t.Fatalf("%s: a page of %d for a limit of %d", tc.name, len(page), limit)
					}
					for _, a := range page {
						got = append(got, a.ID)
					}
				}
				sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s, pages of %d (-want +got):\n%s", tc.name, limit, diff)
				}
			}
		}
	})
}
