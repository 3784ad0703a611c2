// Package testredis starts a private redis-server for a test: on 127.0.0.1, a free port,
// no persistence, stopped when the test ends. A test that needs Redis fails (never
// skips) when redis-server is missing; scripts/test installs it.
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
	URL  string // redis://127.0.0.1:port/0
	cmd  *exec.Cmd
	port string
}

// Start runs redis-server until the test ends.
func Start(t testing.TB) *Server {
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
	s := &Server{URL: "redis://127.0.0.1:" + port + "/0", port: port}
	s.cmd = exec.Command(bin, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(s.Stop)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err == nil {
			fmt.Fprint(c, "PING\r\n")
			buf := make([]byte, 7)
			c.SetReadDeadline(time.Now().Add(time.Second))
			n, _ := c.Read(buf)
			c.Close()
			if strings.HasPrefix(string(buf[:n]), "+PONG") {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not start on port %s", port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server (also a fault test's "Redis goes away").
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil && s.cmd.ProcessState == nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
}
