package ansible_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"

	"pith/content/contenttest"
	"pith/internal/testgalaxy"
)

// galaxyDist makes a repository and a distribution of it at base path bp.
func galaxyDist(t *testing.T, e *contenttest.Env, bp string) (repo string) {
	t.Helper()
	code, m := e.JSON("POST", "/pulp/api/v3/repositories/ansible/ansible/", map[string]any{"name": bp})
	if code != 201 {
		t.Fatalf("repository: %d %v", code, m)
	}
	repo = m["pulp_href"].(string)
	code, m = e.JSON("POST", "/pulp/api/v3/distributions/ansible/ansible/", map[string]any{"name": bp, "base_path": bp, "repository": repo})
	e.Done("distribution", code, m)
	return repo
}

// publishBody is the multipart body ansible-galaxy sends: the file part in base64 and
// the sha256 part.
func publishBody(t *testing.T, name string, data []byte) (string, io.Reader) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	sum := sha256.Sum256(data)
	w.WriteField("sha256", hex.EncodeToString(sum[:]))
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+name+`"`)
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Transfer-Encoding", "base64")
	pw, err := w.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.StdEncoding.EncodeToString(data)
	for len(enc) > 76 {
		io.WriteString(pw, enc[:76]+"\r\n")
		enc = enc[76:]
	}
	io.WriteString(pw, enc)
	w.Close()
	return w.FormDataContentType(), &buf
}

// publish publishes a collection of the test data through the Galaxy API and waits for
// its import, returning the import.
func publish(t *testing.T, e *contenttest.Env, api, file string) map[string]any {
	t.Helper()
	return publishBytes(t, e, api, file, tarball(t, file))
}

// publishBytes publishes a collection tarball under that file name, as publish does.
func publishBytes(t *testing.T, e *contenttest.Env, api, file string, data []byte) map[string]any {
	t.Helper()
	ct, body := publishBody(t, file, data)
	code, m, _ := e.Do("POST", api+"v3/artifacts/collections/", ct, body)
	if code != 202 {
		t.Fatalf("publish %s: %d %v", file, code, m)
	}
	task, _ := m["task"].(string)
	if !strings.HasPrefix(task, "/pulp_ansible/galaxy/default/api/v3/plugin/ansible/imports/collections/") {
		t.Fatalf("publish %s: task %q", file, task)
	}
	id := strings.TrimSuffix(task[strings.LastIndex(strings.TrimSuffix(task, "/"), "/")+1:], "/")
	for {
		// As ansible-galaxy polls: its own server's v3/imports/collections/<id>/.
		code, imp, _ := e.Do("GET", api+"v3/imports/collections/"+id+"/", "", nil)
		if code != 200 {
			t.Fatalf("import %s: %d %v", id, code, imp)
		}
		if imp["finished_at"] != nil {
			return imp
		}
	}
}

