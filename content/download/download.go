package download

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// Config are a remote's download settings (Pulp's remote fields).
type Config struct {
	URL                 string
	CACert              string // PEM
	ClientCert          string // PEM
	ClientKey           string // PEM
	TLSValidation       bool
	ProxyURL            string
	ProxyUsername       string
	ProxyPassword       string
	Username            string
	Password            string
	Headers             map[string]string
	DownloadConcurrency int     // default 10
	MaxRetries          int     // default 3; negative means none
	TotalTimeout        float64 // seconds per attempt, 0 = none
	ConnectTimeout      float64 // seconds, 0 = 30
	SockConnectTimeout  float64
	SockReadTimeout     float64 // seconds without bytes before an attempt fails, 0 = 60
	RateLimit           int     // requests per second, 0 = unlimited
}

// Expect is what a download must be. Size -1 is unknown; an empty SHA256 is unchecked.
type Expect struct {
	Size   int64
	SHA256 string
}

// Sink receives one attempt's bytes; a failed attempt's sink is aborted.
type Sink interface {
	io.Writer
	Abort()
}

// Result describes a finished download.
type Result struct {
	Size     int64
	SHA256   string
	Attempts int
}

// Error is a failed download.
type Error struct {
	URL      string
	Status   int
	Attempts int
	Err      error
}

func (e *Error) Error() string {
	s := "GET " + e.URL + ": " + e.Err.Error()
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Downloader downloads for one remote.
type Downloader struct {
	cfg     Config
	client  *http.Client
	slots   chan struct{}
	limiter *limiter
	backoff time.Duration // base backoff; tests shorten it
}

// New builds a downloader; bad certificates or URLs are errors naming the field.
func New(cfg Config) (*Downloader, error) {
	if cfg.DownloadConcurrency <= 0 {
		cfg.DownloadConcurrency = 10
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 3
	}
	tlsCfg := &tls.Config{InsecureSkipVerify: !cfg.TLSValidation}
	if cfg.CACert != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(cfg.CACert)) {
			return nil, errors.New("ca_cert: no PEM certificate found")
		}
		tlsCfg.RootCAs = pool
	}
	if cfg.ClientCert != "" || cfg.ClientKey != "" {
		pair, err := tls.X509KeyPair([]byte(cfg.ClientCert), []byte(cfg.ClientKey))
		if err != nil {
			return nil, fmt.Errorf("client_cert/client_key: %w", err)
		}
		tlsCfg.Certificates = []tls.Certificate{pair}
	}
	connect := 30 * time.Second
	if cfg.ConnectTimeout > 0 {
		connect = seconds(cfg.ConnectTimeout)
	} else if cfg.SockConnectTimeout > 0 {
		connect = seconds(cfg.SockConnectTimeout)
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsCfg,
		MaxIdleConnsPerHost:   cfg.DownloadConcurrency,
		MaxConnsPerHost:       cfg.DownloadConcurrency,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   connect,
		ResponseHeaderTimeout: readTimeout(cfg),
		ForceAttemptHTTP2:     true,
	}
	if cfg.ProxyURL != "" {
		pu, err := url.Parse(cfg.ProxyURL)
		if err != nil || pu.Host == "" {
			return nil, fmt.Errorf("proxy_url: %q is not a URL", cfg.ProxyURL)
		}
		if cfg.ProxyUsername != "" {
			pu.User = url.UserPassword(cfg.ProxyUsername, cfg.ProxyPassword)
		}
		tr.Proxy = http.ProxyURL(pu)
	}
	d := &Downloader{cfg: cfg, client: &http.Client{Transport: tr}, slots: make(chan struct{}, cfg.DownloadConcurrency), backoff: 200 * time.Millisecond}
	if cfg.RateLimit > 0 {
		d.limiter = newLimiter(cfg.RateLimit)
	}
	return d, nil
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

