package ansible_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pith/api/openapi"
	"pith/content/ansible"
	"pith/content/contenttest"
	"pith/internal/testfiles"
)

func newEnv(t *testing.T) *contenttest.Env {
	t.Helper()
	return contenttest.New(t, contenttest.Type(ansible.New))
}

// tarball is a collection from the reader's test data.
func tarball(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("collection", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every ansible operation pith serves matches the reference release set.
func TestDocument(t *testing.T) {
	e := newEnv(t)
	ref, err := testfiles.ReadFile("reference", "pulp-3.105", "api-3105.json")
	if err != nil {
		t.Fatal(err)
	}
	diffs, err := openapi.Diff(ref, e.API.Document())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
	n := 0
	for _, op := range e.API.Operations() {
		if strings.Contains(op.ID, "ansible") || op.ID == "upload_collection" || op.ID == "copy_content" {
			n++
		}
	}
	t.Logf("%d ansible operations match the reference", n)
}

// An uploaded collection is imported into a collection version that shows the
// manifest's fields and is added to the repository named.
func TestUploadCollection(t *testing.T) {
	e := newEnv(t)
	code, repo := e.JSON("POST", "/pulp/api/v3/repositories/ansible/ansible/", map[string]any{"name": "r"})
	if code != 201 {
		t.Fatalf("repository: %d %v", code, repo)
	}
	ct, body := contenttest.Multipart(map[string]string{"repository": repo["pulp_href"].(string)}, "file", "pulp-testing_asset-1.0.0.tar.gz",
		tarball(t, "pulp-testing_asset-1.0.0.tar.gz"))
	code, m, _ := e.Do("POST", "/pulp/api/v3/content/ansible/collection_versions/", ct, body)
	task := e.Done("create", code, m)
	var cv string
	for _, h := range task["created_resources"].([]any) {
		if strings.Contains(h.(string), "/collection_versions/") {
			cv = h.(string)
		}
	}
	if cv == "" {
		t.Fatalf("no collection version created: %v", task["created_resources"])
	}
	code, m, _ = e.Do("GET", cv, "", nil)
	if code != 200 || m["namespace"] != "pulp" || m["name"] != "testing_asset" || m["version"] != "1.0.0" || m["sha256"] == nil || m["artifact"] == nil {
		t.Fatalf("collection version: %d %v", code, m)
	}
	code, m, _ = e.Do("GET", "/pulp/api/v3/content/ansible/collection_versions/?namespace=pulp&name=testing_asset", "", nil)
	if code != 200 || m["count"].(float64) != 1 {
		t.Fatalf("list: %d %v", code, m)
	}
	code, m, _ = e.Do("GET", repo["pulp_href"].(string)+"versions/1/", "", nil)
	if code != 200 {
		t.Fatalf("version 1: %d %v", code, m)
	}
	// The same tarball named differently from its manifest: the import fails naming both.
	ct, body = contenttest.Multipart(map[string]string{"expected_namespace": "pulp", "expected_name": "other", "expected_version": "1.0.0"},
		"file", "x.tar.gz", tarball(t, "pulp-testing_asset-1.0.1.tar.gz"))
	code, m, _ = e.Do("POST", "/pulp/api/v3/content/ansible/collection_versions/", ct, body)
	if code != 202 {
		t.Fatalf("create: %d %v", code, m)
	}
	got := e.Wait(m["task"].(string))
	if got["state"] != "failed" || !strings.Contains(got["error"].(map[string]any)["description"].(string), `"other"`) {
		t.Fatalf("mismatched upload: %v %v", got["state"], got["error"])
	}
	if n := e.Count("contents"); n != 1 {
		t.Errorf("%d units after a failed import, want 1", n)
	}
}
