package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pith/blob"
	"pith/blob/driver/fs"
	"pith/meta"
)

type fixture struct {
	t     *testing.T
	db    *meta.DB
	store *blob.Store
	srv   *Server
	repo  meta.Repository
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := meta.Open(ctx, filepath.Join(dir, "pith.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	drv, err := fs.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	store, _ := blob.New(drv, nil)
	repo, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: "r"})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, db: db, store: store, srv: New(db, store, Options{GracePeriod: time.Hour}), repo: repo}
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// stored adds a unit whose file is in the store.
func (f *fixture) stored(path string, data []byte) meta.Content {
	f.t.Helper()
	ctx := context.Background()
	d, err := f.store.Put(ctx, bytes.NewReader(data), blob.Expect{Size: -1})
	if err != nil {
		f.t.Fatal(err)
	}
	a, _, err := meta.PutArtifact(ctx, f.db, meta.Artifact{Size: d.Size, SHA256: d.SHA256})
	if err != nil {
		f.t.Fatal(err)
	}
	return f.unit(path, d.SHA256, meta.ContentFile{RelativePath: path, ArtifactID: &a.ID})
}

func (f *fixture) unit(path, digest string, file meta.ContentFile) meta.Content {
	f.t.Helper()
	c, _, err := meta.PutContent(context.Background(), f.db, meta.Content{Type: "file.file", NaturalKey: digest + ":" + path,
		RepoKey: path, RelativePath: path, Digest: digest}, []meta.ContentFile{file})
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// remote adds an on-demand unit fetched from url.
func (f *fixture) remote(path, url string, data []byte, policy string) meta.Content {
	f.t.Helper()
	m, err := meta.CreateRemote(context.Background(), f.db, meta.Remote{Type: "file.file", Name: "m-" + path, URL: url, Policy: policy,
		Attrs: json.RawMessage(`{"tls_validation":true,"max_retries":0}`)})
	if err != nil {
		f.t.Fatal(err)
	}
	size := int64(len(data))
	return f.unit(path, sum(data), meta.ContentFile{RelativePath: path, RemoteID: &m.ID, URL: url, Size: &size, SHA256: sum(data)})
}

func (f *fixture) version(add ...meta.Content) meta.Version {
	f.t.Helper()
	var ids []int64
	for _, c := range add {
		ids = append(ids, c.ID)
	}
	var v meta.Version
	err := f.db.Tx(context.Background(), func(tx *meta.Tx) error {
		var err error
		v, _, err = meta.NewVersion(context.Background(), tx, f.repo.ID, meta.Change{Add: ids})
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return v
}

func (f *fixture) publish(n int64) meta.Publication {
	f.t.Helper()
	ctx := context.Background()
	ids, _ := meta.VersionContentIDs(ctx, f.db, f.repo.ID, n)
	var files []meta.PublishedFile
	for _, id := range ids {
		refs, _ := meta.ContentFiles(ctx, f.db, id)
		for _, r := range refs {
			ca := r.ContentArtifactID
			files = append(files, meta.PublishedFile{RelativePath: r.RelativePath, ContentArtifactID: &ca})
		}
	}
	var p meta.Publication
	err := f.db.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		p, err = meta.CreatePublication(ctx, tx, meta.Publication{Type: "file.file", RepositoryID: f.repo.ID, VersionNumber: n}, files)
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *fixture) get(path string, hdr ...string) *httptest.ResponseRecorder {
	f.t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, req)
	return rec
}

func TestPublishedFiles(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	data := []byte(strings.Repeat("0123456789", 100))
	v := f.version(f.stored("dir/a.txt", data), f.stored("b.iso", []byte("bee")))
	pub := f.publish(v.Number)
	if _, err := meta.CreateDistribution(context.Background(), f.db, meta.Distribution{Type: "file.file", Name: "d", BasePath: "base/path", PublicationID: &pub.ID}); err != nil {
		t.Fatal(err)
	}
	rec := f.get("/pulp/content/base/path/dir/a.txt")
	if rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), data) {
		t.Fatalf("GET: %d %q", rec.Code, rec.Body.String())
	}
	etag := rec.Header().Get("ETag")
	if etag != `"`+sum(data)+`"` || rec.Header().Get("Last-Modified") == "" || rec.Header().Get("X-PULP-ARTIFACT-SIZE") != "1000" {
		t.Errorf("headers: %v", rec.Header())
	}
	if rec := f.get("/pulp/content/base/path/dir/a.txt", "Range", "bytes=10-19"); rec.Code != 206 || rec.Body.String() != "0123456789" {
		t.Errorf("range: %d %q", rec.Code, rec.Body.String())
	}
	if rec := f.get("/pulp/content/base/path/dir/a.txt", "If-None-Match", etag); rec.Code != 304 {
		t.Errorf("conditional GET: %d", rec.Code)
	}
	req := httptest.NewRequest("HEAD", "/pulp/content/base/path/b.iso", nil)
	hrec := httptest.NewRecorder()
	f.srv.ServeHTTP(hrec, req)
	if hrec.Code != 200 || hrec.Body.Len() != 0 || hrec.Header().Get("Content-Length") != "3" {
		t.Errorf("HEAD: %d %q %v", hrec.Code, hrec.Body.String(), hrec.Header())
	}
	for path, code := range map[string]int{
		"/pulp/content/base/path/missing": 404, "/pulp/content/nowhere/x": 404, "/pulp/content/base/path/dir": 301,
		"/pulp/content/base/path": 301, "/pulp/content/base": 301,
	} {
		if rec := f.get(path); rec.Code != code {
			t.Errorf("%s: %d, want %d", path, rec.Code, code)
		}
	}
	rec = f.get("/pulp/content/base/path/")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `<a href="dir/">dir/</a>`) || !strings.Contains(rec.Body.String(), `<a href="b.iso">b.iso</a>`) {
		t.Errorf("listing: %d\n%s", rec.Code, rec.Body.String())
	}
	if rec := f.get("/pulp/content/"); !strings.Contains(rec.Body.String(), "base/") {
		t.Errorf("root listing:\n%s", rec.Body.String())
	}
}

