package rpm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"

	"pith/blob"
	"pith/content/rpm"
	"pith/content/rpm/modulemd"
	"pith/meta"
	"pith/task"
)

// importOrder is pulp_rpm's IMPORT_ORDER after the repository resource, then pith's own
// resource of module obsoletes.
var importOrder = []string{"PackageResource", "ModulemdResource", "ModulemdDefaultsResource", "PackageGroupResource",
	"PackageCategoryResource", "PackageEnvironmentResource", "PackageLangpacksResource", "UpdateRecordResource",
	"RepoMetadataFileResource", "DistributionTreeResource", "DistributionTreeRepositoryResource", "ChecksumResource",
	"ImageResource", "AddonResource", "VariantResource", "UpdateReferenceResource", "UpdateCollectionResource",
	"UpdateCollectionPackageResource", "ModulemdObsoleteResource"}

// unitByID loads a unit.
func unitByID(t *testing.T, q meta.Querier, id int64) meta.Content {
	t.Helper()
	us, _, err := meta.ListContent(context.Background(), q, meta.List{Where: []string{"c.id = ?"}, Args: []any{id}})
	if err != nil || len(us) != 1 {
		t.Fatalf("unit %d: %v", id, err)
	}
	return us[0]
}

// fragments are a package's stored primary, filelists and other XML.
func fragments(t *testing.T, q meta.Querier, id int64) [3]string {
	t.Helper()
	var f [3]string
	if err := q.QueryRow(context.Background(), `SELECT primary_xml, filelists_xml, other_xml FROM rpm_fragments WHERE content_id = ?`, id).Scan(&f[0], &f[1], &f[2]); err != nil {
		t.Fatalf("fragments of unit %d: %v", id, err)
	}
	return f
}

// comparableAttrs are a unit's attrs as JSON values; a tree's .treeinfo is left out (an
// import writes it again from the tree's fields).
func comparableAttrs(t *testing.T, u meta.Content) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(u.Attrs, &m); err != nil {
		t.Fatalf("%s %s: %v", u.Type, u.NaturalKey, err)
	}
	delete(m, "treeinfo")
	return m
}

