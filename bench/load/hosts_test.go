package load

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// repoServer serves a fake repository: repodata/repomd.xml and nfiles packages of 2 KiB.
// With failEvery > 0, the first attempt of every failEvery-th request (counted over the
// whole server) is answered 503; a retry of the same path by the same host succeeds, so
// that retries can be checked without flakiness.
type repoServer struct {
	failEvery int64
	n         atomic.Int64
	failed    atomic.Int64
	mu        sync.Mutex
	tried     map[string]bool // User-Agent + path already failed once
}

func (s *repoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.failEvery > 0 && s.n.Add(1)%s.failEvery == 0 {
		key := r.UserAgent() + " " + r.URL.Path
		s.mu.Lock()
		first := !s.tried[key]
		s.tried[key] = true
		s.mu.Unlock()
		if first {
			s.failed.Add(1)
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
	}
	switch {
	case r.URL.Path == "/repo/repodata/repomd.xml":
		fmt.Fprint(w, "<repomd/>")
	case strings.HasPrefix(r.URL.Path, "/repo/Packages/"):
		w.Write(make([]byte, 2048))
	default:
		http.NotFound(w, r)
	}
}

func repoPaths(n int) []string {
	p := make([]string, n)
	for i := range p {
		p[i] = fmt.Sprintf("Packages/pkg%02d-1.0-1.noarch.rpm", i)
	}
	return p
}

func runHosts(t *testing.T, srv *repoServer, retries int) HostsResult {
	t.Helper()
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Hosts(ctx, HostsConfig{
		Base:     ts.URL + "/repo/",
		Hosts:    50,
		Metadata: []string{"repodata/repomd.xml"},
		Paths:    repoPaths(20),
		Retries:  retries,
		Timeout:  10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	return res
}

func TestHosts(t *testing.T) {
	res := runHosts(t, &repoServer{}, 0)
	if res.Failures != 0 || res.HostsFailed != 0 || len(res.FirstErrors) != 0 {
		t.Errorf("failures %d, hosts failed %d, errors %q", res.Failures, res.HostsFailed, res.FirstErrors)
	}
	if want := int64(50 * 21); res.Requests != want {
		t.Errorf("requests %d, want %d", res.Requests, want)
	}
	if want := int64(50 * (20*2048 + len("<repomd/>"))); res.Bytes != want {
		t.Errorf("bytes %d, want %d", res.Bytes, want)
	}
	if !(res.PerPackageP50 > 0 && res.PerPackageP50 <= res.PerPackageP95 && res.PerPackageP95 <= res.PerPackageMax) {
		t.Errorf("per-package p50 %v p95 %v max %v", res.PerPackageP50, res.PerPackageP95, res.PerPackageMax)
	}
	if res.RPS <= 0 || res.MBps <= 0 {
		t.Errorf("RPS %.1f, MB/s %.2f", res.RPS, res.MBps)
	}
}

func TestHostsRetries(t *testing.T) {
	srv := &repoServer{failEvery: 10, tried: map[string]bool{}}
	res := runHosts(t, srv, 0) // default retries
	if res.Failures != 0 || res.HostsFailed != 0 {
		t.Errorf("failures %d, hosts failed %d with retries: %q", res.Failures, res.HostsFailed, res.FirstErrors)
	}
	if res.Retries != srv.failed.Load() || res.Retries == 0 {
		t.Errorf("retries %d, server failed %d requests", res.Retries, srv.failed.Load())
	}
	if want := int64(50 * 21); res.Requests != want {
		t.Errorf("requests %d, want %d", res.Requests, want)
	}
}

func TestHostsNoRetries(t *testing.T) {
	srv := &repoServer{failEvery: 10, tried: map[string]bool{}}
	res := runHosts(t, srv, -1)
	if res.Retries != 0 {
		t.Errorf("retries %d with retries off", res.Retries)
	}
	if res.Failures == 0 || res.Failures != srv.failed.Load() {
		t.Errorf("failures %d, server failed %d requests", res.Failures, srv.failed.Load())
	}
	// A host whose metadata failed requests nothing more.
	if want := int64(50*21 - 20*res.HostsFailed); res.Requests != want {
		t.Errorf("requests %d, want %d (%d hosts failed on metadata)", res.Requests, want, res.HostsFailed)
	}
	if len(res.FirstErrors) != 1 || !strings.Contains(res.FirstErrors[0], "503") {
		t.Errorf("first errors %q, want the one 503", res.FirstErrors)
	}
}

// A run with a limit stops starting downloads when it passes: what was in flight
// finishes, nothing fails, and the result says how much was done of what was planned.
func TestHostsLimit(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		w.Write(make([]byte, 100))
	}))
	t.Cleanup(ts.Close)
	res, err := Hosts(context.Background(), HostsConfig{Base: ts.URL + "/repo/", Hosts: 4, Metadata: []string{"repodata/repomd.xml"},
		Paths: repoPaths(1000), Limit: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped || res.Planned != 4*1001 || res.Requests >= res.Planned || res.Requests < 4 {
		t.Errorf("stopped %v, requests %d of %d planned", res.Stopped, res.Requests, res.Planned)
	}
	if res.Failures != 0 || res.Bytes != (res.Requests)*100 {
		t.Errorf("failures %d, bytes %d for %d requests", res.Failures, res.Bytes, res.Requests)
	}
	whole := runHosts(t, &repoServer{}, 0)
	if whole.Stopped || whole.Requests != whole.Planned {
		t.Errorf("without a limit: stopped %v, requests %d of %d planned", whole.Stopped, whole.Requests, whole.Planned)
	}
}

// Hosts with a mirror are spread over the two origins in turn: each answers half of the
// hosts, every request of a host going to its origin.
func TestHostsMirrors(t *testing.T) {
	var counts [2]atomic.Int64
	var servers [2]*httptest.Server
	for i := range servers {
		srv := &repoServer{}
		servers[i] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			counts[i].Add(1)
			srv.ServeHTTP(w, r)
		}))
		t.Cleanup(servers[i].Close)
	}
	res, err := Hosts(context.Background(), HostsConfig{Base: servers[0].URL + "/repo/", Mirrors: []string{servers[1].URL + "/repo/"}, Hosts: 10,
		Metadata: []string{"repodata/repomd.xml"}, Paths: repoPaths(4), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failures != 0 || res.Requests != 50 {
		t.Errorf("failures %d, requests %d of 50", res.Failures, res.Requests)
	}
	if a, b := counts[0].Load(), counts[1].Load(); a != 25 || b != 25 {
		t.Errorf("requests per origin: %d and %d, want 25 each", a, b)
	}
}

func TestHostsBadConfig(t *testing.T) {
	ctx := context.Background()
	if _, err := Hosts(ctx, HostsConfig{Base: "http://x/repo", Hosts: 1}); err == nil {
		t.Error("base without trailing slash: no error")
	}
	if _, err := Hosts(ctx, HostsConfig{Base: "http://x/repo/", Mirrors: []string{"http://y/repo"}, Hosts: 1}); err == nil {
		t.Error("mirror without trailing slash: no error")
	}
	if _, err := Hosts(ctx, HostsConfig{Base: "http://x/repo/"}); err == nil {
		t.Error("zero hosts: no error")
	}
}

func TestHistogram(t *testing.T) {
	var h histogram
	for i := 1; i <= 1000; i++ {
		h.add(time.Duration(i) * time.Millisecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Millisecond}, {0.95, 950 * time.Millisecond}, {1, time.Second}} {
		got := h.quantile(c.q)
		if d := got - c.want; d < -c.want/50 || d > c.want/50 {
			t.Errorf("q%.2f = %v, want %v ± 2%%", c.q, got, c.want)
		}
	}
	for _, v := range []uint64{0, 1, 127, 128, 129, 1000, 1 << 40, 1<<63 - 1, 1<<64 - 1} {
		i := histIndex(v)
		if i < 0 || i >= histBuckets {
			t.Fatalf("histIndex(%d) = %d out of range", v, i)
		}
		if m := histValue(i); v >= 128 && (float64(m) < float64(v)*0.98 || float64(m) > float64(v)*1.02) {
			t.Errorf("histValue(histIndex(%d)) = %d", v, m)
		}
	}
}
