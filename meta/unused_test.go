package meta_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"pith/meta"
)

// What a failed task created goes, unless a repository version holds it, something
// references it or someone found it meanwhile.
func TestDeleteUnused(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		art := func(c byte) meta.Artifact {
			a, created, err := meta.PutArtifact(ctx, db, meta.Artifact{Size: 1, SHA256: strings.Repeat(string(c), 64)})
			if err != nil || !created {
				t.Fatalf("artifact %c: %v %v", c, created, err)
			}
			return a
		}
		unused, held, found := art('a'), art('b'), art('c')
		kept := unit(t, db, "kept", "k")
		gone := unit(t, db, "gone", "g")
		again := unit(t, db, "again", "r")
		id := held.ID
		if _, _, err := meta.PutContent(ctx, db, meta.Content{Type: "file.file", NaturalKey: "h:held", RepoKey: "held", RelativePath: "held"},
			[]meta.ContentFile{{RelativePath: "held", ArtifactID: &id}}); err != nil {
			t.Fatal(err)
		}
		repo, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: "r"})
		if err != nil {
			t.Fatal(err)
		}
		newVersion(t, db, repo.ID, meta.Change{Add: []int64{kept.ID}})
		time.Sleep(time.Millisecond) // a later microsecond for the finds below
		if _, created, err := meta.PutContent(ctx, db, again, nil); err != nil || created {
			t.Fatalf("find again: %v %v", created, err)
		}
		if _, created, err := meta.PutArtifact(ctx, db, found); err != nil || created {
			t.Fatalf("find artifact: %v %v", created, err)
		}
		digests, err := meta.DeleteUnused(ctx, db, []int64{kept.ID, gone.ID, again.ID}, []int64{unused.ID, held.ID, found.ID})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(digests, []string{unused.SHA256}) {
			t.Errorf("deleted artifacts %v, want only the unused one", digests)
		}
		for _, c := range []meta.Content{kept, gone, again} {
			_, err := meta.ContentByPulpID(ctx, db, c.PulpID)
			if wantGone := c.ID == gone.ID; errors.Is(err, meta.ErrNotFound) != wantGone {
				t.Errorf("unit %s: %v, want gone %v", c.RelativePath, err, wantGone)
			}
		}
	})
}
