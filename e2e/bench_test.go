package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// The upload benchmark keeps working (a tiny size; no timings asserted).
func TestBenchUpload(t *testing.T) {
	s := startPith(t, "")
	out, err := exec.Command(pithBin, "bench", "upload", "--url", s.url, "--password", adminPassword,
		"--sizes", "1000,20000", "--n", "3", "--users", "1,2").CombinedOutput()
	if err != nil {
		t.Fatalf("pith bench upload: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "\n| "); n != 6 {
		t.Errorf("table has %d lines, want header + separator + 4 rows:\n%s", n, out)
	}
}

// The rpm benchmark keeps working (a tiny repository; no timings asserted).
func TestBenchRpm(t *testing.T) {
	s := startPith(t, "")
	out, err := exec.Command(pithBin, "bench", "rpm", "--url", s.url, "--password", adminPassword, "--packages", "50").CombinedOutput()
	if err != nil {
		t.Fatalf("pith bench rpm: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "| 50 |") {
		t.Errorf("no result row for 50 packages:\n%s", out)
	}
}
