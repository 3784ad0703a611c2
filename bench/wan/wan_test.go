package wan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/fstest"
	"time"
)

const (
	kib = 1 << 10
	mib = 1 << 20
)

// pattern returns n deterministic bytes, so that ranges can be checked.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// testFS holds files of various sizes.
func testFS() fstest.MapFS {
	return fstest.MapFS{
		"small.txt":         {Data: []byte("hello, wan\n")},
		"repo/128k.bin":     {Data: pattern(128 * kib)},
		"repo/1m.bin":       {Data: pattern(mib)},
		"repo/16m.bin":      {Data: pattern(16 * mib)},
		"repo/data/dir.txt": {Data: []byte("x")},
	}
}

// start serves testFS under cfg and stops it when the test ends.
func start(t *testing.T, cfg Config) (string, *Server) {
	t.Helper()
	url, stop, s, err := Listen(testFS(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return url, s
}

// get downloads url and returns the response and its body.
func get(t *testing.T, ctx context.Context, url string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// timedGet downloads url, checks for 200 and the expected size, and returns how long it
// took.
func timedGet(t *testing.T, url string, size int) time.Duration {
	t.Helper()
	begin := time.Now()
	resp, body := get(t, context.Background(), url, nil)
	took := time.Since(begin)
	if resp.StatusCode != http.StatusOK || len(body) != size {
		t.Fatalf("GET %s: status %d, %d bytes; want 200, %d bytes", url, resp.StatusCode, len(body), size)
	}
	return took
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// settle waits until no request is in flight: a client may have read a whole body
// before the handler has counted its last bytes and returned.
func settle(t *testing.T, s *Server) {
	t.Helper()
	waitFor(t, "no request in flight", func() bool { return s.Stats().InFlight == 0 })
}

// within fails unless lo <= d <= hi.
func within(t *testing.T, what string, d, lo, hi time.Duration) {
	t.Helper()
	t.Logf("%s took %v (want %v..%v)", what, d, lo, hi)
	if d < lo || d > hi {
		t.Errorf("%s took %v, want %v..%v", what, d, lo, hi)
	}
}

func TestServesFiles(t *testing.T) {
	url, _ := start(t, Config{})
	resp, body := get(t, context.Background(), url+"/small.txt", nil)
	if resp.StatusCode != http.StatusOK || string(body) != "hello, wan\n" {
		t.Errorf("GET small.txt: %d %q", resp.StatusCode, body)
	}
	resp, body = get(t, context.Background(), url+"/repo/1m.bin", nil)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, pattern(mib)) {
		t.Errorf("GET 1m.bin: status %d, %d bytes, content differs", resp.StatusCode, len(body))
	}
	for _, path := range []string{"/missing", "/repo", "/repo/data/", "/"} {
		if resp, _ := get(t, context.Background(), url+path, nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", path, resp.StatusCode)
		}
	}
}

func TestHead(t *testing.T) {
	url, s := start(t, Config{})
	resp, err := http.Head(url + "/repo/1m.bin")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ContentLength != mib {
		t.Errorf("HEAD: status %d, length %d; want 200, %d", resp.StatusCode, resp.ContentLength, mib)
	}
	if got := s.Stats().Bytes; got != 0 {
		t.Errorf("HEAD sent %d body bytes", got)
	}
}

func TestLatency(t *testing.T) {
	const latency = 150 * time.Millisecond
	url, _ := start(t, Config{Latency: latency, Jitter: 20 * time.Millisecond})
	took := timedGet(t, url+"/small.txt", len("hello, wan\n"))
	within(t, "small file", took, latency-20*time.Millisecond, latency+time.Second)

	url, _ = start(t, Config{Latency: latency})
	took = timedGet(t, url+"/small.txt", len("hello, wan\n"))
	within(t, "small file without jitter", took, latency, latency+time.Second)
}

func TestPerConnCap(t *testing.T) {
	url, _ := start(t, Config{PerConnBps: 4 * mib})
	took := timedGet(t, url+"/repo/1m.bin", mib)
	// The cap is the lower bound; the upper one is loose: a loaded machine is slower.
	within(t, "1 MiB at 4 MiB/s", took, 200*time.Millisecond, 5*time.Second)
}

func TestTotalCap(t *testing.T) {
	url, s := start(t, Config{TotalBps: 8 * mib})
	const streams = 4
	took := make([]time.Duration, streams)
	begin := time.Now()
	var wg sync.WaitGroup
	for i := range streams {
		wg.Go(func() { took[i] = timedGet(t, url+"/repo/1m.bin", mib) })
	}
	wg.Wait()
	within(t, "4 x 1 MiB at 8 MiB/s in total", time.Since(begin), 450*time.Millisecond, 5*time.Second)
	settle(t, s)
	// Streams take turns chunk by chunk, so none finishes far ahead of the others.
	for i, d := range took {
		if d < 300*time.Millisecond {
			t.Errorf("stream %d finished after %v; the streams are not interleaved", i, d)
		}
	}
	if st := s.Stats(); st.Requests != streams || st.Bytes != streams*mib || st.PeakConcurrent > streams {
		t.Errorf("stats %+v", st)
	}
}

// TestManyStreams checks that 100 concurrent shaped streams complete near the ideal time.
func TestManyStreams(t *testing.T) {
	cfg := Config{Latency: 20 * time.Millisecond, PerConnBps: 512 * kib, TotalBps: 16 * mib}
	url, s := start(t, cfg)
	const streams = 100
	sizes := make([]int64, streams)
	begin := time.Now()
	var wg sync.WaitGroup
	for i := range streams {
		sizes[i] = 128 * kib
		wg.Go(func() { timedGet(t, url+"/repo/128k.bin", 128*kib) })
	}
	wg.Wait()
	ideal := Ideal(cfg, sizes, streams)
	within(t, "100 x 128 KiB", time.Since(begin), ideal*9/10, ideal+3*time.Second)
	settle(t, s)
	if st := s.Stats(); st.PeakConcurrent < 2 || st.Bytes != streams*128*kib {
		t.Errorf("stats %+v", st)
	}
}

func TestTooMany(t *testing.T) {
	url, s := start(t, Config{PerConnBps: 256 * kib, MaxConcurrent: 2, RetryAfter: 1500 * time.Millisecond})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { timedGet(t, url+"/repo/128k.bin", 128*kib) })
	}
	waitFor(t, "two requests in flight", func() bool { return s.Stats().InFlight == 2 })

	resp, _ := get(t, context.Background(), url+"/small.txt", nil)
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("third request: status %d, want 429", resp.StatusCode)
	}
	if got := resp.Header.Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After %q, want \"2\"", got)
	}
	wg.Wait()
	settle(t, s)

	want := Stats{Requests: 3, Bytes: 2 * 128 * kib, TooMany: 1, PeakConcurrent: 2}
	if got := s.Stats(); got != want {
		t.Errorf("Stats() = %+v, want %+v", got, want)
	}
	resp, body := get(t, context.Background(), url+StatsPath, nil)
	var served Stats
	if err := json.Unmarshal(body, &served); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d, %v: %s", StatsPath, resp.StatusCode, err, body)
	}
	if served != want {
		t.Errorf("GET %s = %+v, want %+v", StatsPath, served, want)
	}
	s.ResetStats()
	if got := s.Stats(); got != (Stats{}) {
		t.Errorf("after ResetStats: %+v", got)
	}
}

