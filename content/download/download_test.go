package download

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

type buf struct {
	bytes.Buffer
	aborted bool
}

func (b *buf) Abort() { b.aborted = true }

func fetch(t *testing.T, d *Downloader, url string, want Expect) ([]byte, []*buf, error) {
	t.Helper()
	var sinks []*buf
	_, err := d.Fetch(context.Background(), url, want, func() (Sink, error) {
		b := &buf{}
		sinks = append(sinks, b)
		return b, nil
	})
	if len(sinks) == 0 {
		return nil, nil, err
	}
	return sinks[len(sinks)-1].Bytes(), sinks, err
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func newD(t *testing.T, cfg Config) *Downloader {
	t.Helper()
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d.backoff = time.Millisecond
	return d
}

func TestFetch(t *testing.T) {
	t.Parallel()
	body := []byte("the file body")
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		switch r.URL.Path {
		case "/ok":
			if r.Header.Get("X-Token") != "abc" {
				http.Error(w, "no header", 400)
				return
			}
			if u, p, _ := r.BasicAuth(); u != "me" || p != "pw" {
				http.Error(w, "no auth", 401)
				return
			}
			w.Write(body)
		case "/missing":
			http.NotFound(w, r)
		case "/flaky":
			if n%2 == 1 {
				http.Error(w, "busy", 503)
				return
			}
			w.Write(body)
		case "/limited":
			if n%2 == 1 {
				w.Header().Set("Retry-After", "0")
				http.Error(w, "slow down", 429)
				return
			}
			w.Write(body)
		case "/truncated":
			w.Header().Set("Content-Length", fmt.Sprint(len(body)+10))
			w.Write(body)
		}
	}))
	defer srv.Close()
	d := newD(t, Config{Headers: map[string]string{"X-Token": "abc"}, Username: "me", Password: "pw"})

	got, _, err := fetch(t, d, srv.URL+"/ok", Expect{Size: int64(len(body)), SHA256: sum(body)})
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("ok: %q %v", got, err)
	}
	calls.Store(0)
	_, _, err = fetch(t, d, srv.URL+"/missing", Expect{Size: -1})
	var de *Error
	if !errors.As(err, &de) || de.Status != 404 || de.Attempts != 1 || !strings.Contains(err.Error(), "/missing: 404") {
		t.Errorf("404: %v", err)
	}
	for _, p := range []string{"/flaky", "/limited"} {
		calls.Store(0)
		if got, _, err := fetch(t, d, srv.URL+p, Expect{Size: -1, SHA256: sum(body)}); err != nil || !bytes.Equal(got, body) {
			t.Errorf("%s: %v", p, err)
		}
	}
	_, sinks, err := fetch(t, d, srv.URL+"/truncated", Expect{Size: -1})
	if err == nil || !strings.Contains(err.Error(), "truncated") || len(sinks) != 4 || !sinks[0].aborted {
		t.Errorf("truncated: %v, %d attempts", err, len(sinks))
	}
	_, _, err = fetch(t, d, srv.URL+"/ok", Expect{Size: -1, SHA256: strings.Repeat("0", 64)})
	if err == nil || !strings.Contains(err.Error(), "sha256 mismatch") {
		t.Errorf("wrong digest: %v", err)
	}
	_, _, err = fetch(t, d, srv.URL+"/ok", Expect{Size: 3})
	if err == nil || !strings.Contains(err.Error(), "size mismatch") {
		t.Errorf("wrong size: %v", err)
	}
	// Open verifies as it streams.
	rc, _, err := d.Open(context.Background(), srv.URL+"/ok", Expect{Size: -1, SHA256: strings.Repeat("0", 64)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bytes.NewBuffer(nil).ReadFrom(rc)
	rc.Close()
	if err == nil || !strings.Contains(err.Error(), "sha256 mismatch") {
		t.Errorf("open with a wrong digest: %v", err)
	}
}

func TestConcurrencyBound(t *testing.T) {
	t.Parallel()
	var inflight, peak atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inflight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		inflight.Add(-1)
		w.Write([]byte("x"))
	}))
	defer srv.Close()
	d := newD(t, Config{DownloadConcurrency: 3})
	done := make(chan error)
	for i := 0; i < 20; i++ {
		go func() {
			_, err := d.Fetch(context.Background(), srv.URL+"/", Expect{Size: 1}, func() (Sink, error) { return &buf{}, nil })
			done <- err
		}()
	}
	for i := 0; i < 20; i++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	if p := peak.Load(); p > 3 {
		t.Errorf("%d requests in flight, download_concurrency is 3", p)
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("secure")) }))
	defer srv.Close()
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	d := newD(t, Config{CACert: ca, TLSValidation: true})
	if got, _, err := fetch(t, d, srv.URL+"/", Expect{Size: -1}); err != nil || string(got) != "secure" {
		t.Errorf("with the CA: %q %v", got, err)
	}
	d = newD(t, Config{TLSValidation: true, MaxRetries: -1})
	if _, _, err := fetch(t, d, srv.URL+"/", Expect{Size: -1}); err == nil {
		t.Error("an unknown CA was trusted")
	}
	for _, cfg := range []Config{{CACert: "not pem"}, {ClientCert: "x", ClientKey: "y"}, {ProxyURL: "::bad"}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	l := newLimiter(1000)
	for i := 0; i < 50; i++ {
		if err := l.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l = newLimiter(1)
	l.wait(ctx)
	if err := l.wait(ctx); err == nil {
		t.Error("a cancelled wait on an empty bucket returned nil")
	}
}
