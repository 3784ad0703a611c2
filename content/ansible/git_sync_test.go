package ansible_test

import (
	"net/http"
	"testing"

	"pith/content/ansible"
	"pith/internal/testgit"
)

// A git sync builds the collection of the ref's tree and imports it; metadata_only keeps
// its metadata, the artifact left at the commit.
func TestGitSync(t *testing.T) {
	url := testgit.Serve(t, testgit.CollectionSource)
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
