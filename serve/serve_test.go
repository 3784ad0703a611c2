package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pith/blob"
	"pith/blob/driver/fs"
	"pith/content"
	"pith/internal/testcert"
	"pith/meta"
	"pith/serve/guard"
	"pith/serve/guard/cert"
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
	// The same file published, for the uncached path of a published repository (what
	// dnf hosts hit): resolved in the database and read from storage every time.
	refs, _ := meta.ContentFiles(ctx, db, c.ID)
	var pub meta.Publication
	db.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		pub, err = meta.CreatePublication(ctx, tx, meta.Publication{Type: "file.file", RepositoryID: repo.ID, VersionNumber: 1},
			[]meta.PublishedFile{{RelativePath: "Packages/f", ContentArtifactID: &refs[0].ContentArtifactID}})
		return err
	})
	meta.CreateDistribution(ctx, db, meta.Distribution{Type: "file.file", Name: "p", BasePath: "p", PublicationID: &pub.ID})
	// The cached path behind certificate guards, the client's certificate at the TLS
	// handshake or in a trusted proxy's header: what a guard adds to a request, once the
	// client's certificate is in the guard's cache.
	ca := testcert.NewCA(b, "hosts CA")
	const base = "ACME/Library/content/dist/b"
	client, ent := ca.Client(b, "host-1"), ca.Entitlement(b, "host-2", "/ACME/Library/content/dist/$releasever")
	for _, typ := range []string{"x509", "rhsm"} {
		attrs, _ := json.Marshal(map[string]string{"ca_certificate": string(ca.PEM)})
		var g meta.ContentGuard
		db.Tx(ctx, func(tx *meta.Tx) error {
			var err error
			g, err = meta.CreateGuard(ctx, tx, meta.ContentGuard{Type: "certguard." + typ, Name: typ, Attrs: attrs})
			return err
		})
		meta.CreateDistribution(ctx, db, meta.Distribution{Type: "file.file", Name: typ, BasePath: base + "/" + typ, RepositoryID: &repo.ID, ContentGuard: &g.PulpID})
	}
	guarded := Options{Guards: guard.Env{Certs: cert.NewCache(100), FromProxy: func(*http.Request) bool { return true }}}
	byTLS := func(l testcert.Leaf) func(*http.Request) {
		return func(r *http.Request) { r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{l.Cert}} }
	}
	byHeader := func(l testcert.Leaf) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("X-Client-Cert", url.PathEscape(string(l.CertPEM))) }
	}
	for _, bc := range []struct {
		name, path string
		opt        Options
		prep       func(*http.Request)
	}{
		{"cached", "/pulp/content/b/Packages/f", Options{}, nil},
		{"published-uncached", "/pulp/content/p/Packages/f", Options{NoCache: true}, nil},
		{"cached-x509-tls", "/pulp/content/" + base + "/x509/Packages/f", guarded, byTLS(client)},
		{"cached-x509-header", "/pulp/content/" + base + "/x509/Packages/f", guarded, byHeader(client)},
		{"cached-rhsm-tls", "/pulp/content/" + base + "/rhsm/Packages/f", guarded, byTLS(ent)},
		{"cached-rhsm-header", "/pulp/content/" + base + "/rhsm/Packages/f", guarded, byHeader(ent)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv := New(db, store, bc.opt)
			req := httptest.NewRequest("GET", bc.path, nil)
			if bc.prep != nil {
				bc.prep(req)
			}
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatal(rec.Code)
				}
			}
		})
	}
}

func TestHeadersAndErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	v := f.version(f.stored("repodata/repomd.xml", []byte("<repomd/>")), f.stored("notes.txt", []byte("hello")))
	pub := f.publish(v.Number)
	if _, err := meta.CreateDistribution(ctx, f.db, meta.Distribution{Type: "file.file", Name: "d", BasePath: "el9", PublicationID: &pub.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := meta.CreateDistribution(ctx, f.db, meta.Distribution{Type: "file.file", Name: "h", BasePath: "secret", PublicationID: &pub.ID, Hidden: true}); err != nil {
		t.Fatal(err)
	}
	rec := f.get("/pulp/content/el9/repodata/repomd.xml")
	if rec.Code != 200 || rec.Header().Get("Cache-Control") != "no-cache" {
		t.Errorf("repomd.xml: %d %v", rec.Code, rec.Header())
	}
	rec = f.get("/pulp/content/el9/notes.txt")
	if ct := rec.Header().Get("Content-Type"); ct != "text/plain" || rec.Header().Get("Cache-Control") != "" {
		t.Errorf("notes.txt: Content-Type %q, Cache-Control %q", ct, rec.Header().Get("Cache-Control"))
	}
	rec = f.get("/pulp/content/el9/repodata/nothing.xml")
	if rec.Code != 404 || !strings.Contains(rec.Body.String(), "/pulp/content/el9/repodata/nothing.xml") {
		t.Errorf("missing file: %d %q", rec.Code, rec.Body.String())
	}
	rec = f.get("/pulp/content/")
	if !strings.Contains(rec.Body.String(), `<a href="el9/">el9/</a>`) || strings.Contains(rec.Body.String(), "secret") {
		t.Errorf("root listing shows el9 and hides hidden distributions:\n%s", rec.Body.String())
	}
	if !strings.HasPrefix(rec.Body.String(), "<!DOCTYPE html>\n<html>\n<head><title>Index of /pulp/content/</title></head>") {
		t.Errorf("listing format:\n%s", rec.Body.String())
	}
	if rec := f.get("/pulp/content/secret/notes.txt"); rec.Code != 200 {
		t.Errorf("hidden distributions are still served: %d", rec.Code)
	}
	if rec := f.get("/pulp/content"); rec.Code != 301 || rec.Header().Get("Location") != "/pulp/content/" {
		t.Errorf("prefix without slash: %d %v", rec.Code, rec.Header())
	}
	rec = httptest.NewRecorder()
	f.srv.ServeHTTP(rec, httptest.NewRequest("POST", "/pulp/content/el9/notes.txt", nil))
	if rec.Code != 405 || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d %v", rec.Code, rec.Header())
	}

	// Misses are cached until Invalidate.
	if rec := f.get("/pulp/content/later/notes.txt"); rec.Code != 404 {
		t.Fatalf("unknown base path: %d", rec.Code)
	}
	if _, err := meta.CreateDistribution(ctx, f.db, meta.Distribution{Type: "file.file", Name: "l", BasePath: "later", PublicationID: &pub.ID}); err != nil {
		t.Fatal(err)
	}
	f.srv.Invalidate()
	if rec := f.get("/pulp/content/later/notes.txt"); rec.Code != 200 || rec.Body.String() != "hello" {
		t.Errorf("after Invalidate: %d %q", rec.Code, rec.Body.String())
	}
}

// A path made to be costly (the issue: one of 900 kB took 8.5 s of CPU to match) is
// refused before any work, with 414; the longest and deepest paths a unit can have
// are still served.
func TestPathBounds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	deep := strings.Repeat("d/", 200) + strings.Repeat("n", content.MaxRelativePath-400)
	v := f.version(f.stored(deep, []byte("deep")))
	pub := f.publish(v.Number)
	base := strings.Repeat("b", content.MaxRelativePath-12) + "/" + strings.Repeat("c/", 4) + "el9"
	if len(base) != content.MaxRelativePath || len(deep) != content.MaxRelativePath {
		t.Fatalf("base path %d and relative path %d bytes", len(base), len(deep))
	}
	if _, err := meta.CreateDistribution(context.Background(), f.db, meta.Distribution{Type: "file.file", Name: "d", BasePath: base, PublicationID: &pub.ID}); err != nil {
		t.Fatal(err)
	}
	if rec := f.get("/pulp/content/" + base + "/" + deep); rec.Code != 200 || rec.Body.String() != "deep" {
		t.Errorf("the longest path: %d %.100q", rec.Code, rec.Body.String())
	}
	for name, path := range map[string]string{
		"900 kB":        "/pulp/content/" + base + "/" + strings.Repeat("x/", 450_000),
		"one byte over": "/pulp/content/" + base + "/" + deep + "/x/",
		"300 segments":  "/pulp/content/" + strings.Repeat("s/", 300),
	} {
		if rec := f.get(path); rec.Code != http.StatusRequestURITooLong || len(rec.Body.String()) > 100 {
			t.Errorf("%s: %d %.100q", name, rec.Code, rec.Body.String())
		}
	}
}