func TestRange(t *testing.T) {
	url, s := start(t, Config{PerConnBps: 4 * mib})
	resp, body := get(t, context.Background(), url+"/repo/1m.bin", http.Header{"Range": {"bytes=100000-100099"}})
	if resp.StatusCode != http.StatusPartialContent {
		t.Fatalf("status %d, want 206", resp.StatusCode)
	}
	if want := pattern(mib)[100000:100100]; !bytes.Equal(body, want) {
		t.Errorf("range body differs: got %d bytes", len(body))
	}
	if got := resp.Header.Get("Content-Range"); got != fmt.Sprintf("bytes 100000-100099/%d", mib) {
		t.Errorf("Content-Range %q", got)
	}
	if got := s.Stats().Bytes; got != 100 {
		t.Errorf("Bytes = %d, want 100", got)
	}
}

func TestCancelReleasesSlot(t *testing.T) {
	url, s := start(t, Config{TotalBps: 256 * kib, MaxConcurrent: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/repo/16m.bin", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, kib)); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.InFlight != 1 {
		t.Fatalf("in flight %d, want 1", st.InFlight)
	}
	if resp, _ := get(t, context.Background(), url+"/small.txt", nil); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("second request while the slot is held: status %d, want 429", resp.StatusCode)
	}

	cancel()
	resp.Body.Close()
	settle(t, s)

	// The abandoned stream no longer sends, nor draws on the shared budget:
	// 128 KiB at 256 KiB/s in total takes about half a second.
	sent := s.Stats().Bytes
	took := timedGet(t, url+"/repo/128k.bin", 128*kib)
	within(t, "128 KiB after cancellation", took, 300*time.Millisecond, 5*time.Second)
	settle(t, s)
	if got := s.Stats().Bytes - sent; got != 128*kib {
		t.Errorf("sent %d bytes after the cancellation, want %d", got, 128*kib)
	}
}

func TestSetConfig(t *testing.T) {
	url, s := start(t, Config{})
	s.SetConfig(Config{PerConnBps: 4 * mib})
	within(t, "1 MiB after SetConfig", timedGet(t, url+"/repo/1m.bin", mib), 200*time.Millisecond, 5*time.Second)
	s.SetConfig(Config{TotalBps: 4 * mib})
	within(t, "1 MiB under total cap", timedGet(t, url+"/repo/1m.bin", mib), 200*time.Millisecond, 5*time.Second)
	s.SetConfig(Config{})
	within(t, "1 MiB unshaped", timedGet(t, url+"/repo/1m.bin", mib), 0, 200*time.Millisecond)
}
