package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"pith/content/contenttest"
	"pith/internal/testfiles"
)

// counting serves a handler and counts the requests for each path.
type counting struct {
	h  http.Handler
	mu sync.Mutex
	n  map[string]int
}

func (c *counting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[r.URL.Path]++
	c.mu.Unlock()
	c.h.ServeHTTP(w, r)
}

func (c *counting) count(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[path]
}

// refreshed waits for the task group a refresh dispatched and fails unless every task
// completed.
func refreshed(e *contenttest.Env, code int, body map[string]any) {
	e.T.Helper()
	if code != 202 {
		e.T.Fatalf("refresh: %d %v", code, body)
	}
	for _, task := range waitGroup(e, body["task_group"].(string)) {
		if task["state"] != "completed" {
			e.T.Fatalf("refresh task: %v %v", task["state"], task["error"])
		}
	}
}

func createRemote(e *contenttest.Env, kind, name, url, policy string) string {
	e.T.Helper()
	code, m := e.JSON("POST", "/pulp/api/v3/remotes/"+kind+"/", map[string]any{"name": name, "url": url, "policy": policy})
	if code != 201 {
		e.T.Fatalf("remote %s: %d %v", name, code, m)
	}
	return m["pulp_href"].(string)
}

const fileACS = "/pulp/api/v3/acs/file/file/"

// An alternate content source takes an on_demand remote of its own type and relative
// paths; anything else is a 400 naming the field, and nothing is stored.
func TestACSBadInput(t *testing.T) {
	e := newEnv(t)
	onDemand := createRemote(e, "file/file", "od", "https://acs.example/", "on_demand")
	immediate := createRemote(e, "file/file", "imm", "https://acs.example/", "immediate")
	rpmRemote := createRemote(e, "rpm/rpm", "rpm", "https://acs.example/", "on_demand")
	for _, tc := range []struct {
		name, field, msg string
		body             map[string]any
	}{
		{"remote of another type", "remote", "No URL match", map[string]any{"name": "x", "remote": rpmRemote}},
		{"remote not on_demand", "remote", "'on_demand' policy", map[string]any{"name": "x", "remote": immediate}},
		{"no remote", "remote", "required", map[string]any{"name": "x"}},
		{"dot-dot path", "paths", `".."`, map[string]any{"name": "x", "remote": onDemand, "paths": []string{"ok/PULP_MANIFEST", "../etc/PULP_MANIFEST"}}},
		{"absolute path", "paths", "cannot start with a slash", map[string]any{"name": "x", "remote": onDemand, "paths": []string{"/etc/PULP_MANIFEST"}}},
		{"blank path", "paths", "blank", map[string]any{"name": "x", "remote": onDemand, "paths": []string{""}}},
		{"blank name", "name", "required", map[string]any{"name": "", "remote": onDemand}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, m := e.JSON("POST", fileACS, tc.body)
			b, _ := json.Marshal(m)
			if code != 400 || !strings.Contains(fmt.Sprint(m[tc.field]), tc.msg) {
				t.Errorf("%d %s, want 400 naming %s: %q", code, b, tc.field, tc.msg)
			}
			if n := e.Count("acs"); n != 0 {
				t.Errorf("%d sources stored", n)
			}
		})
	}
	// rpm paths end with a slash, as pulp_rpm requires.
	code, m := e.JSON("POST", "/pulp/api/v3/acs/rpm/rpm/", map[string]any{"name": "r", "remote": rpmRemote, "paths": []string{"el9"}})
	if code != 400 || !strings.Contains(fmt.Sprint(m["paths"]), "end with a slash") {
		t.Errorf("rpm path without a slash: %d %v", code, m)
	}

	// A good one; an update to a bad remote is refused before anything is queued; its
	// remote cannot be deleted while it uses it.
	code, acs := e.JSON("POST", fileACS, map[string]any{"name": "good", "remote": onDemand, "paths": []string{"a/PULP_MANIFEST"}})
	if code != 201 || acs["remote"] != onDemand || fmt.Sprint(acs["paths"]) != "[a/PULP_MANIFEST]" || acs["last_refreshed"] != nil {
		t.Fatalf("create: %d %v", code, acs)
	}
	code, m = e.JSON("PATCH", acs["pulp_href"].(string), map[string]any{"remote": immediate})
	if code != 400 || !strings.Contains(fmt.Sprint(m["remote"]), "on_demand") {
		t.Errorf("patch to an immediate remote: %d %v", code, m)
	}
	code, m = e.JSON("DELETE", onDemand, nil)
	if task := e.Wait(m["task"].(string)); code != 202 || task["state"] != "failed" || !strings.Contains(fmt.Sprint(task["error"]), `alternate content source "good"`) {
		t.Errorf("delete of the source's remote: %d %v", code, task["error"])
	}
	code, m = e.JSON("PATCH", acs["pulp_href"].(string), map[string]any{"paths": []string{"b/PULP_MANIFEST", "b/PULP_MANIFEST"}})
	e.Done("patch", code, m)
	_, got, _ := e.Do("GET", acs["pulp_href"].(string), "", nil)
	if fmt.Sprint(got["paths"]) != "[b/PULP_MANIFEST]" || got["name"] != "good" {
		t.Errorf("after patch: %v", got)
	}
	code, m = e.JSON("DELETE", acs["pulp_href"].(string), nil)
	e.Done("delete", code, m)
	if n := e.Count("acs"); n != 0 {
		t.Errorf("%d sources after delete", n)
	}
}

