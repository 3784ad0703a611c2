package ansible_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"pith/content"
	"pith/content/ansible"
	"pith/content/contenttest"
	"pith/internal/testgalaxy"
	"pith/meta"
	"pith/sign"
)

// conformanceCollections are the test data's collections the fixture Galaxy serves.
var conformanceCollections = []string{"pulp-testing_asset-1.0.0.tar.gz", "pulp-testing_asset-1.0.1.tar.gz", "foo-bar-1.0.0.tar.gz"}

func TestConformance(t *testing.T) {
	g := testgalaxy.New(t, testgalaxy.Config{})
	for _, f := range conformanceCollections {
		if _, err := g.AddCollection(tarball(t, f)); err != nil {
			t.Fatal(err)
		}
	}
	key := testKey(t)
	if err := g.Sign("pulp", "testing_asset", "1.0.0", key); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(g.URL)
	if err != nil {
		t.Fatal(err)
	}
	// The suite's fixture servers pass requests on to the Galaxy, which runs on its own
	// (its download URLs name it: artifacts come from it directly, even in the failed
	// sync, which fails on a version's detail instead).
	contenttest.Run(t, contenttest.Fixture{Types: []contenttest.Maker{signing(key)}, Repository: ansible.RepoType, Remote: ansible.CollectionRemoteType,
		Upstream: httputil.NewSingleHostReverseProxy(u), RemotePath: "api/", Index: index,
		Present: map[string]int{ansible.CollectionVersionType: len(conformanceCollections), ansible.SignatureType: 1},
		Twins:   twins, Examples: examples(key), Seed: seed, Elsewhere: galaxyOperation,
		Vars: func(*contenttest.Env, contenttest.Refs) map[string]string {
			return map[string]string{"ansible_collection_href": "/pulp/api/v3/ansible/collections/" + ansible.CollectionID("pulp", "testing_asset") + "/"}
		}})
}

// galaxyOperation reports whether an operation is one galaxy_test.go,
// galaxy_shapes_test.go and the e2e ansible-galaxy scenario exercise instead of the
// suite: the Galaxy API's, a namespace's avatar (only the Galaxy API stores one), and a
// collection's add_role and remove_role (no built-in role fits a collection).
func galaxyOperation(id string) bool {
	return strings.HasPrefix(id, "pulp_ansible_galaxy_") || strings.HasPrefix(id, "api_v1_roles_") ||
		strings.HasPrefix(id, "api_v3_plugin_ansible_search_") || id == "collection_import_read" ||
		id == "content_ansible_namespaces_avatar" || id == "ansible_collections_add_role" || id == "ansible_collections_remove_role"
}

// seed stores a namespace, which only the Galaxy API makes, in the repository.
func seed(e *contenttest.Env, refs contenttest.Refs) {
	ns, _, err := meta.PutContent(context.Background(), e.DB, ansible.NamespaceUnit("schema", "made by the conformance suite"), nil)
	if err != nil {
		e.T.Fatal(err)
	}
	code, m := e.JSON("POST", refs.Repository+"modify/", map[string]any{"add_content_units": []string{"/pulp/api/v3/content/ansible/namespaces/" + ns.PulpID + "/"}})
	e.Done("add the namespace", code, m)
}

// index is what a broken upstream still serves: the whole API a sync walks but the
// detail of foo.bar 1.0.0, so the sync has read the other versions when it fails.
var index = []string{"", "v3/", "v3/excludes/", "v3/collection_versions/all/", "v3/collections/",
	"v3/collections/pulp/testing_asset/versions/", "v3/collections/pulp/testing_asset/versions/1.0.0/",
	"v3/collections/pulp/testing_asset/versions/1.0.1/", "v3/collections/foo/bar/versions/"}

