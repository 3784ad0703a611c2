package api_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Checkpoint publications (file and rpm) and a checkpoint distribution: the flags show
// and filter; the distribution lists the checkpoint under its time and serves it there.
func TestCheckpoints(t *testing.T) {
	e := newEnv(t)
	a := []byte("aaa\n")
	srv := httptest.NewServer(&mirror{files: map[string][]byte{"a": a}, manifest: line("a", a)})
	defer srv.Close()
	_, repo := syncRepo(e, "cp", srv.URL+"/PULP_MANIFEST", "immediate", false)
	publish := func(coll string, body map[string]any) map[string]any {
		t.Helper()
		code, m := e.JSON("POST", "/pulp/api/v3/publications/"+coll+"/", body)
		task := e.Done("publication", code, m)
		h := task["created_resources"].([]any)[0].(string)
		code, m = e.JSON("GET", h, nil)
		if code != 200 {
			t.Fatalf("%s: %d %v", h, code, m)
		}
		return m
	}
	cp := publish("file/file", map[string]any{"repository": repo, "checkpoint": true})
	plain := publish("file/file", map[string]any{"repository": repo})
	if cp["checkpoint"] != true || plain["checkpoint"] != false {
		t.Errorf("checkpoint shown as %v and %v, want true and false", cp["checkpoint"], plain["checkpoint"])
	}
	for _, tc := range []struct{ query, want string }{
		{"publications/file/file/?checkpoint=true", cp["pulp_href"].(string)},
		{"publications/?checkpoint=True", cp["pulp_href"].(string)},
		{"publications/file/file/?checkpoint=false", plain["pulp_href"].(string)},
	} {
		code, m := e.JSON("GET", "/pulp/api/v3/"+tc.query, nil)
		if rs, _ := m["results"].([]any); code != 200 || len(rs) != 1 || rs[0].(map[string]any)["pulp_href"] != tc.want {
			t.Errorf("%s: %d %v, want only %s", tc.query, code, m, tc.want)
		}
	}

	code, m := e.JSON("POST", "/pulp/api/v3/distributions/file/file/", map[string]any{"name": "cp", "base_path": "cp", "repository": repo, "checkpoint": true})
	created := e.Done("distribution", code, m)
	dist := created["created_resources"].([]any)[0].(string)
	code, m = e.JSON("GET", "/pulp/api/v3/distributions/file/file/?checkpoint=true", nil)
	if rs, _ := m["results"].([]any); code != 200 || len(rs) != 1 || rs[0].(map[string]any)["checkpoint"] != true || rs[0].(map[string]any)["pulp_href"] != dist {
		t.Errorf("checkpoint distributions: %d %v", code, m)
	}
	ts := cpName(t, cp["pulp_created"].(string))
	if code, body := get(t, e.URL+"/pulp/content/cp/"); code != 200 || !strings.Contains(body, `href="`+ts+`/"`) || strings.Count(body, "<a href") != 2 {
		t.Errorf("checkpoint listing: %d\n%s", code, body)
	}
	if code, body := get(t, e.URL+"/pulp/content/cp/"+ts+"/a"); code != 200 || body != string(a) {
		t.Errorf("checkpoint %s: %d %q", ts, code, body)
	}
	// Patching another field keeps the flag; clearing it makes a plain distribution.
	code, m = e.JSON("PATCH", dist, map[string]any{"hidden": true})
	e.Done("patch", code, m)
	if code, m = e.JSON("GET", dist, nil); m["checkpoint"] != true {
		t.Errorf("after a patch of hidden: %d %v", code, m)
	}
	code, m = e.JSON("PATCH", dist, map[string]any{"checkpoint": false})
	e.Done("patch", code, m)
	if code, body := get(t, e.URL+"/pulp/content/cp/a"); code != 200 || body != string(a) {
		t.Errorf("no longer a checkpoint distribution: %d %q", code, body)
	}

	code, rpmRepo := e.JSON("POST", "/pulp/api/v3/repositories/rpm/rpm/", map[string]any{"name": "rpm"})
	if code != 201 {
		t.Fatal(code, rpmRepo)
	}
	if p := publish("rpm/rpm", map[string]any{"repository": rpmRepo["pulp_href"], "checkpoint": true}); p["checkpoint"] != true {
		t.Errorf("rpm checkpoint publication shows %v", p["checkpoint"])
	}
	code, m = e.JSON("POST", "/pulp/api/v3/distributions/rpm/rpm/", map[string]any{"name": "rcp", "base_path": "rcp", "repository": rpmRepo["pulp_href"], "checkpoint": true})
	e.Done("rpm distribution", code, m)
}

// cpName is the checkpoint name of an API timestamp.
func cpName(t *testing.T, created string) string {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, created)
	if err != nil {
		t.Fatal(err)
	}
	return at.UTC().Format("20060102T150405Z")
}

