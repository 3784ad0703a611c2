package ansible_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"pith/content/contenttest"
)

// shapeDiff lists where got's shape differs from want's: object keys missing or extra,
// values of another JSON type (null matches anything), arrays compared by their first
// items. Maps whose keys are data (dependencies, labels) are compared as objects only.
func shapeDiff(want, got any, at string) []string {
	if strings.HasSuffix(at, ".dependencies") || strings.HasSuffix(at, ".pulp_labels") {
		if _, ok := got.(map[string]any); !ok {
			return []string{fmt.Sprintf("%s: want an object, got %T", at, got)}
		}
		return nil
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %T", at, got)}
		}
		var out []string
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				out = append(out, at+"."+k+": missing")
				continue
			}
			out = append(out, shapeDiff(w[k], gv, at+"."+k)...)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				out = append(out, at+"."+k+": not in pulp_ansible's answer")
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an array, got %T", at, got)}
		}
		if len(w) > 0 && len(g) > 0 {
			return shapeDiff(w[0], g[0], at+"[0]")
		}
		return nil
	case nil:
		return nil
	default:
		if got != nil && fmt.Sprintf("%T", want) != fmt.Sprintf("%T", got) {
			return []string{fmt.Sprintf("%s: want %T, got %T", at, want, got)}
		}
		return nil
	}
}

// The Galaxy answers have the shapes of pulp_ansible's, captured in testdata/pulp.
func TestGalaxyGoldenShapes(t *testing.T) {
	e := newEnv(t)
	key := testKey(t)
	code, repo := e.JSON("POST", "/pulp/api/v3/repositories/ansible/ansible/", map[string]any{"name": "ans1", "gpgkey": key.PublicKey()})
	if code != 201 {
		t.Fatalf("repository: %d %v", code, repo)
	}
	code, m := e.JSON("POST", "/pulp/api/v3/distributions/ansible/ansible/", map[string]any{"name": "ans1", "base_path": "ans1", "repository": repo["pulp_href"]})
	e.Done("distribution", code, m)
	api := "/pulp_ansible/galaxy/ans1/api/"
	content := api + "v3/plugin/ansible/content/ans1/"
	ct, body := contenttest.Multipart(map[string]string{"name": "cisco", "company": "Cisco"}, "", "", nil)
	code, m, _ = e.Do("POST", content+"namespaces/", ct, body)
	e.Done("namespace", code, m)
	var lastImport map[string]any
	for _, f := range []string{"ansible-utils-2.7.0.tar.gz", "ansible-netcommon-4.1.0.tar.gz", "cisco-iosxr-4.0.2.tar.gz"} {
		lastImport = publish(t, e, api, f)
	}
	_, l, _ := e.Do("GET", "/pulp/api/v3/content/ansible/collection_versions/?name=iosxr", "", nil)
	cv := l["results"].([]any)[0].(map[string]any)["pulp_href"].(string)
	sig, err := key.Detach(bytes.NewReader(manifestOf(t, "cisco-iosxr-4.0.2.tar.gz")))
	if err != nil {
		t.Fatal(err)
	}
	ct, body = contenttest.Multipart(map[string]string{"signed_collection": cv, "repository": repo["pulp_href"].(string)}, "file", "MANIFEST.json.asc", sig)
	code, m, _ = e.Do("POST", "/pulp/api/v3/content/ansible/collection_signatures/", ct, body)
	e.Done("signature", code, m)

	get := func(user, path string) any {
		t.Helper()
		req, _ := http.NewRequest("GET", e.URL+path, nil)
		if user != "" {
			req.SetBasicAuth(user, "pw")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		return v
	}
	idx := content + "collections/index/cisco/iosxr/"
	for file, got := range map[string]any{
		"galaxy-api-root.json":                     get("", api),
		"galaxy-api-root-default.json":             get("", "/pulp_ansible/galaxy/default/api/"),
		"galaxy-repo-metadata.json":                get("admin", content+"collections/"),
		"galaxy-collections-list.json":             get("admin", content+"collections/index/?limit=2"),
		"galaxy-collection-detail.json":            get("admin", idx),
		"galaxy-versions-list.json":                get("admin", idx+"versions/"),
		"galaxy-version-detail.json":               get("admin", idx+"versions/4.0.2/"),
		"galaxy-docs-blob.json":                    get("admin", idx+"versions/4.0.2/docs-blob/"),
		"galaxy-all-collections.json":              get("admin", content+"collections/all-collections/"),
		"galaxy-all-versions.json":                 get("admin", content+"collections/all-versions/"),
		"galaxy-client-configuration.json":         get("admin", api+"v3/plugin/ansible/client-configuration/"),
		"galaxy-client-configuration-default.json": get("admin", "/pulp_ansible/galaxy/default/api/v3/plugin/ansible/client-configuration/"),
		"galaxy-namespaces-list.json":              get("admin", content+"namespaces/"),
		"galaxy-search-collection-versions.json":   get("admin", "/pulp_ansible/galaxy/default/api/v3/plugin/ansible/search/collection-versions/?limit=2"),
		"galaxy-import-completed.json":             lastImport,
		"galaxy-error-401.json":                    get("", content+"collections/index/"),
		"galaxy-error-404.json":                    get("admin", idx+"versions/9.9.9/"),
		"pulp-ansible-collections-list.json":       get("admin", "/pulp/api/v3/ansible/collections/"),
	} {
		checkShape(t, file, got)
	}
}

// checkShape fails the test where got's shape differs from the captured answer's in
// testdata/pulp/file.
func checkShape(t *testing.T, file string, got any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "pulp", file))
	if err != nil {
		t.Fatal(err)
	}
	var want any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	// got as JSON decodes it, whatever its Go type.
	raw, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var g any
	json.Unmarshal(raw, &g)
	for _, d := range shapeDiff(want, g, file) {
		t.Error(d)
	}
}