// A synced tree repository (zoo with an addon and a variant in sub-repositories, every
// unit type) plus a module obsolete, exported through the rpm Port and imported into an
// empty database: the same units, keys, attrs and package metadata, and the
// sub-repositories with their versions.
func TestPortRoundTrip(t *testing.T) {
	ctx := context.Background()
	src, remote := treeEnv(t)
	repo := src.repo("tree")
	if tk := src.sync(repo, remote("tree", "on_demand"), rpm.Additive); tk.State != task.Completed {
		t.Fatalf("sync: %s %s", tk.State, tk.Error)
	}
	doc, err := modulemd.ParseSnippet("obsolete", obsoleteSnippet)
	if err != nil {
		t.Fatal(err)
	}
	unit, err := rpm.DocumentUnit(doc)
	if err != nil {
		t.Fatal(err)
	}
	obsolete, err := rpm.StoreUnit(ctx, src.db, unit, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = src.db.Tx(ctx, func(tx *meta.Tx) error {
		_, _, err := meta.NewVersion(ctx, tx, repo.ID, meta.Change{Add: []int64{obsolete.ID}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	v := src.latest(repo)
	port := rpm.New(src.core).Port()

	out := newPortOut(src.db, repo, v)
	if err := port.Export(ctx, out); err != nil {
		t.Fatalf("export: %v", err)
	}
	var want []string
	for _, r := range importOrder {
		want = append(want, "pulp_rpm.app.modelresource."+r+".json")
	}
	if !slices.Equal(out.out.order, want) {
		t.Errorf("resources written %v, want %v", out.out.order, want)
	}
	for _, name := range []string{"PackageResource", "UpdateCollectionPackageResource", "VariantResource", "AddonResource",
		"DistributionTreeRepositoryResource", "ModulemdObsoleteResource", "RepoMetadataFileResource"} {
		if len(out.out.rows["pulp_rpm.app.modelresource."+name+".json"]) == 0 {
			t.Errorf("%s has no rows", name)
		}
	}
	// Every cell is a string or null, as Pulp writes them.
	for name, rows := range out.out.rows {
		for _, r := range rows {
			for col, raw := range r {
				if raw[0] != '"' && string(raw) != "null" {
					t.Fatalf("%s: column %s is %s, not a string", name, col, raw)
				}
			}
		}
	}
	if n := len(out.out.mapping["tree"]); int64(n) != sum(v.Summary.Present) {
		t.Errorf("content_mapping lists %d units under tree, want the version's %d", n, sum(v.Summary.Present))
	}
	subs := src.subRepos()
	for dir, sub := range subs {
		if len(out.out.mapping[sub.Name]) == 0 {
			t.Errorf("content_mapping lists nothing under %s's sub-repository %q", dir, sub.Name)
		}
	}

	// The import, into a database that has none of it; each unit comes with its files,
	// their artifacts (those fetched) imported first.
	dst := newEnv(t)
	drepo := dst.repo("tree")
	in := &portIn{repo: drepo, in: out.out, files: map[string][]meta.ContentFile{}, imported: map[string]int64{}}
	var srcUnits []meta.Content
	seen := map[string]bool{}
	for _, ids := range out.out.mapping {
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			u, err := meta.ContentByPulpID(ctx, src.db, id)
			if err != nil {
				t.Fatal(err)
			}
			srcUnits = append(srcUnits, u)
			refs, err := meta.ContentFiles(ctx, src.db, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range refs {
				f := meta.ContentFile{RelativePath: r.RelativePath}
				if r.Artifact != nil { // imported before the units, as the engine does
					a := *r.Artifact
					a.ID = 0
					art, _, err := meta.PutArtifact(ctx, dst.db, a)
					if err != nil {
						t.Fatal(err)
					}
					f.ArtifactID = &art.ID
				}
				in.files[id] = append(in.files[id], f)
			}
			for _, a := range out.out.added[id] {
				dg, err := dst.store.Put(ctx, bytes.NewReader(a.data), blob.Expect{Size: -1})
				if err != nil {
					t.Fatal(err)
				}
				art, _, err := meta.PutArtifact(ctx, dst.db, meta.ArtifactOf(dg))
				if err != nil {
					t.Fatal(err)
				}
				in.files[id] = append(in.files[id], meta.ContentFile{RelativePath: a.path, ArtifactID: &art.ID})
			}
		}
	}
	err = dst.db.Tx(ctx, func(tx *meta.Tx) error {
		in.tx = tx
		return rpm.New(dst.core).Port().Import(ctx, in)
	})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	for _, s := range srcUnits {
		id, ok := in.imported[s.PulpID]
		if !ok {
			t.Errorf("%s %s not imported", s.Type, s.NaturalKey)
			continue
		}
		d := unitByID(t, dst.db, id)
		if d.Type != s.Type || d.NaturalKey != s.NaturalKey || d.RepoKey != s.RepoKey || d.RelativePath != s.RelativePath || d.Digest != s.Digest {
			t.Errorf("imported %s %q (repo key %q, path %q, digest %q), want %s %q (%q, %q, %q)", d.Type, d.NaturalKey, d.RepoKey,
				d.RelativePath, d.Digest, s.Type, s.NaturalKey, s.RepoKey, s.RelativePath, s.Digest)
			continue
		}
		if got, want := comparableAttrs(t, d), comparableAttrs(t, s); !reflect.DeepEqual(got, want) ||
			s.Type == rpm.DistributionTreeType && !bytes.Equal(d.Attrs, s.Attrs) {
			t.Errorf("%s %s: attrs\n%v\nwant\n%v", s.Type, s.NaturalKey, got, want)
		}
		if s.Type == rpm.PackageType {
			if got, want := fragments(t, dst.db, d.ID), fragments(t, src.db, s.ID); got != want {
				t.Errorf("%s: metadata\n%q\nwant\n%q", s.NaturalKey, got, want)
			}
		}
		srcFiles, _ := meta.ContentFiles(ctx, src.db, s.ID)
		dstFiles, _ := meta.ContentFiles(ctx, dst.db, d.ID)
		if len(srcFiles) != len(dstFiles) {
			t.Errorf("%s %s: %d files, want %d", s.Type, s.NaturalKey, len(dstFiles), len(srcFiles))
		}
	}
	if len(in.imported) != len(srcUnits) {
		t.Errorf("%d units imported, want %d", len(in.imported), len(srcUnits))
	}

	// The sub-repositories, named as sync names them, with versions of their units.
	var treeID int64
	if err := dst.db.QueryRow(ctx, `SELECT id FROM contents WHERE type = ?`, rpm.DistributionTreeType).Scan(&treeID); err != nil {
		t.Fatal(err)
	}
	dsubs, err := meta.SubRepositories(ctx, dst.db, treeID)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(dsubs)); !slices.Equal(got, slices.Sorted(maps.Keys(subs))) {
		t.Fatalf("sub-repositories %v, want %v", got, slices.Sorted(maps.Keys(subs)))
	}
	for dir, sub := range subs {
		want, _ := meta.VersionByNumber(ctx, src.db, sub.ID, sub.LatestVersion)
		got, err := meta.VersionByNumber(ctx, dst.db, dsubs[dir].ID, dsubs[dir].LatestVersion)
		if err != nil {
			t.Fatal(err)
		}
		if dsubs[dir].Name != sub.Name || !maps.Equal(got.Summary.Present, want.Summary.Present) {
			t.Errorf("sub-repository %s: %q %v, want %q %v", dir, dsubs[dir].Name, got.Summary.Present, sub.Name, want.Summary.Present)
		}
	}
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}
