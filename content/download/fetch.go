package download

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Fetch downloads u into a fresh sink per attempt (from newSink), verified against want
// while it streams. A failed attempt's sink is aborted; on success the last sink holds
// the file and the caller commits it. Each attempt holds a concurrency slot.
func (d *Downloader) Fetch(ctx context.Context, u string, want Expect, newSink func() (Sink, error)) (Result, error) {
	want, err := normalize(want)
	if err != nil {
		return Result{}, &Error{URL: u, Err: err}
	}
	var res Result
	n, err := d.retry(ctx, u, func(resumed time.Time) error {
		t, err := d.gate.acquire(ctx, resumed)
		if err != nil {
			return err
		}
		defer t.release()
		actx, cancel := d.attemptContext(ctx)
		defer cancel()
		resp, err := d.request(actx, u, t, Request{})
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		sink, err := newSink()
		if err != nil {
			return fmt.Errorf("open sink: %w", err)
		}
		wd := newWatchdog(counting{resp.Body, d.gate}, readTimeout(d.cfg), cancel)
		defer wd.stop()
		v := newVerifier(wd, want, resp.ContentLength)
		if err := copyTo(sink, v); err != nil {
			sink.Abort()
			if c := context.Cause(actx); c != nil && ctx.Err() == nil && !wd.fired.Load() {
				return &retryable{err: fmt.Errorf("read body after %d bytes: %w", v.n, c)} // total_timeout
			}
			return err
		}
		res = Result{Size: v.n, SHA256: v.sum}
		return nil
	})
	res.Attempts = n
	return res, err
}

// Get sends a GET with the retry policy applied to the request (not the body) and
// returns a 200 response. The body fails a read that waits longer than
// sock_read_timeout; it holds a concurrency slot until closed, so the caller must
// close it.
func (d *Downloader) Get(ctx context.Context, u string) (*http.Response, error) {
	return d.Do(ctx, u, Request{})
}

// Request is what a request sends besides a GET of its URL: a Git LFS batch request is a
// POST with a body, and a Git LFS object is fetched with the headers its batch answer
// gives.
type Request struct {
	Method string // "" is GET
	Body   []byte
	// Header is sent to the URL whatever its host (the remote's own headers and
	// credentials go to its host only), after the remote's headers.
	Header map[string]string
}

// Do sends rq to u as Get sends a GET: retried as the remote says (a POST too: the
// requests Do is for, such as a Git LFS batch, are idempotent), a 200 response.
func (d *Downloader) Do(ctx context.Context, u string, rq Request) (*http.Response, error) {
	resp, _, err := d.open(ctx, u, nil, rq)
	return resp, err
}

// OpenRequest is Open with rq sent.
func (d *Downloader) OpenRequest(ctx context.Context, u string, rq Request, want Expect) (io.ReadCloser, int64, error) {
	want, err := normalize(want)
	if err != nil {
		return nil, -1, &Error{URL: u, Err: err}
	}
	resp, _, err := d.open(ctx, u, &want, rq)
	if err != nil {
		return nil, -1, err
	}
	return resp.Body, resp.ContentLength, nil
}

// Open starts a download whose body verifies size and sha256 as it streams: a mismatch
// or a truncated body is an *Error from Read at the end, never a silent io.EOF. It also
// returns the upstream's Content-Length (-1 when unknown); a Content-Length other than
// the expected size fails before any byte is read. Only the request is retried:
// bytes already handed out cannot be taken back. The body holds a concurrency slot
// until closed.
func (d *Downloader) Open(ctx context.Context, u string, want Expect) (io.ReadCloser, int64, error) {
	return d.OpenRequest(ctx, u, Request{}, want)
}

