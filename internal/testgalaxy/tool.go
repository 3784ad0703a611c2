package testgalaxy

import (
	"os"
	"os/exec"
	"testing"
)

// AnsibleGalaxy is the ansible-galaxy executable the tests run: $PITH_ANSIBLE_GALAXY
// (scripts/test installs ansible-core 2.19.14 and sets it), else the one on PATH. Without
// either the test is skipped, except under CI (CI set), where it fails: CI must run it.
func AnsibleGalaxy(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("PITH_ANSIBLE_GALAXY"); bin != "" {
		return bin
	}
	if bin, err := exec.LookPath("ansible-galaxy"); err == nil {
		return bin
	}
	const msg = "ansible-galaxy is needed: set PITH_ANSIBLE_GALAXY (scripts/test installs ansible-core 2.19.14 into ~/.cache/pith/venv-ansible)"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}
