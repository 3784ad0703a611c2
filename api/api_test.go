package api_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"pith/content/ansible"
	"pith/content/contenttest"
	"pith/content/file"
	"pith/content/rpm"
	"pith/meta"
)

// newEnv is pith with the types cmd/pith serves: file, rpm and ansible.
func newEnv(t *testing.T) *contenttest.Env {
	return contenttest.New(t, contenttest.Type(file.New), contenttest.Type(rpm.New), contenttest.Type(ansible.New))
}

func TestProtocolDetails(t *testing.T) {
	e := newEnv(t)
	// Status and the document are anonymous; everything else needs credentials.
	for _, p := range []string{"/pulp/api/v3/status/", "/pulp/api/v3/docs/api.json"} {
		resp, err := http.Get(e.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %q", p, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	resp, _ := http.Get(e.URL + "/pulp/api/v3/repositories/file/file/")
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("anonymous list: %d, want 401", resp.StatusCode)
	}
	// Correlation-ID is echoed with exactly that casing, or minted when invalid.
	// (A recorder keeps the header name as sent; Go's client would canonicalise it.)
	cid := "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct{ sent, want string }{{cid, cid}, {"not-a-uuid", ""}} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/pulp/api/v3/status/", nil)
		req.Header.Set("Correlation-ID", tc.sent)
		e.API.ServeHTTP(rec, req)
		got := rec.Result().Header
		raw := rec.Header()["Correlation-ID"]
		if len(raw) != 1 || (tc.want != "" && raw[0] != tc.want) || (tc.want == "" && (raw[0] == tc.sent || len(raw[0]) != 32)) {
			t.Errorf("sent %q: Correlation-ID header %v (all: %v)", tc.sent, raw, got)
		}
	}
	// Pagination ends with next = null.
	for i := 0; i < 3; i++ {
		e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": fmt.Sprint("r", i)})
	}
	code, m, _ := e.Do("GET", "/pulp/api/v3/repositories/file/file/?limit=2&offset=2", "", nil)
	if code != 200 || m["count"] != float64(3) || m["next"] != nil || len(m["results"].([]any)) != 1 {
		t.Errorf("last page: %d %v", code, m)
	}
	code, m, _ = e.Do("GET", "/pulp/api/v3/repositories/file/file/?limit=2", "", nil)
	if m["next"] == nil {
		t.Errorf("first page has no next: %v", m)
	}
	code, m, _ = e.Do("GET", "/pulp/api/v3/repositories/file/file/?fields=name&ordering=-name&limit=1", "", nil)
	if r := m["results"].([]any)[0].(map[string]any); len(r) != 1 || r["name"] != "r2" {
		t.Errorf("fields + ordering: %v", r)
	}
	code, m, _ = e.Do("GET", `/pulp/api/v3/repositories/file/file/?q=name="r0"%20OR%20name__startswith="r2"`, "", nil)
	if code != 200 || m["count"] != float64(2) {
		t.Errorf("q filter: %d %v", code, m)
	}
}

