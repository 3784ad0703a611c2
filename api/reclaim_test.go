package api_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"pith/blob/driver/fs"
	"pith/content/contenttest"
)

// fileDist distributes a repository's latest version at base and returns its content URL.
func fileDist(e *contenttest.Env, repo, base string) string {
	e.T.Helper()
	code, m := e.JSON("POST", "/pulp/api/v3/distributions/file/file/", map[string]any{"name": base, "base_path": base, "repository": repo})
	e.Done("distribution", code, m)
	return e.URL + "/pulp/content/" + base + "/"
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// countingMirror is a mirror that counts the requests for each path.
type countingMirror struct {
	*mirror
	hits map[string]int
}

func (m *countingMirror) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.hits[strings.TrimPrefix(r.URL.Path, "/")]++
	m.mirror.ServeHTTP(w, r)
}

// reclaim_space drops the stored files of a synced repository, uploads and the files
// other repositories hold excepted; the content app then fetches a reclaimed file again
// from the remote, even one whose resolution it had cached.
func TestReclaimSpace(t *testing.T) {
	e := newEnv(t)
	a, b := []byte("aaa\n"), []byte("bbb\n")
	up := &countingMirror{mirror: &mirror{files: map[string][]byte{"a": a, "b": b}, manifest: line("a", a) + line("b", b)}, hits: map[string]int{}}
	srv := httptest.NewServer(up)
	defer srv.Close()
	_, repo := syncRepo(e, "reclaimed", srv.URL+"/PULP_MANIFEST", "immediate", false)
	up.mirror.manifest = line("b", b)
	syncRepo(e, "other", srv.URL+"/PULP_MANIFEST", "immediate", false)
	base := fileDist(e, repo, "reclaimed")
	if code, body := get(t, base+"a"); code != 200 || body != string(a) {
		t.Fatalf("before reclaim: %d %q", code, body)
	}
	artifacts, blobs := e.Count("artifacts"), e.BlobCount()
	before := up.hits["a"]

	code, m := e.JSON("POST", "/pulp/api/v3/repositories/reclaim_space/", map[string]any{"repo_hrefs": []string{repo}})
	task := e.Done("reclaim", code, m)
	reports := task["progress_reports"].([]any)
	if len(reports) != 1 || reports[0].(map[string]any)["code"] != "reclaim-space.artifact" || reports[0].(map[string]any)["done"] != float64(1) {
		t.Errorf("progress reports: %v", reports)
	}
	if n := e.Count("artifacts"); n != artifacts-1 {
		t.Errorf("%d artifacts after reclaim, want %d (b is held by another repository)", n, artifacts-1)
	}
	if n := e.BlobCount(); n != blobs-1 {
		t.Errorf("%d blobs after reclaim, want %d", n, blobs-1)
	}
	if code, body := get(t, base+"a"); code != 200 || body != string(a) {
		t.Fatalf("after reclaim: %d %q", code, body)
	}
	if up.hits["a"] != before+1 {
		t.Errorf("the remote was asked for a %d times after reclaim, want once", up.hits["a"]-before)
	}
	if n := e.Count("artifacts"); n != artifacts {
		t.Errorf("%d artifacts after the refetch, want %d", n, artifacts)
	}
}

// A reclaim naming what is not a repository, or none that exists, is a 400 naming it,
// and queues nothing.
func TestReclaimSpaceBadInput(t *testing.T) {
	e := newEnv(t)
	code, repo := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": "r"})
	if code != 201 {
		t.Fatal(code, repo)
	}
	rh := repo["pulp_href"].(string)
	gone := "/pulp/api/v3/repositories/file/file/00000000-0000-4000-8000-000000000000/"
	remote := "/pulp/api/v3/remotes/file/file/00000000-0000-4000-8000-000000000000/"
	tasks := e.Count("tasks")
	for _, tc := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{}, "repo_hrefs"},
		{map[string]any{"repo_hrefs": []string{}}, "Must not be []"},
		{map[string]any{"repo_hrefs": []string{gone}}, gone},
		{map[string]any{"repo_hrefs": []string{remote}}, remote},
		{map[string]any{"repo_hrefs": []string{"*", rh}}, "'*'"},
		{map[string]any{"repo_hrefs": []any{7}}, "repo_hrefs"},
		{map[string]any{"repo_hrefs": []string{rh}, "repo_versions_keeplist": []string{rh}}, rh},
		{map[string]any{"repo_hrefs": []string{rh}, "repo_versions_keeplist": []string{rh + "versions/9/"}}, rh + "versions/9/"},
	} {
		code, m := e.JSON("POST", "/pulp/api/v3/repositories/reclaim_space/", tc.body)
		if code != 400 || !strings.Contains(fmt.Sprint(m), tc.want) {
			t.Errorf("%v: %d %v, want a 400 naming %s", tc.body, code, m, tc.want)
		}
	}
	if n := e.Count("tasks"); n != tasks {
		t.Errorf("%d tasks queued by bad input", n-tasks)
	}
}

// Repair of every artifact finds a corrupt blob and fetches it again from the remote;
// one with no remote is reported and left as it is, and the rest serves on.
func TestRepairAll(t *testing.T) {
	e := newEnv(t)
	a := []byte("aaa\n")
	up := &mirror{files: map[string][]byte{"a": a}, manifest: line("a", a)}
	srv := httptest.NewServer(up)
	defer srv.Close()
	_, repo := syncRepo(e, "synced", srv.URL+"/PULP_MANIFEST", "immediate", false)
	base := fileDist(e, repo, "synced")
	u := []byte("uploaded\n")
	ct, body := contenttest.Multipart(map[string]string{"relative_path": "u"}, "file", "u", u)
	code, _, _ := e.Do("POST", "/pulp/api/v3/content/file/files/upload/", ct, body)
	if code != 201 {
		t.Fatalf("upload: %d", code)
	}
	drv := e.Store.Driver().(*fs.Driver)
	corrupt := func(data []byte) {
		p, _ := drv.Path(hexsum(data))
		if err := os.WriteFile(p, []byte(strings.ToUpper(string(data))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	corrupt(a)
	corrupt(u)
	// A corrupt small file is refused, not sent (and kept in memory past its repair).
	if code, body := get(t, base+"a"); code != http.StatusBadGateway {
		t.Errorf("corrupt file: %d %q", code, body)
	}
	code, m := e.JSON("POST", "/pulp/api/v3/repair/", map[string]any{})
	task := e.Done("repair", code, m)
	got := map[string]float64{}
	for _, r := range task["progress_reports"].([]any) {
		r := r.(map[string]any)
		got[r["code"].(string)] = r["done"].(float64)
	}
	if got["repair.corrupted"] != 2 || got["repair.repaired"] != 1 || got["repair.missing"] != 0 {
		t.Errorf("progress: %v, want 2 corrupted, 1 repaired", got)
	}
	if code, body := get(t, base+"a"); code != 200 || body != string(a) {
		t.Errorf("repaired file: %d %q", code, body)
	}
	p, _ := drv.Path(hexsum(u))
	if b, err := os.ReadFile(p); err != nil || string(b) != strings.ToUpper(string(u)) {
		t.Errorf("the unrepairable blob changed: %q %v", b, err)
	}
	// Without checksums only missing blobs count.
	code, m = e.JSON("POST", "/pulp/api/v3/repair/", map[string]any{"verify_checksums": false})
	task = e.Done("repair", code, m)
	for _, r := range task["progress_reports"].([]any) {
		if r := r.(map[string]any); r["done"] != float64(0) {
			t.Errorf("repair without checksums: %v", r)
		}
	}
}
