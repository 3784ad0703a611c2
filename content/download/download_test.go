package download

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sink is a Sink in memory.
type sink struct {
	bytes.Buffer
	aborted bool
}

func (s *sink) Abort() { s.aborted = true }

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// newD builds a downloader that records its backoff pauses instead of sleeping.
func newD(t *testing.T, cfg Config) (*Downloader, *[]time.Duration) {
	t.Helper()
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var sleeps []time.Duration
	d.sleep = func(ctx context.Context, dur time.Duration) error {
		mu.Lock()
		sleeps = append(sleeps, dur)
		mu.Unlock()
		return ctx.Err()
	}
	t.Cleanup(d.CloseIdleConnections)
	return d, &sleeps
}

// fetch downloads into fresh in-memory sinks and returns them all.
func fetch(ctx context.Context, d *Downloader, url string, want Expect) (Result, []*sink, error) {
	var sinks []*sink
	res, err := d.Fetch(ctx, url, want, func() (Sink, error) {
		s := &sink{}
		sinks = append(sinks, s)
		return s, nil
	})
	return res, sinks, err
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func TestFetch(t *testing.T) {
	t.Parallel()
	body := []byte("the file body")
	zipped := gz(body)
	ok := func(_ int, w http.ResponseWriter, _ *http.Request) { w.Write(body) }
	status := func(code int) func(int, http.ResponseWriter, *http.Request) {
		return func(_ int, w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", code) }
	}
	truncated := func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)+10))
		w.Write(body)
	}
	for _, tc := range []struct {
		name      string
		cfg       Config
		handler   func(call int, w http.ResponseWriter, r *http.Request)
		want      Expect
		err       string // "" for success; else the message after "GET <url>: "
		is        error
		status    int
		attempts  int
		sleeps    []time.Duration // exact pauses, when set
		lastKept  bool            // on success the last sink is not aborted
		noRequest bool
	}{
		{name: "size and digest verified", handler: ok, want: Expect{Size: 13, SHA256: sum(body)}, attempts: 1},
		{name: "nothing expected", handler: ok, want: Expect{Size: -1}, attempts: 1},
		{name: "upper-case expected digest", handler: ok, want: Expect{Size: -1, SHA256: strings.ToUpper(sum(body))}, attempts: 1},
		{name: "404 fails at once", handler: status(404), want: Expect{Size: -1}, err: "404 Not Found", status: 404, attempts: 1},
		{name: "403 fails at once", handler: status(403), want: Expect{Size: -1}, err: "403 Forbidden", status: 403, attempts: 1},
		{name: "500 then 200", want: Expect{Size: 13, SHA256: sum(body)}, attempts: 2,
			handler: func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					http.Error(w, "oops", 500)
					return
				}
				w.Write(body)
			}},
		{name: "503 every time", handler: status(503), want: Expect{Size: -1},
			err: "503 Service Unavailable (after 4 attempts)", status: 503, attempts: 4},
		{name: "no retries", cfg: Config{MaxRetries: -1}, handler: status(502), want: Expect{Size: -1},
			err: "502 Bad Gateway", status: 502, attempts: 1},
		{name: "one retry", cfg: Config{MaxRetries: 1}, handler: status(500), want: Expect{Size: -1},
			err: "500 Internal Server Error (after 2 attempts)", status: 500, attempts: 2},
		{name: "429 honours Retry-After", want: Expect{Size: 13}, attempts: 2, sleeps: []time.Duration{7 * time.Second},
			handler: func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					w.Header().Set("Retry-After", "7")
					http.Error(w, "slow down", 429)
					return
				}
				w.Write(body)
			}},
		{name: "Retry-After is capped", want: Expect{Size: 13}, attempts: 2, sleeps: []time.Duration{time.Minute},
			handler: func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					w.Header().Set("Retry-After", "86400")
					http.Error(w, "slow down", 429)
					return
				}
				w.Write(body)
			}},
		{name: "truncated every time", handler: truncated, want: Expect{Size: -1},
			err: "size mismatch: expected 23, got 13 (truncated) (after 4 attempts)", is: ErrSizeMismatch, attempts: 4},
		{name: "truncated then whole", want: Expect{Size: 13, SHA256: sum(body)}, attempts: 2,
			handler: func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					truncated(n, w, r)
					return
				}
				w.Write(body)
			}},
		{name: "wrong digest", handler: ok, want: Expect{Size: -1, SHA256: strings.Repeat("0", 64)},
			err: "sha256 mismatch: expected " + strings.Repeat("0", 64) + ", got " + sum(body) + " (after 4 attempts)", is: ErrDigestMismatch, attempts: 4},
		{name: "shorter than expected", cfg: Config{MaxRetries: -1}, handler: ok, want: Expect{Size: 20},
			err: "size mismatch: expected 20, got 13", is: ErrSizeMismatch, attempts: 1},
		{name: "longer than expected", cfg: Config{MaxRetries: -1}, handler: ok, want: Expect{Size: 3},
			err: "size mismatch: expected 3, got more than 3", is: ErrSizeMismatch, attempts: 1},
		{name: "empty file", handler: func(int, http.ResponseWriter, *http.Request) {}, want: Expect{Size: 0, SHA256: sum(nil)}, attempts: 1},
		{name: "bad expected digest", handler: ok, want: Expect{Size: -1, SHA256: "xyz"},
			err: `expected sha256 "xyz" is not 64 hex digits`, noRequest: true},
		{name: "gzip encoding is not undone", want: Expect{Size: int64(len(zipped)), SHA256: sum(zipped)}, attempts: 1,
			handler: func(_ int, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/x-tar")
				w.Header().Set("Content-Encoding", "gzip")
				w.Write(zipped)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				tc.handler(int(calls.Add(1)), w, r)
			}))
			defer srv.Close()
			d, sleeps := newD(t, tc.cfg)
			url := srv.URL + "/x.iso"
			res, sinks, err := fetch(context.Background(), d, url, tc.want)
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				last := sinks[len(sinks)-1]
				wantSHA := tc.want.SHA256
				if wantSHA == "" {
					wantSHA = sum(last.Bytes())
				}
				if diff := cmp.Diff(Result{Size: int64(last.Len()), SHA256: strings.ToLower(wantSHA), Attempts: tc.attempts}, res); diff != "" {
					t.Errorf("result (-want +got):\n%s", diff)
				}
				if last.aborted {
					t.Error("the sink of the successful attempt was aborted")
				}
			} else {
				de, ok := errors.AsType[*Error](err)
				if !ok {
					t.Fatalf("error %v (%T), want an *Error", err, err)
				}
				if got, want := err.Error(), "GET "+url+": "+tc.err; got != want {
					t.Errorf("error\n got %s\nwant %s", got, want)
				}
				if de.URL != url || de.Status != tc.status || de.Attempts != tc.attempts {
					t.Errorf("error fields: url %s status %d attempts %d; want status %d attempts %d", de.URL, de.Status, de.Attempts, tc.status, tc.attempts)
				}
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("errors.Is(%v, %v) is false", err, tc.is)
				}
			}
			if got := len(sinks); got > tc.attempts { // a sink is opened only for a 200
				t.Errorf("%d sinks opened for %d attempts", got, tc.attempts)
			}
			for i, s := range sinks {
				if failed := tc.err != "" || i < len(sinks)-1; failed && !s.aborted {
					t.Errorf("the sink of failed attempt %d was not aborted", i+1)
				}
			}
			wantCalls := tc.attempts
			if tc.noRequest {
				wantCalls = 0
			}
			if got := int(calls.Load()); got != wantCalls {
				t.Errorf("server saw %d requests, want %d", got, wantCalls)
			}
			if got := len(*sleeps); got != max(tc.attempts-1, 0) {
				t.Errorf("%d backoff pauses for %d attempts", got, tc.attempts)
			}
			if tc.sleeps != nil {
				if diff := cmp.Diff(tc.sleeps, *sleeps); diff != "" {
					t.Errorf("pauses (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// A sink that cannot be opened or written ends the download without retries.
func TestFetchSinkErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("data")) }))
	defer srv.Close()
	d, _ := newD(t, Config{})
	full := errors.New("disk full")
	_, err := d.Fetch(context.Background(), srv.URL+"/a", Expect{Size: -1}, func() (Sink, error) { return nil, full })
	if de, ok := errors.AsType[*Error](err); !ok || de.Attempts != 1 || !errors.Is(err, full) || !strings.Contains(err.Error(), "open sink: disk full") {
		t.Errorf("sink that cannot open: %v", err)
	}
	bad := &failingSink{err: full}
	_, err = d.Fetch(context.Background(), srv.URL+"/a", Expect{Size: -1}, func() (Sink, error) { return bad, nil })
	if de, ok := errors.AsType[*Error](err); !ok || de.Attempts != 1 || !errors.Is(err, full) || !strings.Contains(err.Error(), "write: disk full") || !bad.aborted {
		t.Errorf("sink that cannot write: %v (aborted %v)", err, bad.aborted)
	}
}

