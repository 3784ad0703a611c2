package wan

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"
)

// pacedWriter is an http.ResponseWriter whose body writes are cut into chunks and paced
// by a per-response bucket and then the server's shared bucket. It stops with the
// request context's error once the client has gone away.
type pacedWriter struct {
	http.ResponseWriter
	ctx   context.Context
	conn  *bucket // this response's own cap; nil when unlimited
	total *bucket // shared by all responses
	sent  *atomic.Int64
	timer *time.Timer
}

// Write sends p chunk by chunk, sleeping until each chunk is allowed by both buckets.
func (w *pacedWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), chunkSize)
		if err := w.admit(n); err != nil {
			return written, err
		}
		m, err := w.ResponseWriter.Write(p[:n])
		written += m
		w.sent.Add(int64(m))
		if err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}

// Unwrap returns the underlying writer, for http.ResponseController.
func (w *pacedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// admit waits until n bytes may be sent. The per-response bucket is waited on first so
// that a stream only draws on the shared budget when it is itself ready to send.
func (w *pacedWriter) admit(n int) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	if err := w.wait(w.conn, n); err != nil {
		return err
	}
	return w.wait(w.total, n)
}

// wait reserves n bytes from b and sleeps until they are due, refunding them if the
// request is cancelled meanwhile.
func (w *pacedWriter) wait(b *bucket, n int) error {
	d := b.reserve(n)
	if d <= 0 {
		return nil
	}
	if err := w.sleep(d); err != nil {
		b.refund(n)
		return err
	}
	return nil
}

// sleep pauses for d or until the request context is done, reusing one timer.
func (w *pacedWriter) sleep(d time.Duration) error {
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	select {
	case <-w.timer.C:
		return nil
	case <-w.ctx.Done():
		w.timer.Stop()
		return w.ctx.Err()
	}
}

// sleepCtx pauses for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