func readTimeout(cfg Config) time.Duration {
	if cfg.SockReadTimeout > 0 {
		return seconds(cfg.SockReadTimeout)
	}
	return 60 * time.Second
}

// Concurrency is the remote's download_concurrency.
func (d *Downloader) Concurrency() int { return d.cfg.DownloadConcurrency }

// errRetry marks attempt errors worth retrying.
type retryable struct {
	err   error
	after time.Duration
}

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

// request sends one GET within a concurrency slot (the caller holds it).
func (d *Downloader) request(ctx context.Context, u string) (*http.Response, error) {
	if d.limiter != nil {
		if err := d.limiter.wait(ctx); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range d.cfg.Headers {
		req.Header.Set(k, v)
	}
	if d.cfg.Username != "" {
		req.SetBasicAuth(d.cfg.Username, d.cfg.Password)
	}
	req.Header.Set("User-Agent", "pith")
	resp, err := d.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &retryable{err: err}
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	resp.Body.Close()
	err = fmt.Errorf("%s", resp.Status)
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		return nil, &retryable{err: &statusError{resp.StatusCode, err}, after: retryAfter(resp.Header.Get("Retry-After"))}
	}
	return nil, &statusError{resp.StatusCode, err}
}

type statusError struct {
	code int
	err  error
}

func (e *statusError) Error() string { return e.err.Error() }

func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		return min(time.Duration(n)*time.Second, time.Minute)
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(time.Until(t), time.Minute)
	}
	return 0
}

// retry runs attempt until it succeeds, fails for good, or retries run out.
func (d *Downloader) retry(ctx context.Context, u string, attempt func() error) (int, error) {
	var err error
	n := 0
	for {
		n++
		err = attempt()
		var r *retryable
		if err == nil || !errors.As(err, &r) || n > max(d.cfg.MaxRetries, 0) {
			break
		}
		wait := d.backoff << (n - 1)
		wait += time.Duration(rand.Int64N(int64(wait)/2 + 1))
		if r.after > wait {
			wait = r.after
		}
		select {
		case <-ctx.Done():
			return n, ctx.Err()
		case <-time.After(wait):
		}
	}
	if err == nil {
		return n, nil
	}
	e := &Error{URL: u, Attempts: n, Err: err}
	var se *statusError
	if errors.As(err, &se) {
		e.Status = se.code
	}
	var r *retryable
	if errors.As(err, &r) {
		e.Err = r.err
	}
	return n, e
}

func (d *Downloader) acquire(ctx context.Context) error {
	select {
	case d.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *Downloader) release() { <-d.slots }

// Fetch downloads u into a fresh sink per attempt, verified against want.
func (d *Downloader) Fetch(ctx context.Context, u string, want Expect, newSink func() (Sink, error)) (Result, error) {
	var res Result
	n, err := d.retry(ctx, u, func() error {
		if err := d.acquire(ctx); err != nil {
			return err
		}
		defer d.release()
		actx, cancel := d.attemptContext(ctx)
		defer cancel()
		resp, err := d.request(actx, u)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		sink, err := newSink()
		if err != nil {
			return err
		}
		w := d.watch(resp.Body, cancel)
		defer w.stop()
		vr := newVerifier(w, want, resp.ContentLength)
		_, err = io.Copy(sink, vr)
		if err != nil {
			sink.Abort()
			return err
		}
		res = Result{Size: vr.n, SHA256: vr.sum}
		return nil
	})
	res.Attempts = n
	return res, err
}

// Get sends a GET with the retry policy on the request; the caller reads and closes
// the body.
func (d *Downloader) Get(ctx context.Context, u string) (*http.Response, error) {
	var resp *http.Response
	_, err := d.retry(ctx, u, func() error {
		if err := d.acquire(ctx); err != nil {
			return err
		}
		defer d.release()
		r, err := d.request(ctx, u)
		resp = r
		return err
	})
	return resp, err
}

// Open starts a download whose body verifies size and sha256 as it streams: a mismatch
// is an error from Read at the end, never a silent success. It also returns the
// upstream's Content-Length (-1 when unknown).
func (d *Downloader) Open(ctx context.Context, u string, want Expect) (io.ReadCloser, int64, error) {
	resp, err := d.Get(ctx, u)
	if err != nil {
		return nil, -1, err
	}
	vr := newVerifier(resp.Body, want, resp.ContentLength)
	return struct {
		io.Reader
		io.Closer
	}{vr, resp.Body}, resp.ContentLength, nil
}

// attemptContext bounds one attempt by total_timeout when set.
func (d *Downloader) attemptContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if d.cfg.TotalTimeout > 0 {
		return context.WithTimeout(ctx, seconds(d.cfg.TotalTimeout))
	}
	return context.WithCancel(ctx)
}

