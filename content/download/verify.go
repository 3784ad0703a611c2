package download

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// verifier checks size and sha256 while reading. Every error it returns is retryable
// (for Fetch) and sticky.
type verifier struct {
	r      io.Reader
	h      hash.Hash
	want   Expect
	length int64 // Content-Length, -1 unknown
	n      int64
	sum    string // set at a verified EOF
	err    error
}

func newVerifier(r io.Reader, want Expect, length int64) *verifier {
	return &verifier{r: r, h: sha256.New(), want: want, length: length}
}

func (v *verifier) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	switch {
	case v.want.Size >= 0 && v.n > v.want.Size:
		v.err = fmt.Errorf("%w: expected %d, got more than %d", ErrSizeMismatch, v.want.Size, v.want.Size)
	case err == nil:
		return n, nil
	case errors.Is(err, io.EOF):
		v.err = v.atEOF()
	case errors.Is(err, io.ErrUnexpectedEOF):
		v.err = v.truncated()
	default:
		if _, ok := errors.AsType[*retryable](err); ok {
			v.err = err
		} else {
			v.err = fmt.Errorf("read body after %d bytes: %w", v.n, err)
		}
	}
	if v.err == io.EOF {
		return n, io.EOF
	}
	if _, ok := errors.AsType[*retryable](v.err); !ok {
		v.err = &retryable{err: v.err}
	}
	return n, v.err
}

func (v *verifier) atEOF() error {
	sum := hex.EncodeToString(v.h.Sum(nil))
	switch {
	case v.length >= 0 && v.n < v.length:
		return v.truncated()
	case v.want.Size >= 0 && v.n != v.want.Size:
		return fmt.Errorf("%w: expected %d, got %d", ErrSizeMismatch, v.want.Size, v.n)
	case v.want.SHA256 != "" && sum != v.want.SHA256:
		return fmt.Errorf("%w: expected %s, got %s", ErrDigestMismatch, v.want.SHA256, sum)
	}
	v.sum = sum
	return io.EOF
}

// truncated describes a body that ended before its Content-Length or expected size.
func (v *verifier) truncated() error {
	expected := v.length
	if expected < 0 {
		expected = v.want.Size
	}
	if expected < 0 {
		return fmt.Errorf("body ended early after %d bytes (truncated)", v.n)
	}
	return fmt.Errorf("%w: expected %d, got %d (truncated)", ErrSizeMismatch, expected, v.n)
}

// watchdog fails a read that blocks longer than timeout (sock_read_timeout): a peer that
// keeps the connection open and sends nothing fails the attempt instead of hanging it.
// Only time spent inside Read counts, so a slow consumer does not trip it.
type watchdog struct {
	r       io.Reader
	timer   *time.Timer
	timeout time.Duration
	fired   atomic.Bool
}

func newWatchdog(r io.Reader, timeout time.Duration, cancel context.CancelFunc) *watchdog {
	w := &watchdog{r: r, timeout: timeout}
	w.timer = time.AfterFunc(timeout, func() { w.fired.Store(true); cancel() })
	w.timer.Stop()
	return w
}

func (w *watchdog) Read(p []byte) (int, error) {
	if w.fired.Load() {
		return 0, w.err()
	}
	w.timer.Reset(w.timeout)
	n, err := w.r.Read(p)
	w.timer.Stop()
	if w.fired.Load() {
		return n, w.err()
	}
	return n, err
}

func (w *watchdog) err() error {
	return &retryable{err: fmt.Errorf("no data for %s (sock_read_timeout)", w.timeout)}
}

func (w *watchdog) stop() { w.timer.Stop() }

// body is the response body handed out by Get and Open: read errors are *Error naming
// the URL, and Close releases the attempt's slot and context exactly once.
type body struct {
	r        io.Reader
	c        io.Closer
	url      string
	attempts int
	once     sync.Once
	done     func()
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = newError(b.url, b.attempts, err)
	}
	return n, err
}

func (b *body) Close() error {
	err := b.c.Close()
	b.once.Do(b.done)
	return err
}

// copyTo copies r into w. Read errors come back as they are (the verifier marks them
// retryable); a write error is the sink's and ends the download.
func copyTo(w io.Writer, r io.Reader) error {
	buf := make([]byte, 64<<10)
	for {
		n, rerr := r.Read(buf)
		if n > 0 {
			m, err := w.Write(buf[:n])
			if err == nil && m < n {
				err = io.ErrShortWrite
			}
			if err != nil {
				return fmt.Errorf("write: %w", err)
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}
