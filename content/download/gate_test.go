package download

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"pith/bench/wan"
)

// clock is a fake time source; sleeping on it advances it.
type clock struct {
	mu     sync.Mutex
	t      time.Time
	slept  []time.Duration
	onWait func() // called by sleep before advancing, if set
}

func newClock() *clock { return &clock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func (c *clock) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.slept = append(c.slept, d)
	c.t = c.t.Add(d)
	c.mu.Unlock()
	return nil
}

// fakeGate is an adaptive gate on a fake clock with one-second windows.
func fakeGate(bound int) (*gate, *clock) {
	c := newClock()
	g := newGate(bound, true)
	g.now, g.sleep, g.window = c.now, c.sleep, time.Second
	return g, c
}

// window runs one measurement window in which the limit was binding and the upstream
// delivered rate(limit) bytes per second, and returns the limit after it.
func window(g *gate, c *clock, rate func(limit int) int64) int {
	g.mu.Lock()
	if g.winStart.IsZero() {
		g.restart(c.now())
	}
	g.winFull = true           // a request waited for a slot
	g.winBytes = rate(g.limit) // one window's worth
	g.mu.Unlock()
	c.advance(time.Second)
	g.mu.Lock()
	g.tick(c.now())
	g.mu.Unlock()
	return g.current()
}

// knee is an upstream whose throughput grows linearly up to k requests at once and is
// flat beyond: a per-connection cap under a total cap.
func knee(k int) func(int) int64 {
	return func(limit int) int64 { return int64(min(limit, k)) << 20 }
}

func TestGateSlowStartAndKnee(t *testing.T) {
	t.Parallel()
	g, c := fakeGate(32)
	if l := g.current(); l != adaptiveStart {
		t.Fatalf("limit %d at the start, want %d", l, adaptiveStart)
	}
	var got []int
	for range 5 {
		got = append(got, window(g, c, knee(8)))
	}
	// Doubling while throughput grows (2→4→8→16), no gain at 16 so back to 8 and a trim
	// step down to 6, which loses throughput: back to 8 and hold there.
	if diff := cmp.Diff([]int{4, 8, 16, 6, 8}, got); diff != "" {
		t.Fatalf("limits after each window (-want +got):\n%s", diff)
	}
	if g.phase != holding {
		t.Fatalf("phase %d after finding the knee, want holding", g.phase)
	}
	// It holds for holdWindows, then probes one step up, finds no gain and comes back.
	got = got[:0]
	for range holdWindows + 1 {
		got = append(got, window(g, c, knee(8)))
	}
	want := make([]int, holdWindows+1)
	for i := range want {
		want[i] = 8
	}
	want[holdWindows-1] = 10
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("limits while holding and re-probing (-want +got):\n%s", diff)
	}
}

// Where throughput keeps growing the limit climbs to the bound and no further; where it
// never grows it trims down to 1 and no lower.
func TestGateStaysWithinBounds(t *testing.T) {
	t.Parallel()
	g, c := fakeGate(5)
	for i := range 3 * holdWindows {
		if l := window(g, c, knee(1000)); l < 1 || l > 5 {
			t.Fatalf("window %d: limit %d, bound 5", i, l)
		}
	}
	if l := g.current(); l != 5 {
		t.Errorf("limit %d with throughput growing all the way, want the bound 5", l)
	}

	g, c = fakeGate(32)
	var low []int
	for range 3 * holdWindows {
		l := window(g, c, knee(1))
		if l < 1 || l > 32 {
			t.Fatalf("limit %d, bound 32", l)
		}
		low = append(low, l)
	}
	if l := g.current(); l > 2 {
		t.Errorf("limit %d where one request gets all the throughput (limits %v)", l, low)
	}
}

