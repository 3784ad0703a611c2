package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pith/bench/load"
)

// The task's process is one born in the window (a Pulp worker's fork), else the
// largest (pith's one process).
func TestTaskRSS(t *testing.T) {
	workers := load.Usage{Procs: []load.ProcUsage{{PID: 1, PeakRSSMiB: 180}, {PID: 2, PeakRSSMiB: 185}}}
	for _, tc := range []struct {
		name   string
		window load.Usage
		want   float64
	}{
		{"forked task", load.Usage{MaxProcRSSMiB: 185, Procs: []load.ProcUsage{{PID: 1, PeakRSSMiB: 180}, {PID: 2, PeakRSSMiB: 185}, {PID: 9, PeakRSSMiB: 150}}}, 150},
		{"two forked tasks", load.Usage{MaxProcRSSMiB: 300, Procs: []load.ProcUsage{{PID: 1, PeakRSSMiB: 180}, {PID: 9, PeakRSSMiB: 150}, {PID: 10, PeakRSSMiB: 300}}}, 300},
		{"no new process", load.Usage{MaxProcRSSMiB: 190, Procs: []load.ProcUsage{{PID: 1, PeakRSSMiB: 190}, {PID: 2, PeakRSSMiB: 185}}}, 190},
	} {
		if got := taskRSS(tc.window, workers); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The file repository's manifest names every file with its checksum and size, and no
// two files are the same.
func TestWriteFileRepo(t *testing.T) {
	dir := t.TempDir()
	if err := writeFileRepo(dir, 50, 100); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "PULP_MANIFEST"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 50 {
		t.Fatalf("%d manifest lines, want 50", len(lines))
	}
	seen := map[string]bool{}
	for _, l := range lines {
		parts := strings.Split(l, ",")
		data, err := os.ReadFile(filepath.Join(dir, parts[0]))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if got := fmt.Sprintf("%s,%s,%d", parts[0], hex.EncodeToString(sum[:]), len(data)); got != l || len(data) != 100 {
			t.Errorf("manifest line %q, file %q", l, got)
		}
		if seen[parts[1]] {
			t.Errorf("%s: the same content as another file", parts[0])
		}
		seen[parts[1]] = true
	}
}
