package ansible_test

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"pith/content/contenttest"
)

// syncEnv is a running pith and a Galaxy fixture to sync from.
type syncEnv struct {
	*contenttest.Env
	g *galaxyFixture
}

func newSyncEnv(t *testing.T) *syncEnv {
	t.Helper()
	return &syncEnv{Env: newEnv(t), g: newGalaxy(t)}
}

// create posts a body that must be created (201) and returns its href.
func (e *syncEnv) create(path string, body map[string]any) string {
	e.T.Helper()
	code, m := e.JSON("POST", path, body)
	if code != http.StatusCreated {
		e.T.Fatalf("POST %s: %d %v", path, code, m)
	}
	return m["pulp_href"].(string)
}

// remote creates a collection remote of the fixture with extra fields.
func (e *syncEnv) remote(name string, fields map[string]any) string {
	e.T.Helper()
	body := map[string]any{"name": name, "url": e.g.URL(), "max_retries": 0}
	for k, v := range fields {
		body[k] = v
	}
	return e.create("/pulp/api/v3/remotes/ansible/collection/", body)
}

func (e *syncEnv) repo(name string, remote string) string {
	e.T.Helper()
	body := map[string]any{"name": name}
	if remote != "" {
		body["remote"] = remote
	}
	return e.create("/pulp/api/v3/repositories/ansible/ansible/", body)
}

// sync runs a sync and returns its task, finished.
func (e *syncEnv) sync(repo string, body map[string]any) map[string]any {
	e.T.Helper()
	code, m := e.JSON("POST", repo+"sync/", body)
	if code != http.StatusAccepted {
		e.T.Fatalf("sync: %d %v", code, m)
	}
	return e.Wait(m["task"].(string))
}

// syncOK runs a sync that must complete.
func (e *syncEnv) syncOK(repo string, body map[string]any) map[string]any {
	e.T.Helper()
	task := e.sync(repo, body)
	if task["state"] != "completed" {
		e.T.Fatalf("sync: %v: %v", task["state"], task["error"])
	}
	return task
}

// latest is the number of the repository's latest version.
func (e *syncEnv) latest(repo string) string {
	e.T.Helper()
	code, m, _ := e.Do("GET", repo, "", nil)
	if code != 200 {
		e.T.Fatalf("GET %s: %d %v", repo, code, m)
	}
	return m["latest_version_href"].(string)
}

// held lists the collection versions of the repository's latest version, sorted:
// "namespace.name version".
func (e *syncEnv) held(repo string) []string {
	e.T.Helper()
	out := []string{}
	next := "/pulp/api/v3/content/ansible/collection_versions/?limit=1000&repository_version=" + e.latest(repo)
	for next != "" {
		code, m, _ := e.Do("GET", strings.TrimPrefix(next, e.URL), "", nil)
		if code != 200 {
			e.T.Fatalf("content list: %d %v", code, m)
		}
		for _, r := range m["results"].([]any) {
			cv := r.(map[string]any)
			out = append(out, fmt.Sprintf("%s.%s %s", cv["namespace"], cv["name"], cv["version"]))
		}
		next, _ = m["next"].(string)
	}
	sort.Strings(out)
	return out
}

// cv reads the collection version of the repository's latest version with that name.
func (e *syncEnv) cv(repo, fullname, version string) map[string]any {
	e.T.Helper()
	ns, name, _ := strings.Cut(fullname, ".")
	code, m, _ := e.Do("GET", fmt.Sprintf("/pulp/api/v3/content/ansible/collection_versions/?namespace=%s&name=%s&version=%s&repository_version=%s",
		ns, name, version, e.latest(repo)), "", nil)
	if code != 200 || m["count"].(float64) != 1 {
		e.T.Fatalf("%s %s: %d %v", fullname, version, code, m)
	}
	return m["results"].([]any)[0].(map[string]any)
}

func want(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// A sync stores the signatures and marks the upstream lists for each version it
// stores, unverified, as pulp_ansible does; syncing again finds them stored.
func TestSyncSignaturesAndMarks(t *testing.T) {
	e := newSyncEnv(t)
	v := e.g.add("acme", "app", "1.0.0", nil)
	v.signed, v.marks = true, []string{"certified", "reviewed"}
	e.g.add("acme", "lib", "1.0.0", nil)
	repo := e.repo("r", e.remote("g", nil))
	e.syncOK(repo, nil)
	cv := e.cv(repo, "acme.app", "1.0.0")["pulp_href"].(string)
	version := e.latest(repo)
	list := func(kind, field string) []string {
		t.Helper()
		code, m, _ := e.Do("GET", "/pulp/api/v3/content/ansible/"+kind+"/?repository_version="+version, "", nil)
		if code != 200 {
			t.Fatalf("%s: %d %v", kind, code, m)
		}
		var out []string
		for _, r := range m["results"].([]any) {
			u := r.(map[string]any)
			out = append(out, fmt.Sprintf("%v %v", u[field], u["pubkey_fingerprint"]))
		}
		sort.Strings(out)
		return out
	}
	want(t, "signatures", list("collection_signatures", "signed_collection"), cv+" 0123456789abcdef")
	want(t, "marks", list("collection_marks", "marked_collection"), cv+" <nil>", cv+" <nil>")
	code, m, _ := e.Do("GET", "/pulp/api/v3/content/ansible/collection_marks/?value=certified&marked_collection="+cv, "", nil)
	if code != 200 || m["count"].(float64) != 1 {
		t.Errorf("the mark certified: %d %v", code, m)
	}
	e.syncOK(repo, map[string]any{"optimize": false})
	if got := e.latest(repo); got != version {
		t.Errorf("syncing an unchanged upstream again made %s", got)
	}
	// A mark that is no slug fails the sync, naming it.
	e.g.mu.Lock()
	v.marks = append(v.marks, "not a slug")
	e.g.mu.Unlock()
	if tk := e.sync(repo, map[string]any{"optimize": false}); tk["state"] != "failed" || !strings.Contains(fmt.Sprint(tk["error"]), `"not a slug"`) {
		t.Errorf("a mark that is no slug: %v %v", tk["state"], tk["error"])
	}
}