func TestGateHalvesOnOverload(t *testing.T) {
	t.Parallel()
	g, c := fakeGate(32)
	for g.current() < 16 {
		window(g, c, knee(100))
	}
	before := c.now()
	c.advance(time.Millisecond)
	g.overloaded(c.now(), 0)
	if l := g.current(); l != 8 {
		t.Fatalf("limit %d after a 429 at 16, want 8", l)
	}
	// Requests admitted before that halving were part of the same overload.
	g.overloaded(before, 0)
	if l := g.current(); l != 8 {
		t.Errorf("limit %d after a 429 to a request admitted before the halving, want 8 still", l)
	}
	var got []int
	for range 5 {
		c.advance(time.Millisecond)
		g.overloaded(c.now(), 0)
		got = append(got, g.current())
	}
	if diff := cmp.Diff([]int{4, 2, 1, 1, 1}, got); diff != "" {
		t.Errorf("limits after more 429s (-want +got):\n%s", diff)
	}
	if !g.pauseUntil.IsZero() {
		t.Errorf("paused until %v without a Retry-After", g.pauseUntil)
	}
	// It waits at the new limit before probing upwards again; the upstream refused even
	// 1 in flight, so no probe goes above it before ceilingFor has passed.
	for i := range holdWindows {
		if l := window(g, c, knee(100)); l != 1 {
			t.Fatalf("limit %d in window %d after halving, want 1 until the hold ends", l, i+1)
		}
	}
	c.advance(ceilingFor)
	for g.current() == 1 {
		window(g, c, knee(100))
	}
	if l := g.current(); l != 2 {
		t.Errorf("limit %d after the hold, want a probe to 2", l)
	}
}

