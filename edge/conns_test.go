package edge

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"pith/internal/testconn"
)

// The server still sends files with sendfile and half-closes through a capped listener.
var _ interface {
	io.ReaderFrom
	CloseWrite() error
} = (*tcpConn)(nil)

const get = "GET / HTTP/1.1\r\nHost: pith\r\n\r\n"

// answered reports whether c gets a 200 for a GET.
func answered(t *testing.T, c *testconn.Conn) bool {
	t.Helper()
	c.Send(t, get)
	resp, _, err := c.Answer()
	return err == nil && resp.StatusCode == 200
}

// A client address holds at most max connections; the next is closed unanswered, other
// addresses are not affected, and a closed connection frees its place.
func TestConnsPerAddress(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Listener.Close()
	srv.Listener = Conns(ln, 2, slog.New(slog.DiscardHandler))
	srv.Start()
	t.Cleanup(srv.Close)
	addr := ln.Addr().String()

	var held []*testconn.Conn
	for range 2 {
		c := testconn.Dial(t, addr, "127.0.0.1")
		if !answered(t, c) {
			t.Fatal("a connection within the cap was not answered")
		}
		held = append(held, c)
	}
	if answered(t, testconn.Dial(t, addr, "127.0.0.1")) {
		t.Fatal("a connection over the cap was answered")
	}
	if !answered(t, testconn.Dial(t, addr, "127.0.0.2")) {
		t.Error("another address was refused")
	}
	for _, c := range held {
		if !answered(t, c) {
			t.Error("a held connection stopped working")
		}
	}
	held[0].Close()
	// The server notices the close when its read of the next request ends; until then
	// the place is still taken, so try a few times.
	for i := 0; !answered(t, testconn.Dial(t, addr, "127.0.0.1")); i++ {
		if i == 100 {
			t.Fatal("no place after a close")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestConnsUncapped(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if Conns(ln, 0, nil) != ln {
		t.Error("max 0 wraps the listener")
	}
}
