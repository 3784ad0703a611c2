package syncbench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pith/bench"
	"pith/bench/wan"
)

var pithBin string

// TestMain builds pith from the module root once for the tests.
func TestMain(m *testing.M) {
	os.Exit(func() int {
		gomod, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			fmt.Fprintln(os.Stderr, "go env GOMOD:", err)
			return 1
		}
		dir, err := os.MkdirTemp("", "syncbench-bin")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		pithBin = filepath.Join(dir, "pith")
		cmd := exec.Command("go", "build", "-o", pithBin, "./cmd/pith")
		cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build pith:", err)
			return 1
		}
		return m.Run()
	}())
}

func TestRunAgainstPith(t *testing.T) {
	target := startPith(t)
	out := t.TempDir()
	cfg := Config{
		Targets:     []bench.Target{target},
		Packages:    40,
		MeanSize:    8 << 10,
		Concurrency: []int{1, 4},
		Adaptive:    true,
		WAN:         wan.Config{Latency: 2 * time.Millisecond, PerConnBps: 8 << 20, TotalBps: 32 << 20},
		Dir:         filepath.Join(out, "repo"),
		PlotPath:    filepath.Join(out, "sync.png"),
		TablePath:   filepath.Join(out, "sync.md"),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Packages != 40 || res.TotalBytes <= 0 {
		t.Errorf("result: %d packages, %d bytes", res.Packages, res.TotalBytes)
	}
	if len(res.Rows) != 3 {
		t.Fatalf("%d rows, want 3 (1, 4 and adaptive)", len(res.Rows))
	}
	if c := res.Rows[2].Concurrency; c != 0 {
		t.Errorf("last row at concurrency %d, want 0 (adaptive)", c)
	}
	for _, row := range res.Rows {
		if !row.Completed || row.Err != nil {
			t.Errorf("c=%d: not completed: %v", row.Concurrency, row.Err)
		}
		if row.Bytes < res.TotalBytes {
			t.Errorf("c=%d: upstream sent %d bytes, packages are %d", row.Concurrency, row.Bytes, res.TotalBytes)
		}
		if row.Packages != 40 {
			t.Errorf("c=%d: repository version has %d packages, want 40", row.Concurrency, row.Packages)
		}
		if row.Wall <= 0 || row.Ideal <= 0 {
			t.Errorf("c=%d: wall %v, ideal %v", row.Concurrency, row.Wall, row.Ideal)
		}
	}
	for _, p := range []string{cfg.PlotPath, cfg.TablePath} {
		fi, err := os.Stat(p)
		if err != nil || fi.Size() == 0 {
			t.Errorf("%s: not written (%v)", p, err)
		}
	}
	png, _ := os.ReadFile(cfg.PlotPath)
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("%s is not a PNG", cfg.PlotPath)
	}
	table, _ := os.ReadFile(cfg.TablePath)
	for _, want := range []string{"| pith | 4 |", "| pith | adaptive |"} {
		if !strings.Contains(string(table), want) {
			t.Errorf("table lacks the row %q:\n%s", want, table)
		}
	}
	t.Logf("%s", table)

	// A second run over the same directory reuses the repository and still downloads
	// everything: the cleanup between settings works across runs too.
	cfg.Concurrency, cfg.Adaptive = []int{2}, false
	cfg.PlotPath, cfg.TablePath = "", ""
	res2, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("second Run: %v", err)
	}
	if res2.TotalBytes != res.TotalBytes || !res2.Rows[0].Completed {
		t.Errorf("second run: %d bytes (want %d), completed %v", res2.TotalBytes, res.TotalBytes, res2.Rows[0].Completed)
	}
}