// A file alternate content source, refreshed, gives a sync every file it lists: the
// remote is asked for its manifest and for nothing the source has. A file the source
// serves wrong is fetched from the remote and stored intact, and the task says so. The
// source's files never show in a content list.
func TestACSFileSync(t *testing.T) {
	e := newEnv(t)
	a, b, c := []byte("file a\n"), []byte("file b\n"), []byte("file c, only upstream\n")
	// The source has a and b under sub/ (b with wrong bytes once refreshed).
	acsFiles := &mirror{files: map[string][]byte{"a.txt": a, "b.txt": b}, manifest: line("a.txt", a) + line("b.txt", b)}
	acsSrv := &counting{h: http.StripPrefix("/sub", acsFiles)}
	acsHTTP := httptest.NewServer(acsSrv)
	defer acsHTTP.Close()
	up := &counting{h: &mirror{files: map[string][]byte{"a.txt": a, "b.txt": b, "c.txt": c}, manifest: line("a.txt", a) + line("b.txt", b) + line("c.txt", c)}}
	upHTTP := httptest.NewServer(up)
	defer upHTTP.Close()

	remote := createRemote(e, "file/file", "acs-remote", acsHTTP.URL+"/", "on_demand")
	code, acs := e.JSON("POST", fileACS, map[string]any{"name": "near", "remote": remote, "paths": []string{"sub/PULP_MANIFEST"}})
	if code != 201 {
		t.Fatalf("create: %d %v", code, acs)
	}
	code, m := e.JSON("POST", acs["pulp_href"].(string)+"refresh/", nil)
	refreshed(e, code, m)
	_, got, _ := e.Do("GET", acs["pulp_href"].(string), "", nil)
	if got["last_refreshed"] == nil {
		t.Errorf("last_refreshed unset after a refresh: %v", got)
	}
	if _, list, _ := e.Do("GET", "/pulp/api/v3/content/file/files/", "", nil); list["count"] != float64(0) {
		t.Errorf("the source's files show in the content list: %v", list["count"])
	}

	corrupt := []byte("file B\n")
	acsFiles.files["b.txt"] = corrupt // same size: only the digest tells
	task, repo := syncRepo(e, "sync", upHTTP.URL+"/PULP_MANIFEST", "immediate", false)
	if task["state"] != "completed" {
		t.Fatalf("sync: %v %v", task["state"], task["error"])
	}
	if n := up.count("/a.txt"); n != 0 {
		t.Errorf("the remote was asked for a.txt %d times; the source has it", n)
	}
	if up.count("/b.txt") != 1 || up.count("/c.txt") != 1 || acsSrv.count("/sub/a.txt") != 1 || acsSrv.count("/sub/b.txt") == 0 {
		t.Errorf("requests: remote %v, source %v", up.n, acsSrv.n)
	}
	reports := map[string]float64{}
	for _, p := range task["progress_reports"].([]any) {
		p := p.(map[string]any)
		reports[p["code"].(string)] = p["done"].(float64)
	}
	if reports["sync.downloading.acs"] != 1 || reports["sync.acs.fallback"] != 1 {
		t.Errorf("progress reports %v: want 1 from the source and 1 fallback", reports)
	}
	// What is stored is what the manifest says, byte for byte.
	for name, want := range map[string][]byte{"a.txt": a, "b.txt": b, "c.txt": c} {
		var sum string
		err := e.DB.QueryRow(context.Background(), `SELECT a.sha256 FROM contents c JOIN content_artifacts ca ON ca.content_id = c.id
			JOIN artifacts a ON a.id = ca.artifact_id WHERE c.relative_path = ?`, name).Scan(&sum)
		if err != nil || sum != hexsum(want) {
			t.Errorf("%s: stored %q (%v), want %s", name, sum, err, hexsum(want))
		}
	}
	if _, err := e.Store.Stat(context.Background(), hexsum(corrupt)); err == nil {
		t.Error("the corrupt bytes the source served were stored")
	}
	if _, v, _ := e.Do("GET", latest(e, repo), "", nil); v["number"] != float64(1) {
		t.Errorf("version %v", v["number"])
	}

	// A file the source serves wrong and the remote no longer has: the sync fails naming
	// both, and stores nothing of it.
	d := []byte("file d\n")
	acsFiles.files["d.txt"], acsFiles.manifest = []byte("file D\n"), acsFiles.manifest+line("d.txt", d)
	code, m = e.JSON("POST", acs["pulp_href"].(string)+"refresh/", nil)
	refreshed(e, code, m)
	up.h.(*mirror).manifest = line("d.txt", d)
	task, _ = syncRepo(e, "gone", upHTTP.URL+"/PULP_MANIFEST", "immediate", false)
	desc := fmt.Sprint(task["error"])
	if task["state"] != "failed" || !strings.Contains(desc, `alternate content source "near"`) || !strings.Contains(desc, "404") {
		t.Errorf("sync of a file no one gives intact: %v %s", task["state"], desc)
	}
	if _, err := e.Store.Stat(context.Background(), hexsum([]byte("file D\n"))); err == nil {
		t.Error("the corrupt bytes the source served were stored")
	}
}

