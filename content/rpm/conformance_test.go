package rpm_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"pith/content/contenttest"
	"pith/content/rpm"
	"pith/meta"
)

// twins uploads two builds of one package (empty-0-0.x86_64: unsigned, and signed with
// RSA), which share a NEVRA.
func twins(e *contenttest.Env) (string, string) {
	var hrefs []string
	for _, name := range []string{"empty-0-0.x86_64.rpm", "empty-signed-rsa-0-0.x86_64.rpm"} {
		b, err := os.ReadFile(filepath.Join(data, "rpm-edge-cases", "packages", name))
		if err != nil {
			e.T.Fatal(err)
		}
		ct, body := contenttest.Multipart(nil, "file", name, b)
		code, m, _ := e.Do("POST", "/pulp/api/v3/content/rpm/packages/upload/", ct, body)
		if code != 201 {
			e.T.Fatalf("upload %s: %d %v", name, code, m)
		}
		hrefs = append(hrefs, m["pulp_href"].(string))
	}
	return hrefs[0], hrefs[1]
}

func TestConformance(t *testing.T) {
	contenttest.Run(t, contenttest.Fixture{Types: []contenttest.Maker{contenttest.Type(rpm.New)}, Repository: rpm.RepoType,
		Upstream: http.FileServerFS(os.DirFS(data)), RemotePath: "yum-katello/zoo/", Index: []string{"repodata/repomd.xml", ".treeinfo", "treeinfo"},
		Present: map[string]int{rpm.AdvisoryType: 7, rpm.DistributionTreeType: 1, rpm.ModulemdType: 6, rpm.DefaultsType: 3,
			rpm.PackageType: 20, rpm.CategoryType: 1, rpm.EnvironmentType: 1, rpm.GroupType: 2, rpm.RepoMetadataFileType: 1},
		Twins: twins, Examples: examples,
		RemoteBodies: map[string]map[string]any{rpm.ULNRemoteType: {"url": "uln://ol9_x86_64", "username": "me", "password": "s3cret-pw", "uln_server_base_url": "http://127.0.0.1:9/"}}})
}

// langpacks is a comps.xml with a group and langpacks (the test data has none).
const langpacks = `<?xml version="1.0" encoding="UTF-8"?>
<comps>
  <group><id>schema</id><name>Schema</name><packagelist><packagereq>walrus</packagereq></packagelist></group>
  <langpacks><match install="walrus-%s" name="walrus"/></langpacks>
</comps>
`

// examples are requests of the rpm type's own operations for the schema check.
var examples = map[string]contenttest.Example{
	"content_rpm_packages_create": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
		ct, body := contenttest.Multipart(map[string]string{"repository": refs.Repository}, "file", "p.rpm", zooFile(e, "walrus-0.71-1.noarch.rpm"))
		return "POST", "/pulp/api/v3/content/rpm/packages/", ct, body
	},
	"content_rpm_packages_upload": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
		ct, body := contenttest.Multipart(nil, "file", "p.rpm", zooFile(e, "lion-0.3-0.8.noarch.rpm"))
		return "POST", "/pulp/api/v3/content/rpm/packages/upload/", ct, body
	},
	"content_rpm_advisories_create": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
		adv := `{"id": "PITH-SCHEMA:1", "updated": "2026-11-23 00:00:00", "issued": "2026-11-22 00:00:00", "type": "bugfix", "title": "t"}`
		ct, body := contenttest.Multipart(map[string]string{"repository": refs.Repository}, "file", "a.json", []byte(adv))
		return "POST", "/pulp/api/v3/content/rpm/advisories/", ct, body
	},
	"content_rpm_modulemds_create": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
		mod, _, _ := moduleBodies(e.T)
		ct, body := contenttest.JSONBody(mod)
		return "POST", "/pulp/api/v3/content/rpm/modulemds/", ct, body
	},
	"content_rpm_modulemd_defaults_create": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
		_, def, _ := moduleBodies(e.T)
		ct, body := contenttest.JSONBody(def)
		return "POST", "/pulp/api/v3/content/rpm/modulemd_defaults/", ct, body
	},
	"content_rpm_modulemd_obsoletes_create": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
		_, _, obs := moduleBodies(e.T)
		ct, body := contenttest.JSONBody(with(obs, "repository", refs.Repository))
		return "POST", "/pulp/api/v3/content/rpm/modulemd_obsoletes/", ct, body
	},
	"rpm_comps_upload": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
		ct, body := contenttest.Multipart(map[string]string{"repository": refs.Repository}, "file", "comps.xml", []byte(langpacks))
		return "POST", "/pulp/api/v3/rpm/comps/", ct, body
	},
	"copy_content_2": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
		code, dest := e.JSON("POST", "/pulp/api/v3/repositories/rpm/rpm/", map[string]any{"name": "copy-destination-" + meta.NewID()})
		if code != 201 {
			e.T.Fatalf("destination: %d %v", code, dest)
		}
		ct, body := contenttest.JSONBody(map[string]any{"dependency_solving": false,
			"config": []map[string]any{{"source_repo_version": refs.Version, "dest_repo": dest["pulp_href"]}}})
		return "POST", "/pulp/api/v3/rpm/copy/", ct, body
	},
	"rpm_prune_prune_packages": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
		ct, body := contenttest.JSONBody(map[string]any{"repo_hrefs": []string{refs.Repository}, "keep_days": 0, "dry_run": true})
		return "POST", "/pulp/api/v3/rpm/prune/", ct, body
	},
}

// zooFile reads a file of the zoo repository.
func zooFile(e *contenttest.Env, name string) []byte {
	b, err := os.ReadFile(filepath.Join(data, "yum-katello", "zoo", name))
	if err != nil {
		e.T.Fatal(err)
	}
	return b
}
