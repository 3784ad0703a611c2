package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pith/meta"
)

// Credentials belong in username/password and proxy_username/proxy_password: a URL that
// carries them is refused with Pulp's messages, and nothing is stored.
func TestRemoteCredentialsInURLsRefused(t *testing.T) {
	e := newEnv(t)
	const remotes = "/pulp/api/v3/remotes/file/file/"
	code, ok := e.JSON("POST", remotes, map[string]any{"name": "ok", "url": "https://example.com/PULP_MANIFEST"})
	if code != 201 {
		t.Fatalf("remote: %d %v", code, ok)
	}
	urlMsg := "The remote url contains username or password. Please use remote username or password instead."
	for _, tc := range []struct {
		name, method, path string
		body               map[string]any
		field, msg         string
	}{
		{"url with user and password", "POST", remotes, map[string]any{"name": "m", "url": "https://alice:hunter2@example.com/"}, "url", urlMsg},
		{"url with a token as user", "POST", remotes, map[string]any{"name": "m", "url": "https://hunter2@example.com/"}, "url", urlMsg},
		{"patched url with credentials", "PATCH", ok["pulp_href"].(string), map[string]any{"url": "https://alice:hunter2@example.com/"}, "url", urlMsg},
		{"proxy_url with credentials", "POST", remotes, map[string]any{"name": "m", "url": "https://example.com/", "proxy_url": "http://alice:hunter2@proxy:3128"},
			"proxy_url", "proxy_url must not contain credentials"},
		{"proxy credentials without a proxy", "POST", remotes, map[string]any{"name": "m", "url": "https://example.com/", "proxy_username": "alice", "proxy_password": "hunter2"},
			"non_field_errors", "proxy credentials cannot be specified without a proxy"},
		{"proxy username alone", "POST", remotes, map[string]any{"name": "m", "url": "https://example.com/", "proxy_url": "http://proxy:3128", "proxy_username": "alice"},
			"non_field_errors", "proxy username and password can only be specified together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.Count("remotes")
			code, m := e.JSON(tc.method, tc.path, tc.body)
			b, _ := json.Marshal(m)
			if code != 400 {
				t.Fatalf("status %d, want 400: %s", code, b)
			}
			if got, _ := m[tc.field].([]any); len(got) != 1 || got[0] != tc.msg {
				t.Errorf("body %s, want %s: [%q]", b, tc.field, tc.msg)
			}
			if strings.Contains(string(b), "hunter2") {
				t.Errorf("the answer shows the password: %s", b)
			}
			if e.Count("remotes") != before {
				t.Error("a refused remote was stored")
			}
		})
	}
	_, m, _ := e.Do("GET", ok["pulp_href"].(string), "", nil)
	if m["url"] != "https://example.com/PULP_MANIFEST" {
		t.Errorf("a refused update changed the remote: %v", m["url"])
	}
}

// A remote stored before credentials in URLs were refused shows them nowhere: not in its
// responses, and not in the error of a sync that fails.
func TestURLCredentialsRedacted(t *testing.T) {
	e := newEnv(t)
	var upstreamAuth string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstreamAuth = r.Header.Get("Authorization")
		http.Error(w, "no such repository", http.StatusNotFound)
	}))
	defer up.Close()
	u := strings.Replace(up.URL, "http://", "http://alice:hunter2@", 1) + "/repo/PULP_MANIFEST"
	attrs := `{"proxy_url": "http://bob:swordfish@127.0.0.1:1"}`
	if _, err := meta.CreateRemote(t.Context(), e.DB, meta.Remote{Type: "file.file", Name: "old", URL: u, Policy: "immediate", Attrs: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := meta.CreateRemote(t.Context(), e.DB, meta.Remote{Type: "file.file", Name: "old-proxy", URL: up.URL, Policy: "immediate", Attrs: json.RawMessage(attrs)}); err != nil {
		t.Fatal(err)
	}
	_, list, _ := e.Do("GET", "/pulp/api/v3/remotes/file/file/?ordering=name", "", nil)
	b, _ := json.Marshal(list)
	if strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "swordfish") || !strings.Contains(string(b), "alice:xxxxx@") {
		t.Errorf("remote list shows credentials: %s", b)
	}
	rem := list["results"].([]any)[0].(map[string]any)
	code, repo := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": "r"})
	if code != 201 {
		t.Fatalf("repository: %d %v", code, repo)
	}
	task := syncAgain(e, repo["pulp_href"].(string), rem["pulp_href"].(string), false)
	b, _ = json.Marshal(task)
	if task["state"] != "failed" || !strings.Contains(string(b), "404") {
		t.Fatalf("sync of a missing upstream: %s", b)
	}
	if strings.Contains(string(b), "hunter2") || !strings.Contains(string(b), "alice:xxxxx@") {
		t.Errorf("task shows the URL's password: %s", b)
	}
	if upstreamAuth == "" {
		t.Error("the URL's credentials were not sent upstream")
	}
}

// A remote's password is in the database file only sealed, whether it came with the
// remote or with an update (a task's arguments), and syncs still send it upstream.
func TestRemoteSecretsAtRest(t *testing.T) {
	e := newEnv(t)
	data := []byte("protected file\n")
	password := "first-s3cr3t"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != password {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/PULP_MANIFEST" {
			w.Write([]byte(line("a.txt", data)))
			return
		}
		w.Write(data)
	}))
	defer up.Close()
	code, repo := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": "r"})
	if code != 201 {
		t.Fatalf("repository: %d %v", code, repo)
	}
	code, rem := e.JSON("POST", "/pulp/api/v3/remotes/file/file/", map[string]any{"name": "r", "url": up.URL + "/PULP_MANIFEST",
		"username": "alice", "password": password, "proxy_url": "http://127.0.0.1:1", "proxy_username": "bob", "proxy_password": "proxy-s3cr3t"})
	if code != 201 {
		t.Fatalf("remote: %d %v", code, rem)
	}
	// No proxy after all: an update whose body (a task's arguments) carries a password.
	code, m := e.JSON("PATCH", rem["pulp_href"].(string), map[string]any{"proxy_url": nil, "proxy_username": nil, "proxy_password": nil, "password": "second-s3cr3t"})
	if code != 202 {
		t.Fatalf("update: %d %v", code, m)
	}
	if tk := e.Wait(m["task"].(string)); tk["state"] != "completed" {
		t.Fatalf("update task: %v", tk)
	}
	password = "second-s3cr3t"
	if tk := syncAgain(e, repo["pulp_href"].(string), rem["pulp_href"].(string), false); tk["state"] != "completed" {
		t.Fatalf("sync with the sealed password: %v", tk)
	}
	_, m, _ = e.Do("GET", rem["pulp_href"].(string), "", nil)
	if b, _ := json.Marshal(m); strings.Contains(string(b), "s3cr3t") {
		t.Errorf("the remote shows a secret: %s", b)
	}
	for _, name := range []string{"pith.db", "pith.db-wal"} {
		b, err := os.ReadFile(filepath.Join(e.Dir, name))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, s := range []string{"first-s3cr3t", "second-s3cr3t", "proxy-s3cr3t"} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %q in plain text", name, s)
			}
		}
	}
}
