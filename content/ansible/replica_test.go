package ansible_test

import (
	"strings"
	"testing"
	"time"
)

// A pith replicates another's ansible distributions (issue 17; pulp_ansible has no
// replicator): the replica makes a collection remote on the upstream's Galaxy API,
// signing in with the upstream Pulp's credentials, a repository and a distribution of
// the same name, and syncs every collection the upstream serves, byte for byte, which
// its own Galaxy API then serves. A collection removed upstream is removed from the
// replica by the next replication (mirror), and a distribution removed upstream takes
// its remote, repository and distribution with it.
func TestReplicateAnsible(t *testing.T) {
	a := newEnv(t)
	upRepo := galaxyDist(t, a, "up")
	api := "/pulp_ansible/galaxy/up/api/"
	files := []string{"ansible-utils-2.7.0.tar.gz", "ansible-netcommon-4.1.0.tar.gz", "pulp-testing_asset-1.0.0.tar.gz"}
	for _, f := range files {
		if imp := publish(t, a, api, f); imp["state"] != "completed" {
			t.Fatalf("import of %s: %v", f, imp)
		}
	}
	code, m := a.JSON("POST", "/pulp/api/v3/distributions/ansible/ansible/", map[string]any{"name": "nothing", "base_path": "nothing"})
	a.Done("distribution serving nothing", code, m)

	b := &syncEnv{Env: newEnv(t)}
	code, u := b.JSON("POST", "/pulp/api/v3/upstream-pulps/", map[string]any{"name": "main", "base_url": a.URL, "api_root": "/pulp/",
		"username": "admin", "password": "pw"})
	if code != 201 {
		t.Fatalf("upstream pulp: %d %v", code, u)
	}
	uh := u["pulp_href"].(string)
	replicateOK(t, b, uh)

	remote := one(t, b, "/pulp/api/v3/remotes/ansible/collection/", "up")
	if remote["url"] != a.URL+api || remote["policy"] != "immediate" {
		t.Errorf("remote: %v", remote)
	}
	if set := hidden(remote); !set["username"] || !set["password"] {
		t.Errorf("remote's credentials not set: %v", remote["hidden_fields"])
	}
	repo := one(t, b, "/pulp/api/v3/repositories/ansible/ansible/", "up")
	dist := one(t, b, "/pulp/api/v3/distributions/ansible/ansible/", "up")
	if dist["base_path"] != "up" || dist["repository"] != repo["pulp_href"] || dist["client_url"] != b.URL+"/pulp_ansible/galaxy/up/" {
		t.Errorf("distribution: %v", dist)
	}
	for _, absent := range []string{"nothing"} {
		if code, m, _ := b.Do("GET", "/pulp/api/v3/distributions/ansible/ansible/?name="+absent, "", nil); code != 200 || m["count"] != 0.0 {
			t.Errorf("distribution %s (serves nothing upstream): %d %v", absent, code, m)
		}
	}
	rh := repo["pulp_href"].(string)
	want(t, "replicated", b.held(rh), "ansible.netcommon 4.1.0", "ansible.utils 2.7.0", "pulp.testing_asset 1.0.0")
	stored := blobs(t, b.Env)
	for _, f := range files {
		if sum := hexSum(string(tarball(t, f))); stored[sum] != sum {
			t.Errorf("%s: not stored in the replica", f)
		}
		full, version := collectionOf(f)
		ns, name, _ := strings.Cut(full, ".")
		code, v, _ := b.Do("GET", "/pulp_ansible/galaxy/up/api/v3/collections/"+ns+"/"+name+"/versions/"+version+"/", "", nil)
		if code != 200 {
			t.Fatalf("replica's Galaxy API: %s: %d %v", f, code, v)
		}
		dl := strings.TrimPrefix(v["download_url"].(string), b.URL)
		if code, body, _ := b.Do("GET", dl, "", nil); code != 200 || body["_raw"] != string(tarball(t, f)) {
			t.Errorf("download of %s from the replica: %d", f, code)
		}
	}

	// Unchanged upstream: the next replication makes no version.
	version := b.latest(rh)
	replicateOK(t, b, uh)
	if got := b.latest(rh); got != version {
		t.Errorf("a replication of an unchanged upstream made %s", got)
	}

	// A collection removed upstream leaves the replica too.
	cv := aUnit(t, a, "pulp.testing_asset", "1.0.0")["pulp_href"].(string)
	code, m = a.JSON("POST", upRepo+"modify/", map[string]any{"remove_content_units": []string{cv}})
	a.Done("remove upstream", code, m)
	replicateOK(t, b, uh)
	want(t, "after the upstream removed one", b.held(rh), "ansible.netcommon 4.1.0", "ansible.utils 2.7.0")

	// The distribution removed upstream: its remote, repository and distribution go.
	_, list, _ := a.Do("GET", "/pulp/api/v3/distributions/ansible/ansible/?name=up", "", nil)
	code, m = a.JSON("DELETE", list["results"].([]any)[0].(map[string]any)["pulp_href"].(string), nil)
	a.Done("delete upstream distribution", code, m)
	replicateOK(t, b, uh)
	for _, c := range []string{"remotes/ansible/collection", "repositories/ansible/ansible", "distributions/ansible/ansible"} {
		if code, m, _ := b.Do("GET", "/pulp/api/v3/"+c+"/?name=up", "", nil); code != 200 || m["count"] != 0.0 {
			t.Errorf("%s after the upstream removed it: %d %v", c, code, m)
		}
	}
}

// replicateOK runs a replication and waits for every task of its group to complete.
func replicateOK(t *testing.T, e *syncEnv, upstream string) {
	t.Helper()
	code, m := e.JSON("POST", upstream+"replicate/", map[string]any{})
	if code != 202 {
		t.Fatalf("replicate: %d %v", code, m)
	}
	group := m["task_group"].(string)
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, g, _ := e.Do("GET", group, "", nil)
		if code != 200 {
			t.Fatalf("group %s: %d %v", group, code, g)
		}
		if g["waiting"].(float64)+g["running"].(float64)+g["canceling"].(float64) == 0 {
			for _, x := range g["tasks"].([]any) {
				if tk := x.(map[string]any); tk["state"] != "completed" {
					full := e.Wait(tk["pulp_href"].(string))
					t.Fatalf("replication: %s %s: %v", tk["name"], tk["state"], full["error"])
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s did not finish: %v", group, g)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// one is the object of that name in a list.
func one(t *testing.T, e *syncEnv, list, name string) map[string]any {
	t.Helper()
	code, m, _ := e.Do("GET", list+"?name="+name, "", nil)
	if code != 200 || m["count"] != 1.0 {
		t.Fatalf("%s?name=%s: %d %v", list, name, code, m)
	}
	return m["results"].([]any)[0].(map[string]any)
}

// hidden is which of a remote's hidden fields are set.
func hidden(remote map[string]any) map[string]bool {
	out := map[string]bool{}
	for _, x := range remote["hidden_fields"].([]any) {
		f := x.(map[string]any)
		out[f["name"].(string)] = f["is_set"] == true
	}
	return out
}
