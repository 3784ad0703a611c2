package e2e

// The ansible-galaxy harness. ansible-galaxy (ansible-core 2.19.14, $PITH_ANSIBLE_GALAXY,
// installed by scripts/test) runs through testgalaxy.Client: its own HOME and
// ANSIBLE_HOME, an ansible.cfg naming the servers ([galaxy] server_list, one
// [galaxy_server.<name>] each with url, token or username/password), a private response
// cache and empty collections and roles paths; each helper fails the test with the
// command and its output. Without ansible-galaxy the tests skip, except under CI.
//
// A pith distribution is addressed as Pulp's is: /pulp_ansible/galaxy/<base_path>/api/
// (pithGalaxy). What each command requests, observed against internal/testgalaxy
// (internal/testgalaxy/README.md has the full lists):
//   - publish: GET {api}; POST {api}v3/artifacts/collections/, multipart with a "file"
//     part in base64 (Content-Transfer-Encoding: base64) and a "sha256" part, answered
//     202 {"task": …}; GET {api}v3/imports/collections/<last segment of task>/ until
//     finished_at is set (2 s apart, growing).
//   - install ns.name: GET {api}; per collection reached (dependencies from
//     metadata.dependencies): GET …/collections/<ns>/<name>/, GET …/versions/?limit=100
//     and each links.next, GET …/versions/<v>/ (download_url, artifact.sha256,
//     signatures); then GET download_url per artifact, 302 followed without the
//     Authorization header. cisco.iosxr with its two dependencies: 13 requests.
//   - download: the same as install, then the artifacts and requirements.yml into a folder.
//   - verify --keyring: GET {api}, GET …/versions/<v>/; gpg checks signatures[].signature
//     against the installed MANIFEST.json; no download (without a keyring it downloads).
//   - role install ns.name: GET {api}; GET {api}v1/roles/?owner__username=<ns>&name=<name>;
//     GET {api}v1/roles/<id>/versions/?page_size=50 and each next_link; GET the version's
//     download_url (or source).
// Credentials go on every request once configured, reads included.

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pith/content/ansible/collection"
	"pith/internal/testfiles"
	"pith/internal/testgalaxy"
)

// pithGalaxy is how ansible-galaxy addresses a pith distribution: its Galaxy API root,
// with the administrator's credentials as HTTP Basic.
func pithGalaxy(s *server, basePath string) testgalaxy.ServerConfig {
	return testgalaxy.ServerConfig{Name: "pith", URL: testgalaxy.DistributionURL(s.url, basePath), Username: "admin", Password: adminPassword}
}

// newGalaxyClient is ansible-galaxy configured for the servers (the first is the
// default); with s behind HTTPS it trusts s's CA. s may be nil (fixtures only).
func newGalaxyClient(t *testing.T, s *server, servers ...testgalaxy.ServerConfig) *testgalaxy.Client {
	t.Helper()
	c := testgalaxy.NewClient(t, servers...)
	if s != nil && s.caFile != "" {
		c.TrustCA(s.caFile)
	}
	return c
}

// collectionFile is the path of a collection artifact in testdata/ansible-collections.
func collectionFile(name string) string { return testfiles.Path("ansible-collections", name) }

// galaxyCollections are the collection tarballs of testdata/ansible-collections a Galaxy
// server under test is given, dependencies before what needs them.
var galaxyCollections = []string{"foo-bar-1.0.0.tar.gz", "pulp-testing_asset-1.0.0.tar.gz", "pulp-testing_asset-1.0.1.tar.gz",
	"ansible-utils-2.7.0.tar.gz", "ansible-netcommon-4.1.0.tar.gz", "cisco-iosxr-4.0.2.tar.gz"}

// galaxyTarget is a Galaxy server under test, as galaxyScenario needs it.
type galaxyTarget struct {
	client *testgalaxy.Client // configured for the server, its default
	// sign makes the server offer a signature by keyring of a collection version.
	sign    func(t *testing.T, namespace, name, version string)
	keyring *testgalaxy.Keyring
	// role is a role the server offers through its v1 API ("namespace.name") and the
	// version an install picks.
	role, roleVersion string
}

