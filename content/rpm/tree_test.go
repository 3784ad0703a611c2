package rpm_test

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pith/content/rpm"
	"pith/internal/testtree"
	"pith/meta"
	"pith/task"
)

// treeEnv is an env whose remotes point at the test tree (internal/testtree): main
// variant zoo, addon Edge (repo_02) under addons/edge, variant Savanna (zoo2) outside
// the tree. Requests for paths in missing get 404.
func treeEnv(t *testing.T, missing ...string) (*env, func(name, policy string) meta.Remote) {
	e := newEnv(t)
	h := testtree.Handler(data, "/tree/")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slices.Contains(missing, r.URL.Path) {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return e, func(name, policy string) meta.Remote {
		m, err := meta.CreateRemote(context.Background(), e.db, meta.Remote{Type: rpm.RepoType, Name: name, URL: srv.URL + "/tree/", Policy: policy})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
}

// subRepos returns the sub-repositories of the only distribution tree.
func (e *env) subRepos() map[string]meta.Repository {
	e.t.Helper()
	ctx := context.Background()
	var id int64
	if err := e.db.QueryRow(ctx, `SELECT id FROM contents WHERE type = ?`, rpm.DistributionTreeType).Scan(&id); err != nil {
		e.t.Fatal(err)
	}
	subs, err := meta.SubRepositories(ctx, e.db, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return subs
}

// publish publishes the latest version of repo and returns the publication's paths.
func (e *env) publish(repo meta.Repository) (meta.Publication, []string) {
	e.t.Helper()
	ctx := context.Background()
	tk, err := e.q.Dispatch(ctx, task.Spec{Name: rpm.PublishTask, Args: rpm.PublishArgs{Repository: repo.PulpID, Version: e.latest(repo).Number}})
	if err != nil {
		e.t.Fatal(err)
	}
	if tk = e.wait(tk); tk.State != task.Completed {
		e.t.Fatalf("publish: %s %s", tk.State, tk.Error)
	}
	return e.publication(tk)
}

// publication returns the publication a task created and its paths.
func (e *env) publication(tk task.Task) (meta.Publication, []string) {
	e.t.Helper()
	ctx := context.Background()
	for _, h := range tk.CreatedResources {
		if !strings.Contains(h, "/publications/rpm/rpm/") {
			continue
		}
		id := strings.TrimSuffix(h, "/")
		pub, err := meta.PublicationByPulpID(ctx, e.db, id[strings.LastIndex(id, "/")+1:])
		if err != nil {
			e.t.Fatal(err)
		}
		paths, err := meta.PublishedPaths(ctx, e.db, pub.ID, "")
		if err != nil {
			e.t.Fatal(err)
		}
		return pub, paths
	}
	e.t.Fatalf("no publication among %v", tk.CreatedResources)
	return meta.Publication{}, nil
}

// read returns the bytes a publication serves at a path.
func (e *env) read(pub meta.Publication, path string) []byte {
	e.t.Helper()
	ctx := context.Background()
	ref, err := meta.PublishedFileRef(ctx, e.db, pub.ID, path)
	if err != nil {
		e.t.Fatalf("%s: %v", path, err)
	}
	if ref.Artifact == nil {
		e.t.Fatalf("%s has no stored artifact", path)
	}
	r, err := e.store.Open(ctx, ref.Artifact.SHA256)
	if err != nil {
		e.t.Fatal(err)
	}
	defer r.Close()
	b, _ := io.ReadAll(r)
	return b
}

// A tree whose variants live elsewhere: each such variant or addon is synced into a
// sub-repository of the tree (hidden from lists; the main version counts only its own
// units), published under its id beside the main repository with a .treeinfo pointing
// there, skipped by optimize when unchanged, mirrored as upstream has it, and deleted
// with the tree by orphan cleanup.
func TestSyncTreeVariants(t *testing.T) {
	ctx := context.Background()
	e, remote := treeEnv(t)
	repo := e.repo("tree")
	m := remote("tree", "on_demand")
	tk := e.sync(repo, m, rpm.Additive)
	if tk.State != task.Completed {
		t.Fatalf("sync: %s %s", tk.State, tk.Error)
	}
	v := e.latest(repo)
	if v.Summary.Present[rpm.PackageType] != 20 || v.Summary.Present[rpm.DistributionTreeType] != 1 {
		t.Errorf("main version: %v, want zoo's 20 packages and the tree", v.Summary.Present)
	}
	subs := e.subRepos()
	if got := slices.Sorted(maps.Keys(subs)); !slices.Equal(got, []string{"Edge", "Savanna"}) {
		t.Fatalf("sub-repositories %v, want Edge and Savanna", got)
	}
	for dir, want := range map[string]int64{"Edge": 2, "Savanna": 14} {
		sv, err := meta.VersionByNumber(ctx, e.db, subs[dir].ID, subs[dir].LatestVersion)
		if err != nil {
			t.Fatal(err)
		}
		if sv.Summary.Present[rpm.PackageType] != want {
			t.Errorf("%s: %v, want %d packages", dir, sv.Summary.Present, want)
		}
	}
	if rs, total, err := meta.ListRepositories(ctx, e.db, meta.List{}); err != nil || total != 1 || rs[0].Name != "tree" {
		t.Errorf("repositories listed: %d %v, want only the main one", total, err)
	}

	// Published: the main repository, each sub-repository under its directory, and the
	// .treeinfo naming those directories.
	pub, paths := e.publish(repo)
	for _, p := range []string{"repodata/repomd.xml", "Packages/a/armadillo-0.1-1.noarch.rpm", "images/test1.img", ".treeinfo",
		"Savanna/repodata/repomd.xml", "Savanna/Packages/c/cheetah-0.3-0.8.noarch.rpm", "Edge/repodata/repomd.xml"} {
		if !slices.Contains(paths, p) {
			t.Errorf("%s not published", p)
		}
	}
	ti := string(e.read(pub, ".treeinfo"))
	for _, line := range []string{"repository = Savanna", "packages = Savanna/Packages", "repository = Edge", "packages = Edge/Packages"} {
		if !strings.Contains(ti, line+"\n") {
			t.Errorf(".treeinfo lacks %q:\n%s", line, ti)
		}
	}
	if md := string(e.read(pub, "Savanna/repodata/repomd.xml")); !strings.Contains(md, `href="repodata/`) {
		t.Errorf("Savanna's repomd.xml does not point into its own repodata:\n%s", md)
	}

	// Unchanged: optimize skips the main repository and both sub-repositories.
	tk = e.sync(repo, m, rpm.Additive)
	if tk.State != task.Completed {
		t.Fatalf("re-sync: %s %s", tk.State, tk.Error)
	}
	skipped := 0
	for _, p := range tk.Progress {
		if p.Code == "sync.skipped" {
			skipped++
		}
	}
	if skipped != 3 {
		t.Errorf("re-sync: %d syncs skipped, want 3 (main, Edge, Savanna): %+v", skipped, tk.Progress)
	}
	for dir, r := range e.subRepos() {
		if r.LatestVersion != subs[dir].LatestVersion {
			t.Errorf("%s: version %d after an unchanged re-sync, was %d", dir, r.LatestVersion, subs[dir].LatestVersion)
		}
	}

	// mirror_complete serves each sub-repository's metadata as upstream has it.
	mirror := e.repo("mirror")
	tk = e.sync(mirror, remote("tree-mirror", "on_demand"), rpm.MirrorComplete)
	if tk.State != task.Completed {
		t.Fatalf("mirror: %s %s", tk.State, tk.Error)
	}
	mpub, mpaths := e.publication(tk)
	want, err := os.ReadFile(filepath.Join(data, "yum-katello/zoo2/repodata/repomd.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.read(mpub, "Savanna/repodata/repomd.xml"); !bytes.Equal(got, want) {
		t.Errorf("mirrored Savanna/repodata/repomd.xml differs from zoo2's")
	}
	if !slices.Contains(mpaths, "Savanna/cheetah-0.3-0.8.noarch.rpm") || !slices.Contains(mpaths, "Edge/repodata/repomd.xml") {
		t.Errorf("mirror publication lacks the sub-repositories: %v", mpaths)
	}
	if ti := string(e.read(mpub, ".treeinfo")); !strings.Contains(ti, "repository = Savanna\n") {
		t.Errorf("mirrored .treeinfo does not point at Savanna's directory:\n%s", ti)
	}

	// The tree's sub-repositories go with it.
	for _, r := range []meta.Repository{repo, mirror} {
		if err := meta.DeleteRepository(ctx, e.db, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := meta.DeleteOrphans(ctx, e.db, meta.Now()+1, nil); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := e.db.QueryRow(ctx, `SELECT count(*) FROM repositories`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d repositories left after orphan cleanup (%v)", n, err)
	}
	if err := e.db.QueryRow(ctx, `SELECT count(*) FROM contents`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d units left after orphan cleanup (%v)", n, err)
	}
}

// A variant upstream does not have is skipped, as Pulp does, and the task says so; a
// broken one fails the sync, naming the variant, and leaves no main version.
func TestSyncTreeVariantMissing(t *testing.T) {
	e, remote := treeEnv(t, "/tree/addons/edge/repodata/repomd.xml")
	repo := e.repo("tree")
	tk := e.sync(repo, remote("tree", "on_demand"), rpm.Additive)
	if tk.State != task.Completed {
		t.Fatalf("sync without Edge: %s %s", tk.State, tk.Error)
	}
	var skipped bool
	for _, p := range tk.Progress {
		skipped = skipped || (p.Code == "sync.skipped" && strings.Contains(p.Message, "[addon-Zoo-Edge]"))
	}
	if !skipped {
		t.Errorf("no progress report of skipping Edge: %+v", tk.Progress)
	}
	if n := e.latest(repo).Summary.Present[rpm.PackageType]; n != 20 {
		t.Errorf("main version has %d packages, want 20", n)
	}

	e, remote = treeEnv(t, "/yum-katello/zoo2/repodata/f6caddaebd8be9a13da1c12c03587411dc57226294feda662f508531642828dd-other.xml.gz")
	repo = e.repo("tree")
	tk = e.sync(repo, remote("tree", "on_demand"), rpm.Additive)
	if tk.State != task.Failed || !strings.Contains(string(tk.Error), "[variant-Savanna] repository = ../yum-katello/zoo2") ||
		!strings.Contains(string(tk.Error), "other.xml.gz") {
		t.Errorf("broken variant: %s %s", tk.State, tk.Error)
	}
	if v := e.latest(repo); v.Number != 0 {
		t.Errorf("version %d left by a failed sync", v.Number)
	}
}
