package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"pith/bench"
)

// The upload benchmark keeps working (a tiny size; no timings asserted), on a pith it
// starts for itself, with a running pith as a peer.
func TestBenchUpload(t *testing.T) {
	s := startPith(t, "")
	out := t.TempDir()
	got, err := exec.Command(pithBin, "bench", "upload", "--sizes", "1000,20000", "--n", "3", "--users", "1,2",
		"--peer", "other="+s.url+",password="+adminPassword, "--out", out).CombinedOutput()
	if err != nil {
		t.Fatalf("pith bench upload: %v\n%s", err, got)
	}
	if n := strings.Count(string(got), "\n| pith |"); n != 4 {
		t.Errorf("%d pith rows, want 4:\n%s", n, got)
	}
	if n := strings.Count(string(got), "\n| other |"); n != 4 {
		t.Errorf("%d peer rows, want 4:\n%s", n, got)
	}
	if fi, err := os.Stat(filepath.Join(out, "upload.png")); err != nil || fi.Size() == 0 {
		t.Errorf("upload.png: %v", err)
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

// The content-serving study keeps working: a tiny repository, two load levels.
func TestBenchServe(t *testing.T) {
	out := t.TempDir()
	got, err := exec.Command(pithBin, "bench", "serve", "--packages", "20", "--users", "2,4", "--duration", "1s", "--processes", "1",
		"--out", out).CombinedOutput()
	if err != nil {
		t.Fatalf("pith bench serve: %v\n%s", err, got)
	}
	for _, want := range []string{"| pith, SQLite+files, cache, 1 proc |", "| pith, SQLite+files, no cache, 1 proc |"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("no %q row:\n%s", want, got)
		}
	}
	for _, f := range []string{"serve.md", "serve.png"} {
		if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// The many-hosts study keeps working: a few hosts, pith, pith with its replica and
// nginx, no failures.
func TestBenchHosts(t *testing.T) {
	out := t.TempDir()
	got, err := exec.Command(pithBin, "bench", "hosts", "--packages", "10", "--hosts", "3", "--replica", "--out", out).CombinedOutput()
	if err != nil {
		t.Fatalf("pith bench hosts: %v\n%s", err, got)
	}
	for _, want := range []string{"| pith | 3 |", "| pith + replica | 3 |", "| nginx | 3 |"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("no %q row:\n%s", want, got)
		}
	}
	if !regexp.MustCompile(`\| pith \| 3 \|[^\n]*\| 0 \| 0 \|`).Match(got) || !regexp.MustCompile(`\| pith \+ replica \| 3 \|[^\n]*\| 0 \| 0 \|`).Match(got) {
		t.Errorf("pith had failures:\n%s", got)
	}
	if fi, err := os.Stat(filepath.Join(out, "hosts.png")); err != nil || fi.Size() == 0 {
		t.Errorf("hosts.png: %v", err)
	}
}

// The replication study keeps working: two tiny distributions replicated by a pith of
// its own and by a running pith standing in for Pulp, which is left without them.
func TestBenchReplicate(t *testing.T) {
	peer := startPith(t, "")
	got, err := exec.Command(pithBin, "bench", "replicate", "--distributions", "2", "--packages", "20",
		"--peer", "other="+peer.url+",password="+adminPassword+",content="+peer.content, "--out", "").CombinedOutput()
	if err != nil {
		t.Fatalf("pith bench replicate: %v\n%s", err, got)
	}
	for _, want := range []string{"2 rpm distributions of 20 packages", "| pith |", "| other |", "| other ÷ pith |"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("no %q in the output:\n%s", want, got)
		}
	}
	c := bench.NewClient(bench.Target{URL: peer.url, User: "admin", Password: adminPassword})
	for _, list := range []string{"distributions/rpm/rpm/", "repositories/rpm/rpm/", "remotes/rpm/rpm/", "upstream-pulps/"} {
		var page struct {
			Count int `json:"count"`
		}
		must(t, c.JSON(t.Context(), "GET", "/pulp/api/v3/"+list, nil, &page))
		if page.Count != 0 {
			t.Errorf("the peer keeps %d %s", page.Count, list)
		}
	}
}

// The sync-concurrency study keeps working: a tiny repository through the simulated WAN.
func TestBenchSync(t *testing.T) {
	out := t.TempDir()
	got, err := exec.Command(pithBin, "bench", "sync", "--packages", "20", "--mean", "4096", "--concurrency", "4,1", "--out", out).CombinedOutput()
	if err != nil {
		t.Fatalf("pith bench sync: %v\n%s", err, got)
	}
	if n := strings.Count(string(got), "| yes |"); n != 3 {
		t.Errorf("%d completed rows, want 3 (4, 1 and adaptive):\n%s", n, got)
	}
	if !strings.Contains(string(got), "| pith | adaptive |") {
		t.Errorf("no adaptive row:\n%s", got)
	}
	if fi, err := os.Stat(filepath.Join(out, "sync.png")); err != nil || fi.Size() == 0 {
		t.Errorf("sync.png: %v", err)
	}
}

// The promotion study keeps working: a tiny data set, two steps and the repeat.
func TestBenchPromote(t *testing.T) {
	out := t.TempDir()
	got, err := exec.Command(pithBin, "bench", "promote", "--repos", "30", "--versions", "60", "--units", "10", "--steps", "5,20",
		"--out", out).CombinedOutput()
	if err != nil {
		t.Fatalf("pith bench promote: %v\n%s", err, got)
	}
	for _, want := range []string{"| 5 |", "| 20 |", "| 5 (again, at the end) |"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("no %q row:\n%s", want, got)
		}
	}
	if fi, err := os.Stat(filepath.Join(out, "promote.png")); err != nil || fi.Size() == 0 {
		t.Errorf("promote.png: %v", err)
	}
}

// The export study keeps working (tiny repositories; no timings asserted): a pith of its
// own at two sizes, restarted before each export and import, and a peer (another pith
// standing in for Pulp) at the larger, which must be left without what the study made.
func TestBenchExport(t *testing.T) {
	exports := t.TempDir()
	peer := startPith(t, "", "--allowed-export-paths", exports, "--allowed-import-paths", exports)
	got, err := exec.Command(pithBin, "bench", "export", "--type", "file", "--packages", "5,20", "--rounds", "2", "--out", "",
		"--peer", "other="+peer.url+",password="+adminPassword, "--peer-dir", exports).CombinedOutput()
	if err != nil {
		t.Fatalf("pith bench export: %v\n%s", err, got)
	}
	for _, want := range []string{"| pith | 5 | 1 |", "| pith | 5 | 2 |", "| pith | 20 | 2 |", "| other | 20 | 2 |"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("no %q row:\n%s", want, got)
		}
	}
	if strings.Contains(string(got), "| other | 5 |") {
		t.Errorf("the peer ran at the smaller size:\n%s", got)
	}
	for _, list := range []string{"/pulp/api/v3/repositories/", "/pulp/api/v3/remotes/", "/pulp/api/v3/exporters/core/pulp/",
		"/pulp/api/v3/importers/core/pulp/", "/pulp/api/v3/content/file/files/"} {
		if code, m := call(t, "GET", peer.url+list, "", nil); code != 200 || m["count"] != float64(0) {
			t.Errorf("GET %s on the peer after the study: %d %v", list, code, m)
		}
	}
	if left, _ := os.ReadDir(exports); len(left) > 0 {
		t.Errorf("%d files left in the peer's export directory", len(left))
	}
}