// galaxyScenario is what the Ansible issue asks of a Galaxy server, as ansible-galaxy
// sees it: the collections publish (the same version twice is refused), cisco.iosxr
// installs with ansible.netcommon and ansible.utils, downloads byte for byte, verifies
// with a keyring (and fails with another), and a role installs.
func galaxyScenario(t *testing.T, g galaxyTarget) {
	c := g.client
	for _, f := range galaxyCollections {
		c.Publish(collectionFile(f))
	}
	if out, err := c.Run("collection", "publish", collectionFile("foo-bar-1.0.0.tar.gz")); err == nil {
		t.Fatalf("publishing foo.bar 1.0.0 twice succeeded:\n%s", out)
	}

	out := c.Install("cisco.iosxr")
	for _, want := range [][3]string{{"cisco", "iosxr", "4.0.2"}, {"ansible", "netcommon", "4.1.0"}, {"ansible", "utils", "2.7.0"}} {
		if v, ok := c.Installed(want[0], want[1]); !ok || v != want[2] {
			t.Fatalf("%s.%s after installing cisco.iosxr: version %q, installed %v\n%s", want[0], want[1], v, ok, out)
		}
	}
	c.Install("pulp.testing_asset:==1.0.0")
	if v, _ := c.Installed("pulp", "testing_asset"); v != "1.0.0" {
		t.Fatalf("pulp.testing_asset:==1.0.0 installed %q", v)
	}

	dir := t.TempDir()
	c.Download(dir, "cisco.iosxr")
	for _, f := range []string{"cisco-iosxr-4.0.2.tar.gz", "ansible-netcommon-4.1.0.tar.gz", "ansible-utils-2.7.0.tar.gz"} {
		got, err := os.ReadFile(filepath.Join(dir, f))
		want, _ := os.ReadFile(collectionFile(f))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("downloaded %s differs from the published artifact (%v)", f, err)
		}
	}
	if req, err := os.ReadFile(filepath.Join(dir, "requirements.yml")); err != nil || !strings.Contains(string(req), "name: cisco-iosxr-4.0.2.tar.gz") {
		t.Fatalf("download's requirements.yml: %v\n%s", err, req)
	}

	g.sign(t, "ansible", "utils", "2.7.0")
	if out := c.Verify(g.keyring.Path, "ansible.utils"); !strings.Contains(out, "Successfully verified that checksums for 'ansible.utils:2.7.0' match the remote collection.") {
		t.Fatalf("verify:\n%s", out)
	}
	other := testgalaxy.NewKeyring(t)
	if out, err := c.Run("collection", "verify", "-p", c.Collections, "--keyring", other.Path, "ansible.utils"); err == nil || !strings.Contains(out, "Signature verification failed for 'ansible.utils'") {
		t.Fatalf("verify with a keyring without the signing key: %v\n%s", err, out)
	}

	if out := c.InstallRole(g.role); !strings.Contains(out, g.role+" ("+g.roleVersion+") was installed successfully") {
		t.Fatalf("role install %s:\n%s", g.role, out)
	}
	if _, err := os.Stat(filepath.Join(c.Roles, g.role, "meta", "main.yml")); err != nil {
		t.Fatalf("role %s: %v", g.role, err)
	}
}

// The scenario against internal/testgalaxy, addressed as a pith distribution is: it
// proves the harness; the same scenario runs against pith once it serves Galaxy.
func TestAnsibleGalaxyFixture(t *testing.T) {
	fx := testgalaxy.New(t, testgalaxy.Config{
		Prefix: "/pulp_ansible/galaxy/e2e/", Username: "admin", Password: adminPassword,
		Roles: []testgalaxy.Role{{Namespace: "pith", Name: "hello", Versions: []string{"1.0.0", "1.1.0"}}},
	})
	cfg := testgalaxy.ServerConfig{Name: "fixture", URL: fx.API, Username: "admin", Password: adminPassword}
	k := testgalaxy.NewKeyring(t)
	galaxyScenario(t, galaxyTarget{
		client: newGalaxyClient(t, nil, cfg), keyring: k,
		sign: func(t *testing.T, namespace, name, version string) {
			if err := fx.Sign(namespace, name, version, k.Signer); err != nil {
				t.Fatal(err)
			}
		},
		role: "pith.hello", roleVersion: "1.1.0",
	})
}

