package ansible_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"pith/content"
	"pith/content/ansible"
	"pith/content/contenttest"
	"pith/internal/testgalaxy"
)

// roleEnv is an env whose role archives come from origin.
func roleEnv(t *testing.T, origin string) *contenttest.Env {
	t.Helper()
	return contenttest.New(t, func(c *content.Core) content.Type {
		p := ansible.New(c)
		p.SetRoleArchiveOrigin(origin)
		return p
	})
}

// syncRoles runs a role sync of the repository from the remote and returns the task.
func syncRoles(t *testing.T, e *contenttest.Env, repo, remote string, mirror bool) map[string]any {
	t.Helper()
	code, m := e.JSON("POST", repo+"sync/", map[string]any{"remote": remote, "mirror": mirror})
	if code != http.StatusAccepted {
		t.Fatalf("sync: %d %v", code, m)
	}
	tk := e.Wait(m["task"].(string))
	if tk["name"] != ansible.RoleSyncTask {
		t.Fatalf("a role remote's sync ran %v", tk["name"])
	}
	return tk
}

func roleRemote(t *testing.T, e *contenttest.Env, name, url, policy string) string {
	t.Helper()
	code, m := e.JSON("POST", "/pulp/api/v3/remotes/ansible/role/", map[string]any{"name": name, "url": url, "policy": policy})
	if code != 201 {
		t.Fatalf("remote: %d %v", code, m)
	}
	return m["pulp_href"].(string)
}

// A role sync reads every page of a v1 roles list and stores every version of every
// role with its archive; on_demand leaves the archives to the content app.
func TestRoleSync(t *testing.T) {
	var roles []testgalaxy.Role
	for _, n := range []string{"apache", "nginx", "mysql"} {
		roles = append(roles, testgalaxy.Role{Namespace: "geerlingguy", Name: n, Versions: []string{"1.0.0", "1.1.0"}})
	}
	g := testgalaxy.New(t, testgalaxy.Config{Roles: roles, MaxPage: 2})
	e := roleEnv(t, g.URL)
	repo := newRepo(t, e, "roles")
	remote := roleRemote(t, e, "galaxy", g.API+"v1/roles/?owner__username=geerlingguy", "immediate")
	if tk := syncRoles(t, e, repo, remote, false); tk["state"] != "completed" {
		t.Fatalf("sync: %v %v", tk["state"], tk["error"])
	}
	code, m, _ := e.Do("GET", "/pulp/api/v3/content/ansible/roles/?repository_version="+latest(t, e, repo), "", nil)
	if code != 200 || m["count"].(float64) != 6 {
		t.Fatalf("roles: %d %v", code, m)
	}
	for _, r := range m["results"].([]any) {
		if r.(map[string]any)["artifact"] == "" {
			t.Errorf("immediate sync left %v without its archive", r)
		}
	}
	if n := e.BlobCount(); n != 6 {
		t.Errorf("%d blobs, want the 6 archives", n)
	}

	// on_demand: no archive fetched, the units the same.
	e2 := roleEnv(t, g.URL)
	repo2 := newRepo(t, e2, "roles")
	remote2 := roleRemote(t, e2, "galaxy", g.API+"v1/roles/?owner__username=geerlingguy", "on_demand")
	if tk := syncRoles(t, e2, repo2, remote2, false); tk["state"] != "completed" {
		t.Fatalf("on_demand sync: %v %v", tk["state"], tk["error"])
	}
	if n := e2.BlobCount(); n != 0 {
		t.Errorf("on_demand fetched %d archives", n)
	}
	if n := e2.Count("contents"); n != 6 {
		t.Errorf("on_demand: %d units, want 6", n)
	}
}

// A broken upstream fails the sync naming the problem, and leaves no version and no unit.
func TestRoleSyncBadUpstream(t *testing.T) {
	good := testgalaxy.New(t, testgalaxy.Config{Roles: []testgalaxy.Role{{Namespace: "ns", Name: "r", Versions: []string{"1.0.0"}}}})
	for name, c := range map[string]struct {
		handler http.HandlerFunc
		want    string
	}{
		"malformed JSON": {func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"count": 1, "results": [`)) }, "not the JSON"},
		"no count":       {func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"results": []}`)) }, "no count"},
		"path in a name": {func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"count": 1, "results": [{"name": "..", "github_user": "u", "github_repo": "r",
				"summary_fields": {"namespace": {"name": "ns"}, "versions": [{"name": "1.0.0"}]}}]}`))
		}, "not a valid name"},
		"server error": {func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 500) }, "500"},
		"archive missing": {func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"count": 1, "results": [{"name": "r", "github_user": "nobody", "github_repo": "nothing",
				"summary_fields": {"namespace": {"name": "ns"}, "versions": [{"name": "9.9.9"}]}}]}`))
		}, "404"},
	} {
		t.Run(name, func(t *testing.T) {
			up := httptest.NewServer(c.handler)
			defer up.Close()
			e := roleEnv(t, good.URL)
			repo := newRepo(t, e, "roles")
			remote := roleRemote(t, e, "up", up.URL+"/api/v1/roles/", "immediate")
			tk := syncRoles(t, e, repo, remote, false)
			if tk["state"] != "failed" || !strings.Contains(tk["error"].(map[string]any)["description"].(string), c.want) {
				t.Fatalf("%v %v, want a failure naming %q", tk["state"], tk["error"], c.want)
			}
			if n := e.Count("contents"); n != 0 {
				t.Errorf("%d units left", n)
			}
			var versions int
			e.DB.QueryRow(context.Background(), `SELECT count(*) FROM repository_versions`).Scan(&versions)
			if versions != 1 {
				t.Errorf("%d versions, want only version 0", versions)
			}
		})
	}
}
