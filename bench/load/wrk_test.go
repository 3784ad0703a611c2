package load

import (
	"context"
	"math"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func needWrk(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("wrk"); err != nil {
		t.Skip("wrk not installed")
	}
}

func TestWrk(t *testing.T) {
	needWrk(t)
	base, server := testOrigin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Wrk(ctx, WrkConfig{
		URLs:        []string{base + "a.txt", base + "b.txt", base + "redirect"},
		Connections: 8,
		Duration:    2 * time.Second,
		Headers:     map[string]string{"Accept": "*/*"},
		CountStatus: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %+v", server, res)
	if res.Requests <= 0 {
		t.Fatalf("no requests")
	}
	if !(res.P50 <= res.P90 && res.P90 <= res.P95 && res.P95 <= res.P99 && res.P99 <= res.Max) {
		t.Errorf("percentiles out of order: p50 %v p90 %v p95 %v p99 %v max %v", res.P50, res.P90, res.P95, res.P99, res.Max)
	}
	if want := float64(res.Requests) / res.Duration.Seconds(); math.Abs(res.RPS-want) > 0.01*want {
		t.Errorf("RPS %.1f, want Requests/Duration %.1f", res.RPS, want)
	}
	if res.Non2xx3xx != 0 || res.SocketErrors != 0 {
		t.Errorf("errors: non-2xx/3xx %d, socket %d", res.Non2xx3xx, res.SocketErrors)
	}
	var counted int64
	for _, n := range res.Status {
		counted += n
	}
	if res.Status[200] == 0 || res.Status[302] == 0 {
		t.Errorf("status counts %v: want both 200s and 302s (wrk must not follow the redirect)", res.Status)
	}
	// The status hook also sees responses completed after wrk stops counting; allow slack.
	if counted < res.Requests || counted > res.Requests+int64(8) {
		t.Errorf("status counts sum to %d, requests %d", counted, res.Requests)
	}
}

func TestWrkNon2xx(t *testing.T) {
	needWrk(t)
	base, _ := testOrigin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Wrk(ctx, WrkConfig{URLs: []string{base + "a.txt", base + "missing"}, Connections: 4, Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Non2xx3xx == 0 || res.Non2xx3xx >= res.Requests {
		t.Errorf("Non2xx3xx = %d of %d requests, want some but not all", res.Non2xx3xx, res.Requests)
	}
	if res.Status != nil {
		t.Errorf("Status = %v without CountStatus", res.Status)
	}
}

func TestWrkErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Wrk(ctx, WrkConfig{URLs: []string{"http://a.invalid/x", "http://b.invalid/y"}}); err == nil || !strings.Contains(err.Error(), "origin") {
		t.Errorf("two origins: err = %v", err)
	}
	_, err := Wrk(ctx, WrkConfig{URLs: []string{"http://127.0.0.1:1/x"}, Binary: "pith-no-such-wrk"})
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing binary: err = %v", err)
	}
	// A "wrk" that prints nothing useful: the error must carry its stderr.
	_, err = Wrk(ctx, WrkConfig{URLs: []string{"http://127.0.0.1:1/x"}, Binary: "false"})
	if err == nil {
		t.Errorf("binary printing nothing: no error")
	}
}

func TestWrkScriptManyPaths(t *testing.T) {
	paths := make([]string, 100000)
	for i := range paths {
		paths[i] = "/Packages/p/pkg" + strings.Repeat("x", i%7) + "-1.0-1.el9.x86_64.rpm"
	}
	paths[0] = "/odd \"quoted\" \\ path\n\x01é"
	s := string(wrkScript(paths, true))
	if !strings.Contains(s, `"/odd \034quoted\034 \092 path\010\001\195\169"`) {
		t.Errorf("escaping: %q", s[:200])
	}
	if n := strings.Count(s, ".rpm\",\n"); n != len(paths)-1 {
		t.Errorf("%d paths in script, want %d", n, len(paths)-1)
	}
}

func TestParseWrk(t *testing.T) {
	out := "Running 1s test\nPITHWRK requests=10 duration_us=1000000 bytes=500 p50_us=100 p90_us=200 p95_us=300 p99_us=400 mean_us=150 max_us=900 connect=1 read=2 write=3 timeout=4 status_errors=5 status=200:7,404:5\n"
	r, err := parseWrk(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 10 || r.RPS != 10 || r.P99 != 400*time.Microsecond || r.SocketErrors != 10 || r.Non2xx3xx != 5 || r.Status[404] != 5 {
		t.Errorf("parsed %+v", r)
	}
	if _, err := parseWrk("Running 1s test\n"); err == nil {
		t.Error("no PITHWRK line: no error")
	}
}
