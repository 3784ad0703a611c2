package ansible_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"pith/api/openapi"
	"pith/content/ansible"
	"pith/content/contenttest"
	"pith/internal/testfiles"
	"pith/internal/testgalaxy"
	"pith/sign"
)

func newEnv(t *testing.T) *contenttest.Env {
	t.Helper()
	return contenttest.New(t, contenttest.Type(ansible.New))
}

// tarball is a collection of the third-party test data.
func tarball(t *testing.T, name string) []byte {
	t.Helper()
	b, err := testfiles.ReadFile("ansible-collections", name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testKey is a fresh signing key.
func testKey(t *testing.T) *sign.Signer { return testgalaxy.NewKeyring(t).Signer }

// manifestOf is the MANIFEST.json of a collection tarball of the test data.
func manifestOf(t *testing.T, file string) []byte {
	t.Helper()
	return manifestOfBytes(t, tarball(t, file))
}

// manifestOfBytes is the MANIFEST.json of a collection tarball.
func manifestOfBytes(t testing.TB, artifact []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(artifact))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("the collection has no MANIFEST.json: %v", err)
		}
		if h.Name == "MANIFEST.json" {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
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
	ansible := func(id string) bool {
		return strings.Contains(id, "ansible") || strings.HasPrefix(id, "api_v1_roles") ||
			slices.Contains([]string{"upload_collection", "copy_content", "collection_import_read"}, id)
	}
	// The core's operations are api's TestDocumentMatchesReference's, with the
	// differences it keeps on purpose.
	for _, d := range diffs {
		if id, _, _ := strings.Cut(d, ":"); ansible(id) {
			t.Error(d)
		}
	}
	n := 0
	for _, op := range e.API.Operations() {
		if ansible(op.ID) {
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

// A chunked upload (or an artifact) without expected_namespace, expected_name and
// expected_version is refused as Pulp refuses it, and the upload stays as it was: no
// artifact made of it. With them, it imports.
func TestCreateFromUpload(t *testing.T) {
	e := newEnv(t)
	data := tarball(t, "pulp-testing_asset-1.0.0.tar.gz")
	code, up := e.JSON("POST", "/pulp/api/v3/uploads/", map[string]any{"size": len(data)})
	if code != 201 {
		t.Fatalf("create upload: %d %v", code, up)
	}
	upload := up["pulp_href"].(string)
	ct, b := contenttest.Multipart(nil, "file", "blob", data)
	if code, m, _ := e.Do("PUT", upload, ct, b, "Content-Range", fmt.Sprintf("bytes 0-%d/%d", len(data)-1, len(data))); code != 200 {
		t.Fatalf("chunk: %d %v", code, m)
	}
	want := "expected_namespace, expected_name, and expected_version must be specified when using artifact or upload objects"
	for _, body := range []map[string]any{
		{"upload": upload},
		{"upload": upload, "expected_namespace": "pulp", "expected_name": "testing_asset"},
	} {
		code, m := e.JSON("POST", "/pulp/api/v3/content/ansible/collection_versions/", body)
		if errs, _ := m["non_field_errors"].([]any); code != 400 || len(errs) != 1 || errs[0] != want {
			t.Errorf("%v: %d %v", body, code, m)
		}
	}
	if code, m, _ := e.Do("GET", upload, "", nil); code != 200 || e.Count("artifacts") != 0 {
		t.Fatalf("after the refused creates: upload %d %v, %d artifacts", code, m, e.Count("artifacts"))
	}
	code, m := e.JSON("POST", "/pulp/api/v3/content/ansible/collection_versions/",
		map[string]any{"upload": upload, "expected_namespace": "pulp", "expected_name": "testing_asset", "expected_version": "1.0.0"})
	e.Done("create from the upload", code, m)
	if n := e.Count("artifacts"); n != 1 {
		t.Errorf("%d artifacts after the import, want 1", n)
	}
}

// upload imports a collection into the repository and returns its href.
func upload(t *testing.T, e *contenttest.Env, repo, file string) string {
	t.Helper()
	fields := map[string]string{}
	if repo != "" {
		fields["repository"] = repo
	}
	ct, body := contenttest.Multipart(fields, "file", file, tarball(t, file))
	code, m, _ := e.Do("POST", "/pulp/api/v3/content/ansible/collection_versions/", ct, body)
	task := e.Done("upload "+file, code, m)
	for _, h := range task["created_resources"].([]any) {
		if strings.Contains(h.(string), "/collection_versions/") {
			return h.(string)
		}
	}
	t.Fatalf("upload %s created no collection version: %v", file, task["created_resources"])
	return ""
}

// A signature of a collection's MANIFEST.json is stored when the repository's gpgkey
// verifies it, and refused (400, nothing stored) when it does not or there is no key.
func TestSignatureUpload(t *testing.T) {
	e := newEnv(t)
	key := testKey(t)
	other := testKey(t)
	code, repo := e.JSON("POST", "/pulp/api/v3/repositories/ansible/ansible/", map[string]any{"name": "r", "gpgkey": key.PublicKey()})
	if code != 201 {
		t.Fatalf("repository: %d %v", code, repo)
	}
	rh := repo["pulp_href"].(string)
	cv := upload(t, e, rh, "pulp-testing_asset-1.0.0.tar.gz")
	manifest := manifestOf(t, "pulp-testing_asset-1.0.0.tar.gz")
	sig := func(s *sign.Signer, data []byte) []byte {
		b, err := s.Detach(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	send := func(fields map[string]string, data []byte) (int, map[string]any) {
		ct, body := contenttest.Multipart(fields, "file", "MANIFEST.json.asc", data)
		code, m, _ := e.Do("POST", "/pulp/api/v3/content/ansible/collection_signatures/", ct, body)
		return code, m
	}
	for name, c := range map[string]struct {
		fields map[string]string
		data   []byte
		want   string
	}{
		"another key":      {map[string]string{"signed_collection": cv, "repository": rh}, sig(other, manifest), "file"},
		"other data":       {map[string]string{"signed_collection": cv, "repository": rh}, sig(key, append(manifest, ' ')), "file"},
		"no repository":    {map[string]string{"signed_collection": cv}, sig(key, manifest), "No key available"},
		"no collection":    {map[string]string{"repository": rh}, sig(key, manifest), "signed_collection"},
		"not a collection": {map[string]string{"signed_collection": rh, "repository": rh}, sig(key, manifest), "signed_collection"},
	} {
		code, m := send(c.fields, c.data)
		if code != 400 || !strings.Contains(fmt.Sprint(m), c.want) {
			t.Errorf("%s: %d %v, want 400 naming %s", name, code, m, c.want)
		}
	}
	if n := e.Count("contents"); n != 1 {
		t.Fatalf("%d units after refused signatures, want 1", n)
	}
	code, m := send(map[string]string{"signed_collection": cv, "repository": rh}, sig(key, manifest))
	e.Done("signature", code, m)
	code, m, _ = e.Do("GET", "/pulp/api/v3/content/ansible/collection_signatures/?signed_collection="+cv, "", nil)
	if code != 200 || m["count"].(float64) != 1 {
		t.Fatalf("signatures: %d %v", code, m)
	}
	s := m["results"].([]any)[0].(map[string]any)
	if s["pubkey_fingerprint"] != key.Fingerprint() || s["signed_collection"] != cv {
		t.Errorf("signature: %v", s)
	}
	code, m, _ = e.Do("GET", rh+"versions/2/", "", nil)
	if code != 200 {
		t.Errorf("the signature made no version 2: %d %v", code, m)
	}
}

// Deprecations, marks and roles are created as pulp_ansible creates them.
func TestOtherUnits(t *testing.T) {
	e := newEnv(t)
	_, repo := e.JSON("POST", "/pulp/api/v3/repositories/ansible/ansible/", map[string]any{"name": "r"})
	rh := repo["pulp_href"].(string)
	cv := upload(t, e, rh, "pulp-testing_asset-1.0.0.tar.gz")

	code, m := e.JSON("POST", "/pulp/api/v3/content/ansible/collection_deprecations/", map[string]any{"namespace": "pulp", "name": "testing_asset", "repository": rh})
	e.Done("deprecation", code, m)
	code, m, _ = e.Do("GET", "/pulp/api/v3/content/ansible/collection_deprecations/?repository_version="+rh+"versions/2/", "", nil)
	if code != 200 || m["count"].(float64) != 1 {
		t.Fatalf("deprecations: %d %v", code, m)
	}

	code, m = e.JSON("POST", "/pulp/api/v3/content/ansible/collection_marks/", map[string]any{"marked_collection": cv, "value": "approved"})
	if code != 201 || m["marked_collection"] != cv || m["value"] != "approved" {
		t.Fatalf("mark: %d %v", code, m)
	}
	for _, bad := range []string{"not a slug", strings.Repeat("x", 51)} {
		code, m = e.JSON("POST", "/pulp/api/v3/content/ansible/collection_marks/", map[string]any{"marked_collection": cv, "value": bad})
		if code != 400 || m["value"] == nil {
			t.Errorf("mark value %.20q: %d %v", bad, code, m)
		}
	}
	code, m, _ = e.Do("GET", "/pulp/api/v3/content/ansible/collection_marks/?value=approved&marked_collection="+cv, "", nil)
	if code != 200 || m["count"].(float64) != 1 {
		t.Fatalf("marks: %d %v", code, m)
	}

	ct, body := contenttest.Multipart(nil, "file", "role.tar.gz", []byte("a role archive"))
	code, art, _ := e.Do("POST", "/pulp/api/v3/artifacts/", ct, body)
	if code != 201 {
		t.Fatalf("artifact: %d %v", code, art)
	}
	role := map[string]any{"artifact": art["pulp_href"], "namespace": "geerlingguy", "name": "apache", "version": "1.0.0"}
	code, m = e.JSON("POST", "/pulp/api/v3/content/ansible/roles/", role)
	if code != 201 || m["name"] != "apache" || m["artifact"] != art["pulp_href"] {
		t.Fatalf("role: %d %v", code, m)
	}
	code, m = e.JSON("POST", "/pulp/api/v3/content/ansible/roles/", role)
	if code != 400 {
		t.Errorf("the same role again: %d %v", code, m)
	}
	role["version"] = "../x"
	if code, m = e.JSON("POST", "/pulp/api/v3/content/ansible/roles/", role); code != 400 || m["version"] == nil {
		t.Errorf("a role version that is a path: %d %v", code, m)
	}
}

// versionContent is the content of a repository version, as kind ("collection_marks")
// → hrefs.
func versionContent(t *testing.T, e *contenttest.Env, version string) map[string][]string {
	t.Helper()
	code, m, _ := e.Do("GET", "/pulp/api/v3/content/?limit=1000&repository_version="+version, "", nil)
	if code != 200 {
		t.Fatalf("content of %s: %d %v", version, code, m)
	}
	out := map[string][]string{}
	for _, r := range m["results"].([]any) {
		h := r.(map[string]any)["pulp_href"].(string)
		kind := strings.Split(strings.TrimPrefix(h, "/pulp/api/v3/content/ansible/"), "/")[0]
		out[kind] = append(out[kind], h)
	}
	return out
}

// A collection version leaving a repository takes its signatures and marks along, and
// the collection's deprecation once no version of it is left.
func TestRemovalTakesDependents(t *testing.T) {
	e := newEnv(t)
	key := testKey(t)
	_, repo := e.JSON("POST", "/pulp/api/v3/repositories/ansible/ansible/", map[string]any{"name": "r", "gpgkey": key.PublicKey()})
	rh := repo["pulp_href"].(string)
	v0 := upload(t, e, rh, "pulp-testing_asset-1.0.0.tar.gz")
	v1 := upload(t, e, rh, "pulp-testing_asset-1.0.1.tar.gz")
	sig, err := key.Detach(bytes.NewReader(manifestOf(t, "pulp-testing_asset-1.0.0.tar.gz")))
	if err != nil {
		t.Fatal(err)
	}
	ct, body := contenttest.Multipart(map[string]string{"signed_collection": v0, "repository": rh}, "file", "s.asc", sig)
	code, m, _ := e.Do("POST", "/pulp/api/v3/content/ansible/collection_signatures/", ct, body)
	e.Done("signature", code, m)
	code, mark := e.JSON("POST", "/pulp/api/v3/content/ansible/collection_marks/", map[string]any{"marked_collection": v0, "value": "ok"})
	if code != 201 {
		t.Fatalf("mark: %d %v", code, mark)
	}
	code, m = e.JSON("POST", rh+"modify/", map[string]any{"add_content_units": []string{mark["pulp_href"].(string)}})
	e.Done("add mark", code, m)
	code, m = e.JSON("POST", "/pulp/api/v3/content/ansible/collection_deprecations/", map[string]any{"namespace": "pulp", "name": "testing_asset", "repository": rh})
	e.Done("deprecate", code, m)
	if got := versionContent(t, e, rh+"versions/5/"); len(got) != 4 {
		t.Fatalf("version 5 holds %v, want a version, a signature, a mark and a deprecation of each kind", got)
	}

	code, m = e.JSON("POST", rh+"modify/", map[string]any{"remove_content_units": []string{v0}})
	e.Done("remove 1.0.0", code, m)
	got := versionContent(t, e, rh+"versions/6/")
	if len(got["collection_signatures"]) != 0 || len(got["collection_marks"]) != 0 ||
		len(got["collection_deprecations"]) != 1 || len(got["collection_versions"]) != 1 {
		t.Fatalf("after removing 1.0.0: %v, want 1.0.1 and the deprecation", got)
	}
	code, m, _ = e.Do("GET", rh+"versions/6/", "", nil)
	removed := m["content_summary"].(map[string]any)["removed"].(map[string]any)
	if len(removed) != 3 {
		t.Errorf("version 6 says it removed %v, want the version, its signature and its mark", removed)
	}

	code, m = e.JSON("POST", rh+"modify/", map[string]any{"remove_content_units": []string{v1}})
	e.Done("remove 1.0.1", code, m)
	if got := versionContent(t, e, rh+"versions/7/"); len(got) != 0 {
		t.Fatalf("after removing the last version: %v, want nothing", got)
	}
}