type failingSink struct {
	err     error
	aborted bool
}

func (f *failingSink) Write([]byte) (int, error) { return 0, f.err }
func (f *failingSink) Abort()                    { f.aborted = true }

func TestCancelStopsRetries(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 503) }))
	defer srv.Close()
	d, _ := newD(t, Config{MaxRetries: 10})
	ctx, cancel := context.WithCancel(context.Background())
	d.sleep = func(context.Context, time.Duration) error { cancel(); return context.Canceled }
	_, _, err := fetch(ctx, d, srv.URL+"/a", Expect{Size: -1})
	if de, ok := errors.AsType[*Error](err); !ok || de.Attempts != 1 || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled during backoff: %v", err)
	}
}

func TestHeadersAndAuth(t *testing.T) {
	t.Parallel()
	var got http.Header
	var host string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, host = r.Header.Clone(), r.Host
		w.Write([]byte("x"))
	}))
	defer srv.Close()
	d, _ := newD(t, Config{Headers: map[string]string{"X-Token": "abc", "Host": "mirror.example"}, Username: "me", Password: "pw"})
	if _, _, err := fetch(context.Background(), d, srv.URL+"/a", Expect{Size: 1}); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"X-Token":         "abc",
		"Authorization":   "Basic bWU6cHc=", // me:pw
		"User-Agent":      "pith",
		"Accept-Encoding": "",
	} {
		if v := got.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
	if host != "mirror.example" {
		t.Errorf("Host = %q, want the configured one", host)
	}
}

