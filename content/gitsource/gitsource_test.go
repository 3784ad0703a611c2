package gitsource

import (
	"context"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pith/content/download"
	"pith/internal/testgit"
)

// A real git server for the tests: bare repositories made with the git binary, served
// by git http-backend behind net/http/cgi.

func needGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

// repo is a repository being written, published as root/<name>.git.
type repo struct {
	t    testing.TB
	work string
	bare string
}

func newRepo(t testing.TB, root, name string) *repo {
	needGit(t)
	work := t.TempDir()
	testgit.Git(t, work, "init", "-q")
	return &repo{t: t, work: work, bare: filepath.Join(root, name+".git")}
}

// commit writes files (a value "->x" makes a symlink to x, "" removes the file) and
// commits them.
func (r *repo) commit(files map[string]string) string {
	r.t.Helper()
	for name, body := range files {
		p := filepath.Join(r.work, name)
		os.RemoveAll(p)
		if body == "" {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(body, "->"); ok {
			err = os.Symlink(target, p)
		} else {
			err = os.WriteFile(p, []byte(body), 0o644)
		}
		if err != nil {
			r.t.Fatal(err)
		}
	}
	testgit.Git(r.t, r.work, "add", "-A")
	testgit.Git(r.t, r.work, "commit", "-q", "--allow-empty", "-m", "c")
	return testgit.Git(r.t, r.work, "rev-parse", "HEAD")
}

// publish (re)writes the bare repository the server serves.
func (r *repo) publish() {
	r.t.Helper()
	os.RemoveAll(r.bare)
	testgit.Git(r.t, filepath.Dir(r.bare), "clone", "-q", "--bare", r.work, r.bare)
}

// published is a repository of one commit of files, published; it returns the commit.
func published(t testing.TB, root, name string, files map[string]string) (*repo, string) {
	r := newRepo(t, root, name)
	commit := r.commit(files)
	r.publish()
	return r, commit
}

// serve starts git http-backend over root; wrap, if set, goes in front of it.
func serve(t testing.TB, root string, tls bool, wrap func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	var h http.Handler = &cgi.Handler{Path: testgit.Backend(t), Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}}
	if wrap != nil {
		h = wrap(h)
	}
	var srv *httptest.Server
	if tls {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	return srv
}

// leftIn fails the test if dir holds anything: every temporary file is removed.
func leftIn(t testing.TB, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		t.Errorf("left behind: %s", e.Name())
	}
}

