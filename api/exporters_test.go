package api_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pith/content/contenttest"
	"pith/content/file"
	"pith/content/ansible"
	"pith/content/rpm"
)

// exportEnv is pith with file and rpm, which can be exported, and ansible, which
// cannot; exports allowed below e.ExportRoot().
func exportEnv(t *testing.T) *contenttest.Env {
	return contenttest.New(t, contenttest.Type(file.New), contenttest.Type(rpm.New), contenttest.Type(ansible.New))
}

const (
	pulpExporters = "/pulp/api/v3/exporters/core/pulp/"
	fsExporters   = "/pulp/api/v3/exporters/core/filesystem/"
)

// fileRepo makes a file repository holding files (relative path → data) in its latest
// version and returns its href.
func fileRepo(e *contenttest.Env, name string, files map[string]string) string {
	e.T.Helper()
	code, repo := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": name})
	if code != 201 {
		e.T.Fatalf("repository: %d %v", code, repo)
	}
	h := repo["pulp_href"].(string)
	for rel, data := range files {
		ct, body := contenttest.Multipart(map[string]string{"relative_path": rel, "repository": h}, "file", "f", []byte(data))
		code, m, _ := e.Do("POST", "/pulp/api/v3/content/file/files/", ct, body)
		e.Done("content "+rel, code, m)
	}
	return h
}

func mustCreate(e *contenttest.Env, path string, body map[string]any) map[string]any {
	e.T.Helper()
	code, m := e.JSON("POST", path, body)
	if code != 201 {
		e.T.Fatalf("POST %s: %d %v", path, code, m)
	}
	return m
}

// Exporters: create (201), read, list with Pulp's filters, update and delete as tasks;
// each kind answers only for its own.
func TestExporterCRUD(t *testing.T) {
	e := exportEnv(t)
	repo := fileRepo(e, "exported", nil)
	dir := filepath.Join(e.ExportRoot(), "one")
	x := mustCreate(e, pulpExporters, map[string]any{"name": "px", "path": dir, "repositories": []string{repo, repo}})
	h := x["pulp_href"].(string)
	if x["path"] != dir || fmt.Sprint(x["repositories"]) != fmt.Sprint([]string{repo}) || x["last_export"] != nil ||
		!strings.HasPrefix(x["prn"].(string), "prn:core.pulpexporter:") {
		t.Errorf("created: %v", x)
	}
	fx := mustCreate(e, fsExporters, map[string]any{"name": "fx", "path": filepath.Join(e.ExportRoot(), "two")})
	if fx["method"] != "write" {
		t.Errorf("default method: %v", fx)
	}
	fh := fx["pulp_href"].(string)

	// Each kind's href answers under its own kind only.
	for _, p := range []string{strings.Replace(h, "/pulp/", "/filesystem/", 1), strings.Replace(fh, "/filesystem/", "/pulp/", 1)} {
		if code, m, _ := e.Do("GET", p, "", nil); code != 404 {
			t.Errorf("GET %s: %d %v", p, code, m)
		}
		if code, m, _ := e.Do("DELETE", p, "", nil); code != 404 {
			t.Errorf("DELETE %s: %d %v", p, code, m)
		}
	}
	for _, tc := range []struct {
		query string
		want  int
	}{{"", 1}, {"?name=px", 1}, {"?name=fx", 0}, {"?name__startswith=p", 1}, {"?name__in=px,zz", 1}, {"?ordering=-path", 1}, {"?pulp_href__in=" + h, 1}, {"?q=" + url.QueryEscape(`name="px" OR name="zz"`), 1}, {"?q=" + url.QueryEscape(`NOT name="px"`), 0}} {
		code, m, _ := e.Do("GET", pulpExporters+tc.query, "", nil)
		if code != 200 || m["count"] != float64(tc.want) {
			t.Errorf("list %q: %d %v", tc.query, code, m)
		}
	}
	if code, m, _ := e.Do("GET", fsExporters+"?ordering=method&fields=name", "", nil); code != 200 || fmt.Sprint(m["results"]) != "[map[name:fx]]" {
		t.Errorf("filesystem list: %d %v", code, m)
	}
	if code, m, _ := e.Do("GET", pulpExporters+"?ordering=method", "", nil); code != 400 {
		t.Errorf("pulp exporters ordered by method: %d %v", code, m)
	}

	// Update and partial update are tasks.
	moved := filepath.Join(e.ExportRoot(), "moved")
	code, m := e.JSON("PATCH", h, map[string]any{"path": moved})
	e.Done("patch", code, m)
	if _, x = e.JSON("GET", h, nil); x["path"] != moved || x["name"] != "px" || len(x["repositories"].([]any)) != 1 {
		t.Errorf("after patch: %v", x)
	}
	code, m = e.JSON("PUT", fh, map[string]any{"name": "fx2", "path": moved, "method": "hardlink"})
	e.Done("put", code, m)
	if _, fx = e.JSON("GET", fh, nil); fx["name"] != "fx2" || fx["method"] != "hardlink" {
		t.Errorf("after put: %v", fx)
	}
	code, m = e.JSON("PATCH", h, map[string]any{"repositories": []string{}})
	e.Done("patch repositories", code, m)
	if _, x = e.JSON("GET", h, nil); len(x["repositories"].([]any)) != 0 {
		t.Errorf("after emptying the repositories: %v", x)
	}

	// Delete is a task; the exporter's exports go with it.
	for _, p := range []string{h, fh} {
		code, m, _ := e.Do("DELETE", p, "", nil)
		e.Done("delete", code, m)
		if code, _, _ := e.Do("GET", p, "", nil); code != 404 {
			t.Errorf("%s after delete: %d", p, code)
		}
	}
}

