package api_test

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"pith/api"
	"pith/content/contenttest"
	"pith/meta"
	"pith/task"
)

// exportVersion runs a pulp export of a repository's version through the export task
// (the exporters' API is tested on its own) and returns the finished export's attrs.
func exportVersion(e *contenttest.Env, dir, repoHref string, number int64, full bool, chunk int64) map[string]any {
	e.T.Helper()
	done, x := runExport(e, dir, repoHref, number, full, chunk)
	if done["state"] != "completed" {
		e.T.Fatalf("export: %v", done["error"])
	}
	ctx := context.Background()
	created := done["created_resources"].([]any)
	exportID := strings.Split(strings.TrimSuffix(created[0].(string), "/"), "/")
	got, err := meta.ExportByPulpID(ctx, e.DB, x.ID, exportID[len(exportID)-1])
	if err != nil {
		e.T.Fatal(err)
	}
	var attrs map[string]any
	json.Unmarshal(got.Attrs, &attrs)
	return attrs
}

// runExport runs the export task of a version by the exporter "exp" (made when there
// is none) and returns the task's view when it ends.
func runExport(e *contenttest.Env, dir, repoHref string, number int64, full bool, chunk int64) (map[string]any, meta.Exporter) {
	e.T.Helper()
	ctx := context.Background()
	id := strings.Split(strings.TrimSuffix(repoHref, "/"), "/")
	repo, err := meta.RepositoryByPulpID(ctx, e.DB, id[len(id)-1])
	if err != nil {
		e.T.Fatal(err)
	}
	xs, _, err := meta.ListExporters(ctx, e.DB, meta.List{Where: []string{"x.name = ?"}, Args: []any{"exp"}})
	if err != nil {
		e.T.Fatal(err)
	}
	var x meta.Exporter
	if len(xs) == 0 {
		if x, err = meta.CreateExporter(ctx, e.DB, meta.Exporter{Kind: meta.ExporterPulp, Name: "exp", Path: dir, Attrs: json.RawMessage("{}"), Repositories: []int64{repo.ID}}); err != nil {
			e.T.Fatal(err)
		}
	} else {
		x = xs[0]
	}
	args := map[string]any{"exporter": x.PulpID, "versions": []string{repo.PulpID + "/" + jsonInt(number)}, "full": full, "params": map[string]any{"full": full}}
	if chunk > 0 {
		args["chunk_size"] = chunk
	}
	t, err := e.Core.Env().Queue.Dispatch(ctx, task.Spec{Name: "pulpcore.app.tasks.export.pulp_export", Args: args, Exclusive: []string{"exporter"}})
	if err != nil {
		e.T.Fatal(err)
	}
	return e.Wait("/pulp/api/v3/tasks/" + t.PulpID + "/"), x
}

// An export whose blob is gone fails naming it, and its artifacts' progress report
// ends failed, not running.
func TestExportMissingBlob(t *testing.T) {
	src := newEnv(t)
	exports := t.TempDir()
	src.Core.ExportPaths = []string{exports}
	files := map[string][]byte{"a.txt": []byte("alpha\n")}
	srv := httptest.NewServer(&mirror{files: files, manifest: line("a.txt", files["a.txt"])})
	defer srv.Close()
	_, repo := syncRepo(src, "exported", srv.URL+"/PULP_MANIFEST", "immediate", false)
	sum := sha256.Sum256(files["a.txt"])
	if err := src.Core.Store.Delete(context.Background(), hex.EncodeToString(sum[:])); err != nil {
		t.Fatal(err)
	}
	done, _ := runExport(src, exports, repo, 1, true, 0)
	if done["state"] != "failed" || !strings.Contains(jsonText(done["error"]), hex.EncodeToString(sum[:])) {
		t.Fatalf("export without its blob: %v %v; want failed naming the blob", done["state"], done["error"])
	}
	for _, r := range done["progress_reports"].([]any) {
		r := r.(map[string]any)
		if r["code"] == "export.artifacts" && r["state"] != "failed" {
			t.Errorf("the artifacts' progress report ended %v; want failed", r["state"])
		}
	}
}

// allCompleted fails the test unless every task of a group completed.
func allCompleted(t *testing.T, what string, tasks []map[string]any) {
	t.Helper()
	for _, tk := range tasks {
		if tk["state"] != "completed" {
			t.Fatalf("%s: %s %s: %v", what, tk["name"], tk["state"], tk["error"])
		}
	}
}