// What the content app serves cannot act in a browser, even on the API's origin: a unit
// a hostile upstream named javascript:… is a relative link in listings, and every
// answer (files of any type, listings, errors, redirects) tells browsers not to sniff
// types and to sandbox the document.
func TestContentIsInert(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	v := f.version(f.stored("javascript:alert(document.domain)", []byte("x")), f.stored("page.html", []byte("<script>alert(1)</script>")),
		f.stored("img.svg", []byte("<svg onload=alert(1)>")), f.stored("data:text/html,x/y", []byte("y")), f.stored("big.bin", make([]byte, smallMax+1)))
	pub := f.publish(v.Number)
	if _, err := meta.CreateDistribution(context.Background(), f.db, meta.Distribution{Type: "file.file", Name: "d", BasePath: "up", PublicationID: &pub.ID}); err != nil {
		t.Fatal(err)
	}
	rec := f.get("/pulp/content/up/")
	hrefs := regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(rec.Body.String(), -1)
	if rec.Code != 200 || len(hrefs) != 6 {
		t.Fatalf("listing: %d\n%s", rec.Code, rec.Body.String())
	}
	for _, m := range hrefs {
		if u, err := url.Parse(html.UnescapeString(m[1])); err != nil || u.Scheme != "" || u.Host != "" {
			t.Errorf("listing links to %q, not a relative path", m[1])
		}
	}
	req := httptest.NewRequest("POST", "/pulp/content/up/page.html", nil)
	post := httptest.NewRecorder()
	f.srv.ServeHTTP(post, req)
	for name, rec := range map[string]*httptest.ResponseRecorder{
		"html": f.get("/pulp/content/up/page.html"), "svg": f.get("/pulp/content/up/img.svg"),
		"html range": f.get("/pulp/content/up/page.html", "Range", "bytes=0-3"),
		"large file": f.get("/pulp/content/up/big.bin"),
		"listing":    rec, "root listing": f.get("/pulp/content/"),
		"missing": f.get("/pulp/content/up/missing.html"), "no distribution": f.get("/pulp/content/nowhere/x.html"),
		"redirect": f.get("/pulp/content/up"), "method": post,
		"long path": f.get("/pulp/content/" + strings.Repeat("x/", 300)),
	} {
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" || rec.Header().Get("Content-Security-Policy") != "default-src 'none'; sandbox" {
			t.Errorf("%s (%d): headers %v", name, rec.Code, rec.Header())
		}
	}
}

func TestListingHref(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"b.iso": "b.iso", "dir/": "dir/", "a b": "a%20b", "<i>": "%3Ci%3E", `"`: "%22",
		"javascript:alert(document.domain)": "./javascript:alert%28document.domain%29",
		"JavaScript:x/":                     "./JavaScript:x/", "data:text": "./data:text", "a:": "./a:",
	} {
		if got := href(name); got != want {
			t.Errorf("href(%q) = %q, want %q", name, got, want)
		}
	}
}

// redirecting is a blob driver that hands out URLs and counts them.
type redirecting struct {
	blob.Driver
	signed *atomic.Int32
}

func (r redirecting) URL(_ context.Context, sha string, o blob.URLOptions) (string, error) {
	r.signed.Add(1)
	return "https://bucket.example/" + sha + "?type=" + o.ContentType, nil
}

func TestRedirectToStorage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	data := []byte("redirected")
	f.version(f.stored("r.txt", data))
	if _, err := meta.CreateDistribution(context.Background(), f.db, meta.Distribution{Type: "file.file", Name: "d", BasePath: "rd", RepositoryID: &f.repo.ID}); err != nil {
		t.Fatal(err)
	}
	var signed atomic.Int32
	store, err := blob.New(redirecting{f.store.Driver(), &signed}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = New(f.db, store, Options{RedirectToStorage: true})
	for range 3 {
		rec := f.get("/pulp/content/rd/r.txt")
		if rec.Code != 302 || rec.Header().Get("Location") != "https://bucket.example/"+sum(data)+"?type=text/plain" || rec.Body.Len() != 0 {
			t.Errorf("redirect: %d %v %q", rec.Code, rec.Header(), rec.Body)
		}
	}
	if n := signed.Load(); n != 1 {
		t.Errorf("%d URLs signed for 3 requests of one file, want 1 (reused)", n)
	}
	f.srv = New(f.db, store, Options{RedirectToStorage: true, NoCache: true})
	f.get("/pulp/content/rd/r.txt")
	f.get("/pulp/content/rd/r.txt")
	if n := signed.Load(); n != 3 {
		t.Errorf("%d URLs signed after 2 more requests without the cache, want 3", n)
	}
	f.srv = New(f.db, store, Options{})
	if rec := f.get("/pulp/content/rd/r.txt"); rec.Code != 200 || rec.Body.String() != "redirected" {
		t.Errorf("without RedirectToStorage: %d %q", rec.Code, rec.Body.String())
	}
}