// signing makes the ansible type with key behind a signing service named "collections".
func signing(key *sign.Signer) contenttest.Maker {
	return func(c *content.Core) content.Type {
		p := ansible.New(c)
		svc, err := meta.PutSigningService(context.Background(), c.DB, meta.SigningService{Name: "collections", PublicKey: key.PublicKey(),
			Fingerprint: key.Fingerprint(), Script: "test"})
		if err != nil {
			panic(err) // a fresh test database refuses nothing
		}
		p.SetSigner(svc.PulpID, key)
		return p
	}
}

// seq makes the names of what examples create unique within a test environment.
var seq atomic.Int64

// unique is a collection name nothing else uses.
func unique(what string) string { return fmt.Sprintf("%s_%d", what, seq.Add(1)) }

// twins uploads two builds of one collection version (the same namespace, name and
// version, different artifacts).
func twins(e *contenttest.Env) (string, string) {
	var hrefs []string
	for _, deps := range []map[string]string{nil, {"pulp.testing_asset": ">=1.0.0"}} {
		hrefs = append(hrefs, uploadBytes(e, "", newCollection(e, "twin", "same", deps)))
	}
	return hrefs[0], hrefs[1]
}

// built is a collection artifact and its file name.
type built struct {
	name     string
	artifact []byte
}

// newCollection builds version 1.0.0 of a collection.
func newCollection(e *contenttest.Env, ns, name string, deps map[string]string) built {
	return built{ns + "-" + name + "-1.0.0.tar.gz", buildCollection(e.T, ns, name, "1.0.0", deps)}
}

// uploadBytes imports a collection, into repo when it is set, and returns the
// collection version's href.
func uploadBytes(e *contenttest.Env, repo string, c built) string {
	e.T.Helper()
	fields := map[string]string{}
	if repo != "" {
		fields["repository"] = repo
	}
	ct, body := contenttest.Multipart(fields, "file", c.name, c.artifact)
	code, m, _ := e.Do("POST", "/pulp/api/v3/content/ansible/collection_versions/", ct, body)
	tk := e.Done("upload", code, m)
	for _, h := range tk["created_resources"].([]any) {
		if strings.Contains(h.(string), "/collection_versions/") {
			return h.(string)
		}
	}
	e.T.Fatalf("the upload created %v: no collection version", tk["created_resources"])
	return ""
}

// firstCV is a collection version of a repository version.
func firstCV(e *contenttest.Env, version string) string {
	e.T.Helper()
	code, m, _ := e.Do("GET", "/pulp/api/v3/content/ansible/collection_versions/?limit=1&repository_version="+version, "", nil)
	rs, _ := m["results"].([]any)
	if code != 200 || len(rs) == 0 {
		e.T.Fatalf("collection versions of %s: %d %v", version, code, m)
	}
	return rs[0].(map[string]any)["pulp_href"].(string)
}

// repository makes a repository with extra settings and returns its href.
func repository(e *contenttest.Env, extra map[string]any) string {
	e.T.Helper()
	body := map[string]any{"name": unique("repo")}
	for k, v := range extra {
		body[k] = v
	}
	code, m := e.JSON("POST", "/pulp/api/v3/repositories/ansible/ansible/", body)
	if code != 201 {
		e.T.Fatalf("repository: %d %v", code, m)
	}
	return m["pulp_href"].(string)
}

// serviceHref is the href of the signing service signing() made.
func serviceHref(e *contenttest.Env) string {
	code, m, _ := e.Do("GET", "/pulp/api/v3/signing-services/?name=collections", "", nil)
	rs, _ := m["results"].([]any)
	if code != 200 || len(rs) != 1 {
		e.T.Fatalf("signing service: %d %v", code, m)
	}
	return rs[0].(map[string]any)["pulp_href"].(string)
}

func jsonReq(method, path string, v any) (string, string, string, io.Reader) {
	ct, body := contenttest.JSONBody(v)
	return method, path, ct, body
}

