package rpm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pith/blob"
	"pith/content"
	"pith/content/rpm"
	"pith/internal/testtree"
	"pith/meta"
	"pith/task"
)

// The real exports by pulp_rpm 3.39.4 (testdata/pulpexport/README.md): zoo, and the
// test tree (internal/testtree) with its addon and variant in sub-repositories.
var (
	pulpZoo  = pulpFixture{"testdata/pulpexport", "repository-rpmport-zoo_1", "rpmport-zoo", zooTreeinfo}
	pulpTree = pulpFixture{"testdata/pulpexport-tree", "repository-rpmport-tree_1", "rpmport-tree", func(*testing.T) []byte { return []byte(testtree.Treeinfo) }}
)

// pulpFixture is an export's JSON members: the directory, its version's directory and
// the repository's name; treeinfo is the one artifact of the export that is here (the
// test data has it), the tree's .treeinfo.
type pulpFixture struct {
	dir, version, repo string
	treeinfo           func(*testing.T) []byte
}

func zooTreeinfo(t *testing.T) []byte {
	b, err := os.ReadFile(filepath.Join(data, "yum-katello", "zoo", ".treeinfo"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f pulpFixture) path(name string) string { return filepath.Join(f.dir, f.version, name) }

// pulpDiffers are the advisories whose data Pulp changed at its sync, so that what it
// exports is not what a sync of the same file gives pith, with why.
var pulpDiffers = map[string]string{
	"KATELLO-RHEA-2012:0059": `updateinfo.xml has <updated date="2018-07-20 06:00:01 UTC"/>; Pulp keeps "2018-07-20 06:00:01", ` +
		"pith the date as written, which its digest covers",
}

// readPulpExport reads the version's resource files and content_mapping.json, and the
// files of each unit from its ContentArtifact rows, their artifacts (from the export's
// ArtifactResource) stored in db first, as the engine imports them.
func readPulpExport(t *testing.T, e *env, fx pulpFixture) (*portFiles, map[string][]meta.ContentFile) {
	t.Helper()
	ctx := context.Background()
	db := e.db
	if _, err := e.store.Put(ctx, bytes.NewReader(fx.treeinfo(t)), blob.Expect{Size: -1}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(fx.dir, fx.version)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string, v any) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	in := &portFiles{rows: map[string][]content.Row{}}
	for _, e := range entries {
		var rows []content.Row
		switch name := e.Name(); name {
		case "content_mapping.json":
			read(filepath.Join(dir, name), &in.mapping)
		default:
			read(filepath.Join(dir, name), &rows)
			in.rows[name] = rows
		}
	}
	var arts []map[string]string
	read(filepath.Join(fx.dir, "pulpcore.app.modelresource.ArtifactResource.json"), &arts)
	ids := map[string]int64{}
	for _, a := range arts {
		var size int64
		json.Unmarshal([]byte(a["size"]), &size)
		sha224, sha384, sha512 := a["sha224"], a["sha384"], a["sha512"]
		art, _, err := meta.PutArtifact(ctx, db, meta.Artifact{Size: size, SHA224: &sha224, SHA256: a["sha256"], SHA384: &sha384, SHA512: &sha512})
		if err != nil {
			t.Fatal(err)
		}
		ids[a["sha256"]] = art.ID
	}
	files := map[string][]meta.ContentFile{}
	for _, r := range in.rows["pulpcore.app.modelresource.ContentArtifactResource.json"] {
		c := map[string]string{}
		for k, v := range r {
			var s string
			json.Unmarshal(v, &s)
			c[k] = s
		}
		f := meta.ContentFile{RelativePath: c["relative_path"]}
		if id, ok := ids[c["artifact"]]; ok {
			f.ArtifactID = &id
		}
		files[c["content"]] = append(files[c["content"]], f)
	}
	return in, files
}

// importPulp imports the real export into db's repository repo.
func importPulp(t *testing.T, e *env, repo meta.Repository, fx pulpFixture, edit ...func(map[string][]meta.ContentFile)) *portIn {
	t.Helper()
	ctx := context.Background()
	db, port := e.db, rpm.New(e.core).Port()
	files, unitFiles := readPulpExport(t, e, fx)
	for _, fn := range edit {
		fn(unitFiles)
	}
	in := &portIn{repo: repo, in: files, files: unitFiles, imported: map[string]int64{}}
	err := db.Tx(ctx, func(tx *meta.Tx) error {
		in.tx = tx
		return port.Import(ctx, in)
	})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return in
}

// The rows of a real pulp_rpm export of zoo, imported: every unit the export maps, each
// equal to the unit a sync of zoo makes (natural key, repo key, attrs, package metadata);
// imported where the sync has run, the import finds the sync's units.
func TestPortImportPulp(t *testing.T) {
	ctx := context.Background()
	synced := newEnv(t)
	zoo := synced.repo("zoo")
	if tk := synced.sync(zoo, synced.remote("zoo", "yum-katello/zoo/", "on_demand"), rpm.Additive); tk.State != task.Completed {
		t.Fatalf("sync: %s %s", tk.State, tk.Error)
	}
	v := synced.latest(zoo)
	port := rpm.New(synced.core).Port()

	dst := newEnv(t)
	in := importPulp(t, dst, dst.repo("zoo"), pulpZoo)
	mapped := in.in.mapping[pulpZoo.repo]
	if int64(len(mapped)) != sum(v.Summary.Present) || len(in.imported) != len(mapped) {
		t.Errorf("%d units imported, the export maps %d, a sync makes %d", len(in.imported), len(mapped), sum(v.Summary.Present))
	}
	byType := map[string]int64{}
	for _, up := range mapped {
		id, ok := in.imported[up]
		if !ok {
			t.Errorf("unit %s not imported", up)
			continue
		}
		got := unitByID(t, dst.db, id)
		byType[got.Type]++
		want, err := meta.ContentByKey(ctx, synced.db, got.Type, got.NaturalKey)
		if _, differs := pulpDiffers[got.RepoKey]; differs && got.Type == rpm.AdvisoryType {
			if err == nil {
				t.Errorf("advisory %s: the sync's key, which Pulp's data should not give", got.RepoKey)
			}
			// All else is the sync's.
			var attrs string
			if err := synced.db.QueryRow(ctx, `SELECT attrs FROM contents WHERE type = ? AND repo_key = ?`, got.Type, got.RepoKey).Scan(&attrs); err != nil {
				t.Fatal(err)
			}
			g, w := comparableAttrs(t, got), comparableAttrs(t, meta.Content{Attrs: json.RawMessage(attrs)})
			delete(g, "updated_date")
			delete(w, "updated_date")
			if !reflect.DeepEqual(g, w) {
				t.Errorf("advisory %s: attrs\n%v\nwant\n%v", got.RepoKey, g, w)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %q: the sync has no such unit: %v", got.Type, got.NaturalKey, err)
			continue
		}
		if got.RepoKey != want.RepoKey || got.RelativePath != want.RelativePath || got.Digest != want.Digest {
			t.Errorf("%s %s: repo key %q path %q digest %q, want %q %q %q", got.Type, got.NaturalKey, got.RepoKey, got.RelativePath,
				got.Digest, want.RepoKey, want.RelativePath, want.Digest)
		}
		g, w := comparableAttrs(t, got), comparableAttrs(t, want)
		if !reflect.DeepEqual(g, w) || !bytes.Equal(got.Attrs, want.Attrs) && got.Type == rpm.DistributionTreeType {
			t.Errorf("%s %s: attrs\n%v\nwant\n%v", got.Type, got.NaturalKey, g, w)
		}
		if got.Type == rpm.PackageType {
			if g, w := fragments(t, dst.db, got.ID), fragments(t, synced.db, want.ID); g != w {
				t.Errorf("%s: metadata\n%q\nwant\n%q", got.NaturalKey, g, w)
			}
		}
		gotFiles, _ := meta.ContentFiles(ctx, dst.db, got.ID)
		for _, f := range gotFiles {
			if f.Artifact == nil {
				t.Errorf("%s %s: file %s has no artifact", got.Type, got.NaturalKey, f.RelativePath)
			}
		}
	}
	for typ, n := range v.Summary.Present {
		if byType[typ] != n {
			t.Errorf("%s: %d imported, a sync makes %d", typ, byType[typ], n)
		}
	}

	// Into the database the sync filled: the sync's units, none new.
	var before, after int64
	synced.db.QueryRow(ctx, `SELECT count(*) FROM contents`).Scan(&before)
	again := importPulp(t, synced, zoo, pulpZoo)
	synced.db.QueryRow(ctx, `SELECT count(*) FROM contents`).Scan(&after)
	if after != before+int64(len(pulpDiffers)) {
		t.Errorf("importing what the sync made added %d units, want %d (pulpDiffers)", after-before, len(pulpDiffers))
	}
	ids, err := meta.VersionContentIDs(ctx, synced.db, zoo.ID, v.Number)
	if err != nil {
		t.Fatal(err)
	}
	have := map[int64]bool{}
	for _, id := range ids {
		have[id] = true
	}
	for up, id := range again.imported {
		if u := unitByID(t, synced.db, id); !have[id] && pulpDiffers[u.RepoKey] == "" {
			t.Errorf("unit %s imported as %d, not one of the sync's", up, id)
		}
	}

	// The repository's row gives the fields of a repository the import creates, and
	// pith's columns are Pulp's.
	repoFile := pulpZoo.path("pulp_rpm.app.modelresource.RpmRepositoryResource.json")
	var repoRows []content.Row
	b, _ := os.ReadFile(repoFile)
	if err := json.Unmarshal(b, &repoRows); err != nil || len(repoRows) != 1 {
		t.Fatalf("repository rows: %v", err)
	}
	fields, err := port.RepositoryFields(repoRows[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"autopublish": false, "retain_package_versions": int64(0)}; !reflect.DeepEqual(fields, want) {
		t.Errorf("repository fields %v, want %v", fields, want)
	}
	core := []string{"pulp_type", "name", "description", "retain_repo_versions", "retain_checkpoints", "user_hidden", "pulp_domain"}
	if got, want := append(core, port.RepositoryColumns...), columnsOf(t, repoFile); !slices.Equal(got, want) {
		t.Errorf("repository columns %v, want Pulp's %v", got, want)
	}
	if row, err := port.RepositoryRow(zoo); err != nil || len(row) != len(port.RepositoryColumns) {
		t.Errorf("repository row %v: %v", row, err)
	}

	exportsAsPulp(t, port, dst, in, pulpZoo)
}

// exportsAsPulp checks that what pith exports of the units an import of fixture fx
// stored is what Pulp exported: the same files, columns and cells, but for the ids,
// the digests pith computes its own way (advisories') or keys by (trees') and
// pulp_rpm's evr sort key.
func exportsAsPulp(t *testing.T, port content.Port, dst *env, in *portIn, fx pulpFixture) {
	t.Helper()
	ctx := context.Background()
	drepo := dst.repo("exported")
	var all []int64
	for _, id := range in.imported {
		all = append(all, id)
	}
	var dv meta.Version
	err := dst.db.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		dv, _, err = meta.NewVersion(ctx, tx, drepo.ID, meta.Change{Add: all})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	out := newPortOut(dst.db, drepo, dv)
	if err := port.Export(ctx, out); err != nil {
		t.Fatal(err)
	}
	ignored := map[string]bool{"upstream_id": true, "pulp_domain": true, "_pulp_domain": true, "evr": true, "digest": true,
		"update_record": true, "update_collection": true, "distribution_tree": true, "name": true, "repository": true}
	for name, rows := range in.in.rows {
		if !strings.HasPrefix(name, "pulp_rpm.") || strings.HasSuffix(name, "RpmRepositoryResource.json") {
			continue
		}
		if got, want := out.out.columns[name], columnsOf(t, fx.path(name)); !slices.Equal(got, want) {
			t.Errorf("%s: columns %v, want Pulp's %v", name, got, want)
		}
		keep := func(col string) bool {
			// Names are compared but for sub-repositories' (pith names them its own way).
			return !ignored[col] || col == "name" && !strings.HasSuffix(name, "DistributionTreeRepositoryResource.json")
		}
		canon := func(rs []content.Row) []string {
			var out []string
			for _, r := range rs {
				m := map[string]json.RawMessage{}
				for k, v := range r {
					if keep(k) {
						m[k] = canonicalCell(v)
					}
				}
				b, _ := json.Marshal(m)
				out = append(out, string(b))
			}
			slices.Sort(out)
			// pulp_rpm exports no references, collections or packages of the advisories
			// only sub-repositories hold, so two of them that differ only there are one
			// advisory to pith.
			return slices.Compact(out)
		}
		got, want := canon(out.out.rows[name]), canon(rows)
		if len(got) != len(want) {
			t.Errorf("%s: %d rows, Pulp's %d", name, len(got), len(want))
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: row\n%s\nPulp's\n%s", name, got[i], want[i])
			}
		}
	}
	for name := range out.out.rows {
		if _, ok := in.in.rows[name]; !ok && len(out.out.rows[name]) > 0 {
			t.Errorf("%s: pith writes rows Pulp has none of", name)
		}
	}
}

// columnsOf are the columns of a resource file's first row, in order.
func columnsOf(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	var cols []string
	for _, want := range []json.Delim{'[', '{'} {
		if tok, err := dec.Token(); err != nil || tok != want {
			t.Fatalf("%s: %v %v", name, tok, err)
		}
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		cols = append(cols, tok.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return cols
}

// canonicalCell is a cell with the JSON a string cell holds written in one form
// (Python's json.dumps spaces it, Go's does not; object keys come in any order).
func canonicalCell(raw json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(raw, &s) != nil || !strings.HasPrefix(s, "[") && !strings.HasPrefix(s, "{") {
		return raw
	}
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return raw
	}
	b, _ := json.Marshal(v)
	out, _ := json.Marshal(string(b))
	return out
}

// A row with a cell missing or malformed fails the import with an error naming the
// column, and stores nothing.
func TestPortImportBadRows(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	port := rpm.New(e.core).Port()
	repo := e.repo("zoo")
	const (
		pkg    = "pulp_rpm.app.modelresource.PackageResource.json"
		module = "pulp_rpm.app.modelresource.ModulemdResource.json"
		adv    = "pulp_rpm.app.modelresource.UpdateRecordResource.json"
		colPkg = "pulp_rpm.app.modelresource.UpdateCollectionPackageResource.json"
		ref    = "pulp_rpm.app.modelresource.UpdateReferenceResource.json"
		sum    = "pulp_rpm.app.modelresource.ChecksumResource.json"
		tree   = "pulp_rpm.app.modelresource.DistributionTreeResource.json"
		group  = "pulp_rpm.app.modelresource.PackageGroupResource.json"
		meta_  = "pulp_rpm.app.modelresource.RepoMetadataFileResource.json"
	)
	missing := json.RawMessage(nil)
	cases := []struct {
		file, column string
		cell         json.RawMessage // nil: the column is left out
		want         string
	}{
		{pkg, "name", missing, "column name: missing"},
		{pkg, "pkgId", json.RawMessage(`""`), "column pkgId: empty"},
		{pkg, "size_package", json.RawMessage(`"12kB"`), "column size_package"},
		{pkg, "is_modular", json.RawMessage(`"maybe"`), "column is_modular"},
		{pkg, "files", json.RawMessage(`"[[null, \"/tmp/\""`), "column files"},
		{pkg, "files", json.RawMessage(`"[[null, null, \"x\"]]"`), "column files"},
		{pkg, "requires", json.RawMessage(`"[[\"a\", 1]]"`), "column requires"},
		{pkg, "changelogs", json.RawMessage(`"[[\"me\", \"yesterday\", \"x\"]]"`), "column changelogs"},
		{pkg, "location_href", json.RawMessage(`"../../etc/passwd"`), "column location_href"},
		{pkg, "upstream_id", missing, "column upstream_id: missing"},
		{module, "snippet", missing, "column snippet: missing"},
		{module, "snippet", json.RawMessage(`"---\ndocument: modulemd-defaults\nversion: 1\ndata:\n  module: x\n...\n"`), "column snippet"},
		{module, "snippet", json.RawMessage(`"{{{"`), "column snippet"},
		{adv, "reboot_suggested", json.RawMessage(`"perhaps"`), "column reboot_suggested"},
		{adv, "id", missing, "column id: missing"},
		{colPkg, "update_collection", json.RawMessage(`"no separator"`), "column update_collection"},
		{colPkg, "update_collection", json.RawMessage(`"nothere|0000"`), "column update_collection"},
		{colPkg, "sum_type", json.RawMessage(`"99"`), "column sum_type"},
		{ref, "update_record", json.RawMessage(`"0000"`), "column update_record"},
		{sum, "distribution_tree", json.RawMessage(`"elsewhere"`), "column distribution_tree"},
		{tree, "build_timestamp", json.RawMessage(`"noon"`), "column build_timestamp"},
		{tree, "discnum", json.RawMessage(`"one"`), "column discnum"},
		{group, "display_order", json.RawMessage(`"first"`), "column display_order"},
		{group, "packages", json.RawMessage(`"{\"name\": 1}"`), "column packages"},
		{meta_, "relative_path", json.RawMessage(`"/abs/path"`), "column relative_path"},
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(strings.TrimPrefix(c.file, "pulp_rpm.app.modelresource."), ".json")+"/"+c.column, func(t *testing.T) {
			files, unitFiles := readPulpExport(t, e, pulpZoo)
			row := maps.Clone(files.rows[c.file][0])
			if c.cell == nil {
				delete(row, c.column)
			} else {
				row[c.column] = c.cell
			}
			files.rows[c.file] = append([]content.Row{row}, files.rows[c.file][1:]...)
			in := &portIn{repo: repo, in: files, files: unitFiles, imported: map[string]int64{}}
			err := e.db.Tx(ctx, func(tx *meta.Tx) error {
				in.tx = tx
				return port.Import(ctx, in)
			})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.file) {
				t.Fatalf("import: %v, want an error of %s naming %q", err, c.file, c.want)
			}
			t.Log(err)
			var n int64
			e.db.QueryRow(ctx, `SELECT count(*) FROM contents`).Scan(&n)
			if n != 0 {
				t.Errorf("%d units stored", n)
			}
		})
	}
	for col, cell := range map[string]string{"checksum_type": "crc7", "retain_package_versions": "-1", "autopublish": "sometimes",
		"repo_config": "{"} {
		row := content.Row{col: json.RawMessage(`"` + strings.ReplaceAll(cell, `"`, `\"`) + `"`)}
		if _, err := port.RepositoryFields(row); err == nil || !strings.Contains(err.Error(), "column "+col) {
			t.Errorf("repository row with %s %q: %v, want an error naming the column", col, cell, err)
		}
	}
}

// The rows of a real pulp_rpm export of the test tree, its addon and variant in
// sub-repositories, imported: the tree a sync of the same .treeinfo makes, its
// sub-repositories named and placed as a sync places them, each with a version of what
// Pulp's content_mapping lists under its name; the .treeinfo Pulp exports is the tree's,
// or, without it, one written from the rows.
func TestPortImportPulpTree(t *testing.T) {
	src, remote := treeEnv(t)
	if tk := src.sync(src.repo("tree"), remote("tree", "on_demand"), rpm.Additive); tk.State != task.Completed {
		t.Fatalf("sync: %s %s", tk.State, tk.Error)
	}
	for _, withFile := range []bool{true, false} {
		name := "exported .treeinfo"
		if !withFile {
			name = ".treeinfo written from the rows"
		}
		t.Run(name, func(t *testing.T) { importPulpTree(t, src, withFile) })
	}
}

// importPulpTree imports the tree export into an empty database, with or without the
// .treeinfo file Pulp exports with the tree, and compares with src's sync.
func importPulpTree(t *testing.T, src *env, withFile bool) {
	ctx := context.Background()
	dst := newEnv(t)
	var edit []func(map[string][]meta.ContentFile)
	if !withFile {
		edit = append(edit, func(files map[string][]meta.ContentFile) {
			for id, fs := range files {
				files[id] = slices.DeleteFunc(fs, func(f meta.ContentFile) bool { return f.RelativePath == ".treeinfo" })
			}
		})
	}
	in := importPulp(t, dst, dst.repo("tree"), pulpTree, edit...)
	unique := map[string]bool{}
	for _, ids := range in.in.mapping {
		for _, id := range ids {
			unique[id] = true
		}
	}
	if len(in.imported) != len(unique) {
		t.Errorf("%d units imported, the export maps %d", len(in.imported), len(unique))
	}

	var srcTree, dstTree meta.Content
	for _, x := range []struct {
		db *meta.DB
		u  *meta.Content
	}{{src.db, &srcTree}, {dst.db, &dstTree}} {
		var id int64
		if err := x.db.QueryRow(ctx, `SELECT id FROM contents WHERE type = ?`, rpm.DistributionTreeType).Scan(&id); err != nil {
			t.Fatal(err)
		}
		*x.u = unitByID(t, x.db, id)
	}
	if dstTree.NaturalKey != srcTree.NaturalKey {
		t.Errorf("tree keyed %q, a sync keys it %q", dstTree.NaturalKey, srcTree.NaturalKey)
	}
	if got, want := comparableAttrs(t, dstTree), comparableAttrs(t, srcTree); !reflect.DeepEqual(got, want) {
		t.Errorf("tree attrs\n%v\nwant\n%v", got, want)
	}
	var ta struct {
		Treeinfo string `json:"treeinfo"`
	}
	json.Unmarshal(dstTree.Attrs, &ta)
	if withFile && ta.Treeinfo != testtree.Treeinfo {
		t.Errorf(".treeinfo stored\n%s\nwant the one exported\n%s", ta.Treeinfo, testtree.Treeinfo)
	}
	if !withFile {
		for _, line := range []string{"repository = Savanna", "repository = Edge", "parent = Zoo", "addons = Zoo-Edge"} {
			if !strings.Contains(ta.Treeinfo, line+"\n") {
				t.Errorf(".treeinfo written lacks %q:\n%s", line, ta.Treeinfo)
			}
		}
	}
	if files, _ := meta.ContentFiles(ctx, dst.db, dstTree.ID); len(files) != 1 || files[0].RelativePath != "images/test1.img" {
		t.Errorf("tree files %v, want only images/test1.img (publish writes the .treeinfo)", files)
	}

	srcSubs := src.subRepos()
	dstSubs, err := meta.SubRepositories(ctx, dst.db, dstTree.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(dstSubs) != len(srcSubs) {
		t.Errorf("sub-repositories %v, want %v", slices.Sorted(maps.Keys(dstSubs)), slices.Sorted(maps.Keys(srcSubs)))
	}
	for dir, prefix := range map[string]string{"Edge": "addons/edge-", "Savanna": "../yum-katello/zoo2-"} {
		sub, ok := dstSubs[dir]
		if !ok || sub.Name != srcSubs[dir].Name {
			t.Errorf("sub-repository %s: %q, a sync names it %q", dir, sub.Name, srcSubs[dir].Name)
			continue
		}
		var pulpName string
		for name := range in.in.mapping {
			if strings.HasPrefix(name, prefix) {
				pulpName = name
			}
		}
		ids, err := meta.VersionContentIDs(ctx, dst.db, sub.ID, sub.LatestVersion)
		if err != nil {
			t.Fatal(err)
		}
		if pulpName == "" || len(ids) != len(in.in.mapping[pulpName]) {
			t.Errorf("sub-repository %s: %d units, Pulp's %q maps %d", dir, len(ids), pulpName, len(in.in.mapping[pulpName]))
		}
	}
	exportsAsPulp(t, rpm.New(dst.core).Port(), dst, in, pulpTree)
}
