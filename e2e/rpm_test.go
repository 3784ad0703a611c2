package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// present reads a version's content_summary.present counts.
func present(v entity) map[string]float64 {
	out := map[string]float64{}
	cs, _ := v["content_summary"].(map[string]any)
	p, _ := cs["present"].(map[string]any)
	for typ, e := range p {
		if m, ok := e.(map[string]any); ok {
			out[typ], _ = m["count"].(float64)
		}
	}
	return out
}

// dnf runs Debian's dnf against one repository in a private installroot.
func dnf(t *testing.T, root, baseURL string, args ...string) (string, error) {
	t.Helper()
	full := append([]string{"-y", "--installroot=" + root, "--releasever=1", "--repofrompath=pith," + baseURL, "--repo=pith",
		"--nogpgcheck", "--setopt=pith.gpgcheck=0", "--setopt=install_weak_deps=0"}, args...)
	out, err := exec.Command("dnf", full...).CombinedOutput()
	return string(out), err
}

// The rpm workflow the way Katello drives it, with the real pulp CLI and Debian's dnf:
// sync zoo on demand (every unit type counted), mirror zoo2 (what zoo2 lacks goes) and
// add zoo2 to a copy of zoo (everything stays), publish, distribute, then install with
// dependencies, list module streams and see advisories.
func TestRpmWorkflow(t *testing.T) {
	if _, err := exec.LookPath("dnf"); err != nil {
		t.Fatal("dnf is needed (scripts/test installs it)")
	}
	fx := fixtures(t)
	for name, start := range installations() {
		t.Run(name, func(t *testing.T) {
			s := start(t)
			c := newCLI(t, s)
			c.run("rpm", "remote", "create", "--name", "zoo", "--url", fx+"/yum-katello/zoo/", "--policy", "on_demand")
			c.run("rpm", "remote", "create", "--name", "zoo2", "--url", fx+"/yum-katello/zoo2/", "--policy", "on_demand")
			c.run("rpm", "repository", "create", "--name", "zoo", "--remote", "zoo")
			c.run("rpm", "repository", "sync", "--name", "zoo")
			var v entity
			c.json(&v, "rpm", "repository", "version", "show", "--repository", "zoo")
			want := map[string]float64{"rpm.package": 20, "rpm.advisory": 7, "rpm.modulemd": 6, "rpm.modulemd_defaults": 3,
				"rpm.packagegroup": 2, "rpm.packagecategory": 1, "rpm.packageenvironment": 1, "rpm.distribution_tree": 1, "rpm.repo_metadata_file": 1}
			got := present(v)
			for typ, n := range want {
				if got[typ] != n {
					t.Errorf("zoo: %s = %v, want %v (summary %v)", typ, got[typ], n, got)
				}
			}

			// A synced module lists the packages its artifacts name.
			var mods []entity
			c.json(&mods, "rpm", "content", "-t", "modulemd", "list", "--name", "walrus", "--stream", "5.21")
			if len(mods) != 1 {
				t.Errorf("modulemd walrus:5.21: %d found", len(mods))
			} else if pk, _ := mods[0]["packages"].([]any); len(pk) != 1 {
				t.Errorf("walrus:5.21 packages %v, want the one walrus-5.21 package", mods[0]["packages"])
			}
			var mdFiles []entity
			c.json(&mdFiles, "rpm", "content", "-t", "repo_metadata_file", "list")
			if len(mdFiles) != 1 || mdFiles[0].str("data_type") != "productid" || mdFiles[0].str("artifact") == "" {
				t.Errorf("repo metadata files: %v, want zoo's productid with its artifact", mdFiles)
			}

			// Additive keeps what zoo2 lacks; mirror drops it.
			c.run("rpm", "repository", "create", "--name", "both")
			c.run("rpm", "repository", "sync", "--name", "both", "--remote", "zoo")
			c.run("rpm", "repository", "sync", "--name", "both", "--remote", "zoo2")
			c.json(&v, "rpm", "repository", "version", "show", "--repository", "both")
			if n := present(v)["rpm.package"]; n < 20 {
				t.Errorf("additive sync of zoo2 onto zoo: %v packages, want zoo's 20 kept", n)
			}
			c.run("rpm", "repository", "create", "--name", "mirror")
			c.run("rpm", "repository", "sync", "--name", "mirror", "--remote", "zoo")
			c.run("rpm", "repository", "sync", "--name", "mirror", "--remote", "zoo2", "--sync-policy", "mirror_content_only")
			c.json(&v, "rpm", "repository", "version", "show", "--repository", "mirror")
			if n := present(v)["rpm.package"]; n != 14 {
				t.Errorf("mirror sync of zoo2: %v packages, want zoo2's 14", n)
			}
			if out, err := c.try("rpm", "repository", "sync", "--name", "mirror", "--remote", "zoo2", "--sync-policy", "mirror_complete", "--skip-type", "srpm"); err == nil || !strings.Contains(out, "skip_types") {
				t.Errorf("mirror_complete with skip_types was not refused: %v %s", err, out)
			}

			// Copy: an advisory brings its packages; with dependency solving a package
			// brings what it requires (duck 0.6 needs lion) and its module stream.
			var zooV entity
			c.json(&zooV, "rpm", "repository", "version", "show", "--repository", "zoo")
			var found []entity
			c.json(&found, "rpm", "content", "list", "--name", "duck", "--version", "0.6")
			var advisories []entity
			c.json(&advisories, "rpm", "content", "-t", "advisory", "list", "--id", "KATELLO-RHEA-2010:0111")
			if len(found) != 1 || len(advisories) != 1 {
				t.Fatalf("duck 0.6: %d found, advisory: %d found", len(found), len(advisories))
			}
			for _, tc := range []struct {
				repo, content string
				solve         bool
				want          map[string]float64
			}{
				{"copy-advisory", advisories[0].str("pulp_href"), false, map[string]float64{"rpm.advisory": 1, "rpm.package": 2}},
				{"copy-solved", found[0].str("pulp_href"), true, map[string]float64{"rpm.package": 2, "rpm.modulemd": 1}},
			} {
				var dest entity
				c.json(&dest, "rpm", "repository", "create", "--name", tc.repo)
				cfg := fmt.Sprintf(`[{"source_repo_version": %q, "dest_repo": %q, "content": [%q]}]`, zooV.str("pulp_href"), dest.str("pulp_href"), tc.content)
				args := []string{"rpm", "copy", "--config", cfg}
				if tc.solve {
					args = append(args, "--dependency-solving")
				}
				c.run(args...)
				c.json(&v, "rpm", "repository", "version", "show", "--repository", tc.repo)
				if diff := cmp.Diff(tc.want, present(v)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", tc.repo, diff)
				}
			}

			// Publish, distribute, and let dnf use it.
			c.run("rpm", "publication", "create", "--repository", "zoo")
			c.run("rpm", "distribution", "create", "--name", "zoo", "--base-path", "zoo", "--repository", "zoo")
			var dist entity
			c.json(&dist, "rpm", "distribution", "show", "--name", "zoo")
			base := dist.str("base_url")
			root := filepath.Join(t.TempDir(), "root")
			os.MkdirAll(root, 0o755)
			if out, err := dnf(t, root, base, "install", "kangaroo"); err != nil {
				t.Fatalf("dnf install kangaroo: %v\n%s", err, out)
			}
			if out, _ := dnf(t, root, base, "list", "--installed"); !strings.Contains(out, "kangaroo") {
				t.Errorf("kangaroo is not installed:\n%s", out)
			}
			if out, err := dnf(t, root, base, "module", "list"); err != nil || !strings.Contains(out, "walrus") || !strings.Contains(out, "5.21") {
				t.Errorf("dnf module list: %v\n%s", err, out)
			}
			// mirror_complete: the publication is the sync's, upstream's repomd.xml as it is,
			// and dnf installs from it.
			c.run("rpm", "repository", "create", "--name", "complete")
			c.run("rpm", "repository", "sync", "--name", "complete", "--remote", "zoo", "--sync-policy", "mirror_complete")
			c.run("rpm", "distribution", "create", "--name", "complete", "--base-path", "complete", "--repository", "complete")
			wantMD, _ := os.ReadFile(filepath.Join(sharedData(), "yum-katello/zoo/repodata/repomd.xml"))
			if code, got := get(t, s.content+"/pulp/content/complete/repodata/repomd.xml"); code != 200 || !bytes.Equal(got, wantMD) {
				t.Errorf("mirrored repomd.xml: %d, %d bytes; want upstream's %d bytes", code, len(got), len(wantMD))
			}
			mroot := filepath.Join(t.TempDir(), "mroot")
			os.MkdirAll(mroot, 0o755)
			if out, err := dnf(t, mroot, s.content+"/pulp/content/complete/", "install", "kangaroo"); err != nil {
				t.Errorf("dnf install kangaroo from the mirror: %v\n%s", err, out)
			}
			// A kickstart tree whose variants live elsewhere (internal/testtree): each is a
			// sub-repository, not listed, published under its id beside the main repository;
			// dnf installs from one.
			c.run("rpm", "remote", "create", "--name", "tree", "--url", fx+"/tree/", "--policy", "on_demand")
			c.run("rpm", "repository", "create", "--name", "tree", "--remote", "tree")
			c.run("rpm", "repository", "sync", "--name", "tree")
			var repos []entity
			c.json(&repos, "repository", "list", "--limit", "1000")
			for _, r := range repos {
				if strings.HasPrefix(r.str("name"), "Savanna-") || strings.HasPrefix(r.str("name"), "Edge-") {
					t.Errorf("sub-repository %s is listed", r.str("name"))
				}
			}
			c.run("rpm", "publication", "create", "--repository", "tree")
			c.run("rpm", "distribution", "create", "--name", "tree", "--base-path", "tree", "--repository", "tree")
			treeURL := s.content + "/pulp/content/tree/"
			if code, ti := get(t, treeURL+".treeinfo"); code != 200 || !strings.Contains(string(ti), "repository = Savanna\n") {
				t.Errorf(".treeinfo: %d\n%s", code, ti)
			}
			troot := filepath.Join(t.TempDir(), "troot")
			os.MkdirAll(troot, 0o755)
			if out, err := dnf(t, troot, treeURL+"Savanna/", "install", "kangaroo-0.2"); err != nil {
				t.Errorf("dnf install kangaroo-0.2 from the tree's Savanna variant: %v\n%s", err, out)
			} else if out, _ := dnf(t, troot, treeURL+"Savanna/", "list", "--installed"); !strings.Contains(out, "0.2-1") {
				t.Errorf("kangaroo-0.2 is not installed:\n%s", out)
			}

			// Uploads: signed packages keep their signatures (the bytes served are the bytes
			// uploaded), a chunked upload works, and a file that is not an rpm is refused.
			// The signed packages share one NEVRA, so each gets a repository of its own.
			for i, f := range []string{"empty-signed-rsa-0-0.x86_64.rpm", "empty-signed-eddsa-0-0.x86_64.rpm", "empty-signed-v6-multiple-0-0.x86_64.rpm"} {
				name := fmt.Sprintf("signed%d", i)
				c.run("rpm", "repository", "create", "--name", name)
				c.run("rpm", "content", "upload", "--file", filepath.Join(sharedData(), "rpm-edge-cases/packages", f), "--repository", name)
				c.run("rpm", "publication", "create", "--repository", name)
				c.run("rpm", "distribution", "create", "--name", name, "--base-path", name, "--repository", name)
				want, _ := os.ReadFile(filepath.Join(sharedData(), "rpm-edge-cases/packages", f))
				code, got := get(t, s.content+"/pulp/content/"+name+"/Packages/e/empty-0-0.x86_64.rpm")
				if code != 200 || !bytes.Equal(got, want) {
					t.Errorf("%s served: %d, %d bytes; want the %d uploaded bytes", f, code, len(got), len(want))
				}
			}
			c.run("rpm", "repository", "create", "--name", "up")
			c.run("rpm", "content", "upload", "--file", filepath.Join(sharedData(), "rpm-edge-cases/packages/super_kernel-6.0.1-2.x86_64.rpm"),
				"--chunk-size", "4000", "--repository", "up")
			c.json(&v, "rpm", "repository", "version", "show", "--repository", "up")
			if n := present(v)["rpm.package"]; n != 1 {
				t.Errorf("chunked upload: %v packages, want 1", n)
			}
			// An advisory (JSON) and a comps.xml, uploaded as Katello does.
			advFile := filepath.Join(t.TempDir(), "advisory.json")
			os.WriteFile(advFile, []byte(`{"id": "PITH-2026:1", "updated": "2026-11-23 00:00:00", "issued": "2026-11-22 00:00:00", "type": "bugfix",
				"title": "t", "pkglist": [{"name": "c", "short": "c", "packages": [{"name": "kangaroo", "version": "0.3", "release": "1", "arch": "noarch",
				"filename": "kangaroo-0.3-1.noarch.rpm"}]}]}`), 0o644)
			var adv entity
			c.json(&adv, "rpm", "content", "-t", "advisory", "upload", "--file", advFile)
			if adv.str("id") != "PITH-2026:1" {
				t.Errorf("uploaded advisory: %v", adv)
			}
			c.run("rpm", "comps-upload", "--file", filepath.Join(sharedData(), "yum-katello/zoo/comps.xml"), "--repository", "up")
			c.json(&v, "rpm", "repository", "version", "show", "--repository", "up")
			if got := present(v); got["rpm.packagegroup"] != 2 || got["rpm.packagecategory"] != 1 || got["rpm.package"] != 1 {
				t.Errorf("after the comps upload: %v", got)
			}
			notRPM := filepath.Join(t.TempDir(), "x.rpm")
			os.WriteFile(notRPM, []byte("not an rpm"), 0o644)
			if out, err := c.try("rpm", "content", "upload", "--file", notRPM); err == nil || !strings.Contains(out, "not an RPM") {
				t.Errorf("a file that is not an rpm was not refused: %v %s", err, out)
			}

			// An older armadillo installed, the advisory of the newer one applies.
			if out, err := dnf(t, root, base, "install", "armadillo-0.1"); err != nil {
				t.Fatalf("dnf install armadillo-0.1: %v\n%s", err, out)
			}
			if out, err := dnf(t, root, base, "updateinfo", "list", "--all"); err != nil || !strings.Contains(out, "KATELLO-RHEA-2010:99143") {
				t.Errorf("dnf updateinfo list: %v\n%s", err, out)
			}
		})
	}
}
