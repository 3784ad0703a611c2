package e2e

import (
	"os"
	"os/exec"
	"testing"
)

// The generated Python bindings that Katello and other integrations use
// (pulpcore-client and pulp-file-client 3.105.25, pulp-rpm-client 3.35.6) drive a
// Katello-style flow through every pith installation: sync, content lists with filters
// and pagination, publish, distribute, copy with and without dependency solving,
// modify with base_version, chunked upload, orphan cleanup, task cancel. Every
// response is deserialized into the bindings' models (e2e/bindings/flow.py).
func TestPythonBindings(t *testing.T) {
	py := os.Getenv("PITH_BINDINGS_PYTHON")
	if py == "" {
		t.Skip("PITH_BINDINGS_PYTHON (a python with the bindings) is not set; scripts/test sets it")
	}
	upstream := fixtures(t)
	for name, start := range installations() {
		t.Run(name, func(t *testing.T) {
			s := start(t)
			cmd := exec.Command(py, "bindings/flow.py", "--base-url", s.url, "--username", "admin", "--password", adminPassword,
				"--upstream", upstream, "--task-timeout", "120")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("flow.py: %v\n%s", err, out)
			}
			t.Logf("flow.py:\n%s", out)
		})
	}
}
