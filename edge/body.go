package edge

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// ErrBodyTimeout is the error a request body's reads return once its deadline passed.
var ErrBodyTimeout = errors.New("request body too slow")

// Bodies gives every request that has a body timeout to send it, counted from when h
// starts. When h returns without reading the body to its end (it answered early: a 401,
// a 404, a 405), the connection stops reading at once: the server then sends the answer
// with Connection: close and closes, instead of draining a body nobody wants from a
// client that may be trickling it.
func Bodies(h http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 {
			h.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		b := &body{ReadCloser: r.Body, rc: rc, timeout: timeout}
		rc.SetReadDeadline(time.Now().Add(timeout))
		r.Body = b
		h.ServeHTTP(w, r)
		if !b.eof {
			rc.SetReadDeadline(time.Now())
		}
	})
}

// ExtendBody gives the body of r timeout from now, for a handler that takes large
// bodies (uploads) from a client it has authenticated. It does nothing for a request
// without a body or one that did not pass through Bodies.
func ExtendBody(w http.ResponseWriter, r *http.Request, timeout time.Duration) {
	b, ok := r.Body.(*body)
	if !ok || b.eof {
		return
	}
	b.timeout = timeout
	b.rc.SetReadDeadline(time.Now().Add(timeout))
}

// body is a request body under a read deadline.
type body struct {
	io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
	eof     bool
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		// net/http lifts the deadline itself here, as it starts waiting for the
		// connection's next request: a deadline left on that read would cancel the
		// request's context.
		b.eof = true
	case errors.Is(err, os.ErrDeadlineExceeded):
		// Not the net error itself: it names the server's address.
		err = fmt.Errorf("%w: not received within %v", ErrBodyTimeout, b.timeout)
	}
	return n, err
}
