package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pith/api/href"
	"pith/blob"
	"pith/content/contenttest"
	"pith/meta"
)

// A pulp export's body is checked as Pulp checks it before its task is queued: 400s
// naming the field, nothing queued; a good one queues pulp_export with its arguments.
func TestPulpExportRequest(t *testing.T) {
	e := exportEnv(t)
	a := fileRepo(e, "a", map[string]string{"a.txt": "a"})
	b := fileRepo(e, "b", map[string]string{"b.txt": "b"})
	c := fileRepo(e, "c", nil)
	dir := filepath.Join(e.ExportRoot(), "pulp")
	x := mustCreate(e, pulpExporters, map[string]any{"name": "px", "path": dir, "repositories": []string{a, b}})
	exports := x["pulp_href"].(string) + "exports/"
	av, bv, cv := a+"versions/1/", b+"versions/1/", c+"versions/0/"
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
		msg   string
	}{
		{"bare number", map[string]any{"chunk_size": "1000"}, "chunk_size", "chunk_size '1000' is not valid (valid units are B/KB/MB/GB/TB)"},
		{"unknown unit", map[string]any{"chunk_size": "10PB"}, "chunk_size", "is not valid"},
		{"two units", map[string]any{"chunk_size": "1BB"}, "chunk_size", "is not valid"},
		{"no number", map[string]any{"chunk_size": "KB"}, "chunk_size", "is not valid"},
		{"blank", map[string]any{"chunk_size": ""}, "chunk_size", "is not valid"},
		{"zero", map[string]any{"chunk_size": "0KB"}, "chunk_size", "not greater than zero"},
		{"negative", map[string]any{"chunk_size": "-1MB"}, "chunk_size", "not greater than zero"},
		{"past 1 TB", map[string]any{"chunk_size": "1.5TB"}, "chunk_size", "Chunk size in bytes 1649267441664 is greater than max-chunk-size 1099511627776!"},
		{"half a byte", map[string]any{"chunk_size": "-0.5B"}, "chunk_size", "Chunk size 0 is not greater than zero!"},
		{"too few versions", map[string]any{"versions": []string{av}}, "versions",
			"Number of versions (1) does not match the number of Repositories (2) for the owning  Exporter!"},
		{"versions of other repositories", map[string]any{"versions": []string{av, cv}}, "versions",
			"Requested RepositoryVersions must belong to the Repositories named by the Exporter!"},
		{"one repository twice", map[string]any{"versions": []string{av, a + "versions/0/"}}, "versions", "must belong to the Repositories"},
		{"missing version", map[string]any{"versions": []string{av, b + "versions/9/"}}, "versions", "does not exist"},
		{"not a version", map[string]any{"versions": []string{av, b}}, "versions", "No URL match"},
		{"start versions of a full export", map[string]any{"start_versions": []string{av, bv}}, "non_field_errors",
			"start_versions is only valid for incremental exports (full=False)"},
		{"bad start versions", map[string]any{"full": false, "start_versions": []string{av}}, "start_versions", "Number of versions (1)"},
		{"incremental with nothing before", map[string]any{"full": false}, "non_field_errors",
			"Incremental export can only be requested when there is a previous export or start_versions= has been specified."},
		{"meta not an object", map[string]any{"meta": []int{1}}, "meta", "Expected object"},
		{"meta too large", map[string]any{"meta": map[string]string{"x": strings.Repeat("x", 70<<10)}}, "meta", "no more than"},
		{"unknown field", map[string]any{"fast": true}, "fast", "Unexpected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tasks := e.Count("tasks")
			code, m := e.JSON("POST", exports, tc.body)
			got, _ := json.Marshal(m[tc.field])
			if code != 400 || !strings.Contains(string(got), tc.msg) {
				t.Errorf("%d %v; want 400 on %s: %s", code, m, tc.field, tc.msg)
			}
			if e.Count("tasks") != tasks || e.Count("exports") != 0 {
				t.Errorf("a bad request queued a task or made an export")
			}
		})
	}

	// Good requests queue pulp_export with the checked arguments, exclusive on the
	// exporter, shared on its repositories.
	ids := map[string]string{}
	for _, h := range []string{a, b} {
		p, _ := href.Parse(h)
		ids[h] = p.ID
	}
	for _, tc := range []struct {
		name string
		body map[string]any
		want string
	}{
		{"defaults", map[string]any{}, fmt.Sprintf(`"versions":["%s/1","%s/1"],"full":true`, ids[a], ids[b])},
		{"chunked", map[string]any{"chunk_size": "1.5kb", "meta": map[string]any{"k": "v"}}, `"chunk_size":1536,"meta":{"k":"v"}`},
		{"incremental", map[string]any{"full": false, "versions": []string{bv, av}, "start_versions": []string{a + "versions/0/", b + "versions/0/"}},
			fmt.Sprintf(`"versions":["%s/1","%s/1"],"start_versions":["%s/0","%s/0"],"full":false`, ids[b], ids[a], ids[a], ids[b])},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, m := e.JSON("POST", exports, tc.body)
			if code != 202 || len(m) != 1 {
				t.Fatalf("%d %v", code, m)
			}
			p, _ := href.Parse(m["task"].(string))
			var name, args, locks string
			err := e.DB.QueryRow(context.Background(), `SELECT name, args, reserved FROM tasks WHERE pulp_id = ?`, p.ID).Scan(&name, &args, &locks)
			if err != nil {
				t.Fatal(err)
			}
			if name != "pulpcore.app.tasks.export.pulp_export" || !strings.Contains(args, tc.want) {
				t.Errorf("task %s %s; want arguments with %s", name, args, tc.want)
			}
			params, _ := json.Marshal(tc.body)
			if !strings.Contains(args, `"params":`+string(params)) {
				t.Errorf("params %s: %s", params, args)
			}
			for _, l := range []string{x["pulp_href"].(string), "shared:" + a, "shared:" + b} {
				if !strings.Contains(locks, l) {
					t.Errorf("locks %s lack %s", locks, l)
				}
			}
			if done := e.Wait(m["task"].(string)); done["state"] != "completed" {
				t.Errorf("export: %v %v", done["state"], done["error"])
			}
		})
	}

	// A path that stopped being a directory, or allowed, is refused when exporting.
	if err := os.MkdirAll(e.ExportRoot(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, m := e.JSON("POST", exports, map[string]any{}); code != 400 || fmt.Sprint(m["path"]) != "[Path '"+dir+"' must be a directory path]" {
		t.Errorf("path is a file: %d %v", code, m)
	}
	e.Core.ExportPaths = []string{t.TempDir()}
	if code, m := e.JSON("POST", exports, map[string]any{}); code != 400 || fmt.Sprint(m["path"]) != "[Path '"+dir+"' is not an allowed export path]" {
		t.Errorf("path no longer allowed: %d %v", code, m)
	}
}

// Exports list, read and delete below their exporter only; deleting one leaves its
// files, and an exporter's last export is cleared with it.
func TestExportResources(t *testing.T) {
	e := exportEnv(t)
	x := mustCreate(e, pulpExporters, map[string]any{"name": "px", "path": filepath.Join(e.ExportRoot(), "p"), "repositories": []string{}})
	other := mustCreate(e, pulpExporters, map[string]any{"name": "other", "path": filepath.Join(e.ExportRoot(), "o"), "repositories": []string{}})
	h := x["pulp_href"].(string)
	p, _ := href.Parse(h)
	ctx := context.Background()
	row, err := meta.ExporterByPulpID(ctx, e.DB, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := meta.CreateExport(ctx, e.DB, meta.Export{Owner: row.ID, Attrs: json.RawMessage(`{"params":{"full":true},"exported_resources":["/r/"],"toc_info":{"file":"t"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	ex.Attrs = json.RawMessage(`{"params":{"full":true},"exported_resources":["/r/"],"toc_info":{"file":"t"},"output_file_info":{"f":"1"}}`)
	if err := meta.FinishExport(ctx, e.DB, ex); err != nil {
		t.Fatal(err)
	}
	eh := h + "exports/" + ex.PulpID + "/"
	if _, m := e.JSON("GET", h, nil); m["last_export"] != eh {
		t.Errorf("last_export: %v", m)
	}
	code, m := e.JSON("GET", eh, nil)
	if code != 200 || m["pulp_href"] != eh || fmt.Sprint(m["params"]) != "map[full:true]" || fmt.Sprint(m["toc_info"]) != "map[file:t]" ||
		fmt.Sprint(m["output_file_info"]) != "map[f:1]" || m["task"] != nil || !strings.HasPrefix(m["prn"].(string), "prn:core.pulpexport:") {
		t.Errorf("read: %d %v", code, m)
	}
	if _, m := e.JSON("GET", h+"exports/", nil); m["count"] != float64(1) {
		t.Errorf("list: %v", m)
	}
	elsewhere := []string{other["pulp_href"].(string) + "exports/" + ex.PulpID + "/", strings.Replace(eh, "/pulp/", "/filesystem/", 1)}
	for _, p := range elsewhere {
		if code, _ := e.JSON("GET", p, nil); code != 404 {
			t.Errorf("GET %s: %d", p, code)
		}
	}
	if _, m := e.JSON("GET", other["pulp_href"].(string)+"exports/", nil); m["count"] != float64(0) {
		t.Errorf("the other exporter's list: %v", m)
	}
	// last_export can be set back by PATCH, as in Pulp.
	code, m = e.JSON("PATCH", h, map[string]any{"last_export": nil})
	e.Done("clear last_export", code, m)
	code, m = e.JSON("PATCH", h, map[string]any{"last_export": eh})
	e.Done("set last_export", code, m)
	if code, _, _ := e.Do("DELETE", eh, "", nil); code != 204 {
		t.Errorf("delete: %d", code)
	}
	if _, m := e.JSON("GET", h, nil); m["last_export"] != nil {
		t.Errorf("last_export after its deletion: %v", m)
	}
}

func sha256hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// fsExport runs a filesystem export and returns its task.
func fsExport(e *contenttest.Env, exporter string, body map[string]any) map[string]any {
	e.T.Helper()
	code, m := e.JSON("POST", exporter+"exports/", body)
	if code != 202 {
		e.T.Fatalf("export %v: %d %v", body, code, m)
	}
	return e.Wait(m["task"].(string))
}

// A filesystem export writes every file of a publication (its metadata included) or of
// a version below the exporter's path, by each method, on the filesystem store.
func TestFilesystemExport(t *testing.T) {
	e := exportEnv(t)
	files := map[string]string{"a.txt": "alpha\n", "dir/b.txt": "bravo\n", "dir/sub/c.bin": "charlie\x00\n"}
	repo := fileRepo(e, "exported", files)
	code, m := e.JSON("POST", "/pulp/api/v3/publications/file/file/", map[string]any{"repository": repo})
	pub := e.Done("publish", code, m)["created_resources"].([]any)[0].(string)
	version := repo + "versions/3/"
	pather := e.Store.Driver().(blob.Pather)
	withManifest := map[string]bool{"PULP_MANIFEST": true}
	for rel := range files {
		withManifest[rel] = true
	}
	for _, method := range []string{"write", "hardlink", "symlink"} {
		for _, src := range []struct{ field, href string }{{"publication", pub}, {"repository_version", version}} {
			t.Run(method+" "+src.field, func(t *testing.T) {
				dir := filepath.Join(e.ExportRoot(), method, src.field)
				x := mustCreate(e, fsExporters, map[string]any{"name": method + src.field, "path": dir, "method": method})
				tk := fsExport(e, x["pulp_href"].(string), map[string]any{src.field: src.href})
				if tk["state"] != "completed" {
					t.Fatalf("task: %v", tk)
				}
				eh := tk["created_resources"].([]any)[0].(string)
				_, ex := e.JSON("GET", eh, nil)
				p, _ := href.Parse(src.href)
				id := p.ID
				if src.field == "repository_version" {
					var vid string
					e.DB.QueryRow(context.Background(), `SELECT v.pulp_id FROM repository_versions v JOIN repositories r ON r.id = v.repository_id WHERE r.pulp_id = ? AND v.number = 3`, p.ID).Scan(&vid)
					id = vid
				}
				if fmt.Sprint(ex["params"]) != fmt.Sprintf("map[%s:%s]", src.field, id) || fmt.Sprint(ex["exported_resources"]) != "["+src.href+"]" ||
					ex["task"] != tk["pulp_href"] {
					t.Errorf("export: %v", ex)
				}
				got := map[string]bool{}
				filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						rel, _ := filepath.Rel(dir, p)
						got[filepath.ToSlash(rel)] = true
					}
					return err
				})
				want := withManifest
				if src.field == "repository_version" {
					want = map[string]bool{}
					for rel := range files {
						want[rel] = true
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("files %v, want %v", got, want)
				}
				for rel, data := range files {
					p := filepath.Join(dir, rel)
					b, err := os.ReadFile(p)
					if err != nil || !bytes.Equal(b, []byte(data)) {
						t.Errorf("%s: %q %v", rel, b, err)
					}
					blobPath, _ := pather.Path(sha256hex(data))
					lfi, _ := os.Lstat(p)
					bfi, _ := os.Stat(blobPath)
					switch method {
					case "write":
						if !lfi.Mode().IsRegular() || os.SameFile(lfi, bfi) {
							t.Errorf("%s is not a copy of its blob", rel)
						}
					case "hardlink":
						if !lfi.Mode().IsRegular() || !os.SameFile(lfi, bfi) {
							t.Errorf("%s does not share its blob's inode", rel)
						}
					case "symlink":
						if target, err := os.Readlink(p); err != nil || target != blobPath {
							t.Errorf("%s links to %q (%v), want %s", rel, target, err, blobPath)
						}
					}
				}
			})
		}
	}
}

// A failed filesystem export leaves no files behind (and its export row, as in Pulp);
// a target with data in it, or files not downloaded, fail with Pulp's messages.
func TestFilesystemExportFailures(t *testing.T) {
	e := exportEnv(t)
	repo := fileRepo(e, "exported", map[string]string{"a.txt": "alpha\n", "b.txt": "bravo\n"})
	version := repo + "versions/2/"
	ctx := context.Background()

	// A blob that went missing after the first file was written.
	dir := filepath.Join(e.ExportRoot(), "broken")
	x := mustCreate(e, fsExporters, map[string]any{"name": "broken", "path": dir})
	if err := e.Store.Delete(ctx, sha256hex("bravo\n")); err != nil {
		t.Fatal(err)
	}
	tk := fsExport(e, x["pulp_href"].(string), map[string]any{"repository_version": version})
	if tk["state"] != "failed" || !strings.Contains(fmt.Sprint(tk["error"]), "b.txt") || strings.Contains(fmt.Sprint(tk["error"]), e.Dir) {
		t.Errorf("task: %v", tk)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the failed export left %s: %v", dir, err)
	}
	if len(tk["created_resources"].([]any)) != 1 || e.Count("exports") != 1 {
		t.Errorf("the failed export made no export row: %v", tk)
	}
	// An empty directory stays, and empty.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tk = fsExport(e, x["pulp_href"].(string), map[string]any{"repository_version": version})
	if entries, err := os.ReadDir(dir); tk["state"] != "failed" || err != nil || len(entries) != 0 {
		t.Errorf("task %v; directory %v %v", tk["state"], entries, err)
	}

	// A directory with data in it.
	full := filepath.Join(e.ExportRoot(), "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "mine"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	x = mustCreate(e, fsExporters, map[string]any{"name": "full", "path": full})
	tk = fsExport(e, x["pulp_href"].(string), map[string]any{"repository_version": repo + "versions/1/"})
	if tk["state"] != "failed" || fmt.Sprint(tk["error"].(map[string]any)["description"]) != "Cannot export to directories that contain existing data." {
		t.Errorf("task: %v", tk)
	}
	if entries, _ := os.ReadDir(full); len(entries) != 1 {
		t.Errorf("the export touched what was there: %v", entries)
	}

	// Files not downloaded: an on_demand sync.
	data := "delta\n"
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/PULP_MANIFEST":
			fmt.Fprintf(w, "d.txt,%s,%d\n", sha256hex(data), len(data))
		case "/d.txt":
			io.WriteString(w, data)
		default:
			http.NotFound(w, r)
		}
	}))
	defer upstream.Close()
	remote := mustCreate(e, "/pulp/api/v3/remotes/file/file/", map[string]any{"name": "lazy", "url": upstream.URL + "/PULP_MANIFEST", "policy": "on_demand"})
	lazy := mustCreate(e, "/pulp/api/v3/repositories/file/file/", map[string]any{"name": "lazy", "remote": remote["pulp_href"]})["pulp_href"].(string)
	code, m := e.JSON("POST", lazy+"sync/", map[string]any{})
	e.Done("sync", code, m)
	x = mustCreate(e, fsExporters, map[string]any{"name": "lazy", "path": filepath.Join(e.ExportRoot(), "lazy")})
	tk = fsExport(e, x["pulp_href"].(string), map[string]any{"repository_version": lazy + "versions/1/"})
	if tk["state"] != "failed" || fmt.Sprint(tk["error"].(map[string]any)["description"]) != "Cannot export artifacts that haven't been downloaded." {
		t.Errorf("task: %v", tk)
	}
}

// Bad filesystem export requests are a 400 naming the field, and queue nothing.
func TestFilesystemExportBadInput(t *testing.T) {
	e := exportEnv(t)
	repo := fileRepo(e, "exported", map[string]string{"a.txt": "alpha\n"})
	x := mustCreate(e, fsExporters, map[string]any{"name": "fx", "path": filepath.Join(e.ExportRoot(), "fx")})
	exports := x["pulp_href"].(string) + "exports/"
	version := repo + "versions/1/"
	for _, tc := range []struct {
		name, field, msg string
		body             map[string]any
	}{
		{"neither", "non_field_errors", "publication or repository_version must either be supplied but not both.", map[string]any{}},
		{"both", "non_field_errors", "but not both", map[string]any{"repository_version": version, "publication": "/pulp/api/v3/publications/file/file/00000000-0000-0000-0000-000000000000/"}},
		{"missing publication", "publication", "does not exist", map[string]any{"publication": "/pulp/api/v3/publications/file/file/00000000-0000-0000-0000-000000000000/"}},
		{"not a publication", "publication", "No URL match", map[string]any{"publication": repo}},
		{"missing version", "repository_version", "does not exist", map[string]any{"repository_version": repo + "versions/7/"}},
		{"bad start version", "start_repository_version", "No URL match", map[string]any{"repository_version": version, "start_repository_version": repo}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tasks := e.Count("tasks")
			code, m := e.JSON("POST", exports, tc.body)
			got, _ := json.Marshal(m[tc.field])
			if code != 400 || !strings.Contains(string(got), tc.msg) {
				t.Errorf("%d %v; want 400 on %s: %s", code, m, tc.field, tc.msg)
			}
			if e.Count("tasks") != tasks {
				t.Errorf("a bad request queued a task")
			}
		})
	}
	// An incremental export writes only the files the start version lacks.
	ct, body := contenttest.Multipart(map[string]string{"relative_path": "b.txt", "repository": repo}, "file", "f", []byte("bravo\n"))
	code, m, _ := e.Do("POST", "/pulp/api/v3/content/file/files/", ct, body)
	e.Done("add b.txt", code, m)
	tk := fsExport(e, x["pulp_href"].(string), map[string]any{"repository_version": repo + "versions/2/", "start_repository_version": version})
	if tk["state"] != "completed" {
		t.Fatalf("incremental export: %v", tk)
	}
	entries, _ := os.ReadDir(filepath.Join(e.ExportRoot(), "fx"))
	if len(entries) != 1 || entries[0].Name() != "b.txt" {
		t.Errorf("incremental export wrote %v", entries)
	}
}
