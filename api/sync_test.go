package api_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"pith/content/contenttest"
	"strings"
	"testing"
)

func hexsum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// mirror is an upstream file repository whose files and manifest a test controls.
type mirror struct {
	files    map[string][]byte
	manifest string
}

func (m *mirror) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimPrefix(r.URL.Path, "/")
	if p == "PULP_MANIFEST" {
		fmt.Fprint(w, m.manifest)
		return
	}
	b, ok := m.files[p]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if p == "truncated.bin" {
		w.Header().Set("Content-Length", fmt.Sprint(len(b)+100))
	}
	w.Write(b)
}

func line(name string, data []byte) string {
	return fmt.Sprintf("%s,%s,%d\n", name, hexsum(data), len(data))
}

// sync creates a repository and remote for the upstream and syncs; it returns the task.
func syncRepo(e *contenttest.Env, name, url, policy string, mirror bool) (map[string]any, string) {
	e.T.Helper()
	code, repo := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": name})
	if code != 201 {
		e.T.Fatalf("repository: %d %v", code, repo)
	}
	code, rem := e.JSON("POST", "/pulp/api/v3/remotes/file/file/", map[string]any{"name": name, "url": url, "policy": policy})
	if code != 201 {
		e.T.Fatalf("remote: %d %v", code, rem)
	}
	return syncAgain(e, repo["pulp_href"].(string), rem["pulp_href"].(string), mirror), repo["pulp_href"].(string)
}

func syncAgain(e *contenttest.Env, repo, remote string, mirror bool) map[string]any {
	e.T.Helper()
	code, m := e.JSON("POST", repo+"sync/", map[string]any{"remote": remote, "mirror": mirror})
	if code != 202 {
		e.T.Fatalf("sync: %d %v", code, m)
	}
	return e.Wait(m["task"].(string))
}

func latest(e *contenttest.Env, repo string) string {
	_, m, _ := e.Do("GET", repo, "", nil)
	return m["latest_version_href"].(string)
}

// A sync that meets bad upstream data fails with an error naming the file and the
// problem, and leaves no version, no unit and no artifact behind.
func TestSyncFailuresChangeNothing(t *testing.T) {
	e := newEnv(t)
	good := []byte("good file\n")
	other := []byte("other file\n")
	for i, tc := range []struct {
		name     string
		manifest string
		files    map[string][]byte
		want     []string
	}{
		{"wrong digest", line("good.txt", good) + "bad.txt," + hexsum(other) + "," + fmt.Sprint(len(good)) + "\n",
			map[string][]byte{"good.txt": good, "bad.txt": good}, []string{"bad.txt", "sha256 mismatch"}},
		{"wrong size", line("good.txt", good) + "short.txt," + hexsum(good) + ",3\n",
			map[string][]byte{"good.txt": good, "short.txt": good}, []string{"short.txt", "size mismatch"}},
		{"missing upstream", line("good.txt", good) + line("gone.txt", other),
			map[string][]byte{"good.txt": good}, []string{"gone.txt", "404"}},
		{"truncated download", line("good.txt", good) + line("truncated.bin", other),
			map[string][]byte{"good.txt": good, "truncated.bin": other}, []string{"truncated.bin", "truncated"}},
		{"malformed manifest", line("good.txt", good) + "just-a-name\n",
			map[string][]byte{"good.txt": good}, []string{"PULP_MANIFEST", "line 2"}},
		{"path traversal in manifest", line("../escape.txt", good),
			map[string][]byte{"good.txt": good}, []string{"line 1", `".."`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := httptest.NewServer(&mirror{files: tc.files, manifest: tc.manifest})
			defer up.Close()
			before := [2]int{e.Count("artifacts"), e.Count("contents")}
			task, repo := syncRepo(e, fmt.Sprint("bad", i), up.URL+"/PULP_MANIFEST", "immediate", false)
			if task["state"] != "failed" {
				t.Fatalf("task %v, want failed", task["state"])
			}
			desc := fmt.Sprint(task["error"].(map[string]any)["description"])
			for _, w := range tc.want {
				if !strings.Contains(desc, w) {
					t.Errorf("error %q does not mention %q", desc, w)
				}
			}
			if v := latest(e, repo); !strings.HasSuffix(v, "/versions/0/") {
				t.Errorf("a failed sync made %s", v)
			}
			if after := [2]int{e.Count("artifacts"), e.Count("contents")}; after != before {
				t.Errorf("rows (artifacts, units) %v → %v", before, after)
			}
		})
	}
}

func TestSyncPoliciesAndMirror(t *testing.T) {
	e := newEnv(t)
	a, b, c := []byte("aaa"), []byte("bbb"), []byte("ccc")
	up := &mirror{files: map[string][]byte{"a": a, "b": b, "dir/c": c}, manifest: line("a", a) + line("b", b) + line("dir/c", c)}
	srv := httptest.NewServer(up)
	defer srv.Close()
	url := srv.URL + "/PULP_MANIFEST"

	task, repo := syncRepo(e, "immediate", url, "immediate", false)
	if task["state"] != "completed" {
		t.Fatalf("sync: %v", task)
	}
	_, v, _ := e.Do("GET", latest(e, repo), "", nil)
	if n := v["content_summary"].(map[string]any)["present"].(map[string]any)["file.file"].(map[string]any)["count"]; n != float64(3) {
		t.Fatalf("present %v", n)
	}
	if n := e.Count("artifacts"); n != 3 {
		t.Errorf("%d artifacts after an immediate sync, want 3", n)
	}
	// Unchanged manifest: the sync is skipped, no new version.
	_, m, _ := e.Do("GET", repo, "", nil)
	remote := m["remote"]
	_ = remote
	_, rems, _ := e.Do("GET", "/pulp/api/v3/remotes/file/file/?name=immediate", "", nil)
	remHref := rems["results"].([]any)[0].(map[string]any)["pulp_href"].(string)
	syncAgain(e, repo, remHref, false)
	if v := latest(e, repo); !strings.HasSuffix(v, "/versions/1/") {
		t.Errorf("re-sync of an unchanged manifest made %s", v)
	}
	// Upstream drops b: additive keeps it, mirror removes it.
	up.manifest = line("a", a) + line("dir/c", c)
	syncAgain(e, repo, remHref, false)
	if v := latest(e, repo); !strings.HasSuffix(v, "/versions/1/") {
		t.Errorf("additive sync that adds nothing made %s", v)
	}
	syncAgain(e, repo, remHref, true)
	_, v, _ = e.Do("GET", latest(e, repo), "", nil)
	summary := v["content_summary"].(map[string]any)
	if summary["present"].(map[string]any)["file.file"].(map[string]any)["count"] != float64(2) ||
		summary["removed"].(map[string]any)["file.file"].(map[string]any)["count"] != float64(1) {
		t.Errorf("mirror sync summary: %v", summary)
	}
	// On demand: units without artifacts.
	before := e.Count("artifacts")
	d := []byte("ddd")
	up.files["d"] = d
	up.manifest = line("d", d)
	task, _ = syncRepo(e, "ondemand", url, "on_demand", false)
	if task["state"] != "completed" {
		t.Fatalf("on-demand sync: %v", task)
	}
	if n := e.Count("artifacts"); n != before {
		t.Errorf("on-demand sync stored %d artifacts", n-before)
	}
}
