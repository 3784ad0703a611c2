package ansible_test

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"pith/content/ansible"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// gitServer publishes a repository holding a collection's source over git's smart HTTP.
func gitServer(t *testing.T, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skip(err)
	}
	backend := filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend")
	work, root := t.TempDir(), t.TempDir()
	git(t, work, "init", "-q")
	for name, body := range files {
		os.MkdirAll(filepath.Join(work, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(work, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, work, "add", "-A")
	git(t, work, "commit", "-q", "-m", "c")
	git(t, root, "clone", "-q", "--bare", work, "coll.git")
	srv := httptest.NewServer(&cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}})
	t.Cleanup(srv.Close)
	return srv.URL + "/coll.git"
}

var collectionSource = map[string]string{
	"galaxy.yml": "namespace: acme\nname: tools\nversion: 1.2.3\nreadme: README.md\nauthors: [Acme]\ndescription: tools\nlicense: [MIT]\n" +
		"tags: [tools]\ndependencies: {}\nrepository: https://example.invalid/acme/tools\n",
	"README.md":              "# acme.tools\n",
	"plugins/modules/x.py":   "DOCUMENTATION = '''\nmodule: x\nshort_description: x\ndescription: x\nauthor: Acme\n'''\n",
	"meta/runtime.yml":       "requires_ansible: '>=2.14'\n",
	"docs/docsite/links.yml": "---\n",
}

// A git sync builds the collection of the ref's tree and imports it; metadata_only keeps
// its metadata, the artifact left at the commit.
func TestGitSync(t *testing.T) {
	url := gitServer(t, collectionSource)
	for _, metadataOnly := range []bool{false, true} {
		e := newEnv(t)
		repo := newRepo(t, e, "r")
		code, m := e.JSON("POST", "/pulp/api/v3/remotes/ansible/git/", map[string]any{"name": "g", "url": url, "metadata_only": metadataOnly})
		if code != 201 {
			t.Fatalf("remote: %d %v", code, m)
		}
		remote := m["pulp_href"].(string)
		code, m = e.JSON("POST", repo+"sync/", map[string]any{"remote": remote})
		if code != http.StatusAccepted {
			t.Fatalf("sync: %d %v", code, m)
		}
		if got := e.Wait(m["task"].(string)); got["state"] != "completed" || got["name"] != ansible.GitSyncTask {
			t.Fatalf("metadata_only=%v: %v %v", metadataOnly, got["state"], got["error"])
		}
		code, m, _ = e.Do("GET", "/pulp/api/v3/content/ansible/collection_versions/?repository_version="+latest(t, e, repo), "", nil)
		if code != 200 || m["count"].(float64) != 1 {
			t.Fatalf("versions: %d %v", code, m)
		}
		cv := m["results"].([]any)[0].(map[string]any)
		if cv["namespace"] != "acme" || cv["name"] != "tools" || cv["version"] != "1.2.3" || cv["requires_ansible"] != ">=2.14" {
			t.Errorf("collection version %v", cv)
		}
		if has := cv["artifact"] != nil; has == metadataOnly {
			t.Errorf("metadata_only=%v: artifact %v", metadataOnly, cv["artifact"])
		}
	}
}