// anyStrings is a JSON array of strings.
func anyStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

// importExport imports an export (a tar or a table of contents) and returns the tasks
// of its task group once they are all finished.
func importExport(e *contenttest.Env, importer string, body map[string]any) []map[string]any {
	e.T.Helper()
	code, m := e.JSON("POST", importer+"imports/", body)
	if code != 202 {
		e.T.Fatalf("import: %d %v", code, m)
	}
	group := m["task_group"].(string)
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, g, _ := e.Do("GET", group, "", nil)
		if g["waiting"] == float64(0) && g["running"] == float64(0) && g["canceling"] == float64(0) {
			var out []map[string]any
			for _, t := range g["tasks"].([]any) {
				out = append(out, e.Wait(t.(map[string]any)["pulp_href"].(string)))
			}
			return out
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("import group did not finish: %v", g)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fileUnits lists the relative paths and digests of a version's file units.
func fileUnits(e *contenttest.Env, version string) []string {
	e.T.Helper()
	_, m, _ := e.Do("GET", "/pulp/api/v3/content/file/files/?limit=1000&repository_version="+version, "", nil)
	var out []string
	for _, u := range m["results"].([]any) {
		u := u.(map[string]any)
		out = append(out, u["relative_path"].(string)+" "+u["sha256"].(string))
	}
	sort.Strings(out)
	return out
}

// state is what an import that fails must leave as it was.
func state(e *contenttest.Env) [5]int {
	return [5]int{e.Count("artifacts"), e.Count("contents"), e.Count("repository_versions"), e.Count("repositories"), e.BlobCount()}
}

// A file repository exported by one pith (whole, in chunks, then incrementally) and
// imported by another: the same units and bytes; every broken export fails its import
// and changes nothing.
func TestFileExportImport(t *testing.T) {
	// Every batch of units in a transaction of its own, as a long import's are.
	saved := *api.RotateEvery
	*api.RotateEvery = 0
	t.Cleanup(func() { *api.RotateEvery = saved })
	src, dst := newEnv(t), newEnv(t)
	exports, imports := t.TempDir(), t.TempDir()
	src.Core.ExportPaths = []string{exports}
	dst.Core.ImportPaths = []string{exports, imports}
	files := map[string][]byte{"a.txt": []byte("alpha\n"), "dir/b.bin": []byte(strings.Repeat("b", 5000)), "c": []byte("gamma")}
	up := &mirror{files: files, manifest: line("a.txt", files["a.txt"]) + line("dir/b.bin", files["dir/b.bin"]) + line("c", files["c"])}
	srv := httptest.NewServer(up)
	defer srv.Close()
	_, repo := syncRepo(src, "exported", srv.URL+"/PULP_MANIFEST", "immediate", false)
	want := fileUnits(src, repo+"versions/1/")

	full := exportVersion(src, exports, repo, 1, true, 0)
	info := full["output_file_info"].(map[string]any)
	toc := full["toc_info"].(map[string]any)["file"].(string)
	if len(info) != 2 || info[toc] == nil {
		t.Fatalf("output_file_info %v", info)
	}
	var tarPath string
	for p := range info {
		if strings.HasSuffix(p, ".tar") {
			tarPath = p
		}
	}
	if tarPath == "" {
		t.Fatalf("no tar in %v", info)
	}

	code, imp := dst.JSON("POST", "/pulp/api/v3/importers/core/pulp/", map[string]any{"name": "imp"})
	if code != 201 {
		t.Fatalf("importer: %d %v", code, imp)
	}
	importer := imp["pulp_href"].(string)
	// Without create_repositories and no repository of the name, nothing is imported.
	before := state(dst)
	tasks := importExport(dst, importer, map[string]any{"path": tarPath})
	if len(tasks) != 1 || tasks[0]["state"] != "completed" {
		t.Fatalf("import without repository: %v", tasks)
	}
	if after := state(dst); after[2] != before[2] || after[3] != before[3] {
		t.Errorf("an import without a destination made versions or repositories: %v -> %v", before, after)
	}
	tasks = importExport(dst, importer, map[string]any{"path": tarPath, "create_repositories": true})
	allCompleted(t, "import", tasks)
	_, repos, _ := dst.Do("GET", "/pulp/api/v3/repositories/file/file/?name=exported", "", nil)
	if repos["count"] != float64(1) {
		t.Fatalf("imported repository: %v", repos)
	}
	dstRepo := repos["results"].([]any)[0].(map[string]any)["pulp_href"].(string)
	// The version is made by a task of the group that holds the repository, as a sync
	// of it does (Pulp's import_repository_version).
	if len(tasks) != 2 || tasks[1]["name"] != "pulpcore.app.tasks.importer.import_repository_version" ||
		!slices.Contains(anyStrings(tasks[1]["reserved_resources_record"]), "prn:file.filerepository:"+path.Base(dstRepo)) || tasks[1]["parent_task"] != tasks[0]["pulp_href"] ||
		!slices.Contains(anyStrings(tasks[1]["created_resources"]), dstRepo+"versions/1/") ||
		!slices.Equal(anyStrings(tasks[0]["child_tasks"]), []string{tasks[1]["pulp_href"].(string)}) {
		t.Errorf("the group's tasks: %v", tasks)
	}
	if _, l, _ := dst.Do("GET", "/pulp/api/v3/tasks/?limit=1&name=pulpcore.app.tasks.importer.pulp_import", "", nil); l["count"] != 2.0 ||
		!slices.Equal(anyStrings(l["results"].([]any)[0].(map[string]any)["child_tasks"]), []string{tasks[1]["pulp_href"].(string)}) {
		t.Errorf("the task list's child_tasks: %v", l)
	}
	if got := fileUnits(dst, dstRepo+"versions/1/"); !slices.Equal(got, want) {
		t.Errorf("imported units %v, want %v", got, want)
	}
	dist := fileDist(dst, dstRepo, "imported")
	for name, data := range files {
		if code, body := get(t, dist+name); code != 200 || body != string(data) {
			t.Errorf("%s from the import: %d %q", name, code, body)
		}
	}

	if got := tarMember(t, tarPath, "versions.json"); got != `[{"component": "core", "version": "3.105.25"}, {"component": "file", "version": "3.105.25"}]` {
		t.Errorf("versions.json %s", got)
	}

	// In chunks, through the table of contents: the same content again, no new version;
	// versions.json names the versions --export-versions gives.
	src.Core.ExportVersions = map[string]string{"core": "3.123.1", "file": "3.123.1"}
	chunked := exportVersion(src, exports, repo, 1, true, 1024)
	src.Core.ExportVersions = nil
	ctoc := chunked["toc_info"].(map[string]any)["file"].(string)
	if n := len(chunked["output_file_info"].(map[string]any)); n < 5 {
		t.Fatalf("chunked export wrote %d files", n)
	}
	versions := dst.Count("repository_versions")
	tasks = importExport(dst, importer, map[string]any{"toc": ctoc})
	allCompleted(t, "chunked import", tasks)
	if dst.Count("repository_versions") != versions {
		t.Error("importing the same content again made a version")
	}

	// Incremental: only the new file's artifact travels; the version is the whole.
	files["d"] = []byte("delta")
	up.manifest += line("d", files["d"])
	syncAgain(src, repo, srcRemote(src, "exported"), false)
	want = fileUnits(src, repo+"versions/2/")
	inc := exportVersion(src, exports, repo, 2, false, 0)
	var incTar string
	for p := range inc["output_file_info"].(map[string]any) {
		if strings.HasSuffix(p, ".tar") {
			incTar = p
		}
	}
	if n := tarArtifacts(t, incTar); n != 1 {
		t.Errorf("incremental export holds %d artifacts, want 1", n)
	}
	tasks = importExport(dst, importer, map[string]any{"path": incTar})
	allCompleted(t, "incremental import", tasks)
	if got := fileUnits(dst, dstRepo+"versions/2/"); !slices.Equal(got, want) {
		t.Errorf("after the incremental import %v, want %v", got, want)
	}

	// Broken exports: each import fails, names the problem and changes nothing.
	files["e"] = []byte("epsilon")
	up.manifest += line("e", files["e"])
	syncAgain(src, repo, srcRemote(src, "exported"), false)
	broken := exportVersion(src, exports, repo, 3, true, 512)
	btoc := broken["toc_info"].(map[string]any)["file"].(string)
	var chunks []string
	for p := range broken["output_file_info"].(map[string]any) {
		if p != btoc {
			chunks = append(chunks, p)
		}
	}
	sort.Strings(chunks)
	copyDir := func(name string) (string, []string) {
		d := filepath.Join(imports, name)
		os.MkdirAll(d, 0o755)
		var out []string
		for _, p := range append(slices.Clone(chunks), btoc) {
			b, _ := os.ReadFile(p)
			q := filepath.Join(d, filepath.Base(p))
			os.WriteFile(q, b, 0o644)
			out = append(out, q)
		}
		return filepath.Join(d, filepath.Base(btoc)), out[:len(out)-1]
	}
	for _, c := range []struct {
		name   string
		break_ func(toc string, chunks []string)
		want   string
	}{
		{"altered", func(_ string, cs []string) {
			b, _ := os.ReadFile(cs[1])
			b[7] ^= 0xff
			os.WriteFile(cs[1], b, 0o644)
		}, "Import chunk hash mismatch"},
		{"missing", func(_ string, cs []string) { os.Remove(cs[2]) }, "Missing import-chunks"},
		{"truncated", func(toc string, cs []string) {
			// The last chunks gone from the directory and the table of contents alike,
			// so the checksums hold but the tar ends early.
			var t map[string]any
			b, _ := os.ReadFile(toc)
			json.Unmarshal(b, &t)
			fs := t["files"].(map[string]any)
			for _, c := range cs[len(cs)-2:] {
				delete(fs, filepath.Base(c))
				os.Remove(c)
			}
			b, _ = json.Marshal(t)
			os.WriteFile(toc, b, 0o644)
		}, "truncated"},
		{"bad toc", func(toc string, _ []string) { os.WriteFile(toc, []byte(`{"files": {}}`), 0o644) }, "Missing 'files' or 'meta'"},
	} {
		toc, cs := copyDir(strings.ReplaceAll(c.name, " ", "-"))
		c.break_(toc, cs)
		before := state(dst)
		tasks := importExport(dst, importer, map[string]any{"toc": toc})
		if tasks[0]["state"] != "failed" || !strings.Contains(jsonText(tasks[0]["error"]), c.want) {
			t.Errorf("%s: %v %v, want failed with %q", c.name, tasks[0]["state"], tasks[0]["error"], c.want)
		}
		if after := state(dst); after != before {
			t.Errorf("%s: the failed import changed %v to %v", c.name, before, after)
		}
	}

	// Into a repository of another type: refused before anything is written.
	code, rpmRepo := dst.JSON("POST", "/pulp/api/v3/repositories/rpm/rpm/", map[string]any{"name": "not-files"})
	if code != 201 {
		t.Fatalf("rpm repository: %d %v", code, rpmRepo)
	}
	code, wrong := dst.JSON("POST", "/pulp/api/v3/importers/core/pulp/", map[string]any{"name": "wrong", "repo_mapping": map[string]string{"exported": "not-files"}})
	if code != 201 {
		t.Fatalf("importer with mapping: %d %v", code, wrong)
	}
	before = state(dst)
	tasks = importExport(dst, wrong["pulp_href"].(string), map[string]any{"toc": btoc})
	if tasks[0]["state"] != "failed" || !strings.Contains(jsonText(tasks[0]["error"]), "is a rpm.rpm repository") {
		t.Errorf("import into an rpm repository: %v %v", tasks[0]["state"], tasks[0]["error"])
	}
	if after := state(dst); after != before {
		t.Errorf("the import into another type changed %v to %v", before, after)
	}
	// Paths outside the allowed directories are refused at once.
	for _, body := range []map[string]any{{"path": "/etc/passwd"}, {"toc": filepath.Join(imports, "..", "x-toc.json")}} {
		if code, m := dst.JSON("POST", importer+"imports/", body); code != 400 || !strings.Contains(jsonText(m), "is not an allowed import path") {
			t.Errorf("import of %v: %d %v", body, code, m)
		}
	}
}

func jsonText(v any) string { b, _ := json.Marshal(v); return string(b) }

// srcRemote is the href of the remote a test sync made.
func srcRemote(e *contenttest.Env, name string) string {
	_, m, _ := e.Do("GET", "/pulp/api/v3/remotes/file/file/?name="+name, "", nil)
	return m["results"].([]any)[0].(map[string]any)["pulp_href"].(string)
}

// tarArtifacts counts the artifact members of an export's tar.
func tarArtifacts(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		if strings.HasPrefix(h.Name, "artifact/") {
			n++
		}
	}
	return n
}

// Importers: a mapping to a repository that does not exist, a taken name and bad import
// bodies are 400s naming the problem; import-check answers what was sent, as Pulp.
func TestImporterAndImportCheck(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	e.Core.ImportPaths = []string{dir}
	code, m := e.JSON("POST", "/pulp/api/v3/importers/core/pulp/", map[string]any{"name": "i", "repo_mapping": map[string]string{"a": "missing"}})
	if code != 400 || !strings.Contains(jsonText(m), `Failed to find repositories from repo_mapping: names: [\"missing\"]`) {
		t.Errorf("mapping to a missing repository: %d %v", code, m)
	}
	if n := e.Count("importers"); n != 0 {
		t.Errorf("%d importers after a refused create", n)
	}
	code, repo := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": "dest"})
	if code != 201 {
		t.Fatal(code, repo)
	}
	code, m = e.JSON("POST", "/pulp/api/v3/importers/core/pulp/", map[string]any{"name": "i", "repo_mapping": map[string]string{"a": "dest"}})
	if code != 201 || m["repo_mapping"].(map[string]any)["a"] != "dest" {
		t.Fatalf("importer: %d %v", code, m)
	}
	importer := m["pulp_href"].(string)
	if code, m := e.JSON("POST", "/pulp/api/v3/importers/core/pulp/", map[string]any{"name": "i"}); code != 400 || !strings.Contains(jsonText(m), "unique") {
		t.Errorf("a taken name: %d %v", code, m)
	}
	if code, m := e.JSON("PATCH", importer, map[string]any{"repo_mapping": map[string]string{}}); code != 200 || len(m["repo_mapping"].(map[string]any)) != 0 {
		t.Errorf("patch: %d %v", code, m)
	}
	for _, c := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{}, "One of 'path' or 'toc' must be specified."},
		{map[string]any{"path": dir + "/x.tar", "toc": dir + "/x-toc.json"}, "Only one of 'path' and 'toc' may be specified."},
		{map[string]any{"path": "/etc/x.tar"}, "path '/etc/x.tar' is not an allowed import path"},
		{map[string]any{"path": dir + "/../x.tar"}, "is not an allowed import path"},
	} {
		if code, m := e.JSON("POST", importer+"imports/", c.body); code != 400 || !strings.Contains(jsonText(m), c.want) {
			t.Errorf("import %v: %d %v, want 400 with %q", c.body, code, m, c.want)
		}
	}
	if n := e.Count("task_groups"); n != 0 {
		t.Errorf("refused imports made %d task groups", n)
	}

	os.WriteFile(filepath.Join(dir, "x.tar"), []byte("x"), 0o644)
	for _, c := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"path": filepath.Join(dir, "x.tar")}, `{"path":{"context":"` + filepath.Join(dir, "x.tar") + `","is_valid":true,"messages":[]}}`},
		{map[string]any{"path": filepath.Join(dir, "y.tar")}, `"is_valid":false,"messages":["file ` + filepath.Join(dir, "y.tar") + ` does not exist"]`},
		{map[string]any{"toc": "/etc/passwd"}, `"messages":["/etc is not an allowed import path"]`},
		{map[string]any{"repo_mapping": `{"a": "b"}`}, `{"repo_mapping":{"context":"{\"a\": \"b\"}","is_valid":true,"messages":[]}}`},
		{map[string]any{"repo_mapping": `{nope`}, `"is_valid":false,"messages":["invalid JSON"]`},
	} {
		code, m := e.JSON("POST", "/pulp/api/v3/importers/core/pulp/import-check/", c.body)
		if code != 200 || !strings.Contains(jsonText(m), c.want) {
			t.Errorf("import-check %v: %d %s, want %s", c.body, code, jsonText(m), c.want)
		}
	}
	if code, m := e.JSON("POST", "/pulp/api/v3/importers/core/pulp/import-check/", map[string]any{}); code != 400 || !strings.Contains(jsonText(m), "One of 'path', 'toc', or 'repo_mapping' must be specified.") {
		t.Errorf("empty import-check: %d %v", code, m)
	}
	if code, m := e.JSON("POST", "/pulp/api/v3/importers/core/pulp/import-check/", map[string]any{"repo_mapping": map[string]string{"a": "b"}}); code != 400 {
		t.Errorf("import-check with an object repo_mapping: %d %v (Pulp: 400, it is a string)", code, m)
	}
}

// tarMember reads a member of a tar.
func tarMember(t *testing.T, path, name string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s has no %s: %v", path, name, err)
		}
		if h.Name == name {
			b, _ := io.ReadAll(tr)
			return string(b)
		}
	}
}