// A remote's custom headers and credentials go to its own host only: not along a
// redirect to another host, nor to another host its metadata points at.
func TestHeadersStayOnTheRemotesHost(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]http.Header{}
	record := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen[name+r.URL.Path] = r.Header.Clone()
			mu.Unlock()
			w.Write([]byte("x"))
		}
	}
	other := httptest.NewServer(record("other"))
	defer other.Close()
	// The other server by another name for the same address: a different host.
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	var origin *httptest.Server
	origin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, otherURL+"/file", http.StatusFound)
		case "/here":
			http.Redirect(w, r, origin.URL+"/file", http.StatusFound)
		default:
			record("origin")(w, r)
		}
	}))
	defer origin.Close()
	d, _ := newD(t, Config{URL: origin.URL + "/repo/", Headers: map[string]string{"X-Api-Key": "k3y"}, Username: "me", Password: "pw"})
	for _, tc := range []struct {
		url, seenAs string
		sent        bool
	}{
		{origin.URL + "/file", "origin/file", true},
		{origin.URL + "/here", "origin/file", true},
		{origin.URL + "/away", "other/file", false},
		{otherURL + "/file", "other/file", false},
	} {
		mu.Lock()
		clear(seen)
		mu.Unlock()
		if _, _, err := fetch(context.Background(), d, tc.url, Expect{Size: 1}); err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		mu.Lock()
		h := seen[tc.seenAs]
		mu.Unlock()
		if h == nil {
			t.Fatalf("%s: no request reached %s", tc.url, tc.seenAs)
		}
		key, auth := h.Get("X-Api-Key"), h.Get("Authorization")
		if tc.sent && (key != "k3y" || auth == "") || !tc.sent && (key != "" || auth != "") {
			t.Errorf("%s: %s got X-Api-Key %q, Authorization %q; want them sent: %v", tc.url, tc.seenAs, key, auth, tc.sent)
		}
	}
}

