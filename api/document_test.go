package api_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"pith/api/openapi"
	"pith/internal/testfiles"
)

func referenceDoc(t *testing.T) []byte {
	t.Helper()
	b, err := testfiles.ReadFile("reference", "pulp-3.105", "api-3105.json")
	if err != nil {
		t.Fatalf("reference document: %v", err)
	}
	return b
}

// newerShapes are the differences from the reference pith keeps on purpose: an
// operation declared as a newer Pulp release declares it, because the pulp CLI 0.41.1
// cannot call it as 3.105 declares it (docs/compatibility.md).
var newerShapes = map[string]bool{
	// pulp-cli always sends a body (newer Pulp's UpstreamPulpReplicate) and pulp-glue
	// refuses to send one to an operation without a requestBody.
	`upstream_pulps_replicate: request media types: want [], got ["application/json","application/x-www-form-urlencoded","multipart/form-data"]`: true,
}

// Every operation pith implements matches the reference release set: operationId,
// method, path, parameters, request media types and response codes.
func TestDocumentMatchesReference(t *testing.T) {
	e := newEnv(t)
	code, _, _ := e.Do("GET", "/pulp/api/v3/docs/api.json", "", nil)
	if code != 200 {
		t.Fatalf("docs: %d", code)
	}
	diffs, err := openapi.Diff(referenceDoc(t), e.API.Document())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		if !newerShapes[d] {
			t.Error(d)
		}
	}
	if n := len(e.API.Operations()); n < 60 {
		t.Errorf("only %d operations", n)
	} else {
		t.Logf("%d operations match the reference", n)
	}
}

// The served document loads in pulp-glue's own validator.
func TestDocumentLoadsInPulpGlue(t *testing.T) {
	py := os.Getenv("PITH_PYTHON")
	if py == "" {
		t.Skip("PITH_PYTHON (a python with pulp-glue 0.41.1) is not set; scripts/test sets it")
	}
	e := newEnv(t)
	f := filepath.Join(t.TempDir(), "api.json")
	if err := os.WriteFile(f, e.API.Document(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "openapi/testdata/validate.py", f).CombinedOutput()
	if err != nil {
		t.Fatalf("pulp-glue rejected the document: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "OK") {
		t.Logf("%s", out)
	}
}