// A checkpoint publication of a repository version, a checkpoint distribution of
// anything but a repository, and a checkpoint on a type that declares none are 400s
// naming checkpoint, and change nothing.
func TestCheckpointBadInput(t *testing.T) {
	e := newEnv(t)
	code, repo := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": "r"})
	if code != 201 {
		t.Fatal(code, repo)
	}
	rh := repo["pulp_href"].(string)
	code, m := e.JSON("POST", "/pulp/api/v3/publications/file/file/", map[string]any{"repository": rh})
	task := e.Done("publication", code, m)
	pub := task["created_resources"].([]any)[0].(string)
	code, m = e.JSON("POST", "/pulp/api/v3/distributions/file/file/", map[string]any{"name": "cp", "base_path": "cp", "repository": rh, "checkpoint": true})
	task = e.Done("distribution", code, m)
	dist := task["created_resources"].([]any)[0].(string)
	code, arepo := e.JSON("POST", "/pulp/api/v3/repositories/ansible/ansible/", map[string]any{"name": "a"})
	if code != 201 {
		t.Fatal(code, arepo)
	}
	tasks := e.Count("tasks")
	const onlyRepo = "The 'checkpoint' attribute may only be used with the 'repository' attribute."
	for _, tc := range []struct {
		method, path string
		body         map[string]any
		want         string
	}{
		{"POST", "/pulp/api/v3/publications/file/file/", map[string]any{"repository_version": rh + "versions/0/", "checkpoint": true}, "'checkpoint' may only be used with 'repository'"},
		{"POST", "/pulp/api/v3/publications/rpm/rpm/", map[string]any{"repository_version": "/pulp/api/v3/repositories/rpm/rpm/00000000-0000-4000-8000-000000000000/versions/0/", "checkpoint": true},
			"'checkpoint' may only be used with 'repository'"},
		{"POST", "/pulp/api/v3/publications/file/file/", map[string]any{"repository": rh, "checkpoint": "yes"}, "checkpoint:[Incorrect type"},
		{"POST", "/pulp/api/v3/distributions/file/file/", map[string]any{"name": "x", "base_path": "x", "checkpoint": true}, onlyRepo},
		{"POST", "/pulp/api/v3/distributions/file/file/", map[string]any{"name": "x", "base_path": "x", "publication": pub, "checkpoint": true}, onlyRepo},
		{"POST", "/pulp/api/v3/distributions/rpm/rpm/", map[string]any{"name": "x", "base_path": "x", "checkpoint": true}, onlyRepo},
		{"PATCH", dist, map[string]any{"publication": pub}, onlyRepo},
		{"PATCH", dist, map[string]any{"repository": nil}, onlyRepo},
		// The reference declares no checkpoint on ansible distributions.
		{"POST", "/pulp/api/v3/distributions/ansible/ansible/", map[string]any{"name": "x", "base_path": "x", "repository": arepo["pulp_href"], "checkpoint": true},
			"checkpoint:[Unexpected field.]"},
	} {
		code, m := e.JSON(tc.method, tc.path, tc.body)
		if code != 400 || !strings.Contains(fmt.Sprint(m), tc.want) {
			t.Errorf("%s %s %v: %d %v, want a 400 saying %s", tc.method, tc.path, tc.body, code, m, tc.want)
		}
	}
	if n := e.Count("tasks"); n != tasks {
		t.Errorf("%d tasks queued by bad input", n-tasks)
	}
	if code, m := e.JSON("GET", dist, nil); code != 200 || m["checkpoint"] != true || m["repository"] != rh {
		t.Errorf("the checkpoint distribution changed: %d %v", code, m)
	}
}

// retain_checkpoints (newer Pulp's) keeps the newest checkpoint publications
// checkpoints and makes the older ones plain publications, deleting none: after each
// checkpoint publication, and when the setting changes.
func TestRetainCheckpoints(t *testing.T) {
	e := newEnv(t)
	code, repo := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": "r", "retain_checkpoints": 2})
	if code != 201 || repo["retain_checkpoints"] != float64(2) {
		t.Fatalf("create: %d %v", code, repo)
	}
	rh := repo["pulp_href"].(string)
	var pubs []string
	for range 4 {
		code, m := e.JSON("POST", "/pulp/api/v3/publications/file/file/", map[string]any{"repository": rh, "checkpoint": true})
		pubs = append(pubs, e.Done("publication", code, m)["created_resources"].([]any)[0].(string))
		time.Sleep(2 * time.Millisecond) // distinct creation times
	}
	checkpoints := func() []string {
		_, m := e.JSON("GET", "/pulp/api/v3/publications/file/file/?checkpoint=true&ordering=pulp_created", nil)
		var out []string
		for _, r := range m["results"].([]any) {
			out = append(out, r.(map[string]any)["pulp_href"].(string))
		}
		return out
	}
	if got := checkpoints(); fmt.Sprint(got) != fmt.Sprint(pubs[2:]) {
		t.Errorf("checkpoints %v, want the newest two %v", got, pubs[2:])
	}
	if _, m := e.JSON("GET", "/pulp/api/v3/publications/file/file/", nil); m["count"] != float64(4) {
		t.Errorf("%v publications, want all 4 kept", m["count"])
	}
	code, m := e.JSON("PATCH", rh, map[string]any{"retain_checkpoints": 1})
	e.Done("update", code, m)
	if got := checkpoints(); fmt.Sprint(got) != fmt.Sprint(pubs[3:]) {
		t.Errorf("after retain_checkpoints 1: %v, want %v", got, pubs[3:])
	}
	// Patching another field keeps the setting; 0 is refused, null keeps every one.
	code, m = e.JSON("PATCH", rh, map[string]any{"description": "d"})
	e.Done("update", code, m)
	if _, r := e.JSON("GET", rh, nil); r["retain_checkpoints"] != float64(1) {
		t.Errorf("retain_checkpoints after another patch: %v", r["retain_checkpoints"])
	}
	if code, m := e.JSON("PATCH", rh, map[string]any{"retain_checkpoints": 0}); code != 400 || !strings.Contains(fmt.Sprint(m), "greater than or equal to 1") {
		t.Errorf("retain_checkpoints 0: %d %v", code, m)
	}
	code, m = e.JSON("PATCH", rh, map[string]any{"retain_checkpoints": nil})
	e.Done("update", code, m)
	code, m = e.JSON("POST", "/pulp/api/v3/publications/file/file/", map[string]any{"repository": rh, "checkpoint": true})
	e.Done("publication", code, m)
	if got := checkpoints(); len(got) != 2 {
		t.Errorf("with retain_checkpoints null: %d checkpoints, want 2", len(got))
	}
}