func TestProxy(t *testing.T) {
	t.Parallel()
	var target, auth string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target, auth = r.URL.String(), r.Header.Get("Proxy-Authorization")
		w.Write([]byte("via proxy"))
	}))
	defer proxy.Close()
	d, _ := newD(t, Config{ProxyURL: proxy.URL, ProxyUsername: "pu", ProxyPassword: "pp"})
	_, sinks, err := fetch(context.Background(), d, "http://upstream.invalid/f.iso", Expect{Size: -1})
	if err != nil || sinks[0].String() != "via proxy" {
		t.Fatalf("through the proxy: %v", err)
	}
	if target != "http://upstream.invalid/f.iso" || auth != "Basic cHU6cHA=" { // pu:pp
		t.Errorf("proxy saw %q with Proxy-Authorization %q", target, auth)
	}
}

// The number of requests in flight never exceeds download_concurrency.
func TestConcurrencyBound(t *testing.T) {
	t.Parallel()
	const limit = 3
	var inflight, peak atomic.Int32
	full := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inflight.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		if n >= limit {
			once.Do(func() { close(full) })
		}
		// Hold the request until the bound is reached, so that requests overlap; the
		// timeout only keeps a broken bound from hanging the test.
		select {
		case <-full:
		case <-time.After(5 * time.Second):
		}
		inflight.Add(-1)
		w.Write([]byte("x"))
	}))
	defer srv.Close()
	d, _ := newD(t, Config{DownloadConcurrency: limit})
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			var err error
			switch i % 3 {
			case 0:
				_, _, err = fetch(context.Background(), d, srv.URL+"/", Expect{Size: 1})
			case 1:
				var rc io.ReadCloser
				if rc, _, err = d.Open(context.Background(), srv.URL+"/", Expect{Size: 1}); err == nil {
					_, err = io.ReadAll(rc)
					rc.Close()
				}
			case 2:
				var resp *http.Response
				if resp, err = d.Get(context.Background(), srv.URL+"/"); err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
			}
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > limit || p < 1 {
		t.Errorf("%d requests in flight at most, download_concurrency is %d", p, limit)
	}
}

// Get and Open hold their slot until the body is closed.
func TestBodyHoldsSlot(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("x")) }))
	defer srv.Close()
	d, _ := newD(t, Config{DownloadConcurrency: 2})
	resp, err := d.Get(context.Background(), srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	rc, _, err := d.Open(context.Background(), srv.URL+"/", Expect{Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	if n := d.gate.used(); n != 2 {
		t.Errorf("%d slots taken with two bodies open, want 2", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Get(ctx, srv.URL+"/"); !errors.Is(err, context.Canceled) {
		t.Errorf("a third request with every slot taken: %v, want it to wait until cancelled", err)
	}
	resp.Body.Close()
	resp.Body.Close() // twice is harmless
	rc.Close()
	if n := d.gate.used(); n != 0 {
		t.Errorf("%d slots taken after closing the bodies, want 0", n)
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	body := []byte("on-demand bytes")
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		switch r.URL.Path {
		case "/flaky":
			if n == 1 {
				http.Error(w, "busy", 503)
				return
			}
		case "/missing":
			http.NotFound(w, r)
			return
		case "/truncated":
			w.Header().Set("Content-Length", fmt.Sprint(len(body)+5))
		}
		w.Write(body)
	}))
	defer srv.Close()
	d, _ := newD(t, Config{})
	for _, tc := range []struct {
		path   string
		want   Expect
		err    string // from Open, or from reading the body
		is     error
		status int
	}{
		{path: "/ok", want: Expect{Size: int64(len(body)), SHA256: sum(body)}},
		{path: "/flaky", want: Expect{Size: -1, SHA256: sum(body)}},
		{path: "/missing", want: Expect{Size: -1}, err: "GET " + srv.URL + "/missing: 404 Not Found", status: 404},
		{path: "/ok", want: Expect{Size: -1, SHA256: strings.Repeat("a", 64)},
			err: "GET " + srv.URL + "/ok: sha256 mismatch: expected " + strings.Repeat("a", 64) + ", got " + sum(body), is: ErrDigestMismatch},
		{path: "/ok", want: Expect{Size: 3, SHA256: sum(body)},
			err: "GET " + srv.URL + "/ok: size mismatch: expected 3, Content-Length is 15 (after 4 attempts)", is: ErrSizeMismatch},
		{path: "/truncated", want: Expect{Size: -1},
			err: "GET " + srv.URL + "/truncated: size mismatch: expected 20, got 15 (truncated)", is: ErrSizeMismatch},
	} {
		rc, length, err := d.Open(context.Background(), srv.URL+tc.path, tc.want)
		var got []byte
		if err == nil {
			if length != int64(len(body)) && tc.path != "/truncated" {
				t.Errorf("%s: length %d, want %d", tc.path, length, len(body))
			}
			got, err = io.ReadAll(rc)
			rc.Close()
		}
		if tc.err == "" {
			if err != nil || !bytes.Equal(got, body) {
				t.Errorf("%s: %q, %v", tc.path, got, err)
			}
			continue
		}
		de, ok := errors.AsType[*Error](err)
		if !ok || err.Error() != tc.err || de.Status != tc.status {
			t.Errorf("%s: error %v (%T), want an *Error %q with status %d", tc.path, err, err, tc.err, tc.status)
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%s: errors.Is(%v, %v) is false", tc.path, err, tc.is)
		}
	}
	if n := d.gate.used(); n != 0 {
		t.Errorf("%d slots still taken", n)
	}
}

func TestGet(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "busy", 500)
			return
		}
		w.Write([]byte("a.iso,x,1\n"))
	}))
	defer srv.Close()
	d, _ := newD(t, Config{})
	resp, err := d.Get(context.Background(), srv.URL+"/PULP_MANIFEST")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(b) != "a.iso,x,1\n" || resp.StatusCode != 200 || calls.Load() != 2 {
		t.Errorf("got %q, %v, status %d after %d requests", b, err, resp.StatusCode, calls.Load())
	}
}

