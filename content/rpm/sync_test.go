package rpm_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"pith/blob"
	"pith/content"
	"pith/content/contenttest"
	"pith/content/rpm"
	"pith/internal/testfiles"
	"pith/meta"
	"pith/task"
)

// data is the third-party test data (testdata/README.md).
var data = testfiles.Path()

// env is a database, a blob store, a running queue with the rpm tasks and a static
// server of the test data.
type env struct {
	t     *testing.T
	db    *meta.DB
	store *blob.Store
	q     *task.Queue
	srv   *httptest.Server
	core  *content.Core
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ce := contenttest.New(t, contenttest.Type(rpm.New))
	srv := httptest.NewServer(http.FileServer(http.Dir(data)))
	t.Cleanup(srv.Close)
	return &env{t: t, db: ce.DB, store: ce.Store, q: ce.Core.Env().Queue, srv: srv, core: ce.Core}
}

func (e *env) repo(name string) meta.Repository {
	r, err := meta.CreateRepository(context.Background(), e.db, meta.Repository{Type: rpm.RepoType, Name: name})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func (e *env) remote(name, path, policy string) meta.Remote {
	m, err := meta.CreateRemote(context.Background(), e.db, meta.Remote{Type: rpm.RepoType, Name: name, URL: e.srv.URL + "/" + path, Policy: policy})
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

// sync runs a sync task to its end and returns it.
func (e *env) sync(repo meta.Repository, remote meta.Remote, policy string, skip ...string) task.Task {
	e.t.Helper()
	tk, err := e.q.Dispatch(context.Background(), task.Spec{Name: rpm.SyncTask, Args: rpm.SyncArgs{Repository: repo.PulpID, Remote: remote.PulpID,
		SyncPolicy: policy, SkipTypes: skip, Optimize: true}})
	if err != nil {
		e.t.Fatal(err)
	}
	return e.wait(tk)
}

// wait polls a task until it is final.
func (e *env) wait(tk task.Task) task.Task {
	e.t.Helper()
	ctx := context.Background()
	var err error
	deadline := time.Now().Add(60 * time.Second)
	for {
		tk, err = task.Get(ctx, e.db, tk.PulpID)
		if err != nil {
			e.t.Fatal(err)
		}
		if task.Final(tk.State) {
			return tk
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("sync still %s", tk.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) latest(repo meta.Repository) meta.Version {
	e.t.Helper()
	r, err := meta.RepositoryByID(context.Background(), e.db, repo.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	v, err := meta.VersionByNumber(context.Background(), e.db, r.ID, r.LatestVersion)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// The zoo fixture synced on demand: every unit type counted; zoo2 mirrored removes what
// zoo2 lacks, while an additive sync keeps it; an unchanged repository makes no version.
func TestSyncZoo(t *testing.T) {
	e := newEnv(t)
	repo := e.repo("zoo")
	zoo := e.remote("zoo", "yum-katello/zoo/", "on_demand")
	if tk := e.sync(repo, zoo, rpm.Additive); tk.State != task.Completed {
		t.Fatalf("sync: %s %s", tk.State, tk.Error)
	}
	v := e.latest(repo)
	want := map[string]int64{rpm.PackageType: 20, rpm.AdvisoryType: 7, rpm.ModulemdType: 6, rpm.DefaultsType: 3,
		rpm.GroupType: 2, rpm.CategoryType: 1, rpm.EnvironmentType: 1, rpm.DistributionTreeType: 1, rpm.RepoMetadataFileType: 1}
	for typ, n := range want {
		if v.Summary.Present[typ] != n {
			t.Errorf("%s: %d present, want %d (summary %v)", typ, v.Summary.Present[typ], n, v.Summary.Present)
		}
	}
	// walrus-5.21 is an artifact of a module: modular; walrus-0.3 is not.
	for nevra, want := range map[string]bool{"walrus-0:5.21-1.noarch": true, "walrus-0:0.3-0.8.noarch": false} {
		var attrs string
		if err := e.db.QueryRow(context.Background(), `SELECT attrs FROM contents WHERE type = ? AND repo_key = ?`, rpm.PackageType, nevra).Scan(&attrs); err != nil {
			t.Fatal(nevra, err)
		}
		if got := strings.Contains(attrs, `"is_modular":true`); got != want {
			t.Errorf("%s: is_modular %v, want %v", nevra, got, want)
		}
	}
	// Unchanged upstream, same settings: no new version.
	if tk := e.sync(repo, zoo, rpm.Additive); tk.State != task.Completed || e.latest(repo).Number != v.Number {
		t.Fatalf("unchanged re-sync: %s, version %d", tk.State, e.latest(repo).Number)
	}
	zoo2 := e.remote("zoo2", "yum-katello/zoo2/", "on_demand")
	additive := e.repo("additive")
	e.sync(additive, zoo, rpm.Additive)
	if tk := e.sync(additive, zoo2, rpm.Additive); tk.State != task.Completed {
		t.Fatalf("additive zoo2: %s %s", tk.State, tk.Error)
	}
	if n := e.latest(additive).Summary.Present[rpm.PackageType]; n < 20 {
		t.Errorf("additive sync of zoo2 kept %d packages, want at least zoo's 20", n)
	}
	if tk := e.sync(repo, zoo2, rpm.MirrorContentOnly); tk.State != task.Completed {
		t.Fatalf("mirror zoo2: %s %s", tk.State, tk.Error)
	}
	if n := e.latest(repo).Summary.Present[rpm.PackageType]; n != 14 {
		t.Errorf("mirror sync of zoo2: %d packages, want zoo2's 14", n)
	}
}

// Policy immediate stores every package, each verified against primary's checksum.
func TestSyncImmediate(t *testing.T) {
	e := newEnv(t)
	repo := e.repo("zoo")
	if tk := e.sync(repo, e.remote("zoo", "yum-katello/zoo", "immediate"), rpm.Additive, "srpm"); tk.State != task.Completed {
		t.Fatalf("sync: %s %s", tk.State, tk.Error)
	}
	if n := e.latest(repo).Summary.Present[rpm.PackageType]; n != 19 {
		t.Errorf("%d packages with srpm skipped, want 19", n)
	}
	var missing int
	e.db.QueryRow(context.Background(), `SELECT count(*) FROM content_artifacts WHERE artifact_id IS NULL`).Scan(&missing)
	if missing != 0 {
		t.Errorf("%d package files without an artifact after an immediate sync", missing)
	}
}

// Broken upstreams fail with an error naming the file and leave no version.
func TestSyncBadInput(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		path, want string
	}{
		{"yum-katello/nonexistent/", "repomd.xml"},
		{"rpm-edge-cases/repo_00/", ""},
	} {
		repo := e.repo("bad-" + strings.ReplaceAll(tc.path, "/", "-"))
		tk := e.sync(repo, e.remote("r-"+repo.Name, tc.path, "on_demand"), rpm.Additive)
		if tc.want == "" {
			continue
		}
		if tk.State != task.Failed || !strings.Contains(string(tk.Error), tc.want) {
			t.Errorf("%s: %s %s, want failure naming %q", tc.path, tk.State, tk.Error, tc.want)
		}
		if v := e.latest(repo); v.Number != 0 {
			t.Errorf("%s: version %d left after a failed sync", tc.path, v.Number)
		}
	}
}

// mirror_complete republishes zoo as it is: repomd.xml byte for byte, every file it
// lists (the sqlite databases and productid too), each package at its upstream location,
// and the distribution tree's .treeinfo and images. A repomd.xml pointing outside the
// repository is refused and leaves no version.
func TestSyncMirrorComplete(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	repo := e.repo("zoo")
	tk := e.sync(repo, e.remote("zoo", "yum-katello/zoo/", "on_demand"), rpm.MirrorComplete)
	if tk.State != task.Completed {
		t.Fatalf("sync: %s %s", tk.State, tk.Error)
	}
	pub, paths := e.publication(tk)
	if pub.VersionNumber != e.latest(repo).Number {
		t.Errorf("publication of version %d, latest is %d", pub.VersionNumber, e.latest(repo).Number)
	}
	upstream := filepath.Join(data, "yum-katello/zoo")
	want, err := os.ReadFile(filepath.Join(upstream, "repodata/repomd.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.read(pub, "repodata/repomd.xml"); !bytes.Equal(got, want) {
		t.Errorf("published repomd.xml differs from upstream's")
	}
	hrefs := regexp.MustCompile(`href="([^"]+)"`).FindAllStringSubmatch(string(want), -1)
	for _, h := range hrefs {
		if !slices.Contains(paths, h[1]) {
			t.Errorf("%s, listed in repomd.xml, is not published", h[1])
		}
	}
	for _, p := range []string{"armadillo-0.1-1.noarch.rpm", "test-srpm01-1.0-1.src.rpm", ".treeinfo", "images/test1.img", "empty.iso"} {
		if !slices.Contains(paths, p) {
			t.Errorf("%s is not published at its upstream location (published: %v)", p, paths)
		}
	}
	if len(hrefs) != 11 {
		t.Errorf("%d records in zoo's repomd.xml, want 11", len(hrefs))
	}

	// A repomd.xml naming a file under xml:base can't be mirrored.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "repodata"), 0o755)
	based := strings.Replace(string(want), `<location href="repodata/b45d`, `<location xml:base="http://elsewhere.example/" href="repodata/b45d`, 1)
	os.WriteFile(filepath.Join(dir, "repodata/repomd.xml"), []byte(based), 0o644)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	bad := e.repo("based")
	m, err := meta.CreateRemote(ctx, e.db, meta.Remote{Type: rpm.RepoType, Name: "based", URL: srv.URL + "/", Policy: "on_demand"})
	if err != nil {
		t.Fatal(err)
	}
	tk = e.sync(bad, m, rpm.MirrorComplete)
	if tk.State != task.Failed || !strings.Contains(string(tk.Error), "xml:base") || !strings.Contains(string(tk.Error), "mirror_content_only") {
		t.Errorf("xml:base mirrored: %s %s", tk.State, tk.Error)
	}
	if v := e.latest(bad); v.Number != 0 {
		t.Errorf("version %d left by a refused mirror", v.Number)
	}
}
