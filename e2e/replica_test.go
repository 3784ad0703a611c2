package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A pith replicates another pith with the pulp CLI: `upstream-pulp create` and
// `upstream-pulp replicate`; the replica serves the upstream's files (file), dnf
// installs from it (rpm), and ansible-galaxy installs a collection with its dependencies
// from it (ansible).
func TestReplicateWithCLI(t *testing.T) {
	fx := fixtures(t)
	for name, start := range installations() {
		t.Run(name, func(t *testing.T) {
			up := startPith(t, "")
			uc := newCLI(t, up)
			uc.run("file", "remote", "create", "--name", "files", "--url", fx+"/file-katello-puppet/PULP_MANIFEST")
			uc.run("file", "repository", "create", "--name", "files", "--remote", "files", "--autopublish")
			uc.run("file", "repository", "sync", "--name", "files")
			uc.run("file", "distribution", "create", "--name", "files", "--base-path", "files", "--repository", "files")
			uc.run("rpm", "remote", "create", "--name", "zoo", "--url", fx+"/yum-katello/zoo/", "--policy", "on_demand")
			uc.run("rpm", "repository", "create", "--name", "zoo", "--remote", "zoo", "--autopublish")
			uc.run("rpm", "repository", "sync", "--name", "zoo")
			uc.run("rpm", "distribution", "create", "--name", "zoo", "--base-path", "zoo", "--repository", "zoo")
			uc.run("ansible", "repository", "create", "--name", "coll")
			for _, f := range []string{"ansible-utils-2.7.0.tar.gz", "ansible-netcommon-4.1.0.tar.gz", "cisco-iosxr-4.0.2.tar.gz"} {
				uc.run("ansible", "content", "upload", "--file", collectionFile(f), "--repository", "coll")
			}
			uc.run("ansible", "distribution", "create", "--name", "coll", "--base-path", "coll", "--repository", "coll")

			s := start(t)
			c := newCLI(t, s)
			var u entity
			c.json(&u, "upstream-pulp", "create", "--name", "main", "--base-url", up.url, "--api-root", "/pulp/",
				"--username", "admin", "--password", adminPassword)
			if u.str("last_replication") != "" {
				t.Errorf("created: %v", u)
			}
			c.run("upstream-pulp", "replicate", "--upstream-pulp", "main")
			c.json(&u, "upstream-pulp", "show", "--upstream-pulp", "main")
			if u.str("last_replication") == "" {
				t.Errorf("last_replication not set: %v", u)
			}

			// file: every file of the manifest, byte for byte.
			want := manifestEntries(t, filepath.Join(sharedData(), "file-katello-puppet", "PULP_MANIFEST"))
			if len(want) == 0 {
				t.Fatal("no files in the fixture manifest")
			}
			for p := range want {
				code, a := get(t, up.content+"/pulp/content/files/"+p)
				code2, b := get(t, s.content+"/pulp/content/files/"+p)
				if code != 200 || code2 != 200 || string(a) != string(b) {
					t.Errorf("files/%s: upstream %d, replica %d, same bytes %v", p, code, code2, string(a) == string(b))
				}
			}

			// rpm: dnf installs from the replica.
			var dist entity
			c.json(&dist, "rpm", "distribution", "show", "--name", "zoo")
			if _, err := exec.LookPath("dnf"); err != nil {
				t.Fatal("dnf is needed (scripts/test installs it)")
			}
			root := filepath.Join(t.TempDir(), "root")
			os.MkdirAll(root, 0o755)
			if out, err := dnf(t, root, dist.str("base_url"), "install", "kangaroo"); err != nil {
				t.Fatalf("dnf install kangaroo from the replica: %v\n%s", err, out)
			}
			if out, _ := dnf(t, root, dist.str("base_url"), "list", "--installed"); !strings.Contains(out, "kangaroo") {
				t.Errorf("kangaroo not installed:\n%s", out)
			}

			// ansible: ansible-galaxy installs from the replica's Galaxy API.
			g := newGalaxyClient(t, s, pithGalaxy(s, "coll"))
			out := g.Install("cisco.iosxr")
			for _, want := range [][3]string{{"cisco", "iosxr", "4.0.2"}, {"ansible", "netcommon", "4.1.0"}, {"ansible", "utils", "2.7.0"}} {
				if v, ok := g.Installed(want[0], want[1]); !ok || v != want[2] {
					t.Errorf("%s.%s from the replica: version %q, installed %v\n%s", want[0], want[1], v, ok, out)
				}
			}
		})
	}
}