// gate is an upstream that holds every request until released, then fails it.
type gate struct {
	arrived chan struct{}
	release chan struct{}
	status  int
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.arrived <- struct{}{}
	<-g.release
	http.Error(w, "upstream says no", g.status)
}

func TestOnDemandUpstreamFailures(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	up := &upstream{files: map[string][]byte{}}
	us := httptest.NewServer(up)
	defer us.Close()
	g := &gate{arrived: make(chan struct{}, 10), release: make(chan struct{}), status: 500}
	gs := httptest.NewServer(g)
	defer gs.Close()
	secretURL := strings.Replace(gs.URL, "http://", "http://user:hunter2@", 1) + "/broken.bin"
	f.version(f.remote("gone.bin", us.URL+"/gone.bin", []byte("x"), "on_demand"),
		f.remote("broken.bin", secretURL, []byte("y"), "on_demand"))
	if _, err := meta.CreateDistribution(context.Background(), f.db, meta.Distribution{Type: "file.file", Name: "d", BasePath: "f", RepositoryID: &f.repo.ID}); err != nil {
		t.Fatal(err)
	}
	if rec := f.get("/pulp/content/f/gone.bin"); rec.Code != 404 {
		t.Errorf("upstream 404: %d %q", rec.Code, rec.Body.String())
	}

	// The leader blocks upstream while followers queue behind it; all of them get 502.
	codes := make(chan *httptest.ResponseRecorder, 4)
	go func() { codes <- f.get("/pulp/content/f/broken.bin") }()
	<-g.arrived
	f.srv.mu.Lock()
	var fl *flight
	for _, x := range f.srv.flight {
		fl = x
	}
	f.srv.mu.Unlock()
	for range 3 {
		go func() { codes <- f.get("/pulp/content/f/broken.bin") }()
	}
	for fl.waiters.Load() < 3 {
		runtime.Gosched()
	}
	close(g.release)
	for range 4 {
		rec := <-codes
		if rec.Code != 502 || !strings.Contains(rec.Body.String(), "/pulp/content/f/broken.bin") || strings.Contains(rec.Body.String(), "hunter2") {
			t.Errorf("upstream failure: %d %q", rec.Code, rec.Body.String())
		}
	}
	if n := len(g.arrived); n != 0 {
		t.Errorf("followers went upstream %d more times", n)
	}
}

// Files above the in-memory size go out from the blob file (sendfile on a real connection).
func TestLargeFileFromStore(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	data := bytes.Repeat([]byte("0123456789abcdef"), 10<<10) // 160 KiB
	f.version(f.stored("big.bin", data))
	if _, err := meta.CreateDistribution(context.Background(), f.db, meta.Distribution{Type: "file.file", Name: "d", BasePath: "big", RepositoryID: &f.repo.ID}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f.srv)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/pulp/content/big/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, data) {
		t.Fatalf("GET: %d, %d bytes, %v", resp.StatusCode, len(body), err)
	}
	if resp.Header.Get("ETag") != `"`+sum(data)+`"` || resp.Header.Get("X-PULP-ARTIFACT-SIZE") != fmt.Sprint(len(data)) {
		t.Errorf("headers: %v", resp.Header)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/pulp/content/big/big.bin", nil)
	req.Header.Set("Range", "bytes=16-31")
	req.Header.Set("If-Range", `"`+sum(data)+`"`)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 206 || string(body) != "0123456789abcdef" {
		t.Errorf("If-Range: %d %q", resp.StatusCode, body)
	}
}

