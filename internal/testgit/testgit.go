// Package testgit serves throwaway git repositories over git's smart HTTP protocol
// (git http-backend), for tests of what clones or fetches from a git server.
package testgit

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Serve publishes a repository of one commit holding files (path: content; a content
// "->x" makes a symbolic link to x) until the test ends and returns its URL. Without git
// or its http-backend the test skips.
func Serve(t testing.TB, files map[string]string) string {
	url, _ := Publish(t, files)
	return url
}

// Publish is Serve that also returns the commit.
func Publish(t testing.TB, files map[string]string) (url, commit string) {
	t.Helper()
	return PublishLFS(t, files, nil)
}

// PublishLFS is Publish with lfs (when not nil) answering the repository's Git LFS API,
// every request below <url>/info/lfs/.
func PublishLFS(t testing.TB, files map[string]string, lfs http.Handler) (url, commit string) {
	t.Helper()
	backend := Backend(t)
	work, root := t.TempDir(), t.TempDir()
	Git(t, work, "init", "-q")
	for name, body := range files {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(body, "->"); ok {
			err = os.Symlink(target, p)
		} else {
			err = os.WriteFile(p, []byte(body), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	Git(t, work, "add", "-A")
	Git(t, work, "commit", "-q", "-m", "c")
	Git(t, root, "clone", "-q", "--bare", work, "coll.git")
	var h http.Handler = &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}}
	if lfs != nil {
		mux := http.NewServeMux()
		mux.Handle("/", h)
		mux.Handle("/coll.git/info/lfs/", lfs)
		h = mux
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/coll.git", Git(t, work, "rev-parse", "HEAD")
}

// Backend is the path of git http-backend, to serve repositories with over CGI. Without
// git or its http-backend the test skips.
func Backend(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skip("git --exec-path:", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skip("no git-http-backend:", err)
	}
	return backend
}

// Git runs git in dir with a fixed identity and no system or user configuration, and
// returns its output, trimmed.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main",
		"-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// CollectionSource is the source of a small collection, acme.tools 1.2.3, as a git
// remote syncs it: galaxy.yml, a readme, a module with documentation, meta/runtime.yml.
var CollectionSource = map[string]string{
	"galaxy.yml": "namespace: acme\nname: tools\nversion: 1.2.3\nreadme: README.md\nauthors: [Acme]\ndescription: tools\nlicense: [MIT]\n" +
		"tags: [tools]\ndependencies: {}\nrepository: https://example.invalid/acme/tools\n",
	"README.md":              "# acme.tools\n",
	"plugins/modules/x.py":   "DOCUMENTATION = '''\nmodule: x\nshort_description: x\ndescription: x\nauthor: Acme\n'''\n",
	"meta/runtime.yml":       "requires_ansible: '>=2.14'\n",
	"docs/docsite/links.yml": "---\n",
}