func read(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFetchRefs(t *testing.T) {
	root := t.TempDir()
	r := newRepo(t, root, "coll")
	first := r.commit(map[string]string{"a.txt": "one\n", "link": "->a.txt", "d/b.txt": "b\n"})
	testgit.Git(t, r.work, "tag", "v1")
	testgit.Git(t, r.work, "tag", "-a", "v1.1", "-m", "annotated")
	second := r.commit(map[string]string{"a.txt": "two\n"})
	testgit.Git(t, r.work, "checkout", "-q", "-b", "feature")
	third := r.commit(map[string]string{"a.txt": "three\n"})
	testgit.Git(t, r.work, "checkout", "-q", "main")
	r.publish()
	srv := serve(t, root, false, nil)
	for _, tc := range []struct {
		ref, commit, a string
	}{
		{"", second, "two\n"},
		{"main", second, "two\n"},
		{"feature", third, "three\n"},
		{"refs/heads/feature", third, "three\n"},
		{"v1", first, "one\n"},
		{"v1.1", first, "one\n"},
		{first, first, "one\n"},
		{first[:7], first, "one\n"},
	} {
		t.Run(tc.ref, func(t *testing.T) {
			tmp := t.TempDir()
			co, err := Fetch(context.Background(), Options{URL: srv.URL + "/coll.git", Ref: tc.ref, TempDir: tmp})
			if err != nil {
				t.Fatal(err)
			}
			if co.Commit != tc.commit || read(t, filepath.Join(co.Dir, "a.txt")) != tc.a {
				t.Errorf("commit %s, a.txt %q; want %s, %q", co.Commit, read(t, filepath.Join(co.Dir, "a.txt")), tc.commit, tc.a)
			}
			if l, err := os.Readlink(filepath.Join(co.Dir, "link")); err != nil || l != "a.txt" {
				t.Errorf("link: %q, %v", l, err)
			}
			ents, _ := os.ReadDir(co.Dir)
			for _, e := range ents {
				if e.Name() == ".git" {
					t.Errorf("the work tree holds .git")
				}
			}
			if err := co.Close(); err != nil {
				t.Fatal(err)
			}
			leftIn(t, tmp)
		})
	}
}

func TestFetchFails(t *testing.T) {
	root := t.TempDir()
	small, _ := published(t, root, "small", map[string]string{"a": "a\n"})
	big := newRepo(t, root, "big")
	random := make([]byte, 1<<20)
	rand.Read(random)
	big.commit(map[string]string{"random.bin": string(random)})
	big.publish()
	published(t, root, "bomb", map[string]string{"zeros": string(make([]byte, 8<<20))})
	many := newRepo(t, root, "many")
	// More names than a pipe holds: a listing stopped at the limit must stop git, not
	// leave it blocked on a full pipe until the deadline.
	files := map[string]string{}
	for i := range 1000 {
		files[fmt.Sprintf("f/%060d", i)] = "x"
	}
	many.commit(files)
	many.publish()
	published(t, root, "deep", map[string]string{"a/b/c/d/e/f": "x"})
	srv := serve(t, root, false, nil)
	missing := strings.Repeat("1", 40)
	for _, tc := range []struct {
		name, url, ref string
		lim            Limits
		kind           error
		want           string
	}{
		{"missing branch", srv.URL + "/small.git", "nope", Limits{}, ErrRefNotFound, `"nope"`},
		{"missing commit", srv.URL + "/small.git", missing, Limits{}, ErrRefNotFound, missing},
		{"missing abbreviated commit", srv.URL + "/small.git", "abcdef0", Limits{}, ErrRefNotFound, `"abcdef0"`},
		{"no repository", srv.URL + "/none.git", "", Limits{}, ErrFetch, "none.git"},
		{"fetched too much", srv.URL + "/big.git", "", Limits{Fetched: 256 << 10}, ErrLimit, "more than 262144 bytes"},
		{"tree too big", srv.URL + "/bomb.git", "", Limits{Checkout: 1 << 20}, ErrLimit, "larger than 1048576 bytes"},
		{"too many files", srv.URL + "/many.git", "", Limits{Files: 10, Timeout: time.Minute}, ErrLimit, "more than 10 entries"},
		{"too deep", srv.URL + "/deep.git", "", Limits{Depth: 4}, ErrLimit, "deeper than 4"},
		{"ext transport", "ext::sh -c touch% /tmp/pwned", "", Limits{}, ErrInvalid, "scheme"},
		{"file transport", "file://" + small.bare, "", Limits{}, ErrInvalid, "scheme"},
		{"local path", small.bare, "", Limits{}, ErrInvalid, "scheme"},
		{"ssh", "ssh://git@example.com/x.git", "", Limits{}, ErrInvalid, "scheme"},
		{"option as URL", "--upload-pack=touch /tmp/pwned", "", Limits{}, ErrInvalid, "not a URL"},
		{"option as ref", srv.URL + "/small.git", "--upload-pack=touch", Limits{}, ErrInvalid, "not a branch"},
		{"refspec as ref", srv.URL + "/small.git", "main:refs/heads/x", Limits{}, ErrInvalid, "not a branch"},
		{"range as ref", srv.URL + "/small.git", "a..b", Limits{}, ErrInvalid, "not a branch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			co, err := Fetch(context.Background(), Options{URL: tc.url, Ref: tc.ref, Limits: tc.lim, TempDir: tmp})
			if err == nil {
				co.Close()
			}
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Fetch: %v, want %v naming %q", err, tc.kind, tc.want)
			}
			leftIn(t, tmp)
		})
	}
}

// TestFetchSlowServer: a server that never answers fails at the deadline, and the git
// processes go with it.
func TestFetchSlowServer(t *testing.T) {
	needGit(t)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	tmp := t.TempDir()
	_, err := Fetch(context.Background(), Options{URL: srv.URL + "/x.git", Limits: Limits{Timeout: time.Second}, TempDir: tmp})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("Fetch: %v, want a timeout", err)
	}
	leftIn(t, tmp)
	// The caller's own cancellation is told apart from the deadline.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(200 * time.Millisecond); cancel() }()
	_, err = Fetch(ctx, Options{URL: srv.URL + "/x.git", TempDir: tmp})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Fatalf("Fetch cancelled: %v", err)
	}
}

