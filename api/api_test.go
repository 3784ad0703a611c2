package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pith/api"
	"pith/blob"
	"pith/blob/driver/fs"
	"pith/content/file"
	"pith/meta"
	"pith/task"
)

// env is an API over SQLite and the filesystem, with a running task queue.
type env struct {
	t     *testing.T
	srv   *httptest.Server
	db    *meta.DB
	store *blob.Store
	dir   string
	api   *api.Server
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	db, err := meta.Open(ctx, filepath.Join(dir, "pith.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	t.Cleanup(cancel) // runs first: workers stop before the database closes
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := meta.SetPassword(ctx, db, "admin", "pw", true); err != nil {
		t.Fatal(err)
	}
	drv, err := fs.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	store, err := blob.New(drv, nil)
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]task.Func{}
	q := task.New(db, funcs, task.Options{Workers: 2, Poll: 20 * time.Millisecond})
	fp := file.New(db, store, nil)
	a, err := api.New(api.Config{DB: db, Store: store, Queue: q, ContentOrigin: "http://127.0.0.1:1",
		AfterVersion: fp.AfterVersion, OrphanProtection: time.Minute, UploadProtection: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range a.TaskFuncs() {
		funcs[k] = v
	}
	for k, v := range fp.TaskFuncs() {
		funcs[k] = v
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	return &env{t: t, srv: srv, db: db, store: store, dir: dir, api: a}
}

// do sends a request with admin credentials and returns status and decoded body.
func (e *env) do(method, path, contentType string, body io.Reader, hdr ...string) (int, map[string]any, http.Header) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	req.SetBasicAuth("admin", "pw")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(b, &m)
	if m == nil && len(b) > 0 {
		m = map[string]any{"_raw": string(b)}
	}
	return resp.StatusCode, m, resp.Header
}

func (e *env) json(method, path string, v any) (int, map[string]any) {
	e.t.Helper()
	b, _ := json.Marshal(v)
	code, m, _ := e.do(method, path, "application/json", bytes.NewReader(b))
	return code, m
}

func multipartBody(fields map[string]string, fileField, fileName string, data []byte) (string, io.Reader) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	if fileField != "" {
		fw, _ := w.CreateFormFile(fileField, fileName)
		fw.Write(data)
	}
	w.Close()
	return w.FormDataContentType(), &buf
}

// wait polls a task href until it is final.
func (e *env) wait(href string) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, m, _ := e.do("GET", href, "", nil)
		if code != 200 {
			e.t.Fatalf("task %s: %d %v", href, code, m)
		}
		switch m["state"] {
		case "completed", "failed", "canceled":
			return m
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("task %s did not finish: %v", href, m)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (e *env) count(table string) int {
	var n int
	if err := e.db.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) blobCount() int {
	n := 0
	e.store.Walk(context.Background(), func(string, blob.Info) error { n++; return nil })
	return n
}

func TestProtocolDetails(t *testing.T) {
	e := newEnv(t)
	// Status and the document are anonymous; everything else needs credentials.
	for _, p := range []string{"/pulp/api/v3/status/", "/pulp/api/v3/docs/api.json"} {
		resp, err := http.Get(e.srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %q", p, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	resp, _ := http.Get(e.srv.URL + "/pulp/api/v3/repositories/file/file/")
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
		e.api.ServeHTTP(rec, req)
		got := rec.Result().Header
		raw := rec.Header()["Correlation-ID"]
		if len(raw) != 1 || (tc.want != "" && raw[0] != tc.want) || (tc.want == "" && (raw[0] == tc.sent || len(raw[0]) != 32)) {
			t.Errorf("sent %q: Correlation-ID header %v (all: %v)", tc.sent, raw, got)
		}
	}
	// Pagination ends with next = null.
	for i := 0; i < 3; i++ {
		e.json("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": fmt.Sprint("r", i)})
	}
	code, m, _ := e.do("GET", "/pulp/api/v3/repositories/file/file/?limit=2&offset=2", "", nil)
	if code != 200 || m["count"] != float64(3) || m["next"] != nil || len(m["results"].([]any)) != 1 {
		t.Errorf("last page: %d %v", code, m)
	}
	code, m, _ = e.do("GET", "/pulp/api/v3/repositories/file/file/?limit=2", "", nil)
	if m["next"] == nil {
		t.Errorf("first page has no next: %v", m)
	}
	code, m, _ = e.do("GET", "/pulp/api/v3/repositories/file/file/?fields=name&ordering=-name&limit=1", "", nil)
	if r := m["results"].([]any)[0].(map[string]any); len(r) != 1 || r["name"] != "r2" {
		t.Errorf("fields + ordering: %v", r)
	}
	code, m, _ = e.do("GET", `/pulp/api/v3/repositories/file/file/?q=name="r0"%20OR%20name__startswith="r2"`, "", nil)
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
		return func() (string, io.Reader) { return multipartBody(fields, "file", "x.txt", data) }
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
			before := [3]int{e.count("artifacts"), e.count("contents"), e.count("repositories")}
			blobs := e.blobCount()
			ctype, body := tc.body()
			code, m, _ := e.do("POST", tc.path, ctype, body)
			if code != 400 {
				t.Fatalf("status %d, want 400: %v", code, m)
			}
			if b, _ := json.Marshal(m); !strings.Contains(string(b), tc.want) {
				t.Errorf("error %s does not name %q", b, tc.want)
			}
			after := [3]int{e.count("artifacts"), e.count("contents"), e.count("repositories")}
			if after != before || e.blobCount() != blobs {
				t.Errorf("rows %v → %v, blobs %d → %d", before, after, blobs, e.blobCount())
			}
		})
	}
	// The right digest works.
	ct, b := multipartBody(map[string]string{"sha256": good}, "file", "x.txt", data)
	if code, m, _ := e.do("POST", "/pulp/api/v3/artifacts/", ct, b); code != 201 || m["sha256"] != good {
		t.Fatalf("artifact create: %d %v", code, m)
	}
}

// Chunked uploads refuse overlaps, gaps and ranges past the declared size.
func TestChunkedUploadChecks(t *testing.T) {
	e := newEnv(t)
	data := bytes.Repeat([]byte("0123456789"), 300) // 3000 bytes
	sum := sha256.Sum256(data)
	code, up := e.json("POST", "/pulp/api/v3/uploads/", map[string]any{"size": len(data)})
	if code != 201 {
		t.Fatalf("create upload: %d %v", code, up)
	}
	href := up["pulp_href"].(string)
	put := func(start, end int, total string) (int, map[string]any) {
		ct, b := multipartBody(nil, "file", "blob", data[start:min(end+1, len(data))])
		code, m, _ := e.do("PUT", href, ct, b, "Content-Range", fmt.Sprintf("bytes %d-%d/%s", start, end, total))
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
		return e.json("POST", href+"commit/", map[string]any{"sha256": sha})
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
	if n := e.count("artifacts"); n != 0 {
		t.Errorf("%d artifacts after failed commits", n)
	}
	code, m := commit(hex.EncodeToString(sum[:]))
	if code != 202 {
		t.Fatalf("commit: %d %v", code, m)
	}
	if len(m) != 1 {
		t.Errorf("202 body must be exactly {task}: %v", m)
	}
	tk := e.wait(m["task"].(string))
	if tk["state"] != "completed" || len(tk["created_resources"].([]any)) != 1 {
		t.Fatalf("commit task: %v", tk)
	}
}

var _ = meta.Now