// Bad input gets a 400 that names what was wrong, and changes nothing.
func TestBadInputChangesNothing(t *testing.T) {
	e := newEnv(t)
	data := []byte("hello, pith\n")
	sum := sha256.Sum256(data)
	good := hex.EncodeToString(sum[:])
	wrong := strings.Repeat("0", 64)

	form := func(fields map[string]string) func() (string, io.Reader) {
		return func() (string, io.Reader) { return contenttest.Multipart(fields, "file", "x.txt", data) }
	}
	jsonBody := func(s string) func() (string, io.Reader) {
		return func() (string, io.Reader) { return "application/json", strings.NewReader(s) }
	}
	for _, tc := range []struct {
		name string
		path string
		body func() (string, io.Reader)
		want string
	}{
		{"artifact with wrong sha256", "/pulp/api/v3/artifacts/", form(map[string]string{"sha256": wrong}), "sha256"},
		{"artifact with wrong size", "/pulp/api/v3/artifacts/", form(map[string]string{"size": "5"}), "size"},
		{"unknown field", "/pulp/api/v3/repositories/file/file/", jsonBody(`{"name":"x","colour":"red"}`), "colour"},
		{"mistyped field", "/pulp/api/v3/repositories/file/file/", jsonBody(`{"name":"x","retain_repo_versions":"many"}`), "retain_repo_versions"},
		{"relative path with ..", "/pulp/api/v3/content/file/files/", form(map[string]string{"relative_path": "../etc/passwd"}), "relative_path"},
		{"absolute relative path", "/pulp/api/v3/content/file/files/", form(map[string]string{"relative_path": "/etc/passwd"}), "relative_path"},
		{"relative path with NUL", "/pulp/api/v3/content/file/files/", form(map[string]string{"relative_path": "a\x00b"}), "relative_path"},
		{"remote with a bad url", "/pulp/api/v3/remotes/file/file/", jsonBody(`{"name":"m","url":"ftp:/x"}`), "url"},
		{"remote with a bad policy", "/pulp/api/v3/remotes/file/file/", jsonBody(`{"name":"m","url":"http://x/","policy":"sometimes"}`), "policy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := [3]int{e.Count("artifacts"), e.Count("contents"), e.Count("repositories")}
			blobs := e.BlobCount()
			ctype, body := tc.body()
			code, m, _ := e.Do("POST", tc.path, ctype, body)
			if code != 400 {
				t.Fatalf("status %d, want 400: %v", code, m)
			}
			if b, _ := json.Marshal(m); !strings.Contains(string(b), tc.want) {
				t.Errorf("error %s does not name %q", b, tc.want)
			}
			after := [3]int{e.Count("artifacts"), e.Count("contents"), e.Count("repositories")}
			if after != before || e.BlobCount() != blobs {
				t.Errorf("rows %v → %v, blobs %d → %d", before, after, blobs, e.BlobCount())
			}
		})
	}
	// The right digest works.
	ct, b := contenttest.Multipart(map[string]string{"sha256": good}, "file", "x.txt", data)
	if code, m, _ := e.Do("POST", "/pulp/api/v3/artifacts/", ct, b); code != 201 || m["sha256"] != good {
		t.Fatalf("artifact create: %d %v", code, m)
	}
}

// Chunked uploads refuse overlaps, gaps and ranges past the declared size.
func TestChunkedUploadChecks(t *testing.T) {
	e := newEnv(t)
	data := bytes.Repeat([]byte("0123456789"), 300) // 3000 bytes
	sum := sha256.Sum256(data)
	code, up := e.JSON("POST", "/pulp/api/v3/uploads/", map[string]any{"size": len(data)})
	if code != 201 {
		t.Fatalf("create upload: %d %v", code, up)
	}
	href := up["pulp_href"].(string)
	put := func(start, end int, total string) (int, map[string]any) {
		ct, b := contenttest.Multipart(nil, "file", "blob", data[start:min(end+1, len(data))])
		code, m, _ := e.Do("PUT", href, ct, b, "Content-Range", fmt.Sprintf("bytes %d-%d/%s", start, end, total))
		return code, m
	}
	if code, m := put(0, 999, "3000"); code != 200 {
		t.Fatalf("first chunk: %d %v", code, m)
	}
	if code, m := put(500, 1499, "3000"); code != 400 || !strings.Contains(fmt.Sprint(m), "overlaps") {
		t.Errorf("overlapping chunk: %d %v", code, m)
	}
	if code, m := put(2000, 3099, "3000"); code != 400 || !strings.Contains(fmt.Sprint(m), "past") {
		t.Errorf("chunk past the size: %d %v", code, m)
	}
	if code, m := put(2000, 2999, "3000"); code != 200 {
		t.Fatalf("last chunk: %d %v", code, m)
	}
	commit := func(sha string) (int, map[string]any) {
		return e.JSON("POST", href+"commit/", map[string]any{"sha256": sha})
	}
	if code, m := commit(hex.EncodeToString(sum[:])); code != 400 || !strings.Contains(fmt.Sprint(m), "gap") {
		t.Errorf("commit with a gap: %d %v", code, m)
	}
	if code, m := put(1000, 1999, "3000"); code != 200 {
		t.Fatalf("middle chunk: %d %v", code, m)
	}
	if code, m := commit(strings.Repeat("a", 64)); code != 400 || !strings.Contains(fmt.Sprint(m), "sha256") {
		t.Errorf("commit with a wrong sha256: %d %v", code, m)
	}
	if n := e.Count("artifacts"); n != 0 {
		t.Errorf("%d artifacts after failed commits", n)
	}
	code, m := commit(hex.EncodeToString(sum[:]))
	if code != 202 {
		t.Fatalf("commit: %d %v", code, m)
	}
	if len(m) != 1 {
		t.Errorf("202 body must be exactly {task}: %v", m)
	}
	tk := e.Wait(m["task"].(string))
	if tk["state"] != "completed" || len(tk["created_resources"].([]any)) != 1 {
		t.Fatalf("commit task: %v", tk)
	}
}

var _ = meta.Now
