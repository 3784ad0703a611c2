package openapi

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"pith/internal/testfiles"
)

// referenceDoc reads the reference document from testdata/reference.
func referenceDoc(t *testing.T) []byte {
	t.Helper()
	b, err := testfiles.ReadFile("reference", "pulp-3.105", "api-3105.json")
	if err != nil {
		t.Fatalf("reference document: %v", err)
	}
	return b
}

type fileRepositoryIn struct {
	PulpLabels         map[string]*string `json:"pulp_labels"`
	Name               string             `json:"name" openapi:"minLength=1,desc=A unique name for this repository."`
	Description        *string            `json:"description" openapi:"minLength=1"`
	RetainRepoVersions *int64             `json:"retain_repo_versions" openapi:"minimum=1"`
	Remote             *string            `json:"remote" openapi:"format=uri"`
	Autopublish        bool               `json:"autopublish" openapi:"default=false"`
	Manifest           *string            `json:"manifest" openapi:"minLength=1,default=PULP_MANIFEST"`
}

type entity struct {
	PulpHref        string    `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string    `json:"prn" openapi:"readOnly"`
	PulpCreated     time.Time `json:"pulp_created" openapi:"readOnly"`
	PulpLastUpdated time.Time `json:"pulp_last_updated" openapi:"readOnly"`
}

type fileRepositoryOut struct {
	entity
	VersionsHref      string `json:"versions_href" openapi:"format=uri,readOnly"`
	LatestVersionHref string `json:"latest_version_href" openapi:"format=uri,readOnly"`
	fileRepositoryIn
}

type artifactIn struct {
	File   []byte  `json:"file"`
	Size   *int64  `json:"size"`
	MD5    *string `json:"md5" openapi:"minLength=1"`
	SHA1   *string `json:"sha1" openapi:"minLength=1"`
	SHA224 *string `json:"sha224" openapi:"minLength=1"`
	SHA256 *string `json:"sha256" openapi:"minLength=1"`
	SHA384 *string `json:"sha384" openapi:"minLength=1"`
	SHA512 *string `json:"sha512" openapi:"minLength=1"`
}

type uploadChunkIn struct {
	File   []byte  `json:"file" openapi:"writeOnly"`
	SHA256 *string `json:"sha256" openapi:"writeOnly,minLength=1"`
}

type uploadOut struct {
	entity
	Size      int64     `json:"size"`
	Completed time.Time `json:"completed" openapi:"readOnly"`
}

type statusOut struct {
	Versions          []map[string]any `json:"versions" openapi:"required"`
	OnlineWorkers     []map[string]any `json:"online_workers" openapi:"required"`
	OnlineAPIApps     []map[string]any `json:"online_api_apps" openapi:"required"`
	OnlineContentApps []map[string]any `json:"online_content_apps" openapi:"required"`
	DatabaseConn      map[string]bool  `json:"database_connection" openapi:"required"`
	ContentSettings   map[string]any   `json:"content_settings" openapi:"required"`
	DomainEnabled     bool             `json:"domain_enabled"`
}

var (
	jsonForms = []string{"application/json", "application/x-www-form-urlencoded", "multipart/form-data"}
	fileForms = []string{"multipart/form-data", "application/x-www-form-urlencoded"}
)

// sampleOps replicates a few real operations with the helpers, as the API package would.
func sampleOps(reg *Registry) []Operation {
	repo := reg.Add("file.FileRepositoryResponse", fileRepositoryOut{})
	return []Operation{
		{ID: "status_read", Method: "GET", Path: "/pulp/api/v3/status/", Tag: "Status", Summary: "Inspect status of Pulp",
			Params: ReadParams(), Anonymous: true,
			Responses: []Response{{Code: 200, Schema: reg.Add("StatusResponse", statusOut{})}}},
		{ID: "repositories_file_file_list", Method: "GET", Path: "/pulp/api/v3/repositories/file/file/", Tag: "Repositories: File",
			Params: Params(ListParams(),
				StringFilter("name", "exact", "contains", "icontains", "iexact", "in", "iregex", "istartswith", "regex", "startswith"),
				IntFilter("retain_repo_versions", "exact", "gt", "gte", "isnull", "lt", "lte", "ne", "range"),
				IdentityFilters(),
				[]Param{
					HrefFilter("latest_with_content", "Content Unit referenced by HREF/PRN"),
					HrefFilter("with_content", "Content Unit referenced by HREF/PRN"),
					HrefFilter("remote", ""), LabelSelect(), Q(),
					Ordering("pulp_id", "pulp_created", "pulp_last_updated", "pulp_type", "name", "pulp_labels",
						"description", "next_version", "retain_repo_versions", "user_hidden", "pk"),
				}),
			Responses: []Response{{Code: 200, Schema: reg.Paginated(repo)}}},
		{ID: "repositories_file_file_create", Method: "POST", Path: "/pulp/api/v3/repositories/file/file/", Tag: "Repositories: File",
			Params: []Param{Diagnostics()}, Body: &Body{MediaTypes: jsonForms, Schema: reg.Add("file.FileRepository", fileRepositoryIn{})},
			Responses: []Response{{Code: 201, Schema: repo}}},
		{ID: "repositories_file_file_versions_list", Method: "GET", Path: "{file_file_repository_href}versions/", Tag: "Repositories: File Versions",
			Params: Params(ListParams(),
				IntFilter("number", "exact", "gt", "gte", "lt", "lte", "range"),
				DateTimeFilter("pulp_created", "exact", "gt", "gte", "isnull", "lt", "lte", "range"),
				[]Param{
					HrefFilter("content", "Content Unit referenced by HREF/PRN"), MultiFilter("content__in"),
					MultiFilter("prn__in"), MultiFilter("pulp_href__in"), Q(),
					Ordering("pulp_id", "pulp_created", "pulp_last_updated", "number", "complete", "info", "content_ids", "pk"),
				}),
			Responses: []Response{{Code: 200, Schema: reg.Paginated(reg.AddSchema("RepositoryVersionResponse", Schema{Type: "object"}))}}},
		{ID: "tasks_read", Method: "GET", Path: "{task_href}", Tag: "Tasks", Params: ReadParams(),
			Responses: []Response{{Code: 200, Schema: reg.AddSchema("TaskResponse", Schema{Type: "object"})}}},
		{ID: "artifacts_create", Method: "POST", Path: "/pulp/api/v3/artifacts/", Tag: "Artifacts",
			Params: []Param{Diagnostics()}, Body: &Body{MediaTypes: fileForms, Schema: reg.Add("Artifact", artifactIn{})},
			Responses: []Response{{Code: 201, Schema: reg.AddSchema("ArtifactResponse", Schema{Type: "object"})}}},
		{ID: "uploads_update", Method: "PUT", Path: "{upload_href}", Tag: "Uploads",
			Params: []Param{Diagnostics(), ContentRange()}, Body: &Body{MediaTypes: fileForms, Schema: reg.Add("UploadChunk", uploadChunkIn{})},
			Responses: []Response{{Code: 200, Schema: reg.Add("UploadResponse", uploadOut{})}}},
		{ID: "docs_api.json_get", Method: "GET", Path: "/pulp/api/v3/docs/api.json", Tag: "Docs: Api.Json",
			Params: append(ReadParams(), Query("lang", Schema{Type: "string"}, "")), Anonymous: true,
			Responses: []Response{{Code: 200, MediaTypes: []string{"application/vnd.oai.openapi+json", "application/json"}}}},
	}
}

var sampleInfo = Info{Title: "Pulp 3 API", Version: "v3", AppVersions: map[string]string{"core": "3.105.25", "file": "3.105.25"}}

func sampleDoc(t *testing.T) []byte {
	t.Helper()
	reg := NewRegistry()
	doc, err := Document(sampleInfo, sampleOps(reg), reg)
	if err != nil {
		t.Fatalf("Document: %v", err)
	}
	return doc
}

// TestReferenceOperations proves the helpers reproduce the reference's operations.
func TestReferenceOperations(t *testing.T) {
	t.Parallel()
	diff, err := Diff(referenceDoc(t), sampleDoc(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(diff) > 0 {
		t.Errorf("differences from the reference:\n%s", strings.Join(diff, "\n"))
	}
}

// TestGlueAcceptsDocument loads the document with pulp-glue's own validator.
func TestGlueAcceptsDocument(t *testing.T) {
	t.Parallel()
	python := os.Getenv("PITH_PYTHON")
	if python == "" {
		t.Skip("PITH_PYTHON is unset (a python with pulp-glue 0.41.1, e.g. /tmp/pulpvenv/bin/python)")
	}
	path := filepath.Join(t.TempDir(), "api.json")
	if err := os.WriteFile(path, sampleDoc(t), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), python, "testdata/validate.py", path).CombinedOutput()
	if err != nil {
		t.Fatalf("pulp-glue rejects the document: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestReferenceParameters checks the helpers down to descriptions and key sets:
// each sample operation's parameters equal the reference's, in order.
func TestReferenceParameters(t *testing.T) {
	t.Parallel()
	params := func(doc []byte) map[string][]map[string]any {
		var d struct {
			Paths map[string]map[string]struct {
				ID     string           `json:"operationId"`
				Params []map[string]any `json:"parameters"`
			}
		}
		if err := json.Unmarshal(doc, &d); err != nil {
			t.Fatal(err)
		}
		out := map[string][]map[string]any{}
		for _, item := range d.Paths {
			for _, op := range item {
				for _, p := range op.Params {
					if p["required"] == false {
						delete(p, "required") // same meaning as absent
					}
				}
				out[op.ID] = op.Params
			}
		}
		return out
	}
	ref, ours := params(referenceDoc(t)), params(sampleDoc(t))
	for id, got := range ours {
		if id == "docs_api.json_get" {
			continue // lang's language list is not worth copying
		}
		if diff := cmp.Diff(ref[id], got); diff != "" {
			t.Errorf("%s parameters (-reference +ours):\n%s", id, diff)
		}
	}
}