// A server that stops sending fails the attempt after sock_read_timeout or
// total_timeout instead of hanging it.
func TestStalledBody(t *testing.T) {
	t.Parallel()
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.Write([]byte("start"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer srv.Close()
	defer close(stop)
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{MaxRetries: -1, SockReadTimeout: 0.02}, "no data for 20ms (sock_read_timeout)"},
		{Config{MaxRetries: -1, TotalTimeout: 0.02}, "read body after 5 bytes: attempt took longer than 0.02s (total_timeout)"},
	} {
		d, _ := newD(t, tc.cfg)
		_, _, err := fetch(context.Background(), d, srv.URL+"/", Expect{Size: -1})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("fetch with %+v: %v, want an error containing %q", tc.cfg, err, tc.want)
		}
		rc, _, err := d.Open(context.Background(), srv.URL+"/", Expect{Size: -1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(rc)
		rc.Close()
		if _, ok := errors.AsType[*Error](err); !ok {
			t.Errorf("open with %+v: read error %v (%T), want an *Error", tc.cfg, err, err)
		}
	}
}

func TestRateLimited(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("x")) }))
	defer srv.Close()
	d, _ := newD(t, Config{RateLimit: 1000})
	for range 5 {
		if _, _, err := fetch(context.Background(), d, srv.URL+"/", Expect{Size: 1}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	d, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for n, base := range []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond} {
		if w := d.wait(n+1, 0); w < base || w > base+base/2 {
			t.Errorf("pause after attempt %d = %v, want %v plus up to half of jitter", n+1, w, base)
		}
	}
	if w := d.wait(40, 0); w < 30*time.Second || w > 45*time.Second {
		t.Errorf("pause after attempt 40 = %v, want the 30s cap plus jitter", w)
	}
	if w := d.wait(1, 5*time.Second); w != 5*time.Second {
		t.Errorf("Retry-After 5s gave a pause of %v", w)
	}
	if w := d.wait(1, time.Hour); w != time.Minute {
		t.Errorf("Retry-After 1h gave a pause of %v, want the 1m cap", w)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		" 10 ":                          10 * time.Second,
		"-1":                            0,
		"soon":                          0,
		"Thu, 02 Jan 2025 03:04:35 GMT": 30 * time.Second,
		"Thu, 02 Jan 2025 03:00:00 GMT": 0,
	} {
		if got := retryAfter(in, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestLimiter(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	l := newLimiter(2)
	l.last = t0
	var got []time.Duration
	for range 4 {
		got = append(got, l.reserve(t0))
	}
	got = append(got, l.reserve(t0.Add(3*time.Second)))
	want := []time.Duration{0, 0, 500 * time.Millisecond, time.Second, 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}

	l = newLimiter(1)
	l.reserve(time.Now()) // empty the bucket
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled wait on an empty bucket returned %v", err)
	}
	if l.tokens < -0.5 {
		t.Errorf("a cancelled wait kept its token: %v left", l.tokens)
	}
}