// A distribution of a repository serves its latest version (or that version's
// publication); a superseded publication stays servable during the grace period.
func TestRepositoryAndGracePeriod(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	old := f.stored("old.txt", []byte("old"))
	v1 := f.version(old)
	d, err := meta.CreateDistribution(ctx, f.db, meta.Distribution{Type: "file.file", Name: "d", BasePath: "r", RepositoryID: &f.repo.ID})
	if err != nil {
		t.Fatal(err)
	}
	if rec := f.get("/pulp/content/r/old.txt"); rec.Code != 200 || rec.Body.String() != "old" {
		t.Fatalf("repository version: %d %q", rec.Code, rec.Body.String())
	}
	p1 := f.publish(v1.Number)
	// Switch the distribution to a publication without old.txt.
	var ids []int64
	newer := f.stored("new.txt", []byte("new"))
	err = f.db.Tx(ctx, func(tx *meta.Tx) error {
		v, _, err := meta.NewVersion(ctx, tx, f.repo.ID, meta.Change{RemoveAll: true, Add: []int64{newer.ID}})
		ids = append(ids, v.Number)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	p2 := f.publish(ids[0])
	d.PublicationID, d.RepositoryID = &p1.ID, nil
	meta.UpdateDistribution(ctx, f.db, d, meta.Now()+time.Hour.Microseconds())
	d.PublicationID = &p2.ID
	if err := meta.UpdateDistribution(ctx, f.db, d, meta.Now()+time.Hour.Microseconds()); err != nil {
		t.Fatal(err)
	}
	f.srv.Invalidate()
	if rec := f.get("/pulp/content/r/new.txt"); rec.Code != 200 {
		t.Errorf("new publication: %d", rec.Code)
	}
	if rec := f.get("/pulp/content/r/old.txt"); rec.Code != 200 || rec.Body.String() != "old" {
		t.Errorf("superseded publication within its grace period: %d", rec.Code)
	}
}

// upstream serves files and counts requests per path.
type upstream struct {
	files map[string][]byte
	hits  sync.Map
	delay time.Duration
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n, _ := u.hits.LoadOrStore(r.URL.Path, new(atomic.Int32))
	n.(*atomic.Int32).Add(1)
	b, ok := u.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	time.Sleep(u.delay)
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	w.Write(b)
}

func (u *upstream) count(p string) int32 {
	n, ok := u.hits.Load(p)
	if !ok {
		return 0
	}
	return n.(*atomic.Int32).Load()
}

func TestOnDemandCoalesces(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	data := bytes.Repeat([]byte("on demand "), 5000)
	up := &upstream{files: map[string][]byte{"/a.bin": data, "/bad.bin": []byte("tampered")}, delay: 50 * time.Millisecond}
	us := httptest.NewServer(up)
	defer us.Close()
	good := f.remote("a.bin", us.URL+"/a.bin", data, "on_demand")
	bad := f.remote("bad.bin", us.URL+"/bad.bin", []byte("expected"), "on_demand")
	f.version(good, bad)
	if _, err := meta.CreateDistribution(context.Background(), f.db, meta.Distribution{Type: "file.file", Name: "d", BasePath: "od", RepositoryID: &f.repo.ID}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f.srv)
	defer srv.Close()
	var wg sync.WaitGroup
	bodies := make([][]byte, 10)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(srv.URL + "/pulp/content/od/a.bin")
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			bodies[i], _ = io.ReadAll(resp.Body)
		}()
	}
	wg.Wait()
	for i, b := range bodies {
		if !bytes.Equal(b, data) {
			t.Errorf("client %d got %d bytes", i, len(b))
		}
	}
	if n := up.count("/a.bin"); n != 1 {
		t.Errorf("upstream was asked %d times for one file, want 1", n)
	}
	if _, err := meta.ArtifactBySHA256(context.Background(), f.db, sum(data)); err != nil {
		t.Errorf("fetched file was not stored: %v", err)
	}
	// A file that fails verification reaches the client truncated (aborted), never stored.
	resp, err := http.Get(srv.URL + "/pulp/content/od/bad.bin")
	if err == nil {
		b, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if rerr == nil && resp.StatusCode == 200 && string(b) == "expected" {
			t.Error("a file that failed verification was served as good")
		}
	}
	if _, err := meta.ArtifactBySHA256(context.Background(), f.db, sum([]byte("tampered"))); err == nil {
		t.Error("a file that failed verification was stored")
	}
	n := 0
	f.store.Walk(context.Background(), func(string, blob.Info) error { n++; return nil })
	if n != 1 {
		t.Errorf("%d blobs stored, want 1", n)
	}
}

