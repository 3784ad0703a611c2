package edge

import (
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Conns caps the connections ln holds open at once from one client IP address at max
// (0: no cap). A connection over the cap is closed as soon as it is accepted, before
// anything is read from it or written to it: the cheapest refusal, which clients see as
// a reset connection and retry. Refusals are logged at most once a minute.
func Conns(ln net.Listener, max int, log *slog.Logger) net.Listener {
	if max <= 0 {
		return ln
	}
	return &limited{Listener: ln, max: max, log: log, open: map[netip.Addr]int{}}
}

// limited is a listener with a per-address cap.
type limited struct {
	net.Listener
	max int
	log *slog.Logger

	mu      sync.Mutex
	open    map[netip.Addr]int
	refused int       // since the last log line
	logged  time.Time // of the last log line
}

func (l *limited) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := clientIP(c.RemoteAddr())
		l.mu.Lock()
		if l.open[ip] >= l.max {
			l.refuse(ip)
			l.mu.Unlock()
			c.Close()
			continue
		}
		l.open[ip]++
		l.mu.Unlock()
		if tc, ok := c.(*net.TCPConn); ok {
			// Kept a *net.TCPConn underneath, so that the server still sends files with
			// sendfile (ReadFrom) and half-closes (CloseWrite).
			return &tcpConn{TCPConn: tc, release: release{l: l, ip: ip}}, nil
		}
		return &conn{Conn: c, release: release{l: l, ip: ip}}, nil
	}
}

// refuse counts a refused connection and logs now and then; l.mu is held.
func (l *limited) refuse(ip netip.Addr) {
	l.refused++
	if now := time.Now(); now.Sub(l.logged) >= time.Minute {
		l.log.Warn("connections refused: a client address reached max-connections-per-client",
			"addr", ip.String(), "max", l.max, "refused", l.refused)
		l.logged, l.refused = now, 0
	}
}

func clientIP(a net.Addr) netip.Addr {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.AddrPort().Addr().Unmap()
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap.Addr().Unmap()
}

// release gives a connection's place back to its address, once.
type release struct {
	l    *limited
	ip   netip.Addr
	done atomic.Bool
}

func (r *release) do() {
	if !r.done.CompareAndSwap(false, true) {
		return
	}
	r.l.mu.Lock()
	if r.l.open[r.ip]--; r.l.open[r.ip] <= 0 {
		delete(r.l.open, r.ip)
	}
	r.l.mu.Unlock()
}

type tcpConn struct {
	*net.TCPConn
	release
}

func (c *tcpConn) Close() error {
	c.release.do()
	return c.TCPConn.Close()
}

type conn struct {
	net.Conn
	release
}

func (c *conn) Close() error {
	c.release.do()
	return c.Conn.Close()
}
