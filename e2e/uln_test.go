package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"pith/internal/testfiles"
	"pith/internal/testuln"
)

// A ULN remote made with the pulp CLI syncs an rpm repository from a ULN server (the
// zoo as channel ol9_x86_64) on demand, and dnf installs from its distribution, the
// content app fetching the packages with the session key; wrong credentials fail the
// sync naming the login, without the password.
func TestULNWithCLI(t *testing.T) {
	if _, err := exec.LookPath("dnf"); err != nil {
		t.Fatal("dnf is needed (scripts/test installs it)")
	}
	uln := testuln.New(t, "me", "s3cret-pw", map[string]string{"ol9_x86_64": testfiles.Path("yum-katello", "zoo")})
	for name, start := range installations() {
		t.Run(name, func(t *testing.T) {
			s := start(t)
			c := newCLI(t, s)
			c.run("rpm", "remote", "--type", "uln", "create", "--name", "ol9", "--url", "uln://ol9_x86_64", "--username", "me",
				"--password", "s3cret-pw", "--uln-server-base-url", uln.URL+"/", "--policy", "on_demand")
			c.run("rpm", "remote", "--type", "uln", "create", "--name", "bad", "--url", "uln://ol9_x86_64", "--username", "me",
				"--password", "wrong-pw", "--uln-server-base-url", uln.URL+"/")
			if out, err := c.try("rpm", "remote", "--type", "uln", "create", "--name", "http", "--url", uln.URL+"/", "--username", "me", "--password", "x"); err == nil {
				t.Errorf("a ULN remote with an http url was made:\n%s", out)
			}
			c.run("rpm", "repository", "create", "--name", "ol9", "--remote", "rpm:uln:ol9")
			c.run("rpm", "repository", "sync", "--name", "ol9")
			var v entity
			c.json(&v, "rpm", "repository", "version", "show", "--repository", "ol9")
			if n := present(v)["rpm.package"]; n != 20 {
				t.Errorf("ol9: %v packages, want the zoo's 20", n)
			}
			out, err := c.try("rpm", "repository", "sync", "--name", "ol9", "--remote", "rpm:uln:bad")
			if err == nil || !strings.Contains(out, "login") || strings.Contains(out, "wrong-pw") {
				t.Errorf("sync with wrong credentials: %v\n%s", err, out)
			}

			c.run("rpm", "publication", "create", "--repository", "ol9")
			c.run("rpm", "distribution", "create", "--name", "ol9", "--base-path", "ol9", "--repository", "ol9")
			var dist entity
			c.json(&dist, "rpm", "distribution", "show", "--name", "ol9")
			root := filepath.Join(t.TempDir(), "root")
			os.MkdirAll(root, 0o755)
			if out, err := dnf(t, root, dist.str("base_url"), "install", "kangaroo"); err != nil {
				t.Fatalf("dnf install kangaroo: %v\n%s", err, out)
			}
		})
	}
	if uln.Refused() != 0 {
		t.Errorf("%d requests reached the ULN server without a session key", uln.Refused())
	}
}