// TestFetchIgnoresHostileConfig: whatever configuration the machine has (here a global
// one with a smudge filter and a hooks directory), a fetch runs no filter, hook or
// submodule, and leaves links as links.
func TestFetchIgnoresHostileConfig(t *testing.T) {
	root := t.TempDir()
	marker := filepath.Join(t.TempDir(), "pwned")
	hooks := t.TempDir()
	for _, h := range []string{"post-checkout", "post-merge", "reference-transaction"} {
		if err := os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	global := filepath.Join(t.TempDir(), "gitconfig")
	cfg := "[filter \"evil\"]\n\tsmudge = touch " + marker + "; cat\n\trequired = true\n[core]\n\thooksPath = " + hooks + "\n"
	if err := os.WriteFile(global, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	sub, _ := published(t, root, "sub", map[string]string{"s": "s\n"})
	r := newRepo(t, root, "evil")
	r.commit(map[string]string{".gitattributes": "* filter=evil\n", "a": "a\n", "out": "->/etc/passwd", "up": "->../../../x"})
	testgit.Git(t, r.work, "submodule", "add", "-q", sub.bare, "sub")
	testgit.Git(t, r.work, "commit", "-q", "-m", "sub")
	r.publish()
	srv := serve(t, root, false, nil)
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("HOME", filepath.Dir(global))
	co, err := Fetch(context.Background(), Options{URL: srv.URL + "/evil.git", TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a filter or hook of the machine's configuration ran")
	}
	if read(t, filepath.Join(co.Dir, "a")) != "a\n" {
		t.Error("a.txt changed")
	}
	if l, err := os.Readlink(filepath.Join(co.Dir, "out")); err != nil || l != "/etc/passwd" {
		t.Errorf("out: %q %v", l, err)
	}
	if ents, err := os.ReadDir(filepath.Join(co.Dir, "sub")); err != nil || len(ents) != 0 {
		t.Errorf("the submodule was fetched: %v %v", ents, err)
	}
}

// TestFetchRemoteSettings: TLS with the remote's CA, basic credentials given only when
// asked, headers, and the failures of each.
func TestFetchRemoteSettings(t *testing.T) {
	root := t.TempDir()
	_, commit := published(t, root, "private", map[string]string{"a": "a\n"})
	var sawHeader bool
	srv := serve(t, root, true, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Header.Get("X-Token") == "tok" {
				sawHeader = true
			}
			if u, p, ok := req.BasicAuth(); !ok || u != "alice" || p != "s3cret pass" {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "who are you", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, req)
		})
	})
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	good := download.Config{CACert: ca, TLSValidation: true, Username: "alice", Password: "s3cret pass", Headers: map[string]string{"X-Token": "tok"}}
	for _, tc := range []struct {
		name string
		cfg  func(c *download.Config)
		kind error
		want string
	}{
		{"everything", func(c *download.Config) {}, nil, ""},
		{"no validation", func(c *download.Config) { c.CACert, c.TLSValidation = "", false }, nil, ""},
		{"unknown CA", func(c *download.Config) { c.CACert = "" }, ErrFetch, "certificate"},
		{"wrong password", func(c *download.Config) { c.Password = "nope" }, ErrFetch, "private.git"},
		{"no credentials", func(c *download.Config) { c.Username, c.Password = "", "" }, ErrFetch, "private.git"},
		{"bad CA", func(c *download.Config) { c.CACert = "nonsense" }, ErrInvalid, "ca_cert"},
		{"bad proxy", func(c *download.Config) { c.ProxyURL = "ftp://proxy" }, ErrInvalid, "proxy_url"},
		{"header with a newline", func(c *download.Config) { c.Headers = map[string]string{"X": "a\nb"} }, ErrInvalid, "headers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good
			tc.cfg(&cfg)
			sawHeader = false
			co, err := Fetch(context.Background(), Options{URL: srv.URL + "/private.git", Remote: cfg, TempDir: t.TempDir()})
			if tc.kind == nil {
				if err != nil {
					t.Fatal(err)
				}
				defer co.Close()
				if co.Commit != commit || !sawHeader {
					t.Errorf("commit %s, header seen %v", co.Commit, sawHeader)
				}
				return
			}
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("Fetch: %v, want %v naming %q", err, tc.kind, tc.want)
			}
		})
	}
}

// TestFetchLocal: file URLs and local paths, when allowed.
func TestFetchLocal(t *testing.T) {
	r, commit := published(t, t.TempDir(), "local", map[string]string{"a": "a\n"})
	for _, u := range []string{r.bare, "file://" + r.bare} {
		co, err := Fetch(context.Background(), Options{URL: u, AllowLocal: true, TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if co.Commit != commit {
			t.Errorf("%s: commit %s", u, co.Commit)
		}
		co.Close()
	}
}

// TestFetchCredentialsStayHome: a remote that redirects to another host does not get
// the credentials sent there.
func TestFetchCredentialsStayHome(t *testing.T) {
	root := t.TempDir()
	published(t, root, "moved", map[string]string{"a": "a\n"})
	var leaked bool
	other := serve(t, root, false, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if _, _, ok := req.BasicAuth(); ok {
				leaked = true
			}
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "who are you", http.StatusUnauthorized)
		})
	})
	target := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, target+req.URL.RequestURI(), http.StatusFound)
	}))
	defer home.Close()
	_, err := Fetch(context.Background(), Options{URL: home.URL + "/moved.git", TempDir: t.TempDir(),
		Remote: download.Config{TLSValidation: true, Username: "alice", Password: "s3cret"}})
	if !errors.Is(err, ErrFetch) || leaked {
		t.Fatalf("Fetch: %v; credentials sent to the other host: %v", err, leaked)
	}
}

// TestFetchRaw: Raw checks the blobs out as stored, whatever the tree's .gitattributes
// say; without it they apply, as a clone's checkout applies them.
func TestFetchRaw(t *testing.T) {
	r, _ := published(t, t.TempDir(), "attrs", map[string]string{".gitattributes": "*.txt text eol=crlf ident\n", "a.txt": "$Id$\nb\n"})
	for _, tc := range []struct {
		raw  bool
		want string
	}{{true, "$Id$\nb\n"}, {false, "$Id: 8b25302e75788555c06597ac70d0a79d670478ad $\r\nb\r\n"}} {
		co, err := Fetch(context.Background(), Options{URL: r.bare, AllowLocal: true, Raw: tc.raw, TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if got := read(t, filepath.Join(co.Dir, "a.txt")); got != tc.want {
			t.Errorf("raw=%v: %q, want %q", tc.raw, got, tc.want)
		}
		co.Close()
	}
}
