package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pith/content/contenttest"
)

// publishFile makes, on e, a file repository synced from m and a distribution of its
// publication named name at base path name.
func publishFile(e *contenttest.Env, name string, m *httptest.Server) {
	e.T.Helper()
	task, repo := syncRepo(e, name, m.URL+"/PULP_MANIFEST", "immediate", false)
	if task["state"] != "completed" {
		e.T.Fatalf("sync %s: %v", name, task["error"])
	}
	code, pub := e.JSON("POST", "/pulp/api/v3/publications/file/file/", map[string]any{"repository": repo})
	t := e.Done("publish", code, pub)
	code, d := e.JSON("POST", "/pulp/api/v3/distributions/file/file/", map[string]any{"name": name, "base_path": name,
		"publication": t["created_resources"].([]any)[0]})
	e.Done("distribute", code, d)
}

// settleGroup polls a task group until none of its tasks is waiting or running.
func settleGroup(e *contenttest.Env, group string) map[string]any {
	e.T.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, g, _ := e.Do("GET", group, "", nil)
		if code != 200 {
			e.T.Fatalf("group %s: %d %v", group, code, g)
		}
		if g["waiting"].(float64)+g["running"].(float64)+g["canceling"].(float64) == 0 {
			return g
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("group %s did not finish: %v", group, g)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// replicate runs a replication and returns its finished task group.
func replicate(e *contenttest.Env, upstream string) map[string]any {
	e.T.Helper()
	code, m := e.JSON("POST", upstream+"replicate/", map[string]any{})
	if code != 202 {
		e.T.Fatalf("replicate: %d %v", code, m)
	}
	return settleGroup(e, m["task_group"].(string))
}

// groupErrors are the errors of a group's failed tasks.
func groupErrors(e *contenttest.Env, g map[string]any) []string {
	var out []string
	for _, t := range g["tasks"].([]any) {
		tk := t.(map[string]any)
		if tk["state"] != "completed" {
			_, full, _ := e.Do("GET", tk["pulp_href"].(string), "", nil)
			out = append(out, tk["name"].(string)+": "+strings.TrimSpace(full["error"].(map[string]any)["description"].(string)))
		}
	}
	return out
}

// names lists the names of a collection's objects.
func names(e *contenttest.Env, collection string) map[string]map[string]any {
	e.T.Helper()
	code, m, _ := e.Do("GET", collection+"?limit=1000", "", nil)
	if code != 200 {
		e.T.Fatalf("%s: %d %v", collection, code, m)
	}
	out := map[string]map[string]any{}
	for _, x := range m["results"].([]any) {
		o := x.(map[string]any)
		out[o["name"].(string)] = o
	}
	return out
}

// A pith replicates another pith's file distributions: a remote, repository and
// distribution of the same name each, labelled with the upstream Pulp, serving the same
// files; a distribution gone upstream is removed with its repository and remote, and a
// local one under policy labeled is left alone.
func TestReplicateFromPith(t *testing.T) {
	up, replica := newEnv(t), newEnv(t)
	files := &mirror{files: map[string][]byte{"a.txt": []byte("alpha\n"), "b/c.txt": []byte("gamma\n")}}
	files.manifest = line("a.txt", files.files["a.txt"]) + line("b/c.txt", files.files["b/c.txt"])
	m := httptest.NewServer(files)
	defer m.Close()
	publishFile(up, "one", m)
	publishFile(up, "two", m)

	code, u := replica.JSON("POST", "/pulp/api/v3/upstream-pulps/", map[string]any{"name": "main", "base_url": up.URL, "api_root": "/pulp/",
		"username": "admin", "password": "pw"})
	if code != 201 {
		t.Fatalf("create: %d %v", code, u)
	}
	if _, ok := u["password"]; ok || u["policy"] != "all" || u["tls_validation"] != true || u["last_replication"] != nil {
		t.Errorf("created: %v", u)
	}
	var stored string
	replica.DB.QueryRow(context.Background(), `SELECT attrs FROM upstream_pulps`).Scan(&stored)
	if strings.Contains(stored, `"pw"`) || !strings.Contains(stored, "pith:v1:") {
		t.Errorf("password not sealed at rest: %s", stored)
	}
	uh := u["pulp_href"].(string)
	g := replicate(replica, uh)
	if errs := groupErrors(replica, g); len(errs) > 0 || g["completed"].(float64) < 5 {
		t.Fatalf("replication: %v %v", errs, g)
	}
	_, u, _ = replica.Do("GET", uh, "", nil)
	if u["last_replication"] == nil {
		t.Errorf("last_replication not set: %v", u)
	}
	upID := strings.TrimSuffix(strings.TrimPrefix(uh, "/pulp/api/v3/upstream-pulps/"), "/")
	remotes, repos, dists := names(replica, "/pulp/api/v3/remotes/file/file/"), names(replica, "/pulp/api/v3/repositories/file/file/"),
		names(replica, "/pulp/api/v3/distributions/file/file/")
	for _, n := range []string{"one", "two"} {
		if remotes[n]["url"] != up.URL+"/pulp/content/"+n+"/PULP_MANIFEST" || remotes[n]["policy"] != "immediate" {
			t.Errorf("remote %s: %v", n, remotes[n])
		}
		for what, o := range map[string]map[string]any{"remote": remotes[n], "repository": repos[n], "distribution": dists[n]} {
			if l, _ := o["pulp_labels"].(map[string]any); l["UpstreamPulp"] != upID {
				t.Errorf("%s %s labels: %v", what, n, o["pulp_labels"])
			}
		}
		if repos[n]["autopublish"] != true || repos[n]["manifest"] != "PULP_MANIFEST" {
			t.Errorf("repository %s: %v", n, repos[n])
		}
		if dists[n]["base_path"] != n || dists[n]["repository"] != repos[n]["pulp_href"] {
			t.Errorf("distribution %s: %v", n, dists[n])
		}
		for p, want := range files.files {
			if code, body := get(t, replica.URL+"/pulp/content/"+n+"/"+p); code != 200 || body != string(want) {
				t.Errorf("replica %s/%s: %d %q", n, p, code, body)
			}
		}
	}

	// A second replication changes nothing and syncs nothing new.
	g = replicate(replica, uh)
	if errs := groupErrors(replica, g); len(errs) > 0 {
		t.Fatalf("second replication: %v", errs)
	}
	if _, repo, _ := replica.Do("GET", repos["one"]["pulp_href"].(string), "", nil); repo["latest_version_href"] != repos["one"]["latest_version_href"] {
		t.Errorf("a second replication made a new version: %v", repo["latest_version_href"])
	}

	// "two" goes upstream; a local distribution stays under policy labeled.
	upDists := names(up, "/pulp/api/v3/distributions/file/file/")
	code, body := up.JSON("DELETE", upDists["two"]["pulp_href"].(string), nil)
	up.Done("delete upstream distribution", code, body)
	publishFile(replica, "local", m)
	if code, body := replica.JSON("PATCH", uh, map[string]any{"policy": "labeled"}); code != 200 || body["policy"] != "labeled" {
		t.Fatalf("patch policy: %d %v", code, body)
	}
	g = replicate(replica, uh)
	if errs := groupErrors(replica, g); len(errs) > 0 {
		t.Fatalf("third replication: %v", errs)
	}
	remotes, repos, dists = names(replica, "/pulp/api/v3/remotes/file/file/"), names(replica, "/pulp/api/v3/repositories/file/file/"),
		names(replica, "/pulp/api/v3/distributions/file/file/")
	for what, got := range map[string]map[string]map[string]any{"remote": remotes, "repository": repos, "distribution": dists} {
		if got["two"] != nil || got["one"] == nil || got["local"] == nil {
			t.Errorf("%ss after upstream removed two: %v", what, keys(got))
		}
	}
	if code, _ := get(t, replica.URL+"/pulp/content/two/a.txt"); code != 404 {
		t.Errorf("removed distribution still serves: %d", code)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// An upstream that vanishes in the middle of a replication fails it with an error
// naming the upstream; what earlier replications made keeps serving, and the replica
// answers as before.
func TestReplicateUpstreamVanishes(t *testing.T) {
	up, replica := newEnv(t), newEnv(t)
	files := &mirror{files: map[string][]byte{"a.txt": []byte("alpha\n")}}
	files.manifest = line("a.txt", files.files["a.txt"])
	m := httptest.NewServer(files)
	defer m.Close()
	publishFile(up, "one", m)

	// The upstream as the replica sees it: a proxy that can stop answering.
	target, _ := url.Parse(up.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var gone atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gone.Load() && strings.Contains(r.URL.Path, "/api/v3/publications/") {
			// Gone between listing its distributions and reading what they serve.
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	code, u := replica.JSON("POST", "/pulp/api/v3/upstream-pulps/", map[string]any{"name": "flaky", "base_url": front.URL, "api_root": "/pulp/",
		"username": "admin", "password": "pw", "max_retries": 0})
	if code != 201 {
		t.Fatalf("create: %d %v", code, u)
	}
	uh := u["pulp_href"].(string)
	if errs := groupErrors(replica, replicate(replica, uh)); len(errs) > 0 {
		t.Fatalf("first replication: %v", errs)
	}
	publishFile(up, "two", m)
	gone.Store(true)
	g := replicate(replica, uh)
	errs := groupErrors(replica, g)
	if len(errs) != 1 || !strings.Contains(errs[0], "replicate_distributions") || !strings.Contains(errs[0], `upstream pulp "flaky"`) ||
		!strings.Contains(errs[0], front.URL) {
		t.Errorf("failed tasks: %v, want the replication naming the upstream", errs)
	}
	if code, body := get(t, replica.URL+"/pulp/content/one/a.txt"); code != 200 || body != "alpha\n" {
		t.Errorf("what was replicated before: %d %q", code, body)
	}
	if d := names(replica, "/pulp/api/v3/distributions/file/file/"); len(d) != 1 || d["one"] == nil {
		t.Errorf("distributions after the failed replication: %v", keys(d))
	}
	if code, body := replica.JSON("PATCH", uh, map[string]any{"name": "still"}); code != 200 {
		t.Errorf("the API after a failed replication: %d %v", code, body)
	}
}

// Bad upstream Pulp bodies are 400s naming the field, and store nothing.
func TestUpstreamPulpBadInput(t *testing.T) {
	e := newEnv(t)
	good := func() map[string]any {
		return map[string]any{"name": "u", "base_url": "https://up.example", "api_root": "/pulp/"}
	}
	for _, tc := range []struct {
		name  string
		set   map[string]any
		field string
	}{
		{"credentials in base_url", map[string]any{"base_url": "https://bob:secret@up.example"}, "base_url"},
		{"not a URL", map[string]any{"base_url": "up.example"}, "base_url"},
		{"a path in base_url", map[string]any{"base_url": "https://up.example/pulp/api/v3/"}, "base_url"},
		{"api_root without slashes", map[string]any{"api_root": "pulp"}, "api_root"},
		{"blank name", map[string]any{"name": ""}, "name"},
		{"unknown field", map[string]any{"colour": "red"}, "colour"},
		{"bad q_select", map[string]any{"q_select": `pulp_label_select="a" OR (`}, "q_select"},
		{"unknown filter in q_select", map[string]any{"q_select": `colour="red"`}, "q_select"},
		{"bad policy", map[string]any{"policy": "some"}, "policy"},
		{"bad remote_policy", map[string]any{"remote_policy": "later"}, "remote_policy"},
		{"not PEM", map[string]any{"ca_cert": "hello"}, "ca_cert"},
		{"negative retries", map[string]any{"max_retries": -1}, "max_retries"},
	} {
		b := good()
		for k, v := range tc.set {
			b[k] = v
		}
		code, m := e.JSON("POST", "/pulp/api/v3/upstream-pulps/", b)
		if code != 400 || m[tc.field] == nil {
			t.Errorf("%s: %d %v, want a 400 naming %s", tc.name, code, m, tc.field)
		}
	}
	if n := e.Count("upstream_pulps"); n != 0 {
		t.Errorf("%d upstream pulps stored from bad bodies", n)
	}
	code, m := e.JSON("POST", "/pulp/api/v3/upstream-pulps/", map[string]any{"name": "u", "base_url": "https://up.example", "api_root": "/pulp/",
		"q_select": `pulp_label_select="replicate=yes"`})
	if code != 201 || m["q_select"] != `pulp_label_select="replicate=yes"` {
		t.Fatalf("good body: %d %v", code, m)
	}
	if code, m := e.JSON("PATCH", m["pulp_href"].(string), map[string]any{"base_url": "http://a:b@up.example"}); code != 400 || m["base_url"] == nil {
		t.Errorf("patch with credentials: %d %v", code, m)
	}
	if code, m := e.JSON("POST", m["pulp_href"].(string)+"replicate/", map[string]any{"q_select": "name__nope=1"}); code != 400 || m["q_select"] == nil {
		t.Errorf("replicate with a bad q_select: %d %v", code, m)
	}
}
