package meta_test

import (
	"context"
	"fmt"
	"testing"

	"pith/meta"
)

// PutContents stores a batch as PutContent stores its units one by one: order kept, a
// key given twice is one unit created once, existing units found and their missing
// artifacts filled in, remote sources written (the last given for a file wins), across
// more units than one statement takes.
func TestPutContents(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		remote, err := meta.CreateRemote(ctx, db, meta.Remote{Type: "file.file", Name: "m", URL: "http://upstream/", Policy: "on_demand"})
		if err != nil {
			t.Fatal(err)
		}
		sha := func(i int) string { return fmt.Sprintf("%064x", i) }
		art, _, err := meta.PutArtifact(ctx, db, meta.Artifact{Size: 1, SHA256: sha(1)})
		if err != nil {
			t.Fatal(err)
		}
		unit := func(i int, url string, artifact *int64) meta.NewUnit {
			path := fmt.Sprintf("f%d", i)
			size := int64(i)
			return meta.NewUnit{Content: meta.Content{Type: "file.file", NaturalKey: sha(i) + ":" + path, RepoKey: path, RelativePath: path, Digest: sha(i)},
				Files: []meta.ContentFile{{RelativePath: path, ArtifactID: artifact, RemoteID: &remote.ID, URL: url, Size: &size, SHA256: sha(i)}}}
		}
		// Unit 1 exists already, without its file.
		before, _, err := meta.PutContent(ctx, db, unit(1, "http://upstream/old", nil).Content, unit(1, "http://upstream/old", nil).Files)
		if err != nil {
			t.Fatal(err)
		}
		// 1,200 units (three statements' worth), unit 1 with its artifact now, and unit 7
		// given twice, the second time with another URL.
		var in []meta.NewUnit
		for i := 1; i <= 1200; i++ {
			var a *int64
			if i == 1 {
				a = &art.ID
			}
			in = append(in, unit(i, fmt.Sprintf("http://upstream/f%d", i), a))
		}
		in = append(in, unit(7, "http://mirror/f7", nil))
		units, created, err := meta.PutContents(ctx, db, in)
		if err != nil {
			t.Fatal(err)
		}
		if len(units) != len(in) || len(created) != len(in) {
			t.Fatalf("%d units, %d created flags for %d given", len(units), len(created), len(in))
		}
		for i, u := range in {
			if units[i].NaturalKey != u.NaturalKey {
				t.Fatalf("unit %d is %s, not %s", i, units[i].NaturalKey, u.NaturalKey)
			}
		}
		if units[0].ID != before.ID || created[0] {
			t.Fatalf("the existing unit: id %d (want %d), created %v", units[0].ID, before.ID, created[0])
		}
		if !created[6] || created[1200] || units[1200].ID != units[6].ID {
			t.Fatalf("unit 7 twice: created %v then %v, ids %d and %d", created[6], created[1200], units[6].ID, units[1200].ID)
		}
		for i := 1; i < 1200; i++ {
			if !created[i] {
				t.Fatalf("unit %d not created", i+1)
			}
		}
		files, err := meta.ContentFiles(ctx, db, before.ID)
		if err != nil || len(files) != 1 || files[0].Artifact == nil || files[0].Artifact.ID != art.ID {
			t.Fatalf("the existing unit's file did not get its artifact: %+v %v", files, err)
		}
		if src, err := meta.RemoteSources(ctx, db, files[0].ContentArtifactID); err != nil || len(src) != 1 || src[0].URL != "http://upstream/f1" {
			t.Fatalf("the existing unit's source was not updated: %+v %v", src, err)
		}
		files, err = meta.ContentFiles(ctx, db, units[6].ID)
		if err != nil || len(files) != 1 || files[0].Artifact != nil || len(files[0].Remote) != 1 || files[0].Remote[0].URL != "http://mirror/f7" {
			t.Fatalf("unit 7: %+v %v", files, err)
		}
		files, err = meta.ContentFiles(ctx, db, units[1199].ID)
		if err != nil || len(files) != 1 || len(files[0].Remote) != 1 || *files[0].Remote[0].Size != 1200 || *files[0].Remote[0].SHA256 != sha(1200) {
			t.Fatalf("unit 1200: %+v %v", files, err)
		}
		// Again: nothing new.
		_, created, err = meta.PutContents(ctx, db, in[:10])
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range created {
			if c {
				t.Fatalf("unit %d created twice", i+1)
			}
		}
	})
}

// ArtifactsOf gives each unit the artifact of its first stored file by relative path,
// whatever order the files were stored in, and nothing to a unit with no stored file.
func TestArtifactsOf(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		var arts []meta.Artifact
		for i := range 4 {
			a, _, err := meta.PutArtifact(ctx, db, meta.Artifact{Size: 1, SHA256: fmt.Sprintf("%064x", 100+i)})
			if err != nil {
				t.Fatal(err)
			}
			arts = append(arts, a)
		}
		put := func(key string, files ...meta.ContentFile) int64 {
			t.Helper()
			c, _, err := meta.PutContent(ctx, db, meta.Content{Type: "rpm.package", NaturalKey: key, RepoKey: key, RelativePath: key}, files)
			if err != nil {
				t.Fatal(err)
			}
			return c.ID
		}
		// Files stored out of path order; the units asked for out of id order.
		two := put("two", meta.ContentFile{RelativePath: "z/two", ArtifactID: &arts[0].ID}, meta.ContentFile{RelativePath: "a/two", ArtifactID: &arts[1].ID})
		one := put("one", meta.ContentFile{RelativePath: "b/one", ArtifactID: &arts[2].ID}, meta.ContentFile{RelativePath: "c/one", ArtifactID: &arts[3].ID})
		none := put("none", meta.ContentFile{RelativePath: "none"})
		got, err := meta.ArtifactsOf(ctx, db, []int64{one, none, two})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[two].ID != arts[1].ID || got[one].ID != arts[2].ID {
			t.Errorf("artifacts %v; want unit two's a/two (%d) and unit one's b/one (%d) alone", got, arts[1].ID, arts[2].ID)
		}
	})
}