// verifier checks size and sha256 while reading.
type verifier struct {
	r      io.Reader
	h      hash.Hash
	n      int64
	want   Expect
	length int64
	sum    string
}

func newVerifier(r io.Reader, want Expect, length int64) *verifier {
	return &verifier{r: r, h: sha256.New(), want: want, length: length}
}

func (v *verifier) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if errors.Is(err, io.EOF) {
		v.sum = hex.EncodeToString(v.h.Sum(nil))
		if v.length >= 0 && v.n < v.length {
			return n, &retryable{err: fmt.Errorf("truncated: got %d of %d bytes", v.n, v.length)}
		}
		if v.want.Size >= 0 && v.n != v.want.Size {
			return n, &retryable{err: fmt.Errorf("size mismatch: expected %d, got %d", v.want.Size, v.n)}
		}
		if v.want.SHA256 != "" && v.sum != v.want.SHA256 {
			return n, &retryable{err: fmt.Errorf("sha256 mismatch: expected %s, got %s", v.want.SHA256, v.sum)}
		}
		return n, io.EOF
	}
	if err != nil {
		return n, &retryable{err: fmt.Errorf("read body: %w", err)}
	}
	if v.want.Size >= 0 && v.n > v.want.Size {
		return n, &retryable{err: fmt.Errorf("size mismatch: expected %d, got more", v.want.Size)}
	}
	return n, nil
}

// watch cancels an attempt whose body yields no data for sock_read_timeout: a peer
// that keeps the connection open and sends nothing fails the attempt instead of
// hanging it.
type watch struct {
	r       io.Reader
	timer   *time.Timer
	timeout time.Duration
	fired   chan struct{}
}

func (d *Downloader) watch(r io.Reader, cancel context.CancelFunc) *watch {
	w := &watch{r: r, timeout: readTimeout(d.cfg), fired: make(chan struct{})}
	w.timer = time.AfterFunc(w.timeout, func() { close(w.fired); cancel() })
	return w
}

func (w *watch) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	select {
	case <-w.fired:
		return n, &retryable{err: fmt.Errorf("no data for %s (sock_read_timeout)", w.timeout)}
	default:
	}
	w.timer.Reset(w.timeout)
	return n, err
}

func (w *watch) stop() { w.timer.Stop() }

// limiter is a token bucket allowing rate requests per second.
type limiter struct {
	mu     sync.Mutex
	rate   float64
	tokens float64
	last   time.Time
}

func newLimiter(rate int) *limiter {
	return &limiter{rate: float64(rate), tokens: float64(rate), last: time.Now()}
}

func (l *limiter) wait(ctx context.Context) error {
	for {
		l.mu.Lock()
		now := time.Now()
		l.tokens = min(l.rate, l.tokens+now.Sub(l.last).Seconds()*l.rate)
		l.last = now
		if l.tokens >= 1 {
			l.tokens--
			l.mu.Unlock()
			return nil
		}
		need := time.Duration((1 - l.tokens) / l.rate * float64(time.Second))
		l.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(need):
		}
	}
}