// Bad exporter bodies are a 400 naming the field, and change nothing.
func TestExporterBadInput(t *testing.T) {
	e := exportEnv(t)
	repo := fileRepo(e, "exported", nil)
	_, otherRepo := e.JSON("POST", "/pulp/api/v3/repositories/ansible/ansible/", map[string]any{"name": "collections"})
	good := filepath.Join(e.ExportRoot(), "good")
	mustCreate(e, pulpExporters, map[string]any{"name": "taken", "path": good, "repositories": []string{repo}})
	outside := t.TempDir()
	if err := os.MkdirAll(e.ExportRoot(), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(e.ExportRoot(), "out")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	missingRepo := "/pulp/api/v3/repositories/file/file/00000000-0000-0000-0000-000000000000/"
	for _, tc := range []struct {
		name, path string
		body       map[string]any
		field, msg string
	}{
		{"no name", pulpExporters, map[string]any{"path": good, "repositories": []string{}}, "name", "required"},
		{"no repositories", pulpExporters, map[string]any{"name": "a", "path": good}, "repositories", "required"},
		{"blank path", fsExporters, map[string]any{"name": "a", "path": ""}, "path", "required"},
		{"taken name", pulpExporters, map[string]any{"name": "taken", "path": good, "repositories": []string{}}, "name", "This field must be unique."},
		{"taken name, other kind", fsExporters, map[string]any{"name": "taken", "path": good}, "name", "This field must be unique."},
		{"path outside", fsExporters, map[string]any{"name": "a", "path": outside}, "path", "Path '" + outside + "' is not an allowed export path"},
		{"path beside", fsExporters, map[string]any{"name": "a", "path": e.ExportRoot() + "-evil"}, "path", "is not an allowed export path"},
		{"path with ..", fsExporters, map[string]any{"name": "a", "path": e.ExportRoot() + "/../x"}, "path", "is not an allowed export path"},
		{"path through a link out", fsExporters, map[string]any{"name": "a", "path": link + "/x"}, "path", "is not an allowed export path"},
		{"relative path", fsExporters, map[string]any{"name": "a", "path": "exports/x"}, "path", "is not an allowed export path"},
		{"bad method", fsExporters, map[string]any{"name": "a", "path": good, "method": "copy"}, "method", "not a valid choice"},
		{"not a repository", pulpExporters, map[string]any{"name": "a", "path": good, "repositories": []string{"/pulp/api/v3/tasks/"}}, "repositories", "No URL match"},
		{"missing repository", pulpExporters, map[string]any{"name": "a", "path": good, "repositories": []string{missingRepo}}, "repositories", "does not exist"},
		{"repository of a type that cannot be exported", pulpExporters, map[string]any{"name": "a", "path": good, "repositories": []string{otherRepo["pulp_href"].(string)}},
			"repositories", "ansible.ansible, which cannot be exported"},
		{"last export of another exporter", pulpExporters, map[string]any{"name": "a", "path": good, "repositories": []string{},
			"last_export": pulpExporters + "00000000-0000-0000-0000-000000000000/exports/00000000-0000-0000-0000-000000000000/"}, "last_export", "does not exist"},
		{"unknown field", pulpExporters, map[string]any{"name": "a", "path": good, "repositories": []string{}, "colour": "red"}, "colour", "Unexpected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.Count("exporters")
			code, m := e.JSON("POST", tc.path, tc.body)
			b, _ := json.Marshal(m[tc.field])
			if code != 400 || !strings.Contains(string(b), tc.msg) {
				t.Errorf("%d %v; want 400 on %s: %s", code, m, tc.field, tc.msg)
			}
			if e.Count("exporters") != before {
				t.Errorf("exporters %d → %d", before, e.Count("exporters"))
			}
		})
	}
	// An update is checked before its task is queued.
	_, x := e.JSON("GET", pulpExporters+"?name=taken", nil)
	h := x["results"].([]any)[0].(map[string]any)["pulp_href"].(string)
	tasks := e.Count("tasks")
	for _, body := range []map[string]any{{"path": outside}, {"repositories": []string{otherRepo["pulp_href"].(string)}}, {"name": ""}} {
		if code, m := e.JSON("PATCH", h, body); code != 400 {
			t.Errorf("PATCH %v: %d %v", body, code, m)
		}
	}
	if e.Count("tasks") != tasks {
		t.Errorf("bad updates queued tasks")
	}
	// No allowed export paths refuse every path.
	e.Core.ExportPaths = nil
	if code, m := e.JSON("POST", fsExporters, map[string]any{"name": "none", "path": good}); code != 400 || !strings.Contains(fmt.Sprint(m["path"]), "not an allowed export path") {
		t.Errorf("no allowed paths: %d %v", code, m)
	}
}