// TestTooMany syncs through an upstream that refuses more than 2 requests at once: pith
// retries the 429s (honouring Retry-After) and the row reports them.
func TestTooMany(t *testing.T) {
	target := startPith(t)
	cfg := Config{
		Targets:     []bench.Target{target},
		Packages:    20,
		MeanSize:    4 << 10,
		Concurrency: []int{6},
		WAN:         wan.Config{Latency: 20 * time.Millisecond, PerConnBps: 1 << 20, MaxConcurrent: 2, RetryAfter: time.Second},
		Dir:         filepath.Join(t.TempDir(), "repo"),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	row := res.Rows[0]
	if !row.Completed {
		t.Errorf("sync did not complete: %v", row.Err)
	}
	if row.TooMany == 0 {
		t.Errorf("no 429 sent with 6 streams against a limit of 2")
	}
	var md bytes.Buffer
	Markdown(&md, res)
	t.Logf("%s", md.String())
}

// The adaptive row (concurrency 0) is labelled in the table, drawn as a horizontal line
// apart from the fixed settings' curve, and its ideal is the best one.
func TestAdaptiveRow(t *testing.T) {
	w := wan.Config{Latency: 40 * time.Millisecond, PerConnBps: 4 << 20, TotalBps: 40 << 20}
	sizes := payloadSizes(500, 200<<10)
	best := bestIdeal(w, sizes, []int{3, 5, 20})
	for _, c := range []int{3, 5, 10, 20, AdaptiveBound} {
		if id := ideal(w, sizes, c); best > id {
			t.Errorf("adaptive ideal %v above the ideal %v at %d", best, id, c)
		}
	}
	// 10 streams fill the total cap but pay the latency 50 times each; 32 hide it.
	if want := ideal(w, sizes, AdaptiveBound); best != want {
		t.Errorf("adaptive ideal %v, want the ideal at the bound %v", best, want)
	}

	res := Result{Packages: 500, WAN: w, Rows: []Row{
		{Target: "pith", Concurrency: 3, Wall: 9 * time.Second, Ideal: 8 * time.Second, Completed: true},
		{Target: "pith", Concurrency: 20, Wall: 5 * time.Second, Ideal: 4 * time.Second, Completed: true},
		{Target: "pith", Concurrency: 0, Wall: 6 * time.Second, Ideal: 4 * time.Second, Completed: true},
	}}
	var md bytes.Buffer
	Markdown(&md, res)
	if !strings.Contains(md.String(), "| pith | adaptive | 6.00 s | 4.00 s |") || !strings.Contains(md.String(), "The adaptive row") {
		t.Errorf("table lacks the adaptive row or its note:\n%s", md.String())
	}
	l := Plot(res)
	var names []string
	for _, s := range l.Series {
		names = append(names, s.Name)
		if slices.Contains(s.X, 0) {
			t.Errorf("series %q has a point at concurrency 0", s.Name)
		}
		if s.Name == "pith adaptive" && (len(s.Y) != 2 || s.Y[0] != 6 || s.Y[1] != 6 || s.X[0] != 3 || s.X[1] != 20) {
			t.Errorf("adaptive series %v,%v; want 6 s from 3 to 20", s.X, s.Y)
		}
	}
	if !slices.Contains(names, "pith adaptive") {
		t.Errorf("no adaptive series in %q", names)
	}
	if err := l.PNG(io.Discard); err != nil {
		t.Errorf("rendering: %v", err)
	}
}

func TestPayloadSizes(t *testing.T) {
	s := payloadSizes(10000, 100<<10)
	var sum int64
	for _, n := range s {
		sum += n
	}
	mean := float64(sum) / float64(len(s))
	if mean < 90<<10 || mean > 110<<10 {
		t.Errorf("mean %.0f, want about %d", mean, 100<<10)
	}
	if again := payloadSizes(10000, 100<<10); again[1234] != s[1234] {
		t.Errorf("not deterministic")
	}
}

// startPith runs pith on the embedded defaults until the test ends.
func startPith(t *testing.T) bench.Target {
	t.Helper()
	cl, err := bench.StartCluster(context.Background(), bench.ClusterConfig{Binary: pithBin, Dir: t.TempDir(), Password: "syncbench"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	return cl.Target()
}
