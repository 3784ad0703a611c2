// Package testconn speaks HTTP/1.1 to a server over a raw TCP connection, for tests of
// what a server does with a client that misbehaves (sends a body slowly, or never).
package testconn

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// Deadline bounds everything a test does on a connection: generous, since what tests
// wait for comes at once or after server deadlines of a second or two.
const Deadline = 20 * time.Second

// Conn is a client connection; it is closed when the test ends.
type Conn struct {
	net.Conn
	R *bufio.Reader
}

// Dial connects to addr, from the local address from when it is not "".
func Dial(t *testing.T, addr, from string) *Conn {
	t.Helper()
	var d net.Dialer
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(Deadline))
	return &Conn{Conn: c, R: bufio.NewReader(c)}
}

// Send writes raw, the start of a request or all of it.
func (c *Conn) Send(t *testing.T, raw string) {
	t.Helper()
	if _, err := io.WriteString(c.Conn, raw); err != nil {
		t.Fatal(err)
	}
}

// Answer reads one response and its body.
func (c *Conn) Answer() (*http.Response, string, error) {
	resp, err := http.ReadResponse(c.R, nil)
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

// Exchange sends raw on a new connection to addr and reads the answer; the test fails
// when none comes. The connection stays open for what follows.
func Exchange(t *testing.T, addr, raw string) (*http.Response, string, *Conn) {
	t.Helper()
	c := Dial(t, addr, "")
	c.Send(t, raw)
	resp, body, err := c.Answer()
	if err != nil {
		l, _, _ := strings.Cut(raw, "\r\n")
		t.Fatalf("%s: no answer: %v", l, err)
	}
	return resp, body, c
}

// ClosedByServer reports whether the server closed c, rather than keeping it open until
// the Deadline.
func (c *Conn) ClosedByServer() bool {
	_, err := io.ReadAll(c.R)
	return !errors.Is(err, os.ErrDeadlineExceeded)
}
