package edge

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"pith/internal/testconn"
)

func server(t *testing.T, timeout time.Duration, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(Bodies(h, timeout))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// A handler that answers without reading the body (a 401 to a client that has not
// authenticated) is answered at once, and the connection closes, however slowly the
// client sends the body: nothing waits for it.
func TestUnreadBodyAnsweredAtOnce(t *testing.T) {
	t.Parallel()
	addr := server(t, time.Hour, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "who are you", http.StatusUnauthorized)
	})
	for _, head := range []string{"Content-Length: 100\r\n\r\nab", "Transfer-Encoding: chunked\r\n\r\n2\r\nab\r\n"} {
		resp, _, c := testconn.Exchange(t, addr, "POST /x HTTP/1.1\r\nHost: pith\r\n"+head)
		if resp.StatusCode != 401 || !resp.Close {
			t.Errorf("%q: %d, Connection: close %v", head, resp.StatusCode, resp.Close)
		}
		if !c.ClosedByServer() {
			t.Errorf("%q: the connection stayed open", head)
		}
	}
	// Without a body nothing changes: the connection is kept.
	resp, _, _ := testconn.Exchange(t, addr, "GET /x HTTP/1.1\r\nHost: pith\r\n\r\n")
	if resp.StatusCode != 401 || resp.Close {
		t.Errorf("GET: %d, Connection: close %v", resp.StatusCode, resp.Close)
	}
}

// A handler that reads a body that does not come gets an error naming the timeout (not
// the connection's addresses) when the deadline passes, and the connection closes.
func TestSlowBodyTimesOut(t *testing.T) {
	t.Parallel()
	addr := server(t, time.Second, func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			if !errors.Is(err, ErrBodyTimeout) {
				t.Errorf("read error %v is not ErrBodyTimeout", err)
			}
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Write([]byte("read"))
	})
	resp, body, c := testconn.Exchange(t, addr, "POST /x HTTP/1.1\r\nHost: pith\r\nContent-Length: 100\r\n\r\nab")
	if resp.StatusCode != 400 || !resp.Close || body != "request body too slow: not received within 1s\n" {
		t.Errorf("%d %q, Connection: close %v", resp.StatusCode, body, resp.Close)
	}
	if !c.ClosedByServer() {
		t.Error("the connection stayed open")
	}
}

// ExtendBody gives a handler's body longer than the default; a body read to its end no
// longer has a deadline, so a handler that works on past it is not cancelled, and the
// connection is kept for the next request.
func TestExtendBodyAndAfterTheBody(t *testing.T) {
	t.Parallel()
	const short = 500 * time.Millisecond
	addr := server(t, short, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/upload" {
			ExtendBody(w, r, time.Minute)
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		time.Sleep(3 * short) // past the body's deadline, had it stayed
		if err := r.Context().Err(); err != nil {
			http.Error(w, "cancelled: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Write(b)
	})
	c := testconn.Dial(t, addr, "")
	c.Send(t, "POST /upload HTTP/1.1\r\nHost: pith\r\nContent-Length: 4\r\n\r\nab")
	time.Sleep(3 * short) // past the default deadline
	c.Send(t, "cd")
	resp, body, err := c.Answer()
	if err != nil || resp.StatusCode != 200 || body != "abcd" || resp.Close {
		t.Fatalf("extended upload: %v %q %v", resp, body, err)
	}
	// The same connection serves the next request.
	c.Send(t, "POST /json HTTP/1.1\r\nHost: pith\r\nContent-Length: 2\r\n\r\n{}")
	if resp, body, err = c.Answer(); err != nil || resp.StatusCode != 200 || body != "{}" {
		t.Errorf("next request: %v %q %v", resp, body, err)
	}
}
