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

// The rpm benchmark keeps working (a tiny repository; no timings asserted): pith and a
// peer (another pith standing in for Pulp) side by side, and createrepo_c.
func TestBenchRpm(t *testing.T) {
	s, peer := startPith(t, ""), startPith(t, "")
	out, err := exec.Command(pithBin, "bench", "rpm", "--url", s.url, "--password", adminPassword, "--packages", "50",
		"--peer", "other="+peer.url+",password="+adminPassword, "--createrepo").CombinedOutput()
	if err != nil {
		t.Fatalf("pith bench rpm: %v\n%s", err, out)
	}
	for _, want := range []string{"50 packages", "| pith |", "| other |", "| other ÷ pith |", "createrepo_c --no-database"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in the output:\n%s", want, out)
		}
	}
}