func TestStreamedIsNotStored(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	data := []byte("streamed bytes")
	up := &upstream{files: map[string][]byte{"/s.bin": data}}
	us := httptest.NewServer(up)
	defer us.Close()
	f.version(f.remote("s.bin", us.URL+"/s.bin", data, "streamed"))
	meta.CreateDistribution(context.Background(), f.db, meta.Distribution{Type: "file.file", Name: "d", BasePath: "s", RepositoryID: &f.repo.ID})
	if rec := f.get("/pulp/content/s/s.bin"); rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), data) {
		t.Fatalf("streamed: %d %q", rec.Code, rec.Body.String())
	}
	if _, err := meta.ArtifactBySHA256(context.Background(), f.db, sum(data)); err == nil {
		t.Error("streamed content was stored")
	}
	if rec := f.get("/pulp/content/s/missing.bin"); rec.Code != 404 {
		t.Errorf("missing: %d", rec.Code)
	}
}

func BenchmarkServe1KiB(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	db, _ := meta.Open(ctx, filepath.Join(dir, "pith.db"))
	defer db.Close()
	db.Migrate(ctx)
	drv, _ := fs.New(filepath.Join(dir, "blobs"))
	store, _ := blob.New(drv, nil)
	repo, _ := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: "r"})
	d, _ := store.Put(ctx, bytes.NewReader(make([]byte, 1024)), blob.Expect{Size: -1})
	a, _, _ := meta.PutArtifact(ctx, db, meta.Artifact{Size: d.Size, SHA256: d.SHA256})
	c, _, _ := meta.PutContent(ctx, db, meta.Content{Type: "file.file", NaturalKey: "k", RepoKey: "f", RelativePath: "f", Digest: d.SHA256},
		[]meta.ContentFile{{RelativePath: "f", ArtifactID: &a.ID}})
	db.Tx(ctx, func(tx *meta.Tx) error {
		_, _, err := meta.NewVersion(ctx, tx, repo.ID, meta.Change{Add: []int64{c.ID}})
		return err
	})
	meta.CreateDistribution(ctx, db, meta.Distribution{Type: "file.file", Name: "d", BasePath: "b", RepositoryID: &repo.ID})
	srv := New(db, store, Options{})
	req := httptest.NewRequest("GET", "/pulp/content/b/f", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}