// ansible-galaxy's requests, as the e2e header lists them, against a distribution that
// collections were published to: lists, details with what install needs, the
// download, and a second publish of the same version refused.
func TestGalaxyPublishAndInstallReads(t *testing.T) {
	e := newEnv(t)
	galaxyDist(t, e, "gx")
	api := "/pulp_ansible/galaxy/gx/api/"
	for _, f := range []string{"ansible-utils-2.7.0.tar.gz", "ansible-netcommon-4.1.0.tar.gz", "cisco-iosxr-4.0.2.tar.gz"} {
		if imp := publish(t, e, api, f); imp["state"] != "completed" || imp["error"] != nil {
			t.Fatalf("import of %s: %v", f, imp)
		}
	}
	imp := publish(t, e, api, "cisco-iosxr-4.0.2.tar.gz")
	desc, _ := imp["error"].(map[string]any)["description"].(string)
	if imp["state"] != "failed" || !strings.Contains(desc, "already exists") || !strings.Contains(desc, "cisco.iosxr 4.0.2") {
		t.Fatalf("republished cisco.iosxr 4.0.2: %v", imp)
	}

	// Without the trailing slash: a redirect to it (Go's mux: 307; Django's APPEND_SLASH:
	// 301), which the sync clients need (they ask for …/api and …/collections/<ns>/<name>).
	for _, p := range []string{"/pulp_ansible/galaxy/gx/api", api + "v3/collections/cisco/iosxr"} {
		resp, err := noRedirect.Get(e.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 307 || resp.Header.Get("Location") != p+"/" {
			t.Errorf("GET %s: %d to %q, want 307 to the path with its slash", p, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	code, root, _ := e.DoAs("", "", "GET", api, "", nil)
	if code != 200 || root["current_version"] != "v3" {
		t.Fatalf("api root (anonymous): %d %v", code, root)
	}
	// Legacy routes redirect to the plugin ones (followed here, as ansible-galaxy does).
	code, c, _ := e.Do("GET", api+"v3/collections/cisco/iosxr/", "", nil)
	hv, _ := c["highest_version"].(map[string]any)
	if code != 200 || c["name"] != "iosxr" || hv["version"] != "4.0.2" {
		t.Fatalf("collection: %d %v", code, c)
	}
	code, vs, _ := e.Do("GET", api+"v3/collections/cisco/iosxr/versions/?limit=100", "", nil)
	if code != 200 || vs["meta"].(map[string]any)["count"] != 1.0 || vs["links"].(map[string]any)["next"] != nil {
		t.Fatalf("versions: %d %v", code, vs)
	}
	code, v, hdr := e.Do("GET", api+"v3/collections/cisco/iosxr/versions/4.0.2/", "", nil)
	art, _ := v["artifact"].(map[string]any)
	deps, _ := v["metadata"].(map[string]any)["dependencies"].(map[string]any)
	sum := sha256.Sum256(tarball(t, "cisco-iosxr-4.0.2.tar.gz"))
	if code != 200 || art["sha256"] != hex.EncodeToString(sum[:]) || deps["ansible.netcommon"] == nil || v["download_url"] == nil || v["manifest"] == nil {
		t.Fatalf("version detail: %d %v", code, v)
	}
	// Unchanged: the client's copy is good (304) at the URL the legacy one redirected
	// to; once the repository changes, it is not.
	tag, detail := hdr.Get("ETag"), "/pulp_ansible/galaxy/default/api/v3/plugin/ansible/content/gx/collections/index/cisco/iosxr/versions/4.0.2/"
	if code, _, _ := e.Do("GET", detail, "", nil, "If-None-Match", tag); tag == "" || code != 304 {
		t.Fatalf("conditional GET with ETag %q: %d", tag, code)
	}
	publish(t, e, api, "foo-bar-1.0.0.tar.gz")
	if code, _, _ := e.Do("GET", detail, "", nil, "If-None-Match", tag); code != 200 {
		t.Fatalf("conditional GET after a new repository version: %d", code)
	}
	// The download: the Galaxy route 302s to the content app, which serves the artifact.
	dl := strings.TrimPrefix(v["download_url"].(string), e.URL)
	req, _ := http.NewRequest("GET", e.URL+dl, nil)
	req.SetBasicAuth("admin", "pw")
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 302 || !strings.HasSuffix(loc, "/pulp/content/gx/cisco-iosxr-4.0.2.tar.gz") {
		t.Fatalf("download: %d to %q", resp.StatusCode, loc)
	}
	for _, u := range []string{dl, api + "v3/artifacts/collections/gx/cisco-iosxr-4.0.2.tar.gz"} {
		code, body, _ := e.Do("GET", u, "", nil)
		if code != 200 || body["_raw"] != string(tarball(t, "cisco-iosxr-4.0.2.tar.gz")) {
			t.Fatalf("download %s followed: %d", u, code)
		}
	}
	code, list, _ := e.Do("GET", api+"v3/plugin/ansible/content/gx/collections/index/?limit=2", "", nil)
	if code != 200 || list["meta"].(map[string]any)["count"] != 4.0 || len(list["data"].([]any)) != 2 || list["links"].(map[string]any)["next"] == nil {
		t.Fatalf("collections index: %d %v", code, list)
	}
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Galaxy's errors: its shape, 401 for anonymous reads, 404 for what is not there, and
// publishing needs ansible.add_collection.
func TestGalaxyErrors(t *testing.T) {
	e := newEnv(t)
	galaxyDist(t, e, "gx")
	api := "/pulp_ansible/galaxy/gx/api/"
	for _, tc := range []struct {
		user, method, path string
		code               int
		want               string
	}{
		{"", "GET", api + "v3/plugin/ansible/content/gx/collections/index/", 401, `"code":"not_authenticated"`},
		{"admin", "GET", api + "v3/plugin/ansible/content/gx/collections/index/cisco/iosxr/", 404, `"code":"not_found"`},
		{"admin", "GET", api + "v3/plugin/ansible/content/nope/collections/index/", 404, `"status":"404"`},
		{"admin", "POST", api + "v3/artifacts/collections/", 400, `"source":{"parameter":"file"}`},
	} {
		req, _ := http.NewRequest(tc.method, e.URL+tc.path, nil)
		if tc.method == "POST" {
			ct, body := contenttest.Multipart(map[string]string{"sha256": "x"}, "", "", nil)
			req, _ = http.NewRequest(tc.method, e.URL+tc.path, body)
			req.Header.Set("Content-Type", ct)
		}
		if tc.user != "" {
			req.SetBasicAuth(tc.user, "pw")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.want) || !strings.HasPrefix(string(b), `{"errors":[`) {
			t.Errorf("%s %s as %q: %d %s, want %d with %s", tc.method, tc.path, tc.user, resp.StatusCode, b, tc.code, tc.want)
		}
	}
	// A file not named namespace-name-version.tar.gz (pulp_ansible: a 500), and one
	// whose sha256 is not the one sent: 400s, nothing stored.
	units, blobs := e.Count("contents"), e.BlobCount()
	ct, body := publishBody(t, "collection.tar.gz", tarball(t, "foo-bar-1.0.0.tar.gz"))
	if code, m, _ := e.Do("POST", api+"v3/artifacts/collections/", ct, body); code != 400 || !strings.Contains(fmt.Sprint(m), "parameter:file") {
		t.Errorf("a file named collection.tar.gz: %d %v", code, m)
	}
	data := tarball(t, "foo-bar-1.0.0.tar.gz")
	sum := sha256.Sum256(data)
	ct, body = publishBody(t, "foo-bar-1.0.0.tar.gz", data)
	b, _ := io.ReadAll(body)
	b = bytes.Replace(b, []byte(hex.EncodeToString(sum[:])), []byte(strings.Repeat("0", 64)), 1)
	if code, m, _ := e.Do("POST", api+"v3/artifacts/collections/", ct, bytes.NewReader(b)); code != 400 {
		t.Errorf("a wrong sha256: %d %v", code, m)
	}
	if e.Count("contents") != units || e.BlobCount() != blobs {
		t.Errorf("refused publishes stored something: units %d → %d, blobs %d → %d", units, e.Count("contents"), blobs, e.BlobCount())
	}
}

// Galaxy namespaces: created and updated by tasks into the distribution's repository,
// listed and read from what it serves, deleted unless collections of theirs are served.
func TestGalaxyNamespaces(t *testing.T) {
	e := newEnv(t)
	galaxyDist(t, e, "gx")
	root := "/pulp_ansible/galaxy/gx/api/v3/plugin/ansible/content/gx/"
	ct, body := contenttest.Multipart(map[string]string{"name": "foo", "company": "Acme", "links": `{"name": "home", "url": "https://example.com"}`}, "", "", nil)
	code, m, _ := e.Do("POST", root+"namespaces/", ct, body)
	e.Done("namespace create", code, m)
	for _, bad := range []map[string]string{{"name": "x"}, {"name": "Foo"}, {"name": "a__b"}, {"name": "okay", "links": "{"}} {
		ct, body := contenttest.Multipart(bad, "", "", nil)
		if code, m, _ := e.Do("POST", root+"namespaces/", ct, body); code != 400 || m["errors"] == nil {
			t.Errorf("namespace %v: %d %v, want a 400 in Galaxy's shape", bad, code, m)
		}
	}
	ct, body = contenttest.Multipart(map[string]string{"description": "things"}, "", "", nil)
	code, m, _ = e.Do("PATCH", root+"namespaces/foo/", ct, body)
	e.Done("namespace update", code, m)
	code, ns, _ := e.Do("GET", root+"namespaces/foo/", "", nil)
	links, _ := ns["links"].([]any)
	if code != 200 || ns["company"] != "Acme" || ns["description"] != "things" || len(links) != 1 {
		t.Fatalf("namespace after update: %d %v", code, ns)
	}
	code, list, _ := e.Do("GET", "/pulp_ansible/galaxy/gx/api/v3/namespaces/?name=foo", "", nil)
	if code != 200 || list["count"] != 1.0 {
		t.Fatalf("namespaces list (legacy, redirected): %d %v", code, list)
	}

	publish(t, e, "/pulp_ansible/galaxy/gx/api/", "foo-bar-1.0.0.tar.gz")
	if code, m, _ := e.Do("DELETE", root+"namespaces/foo/", "", nil); code != 400 || !strings.Contains(fmt.Sprint(m), "still collections") {
		t.Fatalf("deleting a namespace with collections: %d %v", code, m)
	}
	code, v, _ := e.Do("GET", root+"collections/index/foo/bar/versions/1.0.0/", "", nil)
	if ms := v["namespace"].(map[string]any)["metadata_sha256"]; code != 200 || ms != ns["metadata_sha256"] {
		t.Fatalf("version's namespace metadata_sha256 %v, want %v", ms, ns["metadata_sha256"])
	}

	// An avatar: kept with the metadata, served by the content app of a distribution
	// serving it, anonymously.
	png := []byte("\x89PNG\r\n\x1a\n not really")
	ct, body = contenttest.Multipart(map[string]string{"name": "pic"}, "avatar", "logo.png", png)
	code, m, _ = e.Do("POST", root+"namespaces/", ct, body)
	e.Done("namespace with avatar", code, m)
	code, ns, _ = e.Do("GET", root+"namespaces/pic/", "", nil)
	avatar, _ := ns["avatar_url"].(string)
	if code != 200 || avatar == "" || ns["avatar_sha256"] == nil {
		t.Fatalf("namespace with avatar: %d %v", code, ns)
	}
	if code, m, _ := e.DoAs("", "", "GET", strings.TrimPrefix(avatar, e.URL), "", nil); code != 200 || m["_raw"] != string(png) {
		t.Fatalf("avatar %s: %d %v", avatar, code, m)
	}

	ct, body = contenttest.Multipart(map[string]string{"name": "empty"}, "", "", nil)
	code, m, _ = e.Do("POST", root+"namespaces/", ct, body)
	e.Done("namespace create", code, m)
	code, m, _ = e.Do("DELETE", root+"namespaces/empty/", "", nil)
	e.Done("namespace delete", code, m)
	if code, _, _ := e.Do("GET", root+"namespaces/empty/", "", nil); code != 404 {
		t.Fatalf("deleted namespace: %d", code)
	}
}

// The unpaged lists, the repository's metadata and the client configuration.
func TestGalaxyUnpagedAndConfiguration(t *testing.T) {
	e := newEnv(t)
	galaxyDist(t, e, "gx")
	api := "/pulp_ansible/galaxy/gx/api/"
	for _, f := range []string{"pulp-testing_asset-1.0.0.tar.gz", "pulp-testing_asset-1.0.1.tar.gz", "foo-bar-1.0.0.tar.gz"} {
		publish(t, e, api, f)
	}
	get := func(path string) any {
		t.Helper()
		req, _ := http.NewRequest("GET", e.URL+path, nil)
		req.SetBasicAuth("admin", "pw")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v any
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, err)
		}
		return v
	}
	content := api + "v3/plugin/ansible/content/gx/collections/"
	if all := get(content + "all-versions/").([]any); len(all) != 3 || all[0].(map[string]any)["manifest"] != nil || all[0].(map[string]any)["download_url"] == nil {
		t.Fatalf("all-versions: %v", all)
	}
	if all := get(content + "all-collections/?namespace=pulp").([]any); len(all) != 1 ||
		all[0].(map[string]any)["highest_version"].(map[string]any)["version"] != "1.0.1" {
		t.Fatalf("all-collections: %v", all)
	}
	// Deprecating a collection and taking it back, each a new repository version.
	for _, dep := range []bool{true, false} {
		code, m := e.JSON("PATCH", content+"index/foo/bar/", map[string]any{"deprecated": dep})
		e.Done("deprecate", code, m)
		if c := get(content + "index/foo/bar/").(map[string]any); c["deprecated"] != dep {
			t.Fatalf("after deprecated=%v: %v", dep, c)
		}
		if l := get(content + "index/?deprecated=true").(map[string]any); l["meta"].(map[string]any)["count"] != map[bool]float64{true: 1, false: 0}[dep] {
			t.Fatalf("deprecated=true list after deprecated=%v: %v", dep, l)
		}
	}
	if m := get(content).(map[string]any); m["published"] == nil {
		t.Fatalf("repository metadata: %v", m)
	}
	if m := get(api + "v3/plugin/ansible/client-configuration/").(map[string]any); m["default_distribution_path"] != "gx" {
		t.Fatalf("client configuration: %v", m)
	}
	if m := get("/pulp_ansible/galaxy/default/api/v3/plugin/ansible/client-configuration/").(map[string]any); m["default_distribution_path"] != nil {
		t.Fatalf("client configuration under default/: %v", m)
	}
}

// /pulp/api/v3/ansible/collections/ lists the collections of the stored versions, each
// readable at its href and holding object roles.
func TestCollectionObjects(t *testing.T) {
	e := newEnv(t)
	galaxyDist(t, e, "gx")
	for _, f := range []string{"pulp-testing_asset-1.0.0.tar.gz", "pulp-testing_asset-1.0.1.tar.gz", "foo-bar-1.0.0.tar.gz"} {
		publish(t, e, "/pulp_ansible/galaxy/gx/api/", f)
	}
	code, l, _ := e.Do("GET", "/pulp/api/v3/ansible/collections/?ordering=-name", "", nil)
	rs, _ := l["results"].([]any)
	if code != 200 || l["count"] != 2.0 || len(rs) != 2 || rs[0].(map[string]any)["name"] != "testing_asset" {
		t.Fatalf("collections: %d %v", code, l)
	}
	code, l, _ = e.Do("GET", "/pulp/api/v3/ansible/collections/?namespace=foo&name=bar", "", nil)
	if code != 200 || l["count"] != 1.0 {
		t.Fatalf("collections of foo.bar: %d %v", code, l)
	}
	code, v, _ := e.Do("GET", "/pulp_ansible/galaxy/gx/api/v3/plugin/ansible/content/gx/collections/index/foo/bar/versions/1.0.0/", "", nil)
	if code != 200 {
		t.Fatalf("version: %d %v", code, v)
	}
	h := "/pulp/api/v3/ansible/collections/" + v["collection"].(map[string]any)["id"].(string) + "/"
	if code, c, _ := e.Do("GET", h, "", nil); code != 200 || c["namespace"] != "foo" || c["name"] != "bar" {
		t.Fatalf("collection %s: %d %v", h, code, c)
	}
	// No built-in role fits a collection: a custom one with a collection permission.
	if code, m := e.JSON("POST", "/pulp/api/v3/roles/", map[string]any{"name": "collection-viewer", "permissions": []string{"ansible.view_collection"}}); code != 201 {
		t.Fatalf("role: %d %v", code, m)
	}
	if code, m := e.JSON("POST", "/pulp/api/v3/users/", map[string]any{"username": "bob", "password": "bob has a long password"}); code != 201 {
		t.Fatalf("user: %d %v", code, m)
	}
	if code, m := e.JSON("POST", h+"add_role/", map[string]any{"role": "collection-viewer", "users": []string{"bob"}}); code != 201 {
		t.Fatalf("add_role: %d %v", code, m)
	}
	if code, m, _ := e.Do("GET", h+"list_roles/", "", nil); code != 200 || len(m["roles"].([]any)) != 1 {
		t.Fatalf("list_roles: %d %v", code, m)
	}
	if code, m := e.JSON("POST", h+"remove_role/", map[string]any{"role": "collection-viewer", "users": []string{"bob"}}); code != 201 {
		t.Fatalf("remove_role: %d %v", code, m)
	}
	if code, m, _ := e.Do("GET", h+"list_roles/", "", nil); code != 200 || len(m["roles"].([]any)) != 0 {
		t.Fatalf("list_roles after remove_role: %d %v", code, m)
	}
	if code, _, _ := e.Do("GET", "/pulp/api/v3/ansible/collections/?ordering=bogus", "", nil); code != 400 {
		t.Fatalf("a bad ordering: %d", code)
	}
}

// The cross-repository search sees what every distribution serves, with its filters.
func TestGalaxySearch(t *testing.T) {
	e := newEnv(t)
	galaxyDist(t, e, "one")
	galaxyDist(t, e, "two")
	for _, f := range []string{"pulp-testing_asset-1.0.0.tar.gz", "pulp-testing_asset-1.0.1.tar.gz"} {
		publish(t, e, "/pulp_ansible/galaxy/one/api/", f)
	}
	publish(t, e, "/pulp_ansible/galaxy/two/api/", "foo-bar-1.0.0.tar.gz")
	search := "/pulp_ansible/galaxy/default/api/v3/plugin/ansible/search/collection-versions/"
	for q, want := range map[string]float64{
		"": 3, "?distribution_base_path=one": 2, "?is_highest=true": 2, "?namespace=pulp&version=1.0.0": 1,
		"?repository_name=two": 1, "?version_range=>=1.0.1": 1, "?keywords=bar": 1, "?is_signed=true": 0, "?is_signed=maybe": 3,
	} {
		code, m, _ := e.Do("GET", search+q, "", nil)
		if code != 200 || m["meta"].(map[string]any)["count"] != want {
			t.Errorf("search %s: %d %v, want %v results", q, code, m, want)
		}
	}
	code, m, _ := e.Do("GET", search+"?order_by=-version&namespace=pulp", "", nil)
	if data, _ := m["data"].([]any); code != 200 || len(data) != 2 || data[0].(map[string]any)["collection_version"].(map[string]any)["version"] != "1.0.1" {
		t.Fatalf("ordered by -version: %d %v", code, m)
	}
	for _, q := range []string{"?order_by=bogus", "?version_range=%3E%3D"} {
		if code, m, _ := e.Do("GET", search+q, "", nil); code != 400 {
			t.Errorf("search %s: %d %v, want 400", q, code, m)
		}
	}
	if code, _, _ := e.DoAs("", "", "GET", search, "", nil); code != 401 {
		t.Errorf("anonymous search: %d, want 401", code)
	}
}

// Deleting through Galaxy: refused while another collection needs the version (no other
// version in its range), else the version leaves the repository and the database.
func TestGalaxyDelete(t *testing.T) {
	e := newEnv(t)
	galaxyDist(t, e, "gx")
	api := "/pulp_ansible/galaxy/gx/api/"
	for _, f := range []string{"ansible-utils-2.7.0.tar.gz", "ansible-netcommon-4.1.0.tar.gz", "pulp-testing_asset-1.0.0.tar.gz", "pulp-testing_asset-1.0.1.tar.gz"} {
		publish(t, e, api, f)
	}
	index := api + "v3/plugin/ansible/content/gx/collections/index/"
	code, m, _ := e.Do("DELETE", index+"ansible/utils/versions/2.7.0/", "", nil)
	if deps, _ := m["dependent_collection_versions"].([]any); code != 400 || len(deps) != 1 || deps[0] != "ansible.netcommon 4.1.0" {
		t.Fatalf("deleting a version another needs: %d %v", code, m)
	}
	if code, m, _ := e.Do("DELETE", index+"ansible/utils/", "", nil); code != 400 || m["dependent_collection_versions"] == nil {
		t.Fatalf("deleting a collection another needs: %d %v", code, m)
	}
	units := e.Count("contents")
	code, m, _ = e.Do("DELETE", index+"pulp/testing_asset/versions/1.0.0/", "", nil)
	e.Done("delete version", code, m)
	if code, _, _ := e.Do("GET", index+"pulp/testing_asset/versions/1.0.0/", "", nil); code != 404 {
		t.Fatalf("deleted version: %d", code)
	}
	if n := e.Count("contents"); n != units-1 {
		t.Fatalf("%d units after the delete, want %d", n, units-1)
	}
	code, m, _ = e.Do("DELETE", index+"ansible/netcommon/", "", nil)
	e.Done("delete collection", code, m)
	code, m, _ = e.Do("DELETE", index+"ansible/utils/", "", nil)
	e.Done("delete the collection no longer needed", code, m)
	code, l, _ := e.Do("GET", index, "", nil)
	if code != 200 || l["meta"].(map[string]any)["count"] != 1.0 {
		t.Fatalf("collections after the deletes: %d %v", code, l)
	}
}

// Publishing needs the model-level ansible.add_collection that pulp_ansible's policy
// asks: a repository's owner may not, a user holding it may.
func TestGalaxyPublishPermission(t *testing.T) {
	e := newEnv(t)
	repo := galaxyDist(t, e, "gx")
	const pw = "bob has a long password"
	code, user := e.JSON("POST", "/pulp/api/v3/users/", map[string]any{"username": "bob", "password": pw})
	if code != 201 {
		t.Fatalf("user: %d %v", code, user)
	}
	if code, m := e.JSON("POST", repo+"add_role/", map[string]any{"role": "ansible.ansiblerepository_owner", "users": []string{"bob"}}); code != 201 {
		t.Fatalf("add_role: %d %v", code, m)
	}
	try := func() (int, map[string]any) {
		ct, body := publishBody(t, "foo-bar-1.0.0.tar.gz", tarball(t, "foo-bar-1.0.0.tar.gz"))
		code, m, _ := e.DoAs("bob", pw, "POST", "/pulp_ansible/galaxy/gx/api/v3/artifacts/collections/", ct, body)
		return code, m
	}
	if code, m := try(); code != 403 || m["errors"] == nil {
		t.Fatalf("publish as the repository's owner: %d %v, want 403 in Galaxy's shape", code, m)
	}
	if code, m := e.JSON("POST", "/pulp/api/v3/roles/", map[string]any{"name": "publisher", "permissions": []string{"ansible.add_collection"}}); code != 201 {
		t.Fatalf("role: %d %v", code, m)
	}
	if code, m := e.JSON("POST", user["pulp_href"].(string)+"roles/", map[string]any{"role": "publisher", "content_object": nil}); code != 201 {
		t.Fatalf("assign: %d %v", code, m)
	}
	code, m := try()
	e.Done("publish with ansible.add_collection", code, m)
}

// The versions list: newest first from the index, filtered and ordered through the
// database.
func TestGalaxyVersionsList(t *testing.T) {
	e := newEnv(t)
	galaxyDist(t, e, "gx")
	api := "/pulp_ansible/galaxy/gx/api/"
	for _, f := range []string{"pulp-testing_asset-1.0.1.tar.gz", "pulp-testing_asset-1.0.0.tar.gz"} {
		publish(t, e, api, f)
	}
	list := api + "v3/plugin/ansible/content/gx/collections/index/pulp/testing_asset/versions/"
	for q, want := range map[string][]string{
		"":                           {"1.0.0", "1.0.1"}, // newest upload first
		"?ordering=version":          {"1.0.0", "1.0.1"},
		"?ordering=-version":         {"1.0.1", "1.0.0"},
		"?version=1.0.1":             {"1.0.1"},
		"?limit=1&offset=1":          {"1.0.1"},
		"?ordering=-version&limit=1": {"1.0.1"},
	} {
		code, m, _ := e.Do("GET", list+q, "", nil)
		var got []string
		for _, d := range m["data"].([]any) {
			got = append(got, d.(map[string]any)["version"].(string))
		}
		if code != 200 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("versions%s: %d %v, want %v", q, code, got, want)
		}
	}
	if code, m, _ := e.Do("GET", list+"?ordering=bogus", "", nil); code != 400 || m["errors"] == nil {
		t.Errorf("a bad ordering: %d %v", code, m)
	}
}

// A private repository's Galaxy reads need ansible.view_ansiblerepository (on the model
// or the repository); a public one's any authenticated user may read.
func TestGalaxyPrivateRepository(t *testing.T) {
	e := newEnv(t)
	repo := galaxyDist(t, e, "gx")
	for _, u := range []string{"bob", "carol"} {
		if code, m := e.JSON("POST", "/pulp/api/v3/users/", map[string]any{"username": u, "password": u + " has a long password"}); code != 201 {
			t.Fatalf("user %s: %d %v", u, code, m)
		}
	}
	if code, m := e.JSON("POST", repo+"add_role/", map[string]any{"role": "ansible.ansiblerepository_viewer", "users": []string{"bob"}}); code != 201 {
		t.Fatalf("add_role: %d %v", code, m)
	}
	index := "/pulp_ansible/galaxy/gx/api/v3/plugin/ansible/content/gx/collections/index/"
	read := func(u string) int {
		code, _, _ := e.DoAs(u, u+" has a long password", "GET", index, "", nil)
		return code
	}
	if a, b := read("bob"), read("carol"); a != 200 || b != 200 {
		t.Fatalf("public repository: bob %d, carol %d; want 200 for both", a, b)
	}
	code, m := e.JSON("PATCH", repo, map[string]any{"private": true})
	e.Done("make private", code, m)
	if a, b := read("bob"), read("carol"); a != 200 || b != 403 {
		t.Fatalf("private repository: bob %d, carol %d; want 200 and 403", a, b)
	}
}

// A distribution behind a content_redirect guard: the download redirect is signed, so
// the client fetches without credentials, as ansible-galaxy does.
func TestGalaxyDownloadPreauthenticated(t *testing.T) {
	e := newEnv(t)
	galaxyDist(t, e, "gx")
	publish(t, e, "/pulp_ansible/galaxy/gx/api/", "foo-bar-1.0.0.tar.gz")
	_, g := e.JSON("POST", "/pulp/api/v3/contentguards/core/content_redirect/", map[string]any{"name": "signed"})
	_, dl := e.JSON("GET", "/pulp/api/v3/distributions/ansible/ansible/?base_path=gx", nil)
	code, m := e.JSON("PATCH", dl["results"].([]any)[0].(map[string]any)["pulp_href"].(string), map[string]any{"content_guard": g["pulp_href"]})
	e.Done("guard", code, m)
	if code, _, _ := e.DoAs("", "", "GET", "/pulp/content/gx/foo-bar-1.0.0.tar.gz", "", nil); code != 403 {
		t.Fatalf("unsigned content URL: %d, want 403", code)
	}
	req, _ := http.NewRequest("GET", e.URL+"/pulp_ansible/galaxy/default/api/v3/plugin/ansible/content/gx/collections/artifacts/foo-bar-1.0.0.tar.gz", nil)
	req.SetBasicAuth("admin", "pw")
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 302 || !strings.Contains(loc, "validate_token=") {
		t.Fatalf("download: %d to %q", resp.StatusCode, loc)
	}
	if code, m, _ := e.DoAs("", "", "GET", strings.TrimPrefix(loc, e.URL), "", nil); code != 200 || m["_raw"] != string(tarball(t, "foo-bar-1.0.0.tar.gz")) {
		t.Fatalf("signed download: %d", code)
	}
}

// The v1 roles API ansible-galaxy role install uses: anonymous, pulpcore's pages, the
// owner and name matched without regard to case, each version's archive in the content
// app; in the shapes of pulp_ansible's.
func TestGalaxyV1Roles(t *testing.T) {
	g := testgalaxy.New(t, testgalaxy.Config{Roles: []testgalaxy.Role{{Namespace: "specorg", Name: "webserver", Versions: []string{"1.0.0", "1.1.0"}},
		{Namespace: "specorg", Name: "db", Versions: []string{"2.0.0"}}}})
	e := roleEnv(t, g.URL)
	repo := newRepo(t, e, "roles1")
	remote := roleRemote(t, e, "galaxy", g.API+"v1/roles/", "immediate")
	if tk := syncRoles(t, e, repo, remote, false); tk["state"] != "completed" {
		t.Fatalf("sync: %v %v", tk["state"], tk["error"])
	}
	code, m := e.JSON("POST", "/pulp/api/v3/distributions/ansible/ansible/", map[string]any{"name": "roles1", "base_path": "roles1", "repository": repo})
	e.Done("distribution", code, m)
	api := "/pulp_ansible/galaxy/roles1/api/v1/roles/"
	code, roles, _ := e.DoAs("", "", "GET", api+"?owner__username=SpecOrg&name=WebServer", "", nil)
	if code != 200 || roles["count"] != 1.0 {
		t.Fatalf("roles: %d %v", code, roles)
	}
	code, vs, _ := e.DoAs("", "", "GET", api+"specorg.webserver/versions/?page_size=50", "", nil)
	rs, _ := vs["results"].([]any)
	if code != 200 || len(rs) != 2 {
		t.Fatalf("role versions: %d %v", code, vs)
	}
	src := rs[1].(map[string]any)["source"].(string)
	if code, m, _ := e.DoAs("", "", "GET", strings.TrimPrefix(src, e.URL), "", nil); code != 200 || len(fmt.Sprint(m["_raw"])) == 0 {
		t.Fatalf("archive %s: %d", src, code)
	}
	checkShape(t, "galaxy-v1-roles.json", roles)
	checkShape(t, "galaxy-v1-role-versions.json", vs)
	if code, m, _ := e.DoAs("", "", "GET", "/pulp_ansible/galaxy/nope/api/v1/roles/", "", nil); code != 404 || m["detail"] == nil {
		t.Errorf("roles of an unknown distribution: %d %v", code, m)
	}
	if code, _, _ := e.DoAs("", "", "GET", api+"webserver/versions/", "", nil); code != 400 {
		t.Errorf("a role id without a dot: %d, want 400", code)
	}
}
