package api_test

import (
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"pith/content/contenttest"
	"pith/serve/guard"
)

// servedFile makes a file repository holding hello.txt, published and distributed at
// base, and returns the distribution's href and the file's URL.
func servedFile(e *contenttest.Env, base string) (string, string) {
	e.T.Helper()
	_, repo := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": base})
	ct, body := contenttest.Multipart(map[string]string{"relative_path": "hello.txt", "repository": repo["pulp_href"].(string)}, "file", "hello.txt", []byte("hello"))
	code, m, _ := e.Do("POST", "/pulp/api/v3/content/file/files/", ct, body)
	e.Done("upload", code, m)
	code, m = e.JSON("POST", "/pulp/api/v3/publications/file/file/", map[string]any{"repository": repo["pulp_href"]})
	pub := e.Done("publish", code, m)["created_resources"].([]any)[0]
	code, m = e.JSON("POST", "/pulp/api/v3/distributions/file/file/", map[string]any{"name": base, "base_path": base, "publication": pub})
	tk := e.Done("distribute", code, m)
	return tk["created_resources"].([]any)[0].(string), e.URL + "/pulp/content/" + base + "/hello.txt"
}

// fetch GETs a content URL with headers (pairs) and basic credentials (user "" none).
func fetch(t *testing.T, u, user, password string, hdr ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Content guards on a distribution: a header guard (plain and through a jq filter), an
// RBAC guard (a user with the downloader role, one without, anonymous), a composite of
// both; each refusal is answered on every request, cached resolutions or not, and
// detaching the guard opens the distribution again.
func TestContentGuards(t *testing.T) {
	e := newEnv(t)
	dist, file := servedFile(e, "guarded")
	if code, body := fetch(t, file, "", ""); code != 200 || body != "hello" {
		t.Fatalf("unguarded: %d %q", code, body)
	}
	attach := func(guard any) {
		t.Helper()
		code, m := e.JSON("PATCH", dist, map[string]any{"content_guard": guard})
		e.Done("attach", code, m)
		if _, d := e.JSON("GET", dist, nil); d["content_guard"] != guard {
			t.Fatalf("distribution's guard: %v, want %v", d["content_guard"], guard)
		}
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

	_, header := e.JSON("POST", "/pulp/api/v3/contentguards/core/header/", map[string]any{"name": "key", "header_name": "X-Key", "header_value": "sesame"})
	attach(header["pulp_href"])
	for _, tc := range []struct {
		value string
		code  int
	}{{"", 403}, {b64("wrong"), 403}, {"not base64!", 403}, {b64("sesame"), 200}, {b64("sesame"), 200}} {
		if code, _ := fetch(t, file, "", "", "X-Key", tc.value); code != tc.code {
			t.Errorf("header guard, X-Key %q: %d, want %d", tc.value, code, tc.code)
		}
	}
	code, m := e.JSON("PATCH", header["pulp_href"].(string), map[string]any{"jq_filter": ".identity.org", "header_value": "acme"})
	if code != 200 || m["jq_filter"] != ".identity.org" {
		t.Fatalf("jq filter: %d %v", code, m)
	}
	if code, _ := fetch(t, file, "", "", "X-Key", b64(`{"identity": {"org": "acme"}}`)); code != 200 {
		t.Errorf("jq filter, matching: %d", code)
	}
	if code, _ := fetch(t, file, "", "", "X-Key", b64(`{"identity": {"org": "evil"}}`)); code != 403 {
		t.Errorf("jq filter, not matching: %d", code)
	}
	if code, m := e.JSON("POST", "/pulp/api/v3/contentguards/core/header/", map[string]any{"name": "bad", "header_name": "X", "header_value": "v", "jq_filter": ".[["}); code != 400 || m["jq_filter"] == nil {
		t.Errorf("a jq filter that does not parse: %d %v", code, m)
	}

	_, rbac := e.JSON("POST", "/pulp/api/v3/contentguards/core/rbac/", map[string]any{"name": "staff"})
	attach(rbac["pulp_href"])
	newUser(e, "reader")
	newUser(e, "stranger")
	if code, m := e.JSON("POST", rbac["pulp_href"].(string)+"add_role/", map[string]any{"role": "core.rbaccontentguard_downloader", "users": []string{"reader"}}); code != 201 {
		t.Fatalf("add the downloader: %d %v", code, m)
	}
	if _, g := e.JSON("GET", rbac["pulp_href"].(string), nil); len(g["users"].([]any)) != 1 {
		t.Errorf("rbac guard's users: %v", g["users"])
	}
	pw := func(u string) string { return u + " has a long password" }
	for _, tc := range []struct {
		user string
		code int
	}{{"", 401}, {"stranger", 403}, {"reader", 200}, {"admin", 200}} {
		p := pw(tc.user)
		if tc.user == "admin" {
			p = "pw"
		}
		if code, _ := fetch(t, file, tc.user, p); code != tc.code {
			t.Errorf("rbac guard as %q: %d, want %d", tc.user, code, tc.code)
		}
	}

	_, comp := e.JSON("POST", "/pulp/api/v3/contentguards/core/composite/", map[string]any{"name": "either",
		"guards": []any{header["pulp_href"], rbac["pulp_href"]}})
	attach(comp["pulp_href"])
	if code, _ := fetch(t, file, "", "", "X-Key", b64(`{"identity": {"org": "acme"}}`)); code != 200 {
		t.Errorf("composite, by header: %d", code)
	}
	if code, _ := fetch(t, file, "reader", pw("reader")); code != 200 {
		t.Errorf("composite, by role: %d", code)
	}
	if code, _ := fetch(t, file, "stranger", pw("stranger")); code != 403 {
		t.Errorf("composite, neither: %d", code)
	}

	// Deleting a guard member leaves the composite asking the other; deleting the guard
	// a distribution names leaves it open, as Pulp's SET_NULL.
	if code, _, _ := e.Do("DELETE", header["pulp_href"].(string), "", nil); code != 204 {
		t.Fatalf("delete the header guard: %d", code)
	}
	if _, c := e.JSON("GET", comp["pulp_href"].(string), nil); len(c["guards"].([]any)) != 1 {
		t.Errorf("composite after a member's deletion: %v", c["guards"])
	}
	e.Do("DELETE", comp["pulp_href"].(string), "", nil)
	if code, body := fetch(t, file, "", ""); code != 200 || body != "hello" {
		t.Errorf("after the guard's deletion: %d %q", code, body)
	}
}

// A content_redirect guard lets through the URLs signed with its secret, until they
// expire.
func TestContentRedirectGuard(t *testing.T) {
	e := newEnv(t)
	dist, file := servedFile(e, "redirected")
	_, g := e.JSON("POST", "/pulp/api/v3/contentguards/core/content_redirect/", map[string]any{"name": "signed"})
	code, m := e.JSON("PATCH", dist, map[string]any{"content_guard": g["pulp_href"]})
	e.Done("attach", code, m)
	if _, ok := g["shared_secret"]; ok {
		t.Fatal("the guard's secret is shown")
	}
	var secret string
	if err := e.DB.QueryRow(t.Context(), `SELECT attrs FROM content_guards WHERE name = 'signed'`).Scan(&secret); err != nil {
		t.Fatal(err)
	}
	secret = secret[strings.Index(secret, `"shared_secret":"`)+len(`"shared_secret":"`):]
	secret = secret[:strings.IndexByte(secret, '"')]
	signed, err := guard.Preauthenticate(secret, file, []byte("salt"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if code, body := fetch(t, signed, "", ""); code != 200 || body != "hello" {
		t.Errorf("signed: %d %q", code, body)
	}
	if code, _ := fetch(t, file, "", ""); code != 403 {
		t.Errorf("unsigned: %d", code)
	}
	if code, _ := fetch(t, strings.Replace(signed, "hello.txt", "other.txt", 1), "", ""); code != 403 {
		t.Errorf("signed for another path: %d", code)
	}
	old, _ := guard.Preauthenticate(secret, file, []byte("salt"), time.Now().Add(-2*time.Hour))
	if code, _ := fetch(t, old, "", ""); code != 403 {
		t.Errorf("expired: %d", code)
	}
}
