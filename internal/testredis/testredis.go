// Package testredis starts a private redis-server for a test: on 127.0.0.1, a free port,
// no persistence, stopped when the test ends; over TLS only with StartTLS. A test that
// needs Redis fails (never skips) when redis-server is missing; scripts/test installs it.
package testredis

import (
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Server is a running redis-server.
type Server struct {
	URL  string // redis://127.0.0.1:port/0, or rediss://… over TLS
	cmd  *exec.Cmd
	port string
}

// Start runs redis-server until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, "redis", func(port string) []string { return []string{"--port", port} })
}

// TLS names the files of a redis-server that speaks only TLS.
type TLS struct {
	Cert, Key string // its certificate and key
	CA        string // the CAs of client certificates (redis-server wants one even when it asks for none)
	// ClientCerts refuses clients without a certificate the CAs signed (redis-server's
	// tls-auth-clients yes); otherwise a client need not send one.
	ClientCerts bool
}

// StartTLS runs redis-server until the test ends, listening only with TLS.
func StartTLS(t testing.TB, files TLS) *Server {
	t.Helper()
	auth := "optional"
	if files.ClientCerts {
		auth = "yes"
	}
	return start(t, "rediss", func(port string) []string {
		return []string{"--port", "0", "--tls-port", port, "--tls-cert-file", files.Cert, "--tls-key-file", files.Key,
			"--tls-ca-cert-file", files.CA, "--tls-auth-clients", auth}
	})
}

func start(t testing.TB, scheme string, listen func(port string) []string) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server not found: scripts/test installs it (apt-get install redis-server)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strings.TrimPrefix(l.Addr().String(), "127.0.0.1:")
	l.Close()
	s := &Server{URL: scheme + "://127.0.0.1:" + port + "/0", port: port}
	args := append([]string{"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir()}, listen(port)...)
	s.cmd = exec.Command(bin, args...)
	var out strings.Builder
	s.cmd.Stdout, s.cmd.Stderr = &out, &out
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(s.Stop)
	deadline := time.Now().Add(10 * time.Second)
	for !s.ready(scheme == "rediss") {
		if time.Now().After(deadline) {
			s.Stop()
			t.Fatalf("redis-server did not start on port %s:\n%s", port, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
}

// ready reports whether the server answers: a PING, or over TLS (where the probe has no
// client certificate to offer) an accepted connection.
func (s *Server) ready(tls bool) bool {
	c, err := net.Dial("tcp", "127.0.0.1:"+s.port)
	if err != nil {
		return false
	}
	defer c.Close()
	if tls {
		return true
	}
	fmt.Fprint(c, "PING\r\n")
	buf := make([]byte, 7)
	c.SetReadDeadline(time.Now().Add(time.Second))
	n, _ := c.Read(buf)
	return strings.HasPrefix(string(buf[:n]), "+PONG")
}

// Stop kills the server (also a fault test's "Redis goes away").
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil && s.cmd.ProcessState == nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
}