// A 429 with many requests in flight cuts the limit to one fewer than were in flight
// when that is more than half, and the refused limit is not probed again for a while.
func TestGateFindsUpstreamCap(t *testing.T) {
	t.Parallel()
	g, c := fakeGate(32)
	for g.current() < 8 {
		window(g, c, knee(100))
	}
	var tickets []*ticket
	for range 8 {
		tk, err := g.acquire(context.Background(), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		tickets = append(tickets, tk)
	}
	c.advance(time.Millisecond)
	g.overloaded(c.now(), 0)
	if l := g.current(); l != 7 {
		t.Fatalf("limit %d after a 429 with 8 in flight, want 7", l)
	}
	for _, tk := range tickets {
		tk.release()
	}
	for range 3 * holdWindows {
		if l := window(g, c, knee(100)); l >= 8 {
			t.Fatalf("limit %d probed within ceilingFor of a 429 at 8", l)
		}
	}
}

// A Retry-After pauses every new request, fixed or adaptive, except the retry that
// already waited it out; a fixed limit does not change.
func TestGatePause(t *testing.T) {
	t.Parallel()
	c := newClock()
	g := newGate(3, false)
	var spreads []time.Duration
	g.now, g.sleep = c.now, c.sleep
	g.jitter = func(m time.Duration) time.Duration { spreads = append(spreads, m); return 0 }
	t0 := c.now()
	g.overloaded(t0, 5*time.Second)
	if l := g.current(); l != 3 {
		t.Errorf("fixed limit %d after a 429, want 3", l)
	}
	tk, err := g.acquire(context.Background(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	tk.release()
	if diff := cmp.Diff([]time.Duration{5 * time.Second}, c.slept); diff != "" {
		t.Errorf("pauses of a new request (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]time.Duration{2500 * time.Millisecond}, spreads); diff != "" {
		t.Errorf("jitter after the pause: up to (-want +got):\n%s", diff)
	}
	if !c.now().Equal(t0.Add(5 * time.Second)) {
		t.Errorf("admitted at %v, want the end of the pause %v", c.now(), t0.Add(5*time.Second))
	}

	g.overloaded(c.now(), 7*time.Second)
	c.advance(2 * time.Second)
	c.slept = nil
	tk, err = g.acquire(context.Background(), c.now().Add(5*time.Second)) // its backoff ran to the pause's end
	if err != nil {
		t.Fatal(err)
	}
	tk.release()
	if len(c.slept) != 0 {
		t.Errorf("a retry whose backoff covered the pause paused again: %v", c.slept)
	}
	tk, err = g.acquire(context.Background(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	tk.release()
	if diff := cmp.Diff([]time.Duration{5 * time.Second}, c.slept); diff != "" {
		t.Errorf("pauses of a new request 2s into a 7s pause (-want +got):\n%s", diff)
	}

	// A shorter Retry-After does not cut a longer pause short.
	g.overloaded(c.now(), 10*time.Second)
	g.overloaded(c.now(), time.Second)
	if want := c.now().Add(10 * time.Second); !g.pauseUntil.Equal(want) {
		t.Errorf("paused until %v, want %v", g.pauseUntil, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.acquire(ctx, time.Time{}); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled request during a pause: %v", err)
	}
	if n := g.used(); n != 0 {
		t.Errorf("%d slots taken, want 0", n)
	}
}

// A request waiting for a slot returns ctx's error when cancelled and leaves no slot
// taken and no waiter behind; the slot's next owner is served.
func TestGateCancelWhileWaiting(t *testing.T) {
	t.Parallel()
	for _, adaptive := range []bool{false, true} {
		g := newGate(1, adaptive)
		held, err := g.acquire(context.Background(), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancelCause(context.Background())
		stop := errors.New("sync cancelled")
		done := make(chan error)
		go func() {
			_, err := g.acquire(ctx, time.Time{})
			done <- err
		}()
		waitFor(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.waiters) == 1 })
		cancel(stop)
		if err := <-done; !errors.Is(err, stop) {
			t.Errorf("adaptive %v: cancelled while waiting: %v, want the cause", adaptive, err)
		}
		g.mu.Lock()
		waiters, inUse := len(g.waiters), g.inUse
		g.mu.Unlock()
		if waiters != 0 || inUse != 1 {
			t.Errorf("adaptive %v: %d waiters and %d slots taken after the cancel, want 0 and 1", adaptive, waiters, inUse)
		}
		held.release()
		held.release() // twice is harmless
		if n := g.used(); n != 0 {
			t.Errorf("adaptive %v: %d slots taken after the release, want 0", adaptive, n)
		}
		next, err := g.acquire(context.Background(), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		next.release()
	}

	// A waiter cancelled as it is given a slot either takes it or passes it on.
	for range 20 {
		g := newGate(1, false)
		held, _ := g.acquire(context.Background(), time.Time{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- g.take(ctx) }()
		waitFor(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return len(g.waiters) == 1 })
		cancel()
		held.release()
		err := <-done
		want := 0
		if err == nil {
			want = 1
		}
		if n := g.used(); n != want {
			t.Errorf("take returned %v, and %d slots are taken; want %d", err, n, want)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i > 5000 {
			t.Fatal("condition not reached in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestConcurrencyAndLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg          Config
		bound, limit int
	}{
		{Config{}, 10, 10},
		{Config{DownloadConcurrency: 4}, 4, 4},
		{Config{Adaptive: true}, 32, 2},
		{Config{Adaptive: true, DownloadConcurrency: 6}, 6, 2},
		{Config{Adaptive: true, DownloadConcurrency: 1}, 1, 1},
	} {
		d, err := New(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		tr := d.client.Transport.(*http.Transport)
		if d.Concurrency() != tc.bound || d.Limit() != tc.limit || tr.MaxConnsPerHost != tc.bound || tr.MaxIdleConnsPerHost != tc.bound {
			t.Errorf("%+v: concurrency %d, limit %d, transport %d/%d; want %d, %d, %d", tc.cfg, d.Concurrency(), d.Limit(),
				tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost, tc.bound, tc.limit, tc.bound)
		}
	}
}

// A 429 with Retry-After holds back every new request of the downloader, not only the
// one retrying.
func TestRetryAfterPausesAll(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/a" && calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "7")
			http.Error(w, "slow down", 429)
			return
		}
		w.Write([]byte("x"))
	}))
	defer srv.Close()
	for _, adaptive := range []bool{false, true} {
		calls.Store(0)
		d, sleeps := newD(t, Config{Adaptive: adaptive})
		c := newClock()
		d.gate.now, d.gate.sleep = c.now, c.sleep
		d.gate.jitter = func(time.Duration) time.Duration { return 0 }
		if _, _, err := fetch(context.Background(), d, srv.URL+"/a", Expect{Size: 1}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]time.Duration{7 * time.Second}, *sleeps); diff != "" {
			t.Errorf("adaptive %v: backoff of the request answered 429 (-want +got):\n%s", adaptive, diff)
		}
		if len(c.slept) != 0 {
			t.Errorf("adaptive %v: the retry waited for the gate too: %v", adaptive, c.slept)
		}
		if _, _, err := fetch(context.Background(), d, srv.URL+"/b", Expect{Size: 1}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]time.Duration{7 * time.Second}, c.slept); diff != "" {
			t.Errorf("adaptive %v: pause of another request after the 429 (-want +got):\n%s", adaptive, diff)
		}
		if l, want := d.Limit(), map[bool]int{false: 10, true: 1}[adaptive]; l != want {
			t.Errorf("adaptive %v: limit %d after a 429, want %d", adaptive, l, want)
		}
	}
}

// files returns n files of size bytes each, named f0… .
func files(n, size int) fstest.MapFS {
	fs := fstest.MapFS{}
	for i := range n {
		fs[fmt.Sprintf("f%d", i)] = &fstest.MapFile{Data: make([]byte, size)}
	}
	return fs
}

// getAll downloads every file of fs with one goroutine per file (more than the bound,
// so the limit is what binds) and returns the errors.
func getAll(d *Downloader, base string, fs fstest.MapFS, size int) []error {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for name := range fs {
		wg.Go(func() {
			var err error
			if name[1]%2 == 0 {
				_, _, err = fetch(context.Background(), d, base+"/"+name, Expect{Size: int64(size)})
			} else {
				var rc io.ReadCloser
				if rc, _, err = d.Open(context.Background(), base+"/"+name, Expect{Size: int64(size)}); err == nil {
					_, err = io.Copy(io.Discard, rc)
					rc.Close()
				}
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}

// Against an upstream whose throughput stops growing beyond k streams (1 MiB/s each,
// k MiB/s in all), the adaptive limit settles near k.
func TestAdaptiveFindsKnee(t *testing.T) {
	t.Parallel()
	const k, size, n = 8, 128 << 10, 160 // 20 MiB: about 2.5 s at the knee
	fs := files(n, size)
	srv := httptest.NewServer(wan.New(fs, wan.Config{Latency: 2 * time.Millisecond, PerConnBps: 1 << 20, TotalBps: k << 20}))
	defer srv.Close()
	d, err := New(Config{Adaptive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.CloseIdleConnections()
	d.gate.window = 250 * time.Millisecond
	var peak atomic.Int32
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			if l := int32(d.Limit()); l > peak.Load() {
				peak.Store(l)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	errs := getAll(d, srv.URL, fs, size)
	close(stop)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d downloads failed, first: %v", len(errs), errs[0])
	}
	l := d.Limit()
	t.Logf("limit %d at the end, %d at most", l, peak.Load())
	if l < k/2 || l > 2*k {
		t.Errorf("limit %d at the end, want near the knee %d (between %d and %d)", l, k, k/2, 2*k)
	}
	if p := peak.Load(); p > 32 || p <= adaptiveStart {
		t.Errorf("limit peaked at %d: want it raised from %d and never above the bound 32", p, adaptiveStart)
	}
}

// Against an upstream answering 429 (Retry-After: 1) beyond m requests at once, every
// download succeeds and the limit is halved.
func TestAdaptiveTooMany(t *testing.T) {
	t.Parallel()
	const m, size, n = 3, 4 << 10, 60
	fs := files(n, size)
	w := wan.New(fs, wan.Config{Latency: 10 * time.Millisecond, MaxConcurrent: m, RetryAfter: time.Second})
	srv := httptest.NewServer(w)
	defer srv.Close()
	d, err := New(Config{Adaptive: true, DownloadConcurrency: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer d.CloseIdleConnections()
	d.gate.window = 100 * time.Millisecond
	if errs := getAll(d, srv.URL, fs, size); len(errs) > 0 {
		t.Fatalf("%d downloads failed, first: %v", len(errs), errs[0])
	}
	st := w.Stats()
	t.Logf("%d requests, %d answered 429, peak %d at the upstream, limit %d at the end", st.Requests, st.TooMany, st.PeakConcurrent, d.Limit())
	if st.TooMany == 0 {
		t.Fatalf("no 429 sent: the limit never went beyond %d", m)
	}
	d.gate.mu.Lock()
	cut := d.gate.lastCut
	d.gate.mu.Unlock()
	if cut.IsZero() {
		t.Errorf("the limit was never halved after %d answers 429", st.TooMany)
	}
	if st.TooMany > n/2 {
		t.Errorf("%d answers 429 for %d files: the downloader kept overloading the upstream", st.TooMany, n)
	}
}