// The scenario against a pith distribution on each installation: a repository (whose
// gpgkey verifies the signatures uploaded for verify) distributed at base path "e2e",
// and a role synced into it by a role remote from internal/testgalaxy, which also
// serves the role's archive in place of GitHub.
func TestAnsibleGalaxyPith(t *testing.T) {
	fx := testgalaxy.New(t, testgalaxy.Config{Roles: []testgalaxy.Role{{Namespace: "pith", Name: "hello", Versions: []string{"1.0.0", "1.1.0"}}}})
	for name, start := range installations("--role-archive-origin", fx.URL) {
		t.Run(name, func(t *testing.T) { galaxyOnPith(t, start(t), fx) })
	}
}

// galaxyOnPith sets a distribution up on s and runs the scenario against it.
func galaxyOnPith(t *testing.T, s *server, fx *testgalaxy.Server) {
	k := testgalaxy.NewKeyring(t)
	api := s.url + "/pulp/api/v3/"
	js := func(v any) (string, io.Reader) {
		b, _ := json.Marshal(v)
		return "application/json", bytes.NewReader(b)
	}
	done := func(what string, code int, m map[string]any) {
		t.Helper()
		if code != 202 {
			t.Fatalf("%s: %d %v", what, code, m)
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
			_, tk := call(t, "GET", s.url+m["task"].(string), "", nil)
			if st := tk["state"]; st == "completed" {
				break
			} else if st == "failed" || st == "canceled" || time.Now().After(deadline) {
				t.Fatalf("%s: %v", what, tk)
			}
		}
	}
	ct, body := js(map[string]any{"name": "e2e", "gpgkey": k.Signer.PublicKey()})
	code, repo := call(t, "POST", api+"repositories/ansible/ansible/", ct, body)
	if code != 201 {
		t.Fatalf("repository: %d %v", code, repo)
	}
	rh := repo["pulp_href"].(string)
	ct, body = js(map[string]any{"name": "e2e", "base_path": "e2e", "repository": rh})
	code, m := call(t, "POST", api+"distributions/ansible/ansible/", ct, body)
	done("distribution", code, m)
	ct, body = js(map[string]any{"name": "roles", "url": fx.API + "v1/roles/?owner__username=pith", "policy": "immediate"})
	code, remote := call(t, "POST", api+"remotes/ansible/role/", ct, body)
	if code != 201 {
		t.Fatalf("role remote: %d %v", code, remote)
	}
	ct, body = js(map[string]any{"remote": remote["pulp_href"]})
	code, m = call(t, "POST", s.url+rh+"sync/", ct, body)
	done("role sync", code, m)

	galaxyScenario(t, galaxyTarget{
		client: newGalaxyClient(t, s, pithGalaxy(s, "e2e")), keyring: k,
		sign: func(t *testing.T, namespace, name, version string) {
			code, l := call(t, "GET", api+"content/ansible/collection_versions/?namespace="+namespace+"&name="+name+"&version="+version, "", nil)
			if code != 200 || l["count"] != 1.0 {
				t.Fatalf("collection version %s.%s %s: %d %v", namespace, name, version, code, l)
			}
			cv := l["results"].([]any)[0].(map[string]any)["pulp_href"].(string)
			sig, err := k.Signer.Detach(bytes.NewReader(manifestOf(t, collectionFile(namespace+"-"+name+"-"+version+".tar.gz"))))
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			w := multipart.NewWriter(&b)
			w.WriteField("signed_collection", cv)
			w.WriteField("repository", rh)
			fw, _ := w.CreateFormFile("file", "MANIFEST.json.asc")
			fw.Write(sig)
			w.Close()
			code, m := call(t, "POST", api+"content/ansible/collection_signatures/", w.FormDataContentType(), &b)
			done("signature upload", code, m)
		},
		role: "pith.hello", roleVersion: "1.1.0",
	})
}

// manifestOf is the MANIFEST.json of a collection tarball.
func manifestOf(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := collection.Read(f, collection.Options{})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v.Manifest
}