// open sends the request with retries and wraps the body: watchdog, verifier when want
// is set, errors as *Error, and slot release and cancel on Close.
func (d *Downloader) open(ctx context.Context, u string, want *Expect, rq Request) (*http.Response, int, error) {
	var resp *http.Response
	var release func()
	var cancel context.CancelFunc
	n, err := d.retry(ctx, u, func(resumed time.Time) error {
		t, err := d.gate.acquire(ctx, resumed)
		if err != nil {
			return err
		}
		rel := t.release
		actx, cnl := d.attemptContext(ctx)
		r, err := d.request(actx, u, t, rq)
		if err == nil && want != nil && want.Size >= 0 && r.ContentLength >= 0 && r.ContentLength != want.Size {
			// Fail before any byte is handed out: a client gets an error, not a cut body.
			r.Body.Close()
			err = &retryable{err: fmt.Errorf("%w: expected %d, Content-Length is %d", ErrSizeMismatch, want.Size, r.ContentLength)}
		}
		if err != nil {
			cnl()
			rel()
			return err
		}
		resp, release, cancel = r, rel, cnl
		return nil
	})
	if err != nil {
		return nil, n, err
	}
	wd := newWatchdog(counting{resp.Body, d.gate}, readTimeout(d.cfg), cancel)
	var r io.Reader = wd
	if want != nil {
		r = newVerifier(wd, *want, resp.ContentLength)
	}
	resp.Body = &body{r: r, c: resp.Body, url: u, attempts: n, done: func() { wd.stop(); cancel(); release() }}
	return resp, n, nil
}

// request sends one GET; the caller holds the slot t. Errors worth another attempt are
// marked retryable; a 429 or 503 also tells the gate the upstream is overloaded. A 401
// to a request with a bearer token obtained from AuthURL, or a 401 or 403 to one with a
// ULN session key, is sent once more with a new one, outside the retry policy: the
// token or key expired, the request was fine.
func (d *Downloader) request(ctx context.Context, u string, t *ticket, rq Request) (*http.Response, error) {
	resp, auth, err := d.send(ctx, u, rq)
	if err == nil && auth != "" && d.refused(resp.StatusCode) {
		io.CopyN(io.Discard, resp.Body, 4<<10)
		resp.Body.Close()
		d.cred.expire(auth)
		resp, _, err = d.send(ctx, u, rq)
	}
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	// Drain a little so the connection can be reused.
	io.CopyN(io.Discard, resp.Body, 4<<10)
	resp.Body.Close()
	se := &statusError{code: resp.StatusCode, status: resp.Status}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		after := retryAfter(resp.Header.Get("Retry-After"), time.Now())
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			d.gate.overloaded(t.admitted, min(after, d.maxRetryAfter))
		}
		return nil, &retryable{err: se, after: after}
	}
	return nil, se
}

