package ansible_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A sync from the repository's own remote reads when the upstream was published; the
// next one is skipped while that time, the remote's settings and the repository stay
// the same, and runs when any changes, when optimize is off, or from another remote.
func TestSyncOptimize(t *testing.T) {
	e := newSyncEnv(t)
	e.g.add("acme", "app", "1.0.0", nil)
	for i, tc := range []struct {
		what   string
		change func(repo, remote string)
		body   func() map[string]any
	}{
		{"optimize off", func(string, string) {}, func() map[string]any { return map[string]any{"optimize": false} }},
		{"published anew", func(string, string) {
			e.g.mu.Lock()
			e.g.published = "2026-02-03T00:00:00Z"
			e.g.mu.Unlock()
		}, nil},
		{"remote changed", func(_, remote string) {
			code, m := e.JSON("PATCH", remote, map[string]any{"sync_highest_versions": 3})
			e.Done("remote update", code, m)
		}, nil},
		{"repository changed", func(repo, _ string) {
			code, m := e.JSON("POST", repo+"modify/", map[string]any{"remove_content_units": []string{"*"}})
			e.Done("modify", code, m)
		}, nil},
		{"mirror", func(string, string) {}, func() map[string]any { return map[string]any{"mirror": true} }},
		{"another remote", func(string, string) {}, func() map[string]any { return map[string]any{"remote": e.remote("other", nil)} }},
	} {
		remote := e.remote(fmt.Sprint("up", i), nil)
		repo := e.repo(fmt.Sprint("r", i), remote)
		e.syncOK(repo, nil)
		code, m, _ := e.Do("GET", repo, "", nil)
		got, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(m["last_synced_metadata_time"]))
		published, _ := time.Parse(time.RFC3339Nano, e.g.published)
		if code != 200 || !got.Equal(published) {
			t.Fatalf("last_synced_metadata_time %v, want the upstream's %s", m["last_synced_metadata_time"], e.g.published)
		}
		details := func() int { return e.g.requested("/api/v3/collections/acme/app/versions/1") }
		before := details()
		if task := e.syncOK(repo, nil); !skipped(task) || details() != before {
			t.Errorf("%s: an unchanged upstream was synced again (%d detail requests)", tc.what, details()-before)
		}
		tc.change(repo, remote)
		var body map[string]any
		if tc.body != nil {
			body = tc.body()
		}
		if task := e.syncOK(repo, body); skipped(task) {
			t.Errorf("%s: skipped", tc.what)
		}
	}
}

// skipped says whether a sync task was skipped as optimize skips it.
func skipped(task map[string]any) bool {
	for _, p := range task["progress_reports"].([]any) {
		if msg, _ := p.(map[string]any)["message"].(string); strings.HasPrefix(msg, "no-op:") {
			return true
		}
	}
	return false
}

// A token is sent as Pulp sends it; with an auth_url it is exchanged for bearer tokens,
// again when one expires.
func TestSyncAuth(t *testing.T) {
	e := newSyncEnv(t)
	e.g.add("acme", "app", "1.0.0", nil)
	e.g.add("acme", "lib", "1.0.0", nil)
	repo := e.repo("r", "")
	e.syncOK(repo, map[string]any{"remote": e.remote("token", map[string]any{"token": "t0k", "policy": "immediate"})})
	for _, a := range e.g.auth {
		if a != "Token t0k" {
			t.Fatalf("Authorization %q, want the token", a)
		}
	}

	var mu sync.Mutex
	grants := 0
	sso := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.Form.Get("refresh_token") != "offline" {
			http.Error(w, "no", http.StatusBadRequest)
			return
		}
		mu.Lock()
		grants++
		fmt.Fprintf(w, `{"access_token": "a%d"}`, grants)
		mu.Unlock()
	}))
	defer sso.Close()
	// The first bearer token expires after a few requests.
	served := 0
	e.g.hook = func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		served++
		if r.Header.Get("Authorization") == "Bearer a1" && served > 4 || !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			http.Error(w, "expired", http.StatusUnauthorized)
			return true
		}
		return false
	}
	other := e.repo("bearer", "")
	e.syncOK(other, map[string]any{"remote": e.remote("sso", map[string]any{"token": "offline", "auth_url": sso.URL + "/token", "policy": "immediate"})})
	want(t, "synced with bearer tokens", e.held(other), "acme.app 1.0.0", "acme.lib 1.0.0")
	if grants != 2 {
		t.Errorf("%d grants, want 2 (one more after the first expired)", grants)
	}
}

// A requirements file is checked when the remote is created or changed: a 400 names the
// line, and nothing changes.
func TestRemoteRequirementsChecked(t *testing.T) {
	e := newSyncEnv(t)
	for _, tc := range []struct{ file, want string }{
		{"collections: [acme.app", "line 1"},
		{"roles:\n  - x\n", "line 1"},
		{"collections: acme.app\n", "line 1"},
		{"collections:\n  - acme.app\n  - name: acme\n", "line 3"},
		{"collections:\n  - name: acme.app\n    version: '>= 1.0'\n", "line 2"},
		{"collections:\n  - name: acme.app\n    version: 1.0.0\n  - version: 2\n", "line 4"},
		{"collections:\n  - name: acme.app\n    source: https://galaxy.example.com/api\n", "line 3"},
		{"collections:\n  - name: https://github.com/x/y.git\n    type: git\n", "line 3"},
		{"collections:\n  - name: Acme.App\n", "line 2"},
	} {
		code, m := e.JSON("POST", "/pulp/api/v3/remotes/ansible/collection/", map[string]any{"name": "bad", "url": e.g.URL(), "requirements_file": tc.file})
		if msg := fmt.Sprint(m["requirements_file"]); code != http.StatusBadRequest || !strings.Contains(msg, tc.want) {
			t.Errorf("%q: %d %v, want a 400 naming %q", tc.file, code, m, tc.want)
		}
	}
	remote := e.remote("good", map[string]any{"requirements_file": "---\ncollections:\n  - acme.app\n  - name: acme.lib\n    version: '>=1.0.0,<2.0.0'\n    source: " + e.g.URL() + "\n    type: galaxy\n"})
	code, m := e.JSON("PATCH", remote, map[string]any{"requirements_file": "collections:\n  - name: acme.app\n  - {name: acme.lib, version: '!!'}\n"})
	if msg := fmt.Sprint(m["requirements_file"]); code != http.StatusBadRequest || !strings.Contains(msg, "line 3") {
		t.Errorf("update: %d %v", code, m)
	}
	for _, body := range []map[string]any{
		{"name": "noslash", "url": strings.TrimSuffix(e.g.URL(), "/")},
		{"name": "sso", "url": e.g.URL(), "auth_url": "https://sso.example.com/token"},
	} {
		if code, m := e.JSON("POST", "/pulp/api/v3/remotes/ansible/collection/", body); code != http.StatusBadRequest {
			t.Errorf("%v: %d %v", body, code, m)
		}
	}
	if n := e.Count("remotes"); n != 1 {
		t.Errorf("%d remotes, want the good one only", n)
	}
}
