// Package contenttest runs pith in a test: the API and the content app over SQLite and
// the filesystem, with a task queue and the content types a test names (Env), and the
// conformance suite every content type joins in one line (Run), the way every blob
// driver joins blob/drivertest.
package contenttest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"pith/api"
	"pith/auth"
	"pith/blob"
	"pith/blob/driver/fs"
	"pith/content"
	"pith/meta"
	"pith/secret"
	"pith/serve"
	"pith/serve/guard"
	"pith/serve/guard/cert"
	"pith/task"
)

// Env is a running pith: API under /pulp/api/v3/ and content app under /pulp/content/
// on one test server, as admin with password "pw".
type Env struct {
	T   *testing.T
	URL string
	// Record, when set, sees every request Do sends and the status and body answered.
	Record  func(req *http.Request, status int, body []byte)
	Dir     string
	DB      *meta.DB
	Store   *blob.Store
	Core    *content.Core
	API     *api.Server
	Content *serve.Server
}

// Maker makes a content type over a core.
type Maker func(*content.Core) content.Type

// Type adapts a type's constructor (file.New, rpm.New) to a Maker.
func Type[T content.Type](mk func(*content.Core) T) Maker {
	return func(c *content.Core) content.Type { return mk(c) }
}

// New starts pith with the content types the makers make (Type(file.New), ...);
// everything stops when the test ends.
func New(t *testing.T, types ...Maker) *Env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	db, err := meta.Open(ctx, filepath.Join(dir, "pith.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	t.Cleanup(cancel) // runs first: workers stop before the database closes
	keys, err := secret.Create(filepath.Join(dir, "encryption.key"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetKeys(keys)
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
	// Every profiler is on, as --task-diagnostics can set: only a request that asks for
	// one (X-Task-Diagnostics) makes its task run it.
	q := task.New(db, funcs, task.Options{Workers: 2, Poll: 20 * time.Millisecond, Diagnostics: slices.Collect(maps.Keys(task.Profilers))})
	var app *serve.Server
	core := content.NewCore(content.Config{DB: db, Store: store, Queue: q, Invalidate: func() { app.Invalidate() },
		AllowedExportPaths: []string{filepath.Join(dir, "exports")}, AllowedImportPaths: []string{filepath.Join(dir, "exports")}})
	var ts []content.Type
	for _, mk := range types {
		ts = append(ts, mk(core))
	}
	if err := core.Register(ts...); err != nil {
		t.Fatal(err)
	}
	authn := auth.New(db, auth.Config{})
	app = serve.New(db, store, serve.Options{Types: core.TypeOf,
		Guards: guard.Env{Auth: authn, Permitted: guard.Permissions(db), Certs: cert.NewCache(100)}})
	// The server's own address is its content origin, so that another pith can follow
	// the base_url of its distributions (a replica).
	mux := http.NewServeMux()
	srv := httptest.NewUnstartedServer(mux)
	a, err := api.New(api.Config{Core: core, ContentOrigin: "http://" + srv.Listener.Addr().String(), OrphanProtection: time.Minute, Auth: authn})
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(funcs, core.Tasks())
	maps.Copy(funcs, api.Tasks(core, time.Hour))
	hooks, err := api.TaskHooks(core)
	if err != nil {
		t.Fatal(err)
	}
	q.SetHooks(hooks)
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	mux.Handle("/pulp/api/v3/", a)
	for _, root := range a.Roots() {
		mux.Handle(root, a)
	}
	mux.Handle("/pulp/content/", app)
	srv.Start()
	t.Cleanup(srv.Close)
	return &Env{T: t, URL: srv.URL, Dir: dir, DB: db, Store: store, Core: core, API: a, Content: app}
}

// Do sends a request with admin credentials and returns the status, the body decoded as
// a JSON object ({"_raw": text} when it is not one) and the headers. hdr are pairs of
// header names and values.
func (e *Env) Do(method, path, contentType string, body io.Reader, hdr ...string) (int, map[string]any, http.Header) {
	e.T.Helper()
	return e.DoAs("admin", "pw", method, path, contentType, body, hdr...)
}

// DoAs is Do with another user's credentials; an empty user sends none (anonymous).
func (e *Env) DoAs(user, password, method, path, contentType string, body io.Reader, hdr ...string) (int, map[string]any, http.Header) {
	e.T.Helper()
	req, err := http.NewRequest(method, e.URL+path, body)
	if err != nil {
		e.T.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.T.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if e.Record != nil {
		e.Record(req, resp.StatusCode, b)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	if m == nil && len(b) > 0 {
		m = map[string]any{"_raw": string(b)}
	}
	return resp.StatusCode, m, resp.Header
}

// JSON sends v as a JSON body.
func (e *Env) JSON(method, path string, v any) (int, map[string]any) {
	e.T.Helper()
	b, _ := json.Marshal(v)
	code, m, _ := e.Do(method, path, "application/json", bytes.NewReader(b))
	return code, m
}

// Multipart is a multipart/form-data body of fields and, when fileField is set, one file.
func Multipart(fields map[string]string, fileField, fileName string, data []byte) (string, io.Reader) {
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

// Wait polls a task href until it is final and returns it.
func (e *Env) Wait(href string) map[string]any {
	e.T.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, m, _ := e.Do("GET", href, "", nil)
		if code != 200 {
			e.T.Fatalf("task %s: %d %v", href, code, m)
		}
		switch m["state"] {
		case "completed", "failed", "canceled":
			return m
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("task %s did not finish: %v", href, m)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Done waits for the task a 202 body names and fails the test unless it completed.
func (e *Env) Done(what string, code int, body map[string]any) map[string]any {
	e.T.Helper()
	if code != http.StatusAccepted {
		e.T.Fatalf("%s: %d %v", what, code, body)
	}
	t := e.Wait(body["task"].(string))
	if t["state"] != "completed" {
		e.T.Fatalf("%s: task %v: %v", what, t["state"], t["error"])
	}
	return t
}

// Count is the number of rows of a table.
func (e *Env) Count(table string) int {
	e.T.Helper()
	var n int
	if err := e.DB.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		e.T.Fatal(err)
	}
	return n
}

// BlobCount is the number of stored blobs.
func (e *Env) BlobCount() int {
	n := 0
	e.Store.Walk(context.Background(), func(string, blob.Info) error { n++; return nil })
	return n
}