// send sends one request (a GET unless rq says otherwise) with the remote's headers and
// credentials when u is on its host, and returns the Authorization it sent.
func (d *Downloader) send(ctx context.Context, u string, rq Request) (*http.Response, string, error) {
	if d.limiter != nil {
		if err := d.limiter.wait(ctx); err != nil {
			return nil, "", err
		}
	}
	target, uln := u, d.cfg.ULNServer != "" && isULN(u)
	if uln {
		var err error
		if target, err = d.ulnURL(u); err != nil {
			return nil, "", err
		}
	}
	method, body := http.MethodGet, io.Reader(nil)
	if rq.Method != "" {
		method = rq.Method
	}
	if rq.Body != nil {
		body = bytes.NewReader(rq.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, "", fmt.Errorf("bad request: %w", err)
	}
	req.Header.Set("User-Agent", "pith")
	auth := ""
	if d.ownHost(req.URL, req.URL) {
		for k, v := range d.cfg.Headers {
			if strings.EqualFold(k, "Host") {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		switch {
		case uln:
			if auth, err = d.ulnKey(ctx); err != nil {
				return nil, "", err
			}
			req.Header.Set(ULNKeyHeader, auth)
		case d.cfg.ULNServer != "":
			// The ULN credentials go to the login only.
		case d.cfg.Token != "":
			if auth, err = d.authorization(ctx); err != nil {
				return nil, "", err
			}
			req.Header.Set("Authorization", auth)
		case d.cfg.Username != "" || d.cfg.Password != "":
			req.SetBasicAuth(d.cfg.Username, d.cfg.Password)
		}
	}
	for k, v := range rq.Header {
		req.Header.Set(k, v)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, auth, &retryable{err: context.Cause(ctx)}
		}
		if permanent(err) {
			return nil, auth, err
		}
		return nil, auth, &retryable{err: err}
	}
	return resp, auth, nil
}

// refused reports whether status answers a request whose token or session key expired.
func (d *Downloader) refused(status int) bool {
	switch {
	case d.cfg.ULNServer != "":
		return status == http.StatusUnauthorized || status == http.StatusForbidden
	case d.cfg.AuthURL != "":
		return status == http.StatusUnauthorized
	}
	return false
}

// permanent reports client errors that another attempt cannot fix: an unusable URL or
// a certificate that does not verify.
func permanent(err error) bool {
	var (
		unknownCA   x509.UnknownAuthorityError
		invalid     x509.CertificateInvalidError
		hostname    x509.HostnameError
		verifyError *tls.CertificateVerificationError
	)
	if errors.As(err, &unknownCA) || errors.As(err, &invalid) || errors.As(err, &hostname) || errors.As(err, &verifyError) {
		return true
	}
	var ue *url.Error
	return errors.As(err, &ue) && strings.Contains(ue.Err.Error(), "unsupported protocol scheme")
}

type statusError struct {
	code   int
	status string
}

func (e *statusError) Error() string { return e.status }

// retryable marks an attempt error worth another attempt, optionally not before after.
type retryable struct {
	err   error
	after time.Duration
}

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

// retryAfter reads a Retry-After header: delay seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0
		}
		return time.Duration(min(n, 1<<30)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// retry runs attempt until it succeeds, fails for good, or retries run out, sleeping
// with exponential backoff and jitter in between. attempt gets the time its backoff
// ended (zero for the first). It returns the number of attempts and an *Error.
func (d *Downloader) retry(ctx context.Context, u string, attempt func(resumed time.Time) error) (int, error) {
	n := 0
	var resumed time.Time
	for {
		n++
		err := attempt(resumed)
		if err == nil {
			return n, nil
		}
		if ctx.Err() != nil {
			return n, &Error{URL: u, Attempts: n, Err: context.Cause(ctx)}
		}
		var r *retryable
		if !errors.As(err, &r) || n > d.cfg.MaxRetries {
			return n, newError(u, n, err)
		}
		w := d.wait(n, r.after)
		resumed = d.gate.now().Add(w)
		if err := d.sleep(ctx, w); err != nil {
			return n, &Error{URL: u, Attempts: n, Err: err}
		}
	}
}

// wait is the pause after attempt n: base·2^(n-1) plus up to half again of jitter,
// capped, or the server's Retry-After when longer (capped too).
func (d *Downloader) wait(n int, after time.Duration) time.Duration {
	b := d.backoff
	for i := 1; i < n && b < d.maxBackoff; i++ {
		b *= 2
	}
	b = min(b, d.maxBackoff)
	b += rand.N(b/2 + 1)
	if after > b {
		b = min(after, d.maxRetryAfter)
	}
	return b
}

func newError(u string, n int, err error) *Error {
	var de *Error
	if errors.As(err, &de) {
		return de
	}
	e := &Error{URL: u, Attempts: n, Err: err}
	var r *retryable
	if errors.As(err, &r) {
		e.Err = r.err
	}
	var se *statusError
	if errors.As(err, &se) {
		e.Status = se.code
	}
	return e
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// attemptContext bounds one attempt by total_timeout when set.
func (d *Downloader) attemptContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if d.cfg.TotalTimeout > 0 {
		return context.WithTimeoutCause(ctx, orDefault(d.cfg.TotalTimeout, 0),
			fmt.Errorf("attempt took longer than %gs (total_timeout)", d.cfg.TotalTimeout))
	}
	return context.WithCancel(ctx)
}

// normalize checks the expected digest and lower-cases it.
func normalize(want Expect) (Expect, error) {
	if want.SHA256 == "" {
		return want, nil
	}
	s := strings.ToLower(want.SHA256)
	if len(s) != 64 || strings.Trim(s, "0123456789abcdef") != "" {
		return want, fmt.Errorf("expected sha256 %q is not 64 hex digits", want.SHA256)
	}
	want.SHA256 = s
	return want, nil
}