// An rpm alternate content source, refreshed, gives an immediate sync every package: the
// remote serves the metadata and no .rpm.
func TestACSRpmSync(t *testing.T) {
	e := newEnv(t)
	acsSrv := &counting{h: http.FileServer(http.Dir(testfiles.Path("yum-katello")))}
	acsHTTP := httptest.NewServer(acsSrv)
	defer acsHTTP.Close()
	up := &counting{h: http.FileServer(http.Dir(testfiles.Path("yum-katello", "zoo")))}
	upHTTP := httptest.NewServer(up)
	defer upHTTP.Close()

	remote := createRemote(e, "rpm/rpm", "acs", acsHTTP.URL+"/", "on_demand")
	code, acs := e.JSON("POST", "/pulp/api/v3/acs/rpm/rpm/", map[string]any{"name": "near", "remote": remote, "paths": []string{"zoo/"}})
	if code != 201 {
		t.Fatalf("create: %d %v", code, acs)
	}
	code, m := e.JSON("POST", acs["pulp_href"].(string)+"refresh/", nil)
	refreshed(e, code, m)

	code, repo := e.JSON("POST", "/pulp/api/v3/repositories/rpm/rpm/", map[string]any{"name": "zoo"})
	if code != 201 {
		t.Fatalf("repository: %d %v", code, repo)
	}
	upRemote := createRemote(e, "rpm/rpm", "zoo", upHTTP.URL+"/", "immediate")
	code, m = e.JSON("POST", repo["pulp_href"].(string)+"sync/", map[string]any{"remote": upRemote})
	task := e.Done("sync", code, m)
	var fromUp, fromACS int
	for p, n := range up.n {
		if strings.HasSuffix(p, ".rpm") {
			fromUp += n
		}
	}
	for p, n := range acsSrv.n {
		if strings.HasSuffix(p, ".rpm") {
			fromACS += n
		}
	}
	if fromUp != 0 || fromACS != 20 {
		t.Errorf("rpms fetched: %d from the remote (want 0), %d from the source (want 20)", fromUp, fromACS)
	}
	for _, p := range task["progress_reports"].([]any) {
		if p := p.(map[string]any); p["code"] == "sync.downloading.acs" && p["done"] != float64(20) {
			t.Errorf("report %v", p)
		}
	}
	if n := e.Count("artifacts"); n < 20 {
		t.Errorf("%d artifacts after an immediate sync of 20 packages", n)
	}
	if _, list, _ := e.Do("GET", "/pulp/api/v3/content/rpm/packages/", "", nil); list["count"] != float64(20) {
		t.Errorf("%v packages listed, want the 20 of the synced repository", list["count"])
	}
}