// examples are requests of the ansible type's own Pulp API operations.
func examples(key *sign.Signer) map[string]contenttest.Example {
	copyMove := func(action string) contenttest.Example {
		return func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
			src := repository(e, nil)
			cv := uploadBytes(e, src, newCollection(e, "schema", unique(action), nil))
			return jsonReq("POST", src+action+"/", map[string]any{"collection_versions": []string{cv}, "destination_repositories": []string{repository(e, nil)}})
		}
	}
	return map[string]contenttest.Example{
		"content_ansible_collection_versions_create": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
			c := newCollection(e, "schema", unique("created"), nil)
			ct, body := contenttest.Multipart(map[string]string{"repository": refs.Repository}, "file", c.name, c.artifact)
			return "POST", "/pulp/api/v3/content/ansible/collection_versions/", ct, body
		},
		"upload_collection": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
			c := newCollection(e, "schema", unique("uploaded"), nil)
			ct, body := contenttest.Multipart(nil, "file", c.name, c.artifact)
			return "POST", "/ansible/collections/", ct, body // no /pulp/api/v3/ in front, as on Pulp
		},
		"content_ansible_collection_signatures_create": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
			repo := repository(e, map[string]any{"gpgkey": key.PublicKey()})
			c := newCollection(e, "schema", unique("signed"), nil)
			cv := uploadBytes(e, repo, c)
			sig, err := key.Detach(bytes.NewReader(manifestOfBytes(e.T, c.artifact)))
			if err != nil {
				e.T.Fatal(err)
			}
			ct, body := contenttest.Multipart(map[string]string{"signed_collection": cv, "repository": repo}, "file", "MANIFEST.json.asc", sig)
			return "POST", "/pulp/api/v3/content/ansible/collection_signatures/", ct, body
		},
		"content_ansible_collection_deprecations_create": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
			return jsonReq("POST", "/pulp/api/v3/content/ansible/collection_deprecations/",
				map[string]any{"namespace": "schema", "name": unique("deprecated"), "repository": refs.Repository})
		},
		"content_ansible_collection_marks_create": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
			return jsonReq("POST", "/pulp/api/v3/content/ansible/collection_marks/",
				map[string]any{"marked_collection": firstCV(e, refs.Version), "value": strings.ReplaceAll(unique("mark"), "_", "-")})
		},
		"content_ansible_roles_create": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
			ct, body := contenttest.Multipart(nil, "file", "role.tar.gz", []byte("a role archive "+unique("role")))
			code, art, _ := e.Do("POST", "/pulp/api/v3/artifacts/", ct, body)
			if code != 201 {
				e.T.Fatalf("artifact: %d %v", code, art)
			}
			return jsonReq("POST", "/pulp/api/v3/content/ansible/roles/",
				map[string]any{"artifact": art["pulp_href"], "namespace": "schema", "name": unique("role"), "version": "1.0.0"})
		},
		"repositories_ansible_ansible_copy_collection_version": copyMove("copy_collection_version"),
		"repositories_ansible_ansible_move_collection_version": copyMove("move_collection_version"),
		"repositories_ansible_ansible_mark": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
			return jsonReq("POST", refs.Repository+"mark/", map[string]any{"content_units": []string{"*"}, "value": "marked"})
		},
		"repositories_ansible_ansible_unmark": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
			return jsonReq("POST", refs.Repository+"unmark/", map[string]any{"content_units": []string{"*"}, "value": "marked"})
		},
		"repositories_ansible_ansible_sign": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
			return jsonReq("POST", refs.Repository+"sign/", map[string]any{"content_units": []string{"*"}, "signing_service": serviceHref(e)})
		},
		"repositories_ansible_ansible_rebuild_metadata": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
			return jsonReq("POST", refs.Repository+"rebuild_metadata/", map[string]any{"namespace": "pulp"})
		},
		"repositories_ansible_ansible_versions_rebuild_metadata": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
			return jsonReq("POST", refs.Version+"rebuild_metadata/", map[string]any{})
		},
		"copy_content": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
			return jsonReq("POST", "/pulp/api/v3/ansible/copy/", map[string]any{"config": []map[string]any{
				{"source_repo_version": refs.Version, "dest_repo": repository(e, nil)}}})
		},
	}
}