// With NoCache every request is resolved in the database and read from storage: nothing
// is kept, and the answers are the same.
func TestNoCache(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.srv = New(f.db, f.store, Options{NoCache: true})
	data := []byte("small file")
	pub := f.publish(f.version(f.stored("a.txt", data)).Number)
	if _, err := meta.CreateDistribution(context.Background(), f.db, meta.Distribution{Type: "file.file", Name: "d", BasePath: "nc", PublicationID: &pub.ID}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if rec := f.get("/pulp/content/nc/a.txt"); rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), data) {
			t.Fatalf("GET %d: %d %q", i, rec.Code, rec.Body.String())
		}
		if rec := f.get("/pulp/content/nc/missing"); rec.Code != 404 {
			t.Fatalf("GET missing %d: %d", i, rec.Code)
		}
	}
	if n := f.srv.cache.Len(); n != 0 {
		t.Errorf("%d resolutions cached", n)
	}
	if sf := f.srv.small.get(sum(data)); sf != nil {
		t.Errorf("the small file was cached")
	}
}

// An on-demand file an alternate content source has is fetched from the source, not
// the remote; a source that serves a wrong file is passed over afterwards and the
// remote asked.
func TestOnDemandFromAlternateSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	good := bytes.Repeat([]byte("from the source "), 1000)
	other := bytes.Repeat([]byte("b"), 500)
	up := &upstream{files: map[string][]byte{"/a.bin": good, "/b.bin": other}}
	us := httptest.NewServer(up)
	defer us.Close()
	alt := &upstream{files: map[string][]byte{"/mirror/a.bin": good, "/mirror/b.bin": bytes.Repeat([]byte("x"), 500)}}
	as := httptest.NewServer(alt)
	defer as.Close()
	f.version(f.remote("a.bin", us.URL+"/a.bin", good, "on_demand"), f.remote("b.bin", us.URL+"/b.bin", other, "on_demand"))
	if _, err := meta.CreateDistribution(ctx, f.db, meta.Distribution{Type: "file.file", Name: "d", BasePath: "acs", RepositoryID: &f.repo.ID}); err != nil {
		t.Fatal(err)
	}
	m, err := meta.CreateRemote(ctx, f.db, meta.Remote{Type: "file.file", Name: "acs-remote", URL: as.URL + "/mirror/", Policy: "on_demand",
		Attrs: json.RawMessage(`{"tls_validation":true,"max_retries":0}`)})
	if err != nil {
		t.Fatal(err)
	}
	x, err := meta.CreateACS(ctx, f.db, meta.ACS{Type: "file.file", Name: "acs", RemoteID: m.ID, Paths: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	err = meta.SetACSFiles(ctx, f.db, x.ID, "", []meta.ACSFile{{SHA256: sum(good), Size: int64(len(good)), URL: as.URL + "/mirror/a.bin"},
		{SHA256: sum(other), Size: int64(len(other)), URL: as.URL + "/mirror/b.bin"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f.srv)
	defer srv.Close()
	fetch := func(p string) (int, []byte) {
		resp, err := http.Get(srv.URL + "/pulp/content/acs/" + p)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return 0, nil // aborted
		}
		return resp.StatusCode, b
	}
	if code, b := fetch("a.bin"); code != 200 || !bytes.Equal(b, good) {
		t.Fatalf("a.bin: %d, %d bytes", code, len(b))
	}
	if alt.count("/mirror/a.bin") != 1 || up.count("/a.bin") != 0 {
		t.Errorf("a.bin: source asked %d times, remote %d; want 1 and 0", alt.count("/mirror/a.bin"), up.count("/a.bin"))
	}
	// The file is stored once the client has it.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := meta.ArtifactBySHA256(ctx, f.db, sum(good)); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("a.bin from the source was not stored: %v", err)
		}
	}
	// b.bin: the source's file has the size but not the bytes. The first request is
	// answered from the remote when the downloader finds it out before the answer
	// starts, and aborted otherwise; either way the next comes from the remote, whole.
	if code, b := fetch("b.bin"); code != 0 && (code != 200 || !bytes.Equal(b, other)) {
		t.Errorf("b.bin at first: %d, %d bytes", code, len(b))
	}
	if code, b := fetch("b.bin"); code != 200 || !bytes.Equal(b, other) {
		t.Fatalf("b.bin after the source failed: %d, %d bytes", code, len(b))
	}
	if alt.count("/mirror/b.bin") != 1 || up.count("/b.bin") != 1 {
		t.Errorf("b.bin: source asked %d times, remote %d; want 1 and 1", alt.count("/mirror/b.bin"), up.count("/b.bin"))
	}
	if _, err := meta.ArtifactBySHA256(ctx, f.db, sum(bytes.Repeat([]byte("x"), 500))); err == nil {
		t.Error("the source's wrong file was stored")
	}
}
