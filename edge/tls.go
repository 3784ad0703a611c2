package edge

import (
	"bytes"
	"crypto/tls"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"pith/tlsfile"
)

// TLSFiles name the PEM files of a listener's TLS.
type TLSFiles struct {
	Cert, Key string // the server's certificate chain, leaf first, and its private key
	// ClientCA is a bundle of the CAs whose client certificates are verified; "" asks
	// clients for none.
	ClientCA string
}

// TLSCheckInterval is how often at most a handshake checks whether the files changed.
const TLSCheckInterval = 2 * time.Second

// TLS serves connections over TLS with what its files hold, and follows the files when
// they change (a certificate renewed by certbot or an installer): a handshake at most
// every TLSCheckInterval reads them again, and if they differ from the last reading the
// new pair (and client CAs) serve every later handshake. New files that do not load (a
// key that does not match the certificate, half-written files, a bundle without a
// certificate) are logged, once, and the previous ones keep serving.
//
// TLS 1.2 at least, Go's default cipher suites, HTTP/1.1 only (as over plain HTTP). With
// a client CA bundle, a client certificate is asked for and verified if one is sent
// (tls.VerifyClientCertIfGiven): a client without one is served, one whose certificate
// does not verify against the bundle (another CA, expired, not for client
// authentication) fails the handshake.
type TLS struct {
	files TLSFiles
	log   *slog.Logger

	cur  atomic.Pointer[tls.Config]
	next atomic.Int64 // when the next check is due, in Unix nanoseconds

	mu      sync.Mutex // held by the one handshake that checks
	read    [3][]byte  // what the files held when cur was loaded
	lastErr string     // the last failure logged, to log each failure once
}

// NewTLS loads the files; it fails if they do not load.
func NewTLS(files TLSFiles, log *slog.Logger) (*TLS, error) {
	t := &TLS{files: files, log: log}
	read, err := t.readFiles()
	if err != nil {
		return nil, err
	}
	cfg, err := t.load()
	if err != nil {
		return nil, err
	}
	t.cur.Store(cfg)
	t.read = read
	t.next.Store(time.Now().Add(TLSCheckInterval).UnixNano())
	return t, nil
}

// Listener serves the connections of ln over TLS.
func (t *TLS) Listener(ln net.Listener) net.Listener {
	return tls.NewListener(ln, &tls.Config{GetConfigForClient: t.forClient})
}

func (t *TLS) forClient(*tls.ClientHelloInfo) (*tls.Config, error) {
	// One handshake checks; the others go on with what is loaded.
	if time.Now().UnixNano() >= t.next.Load() && t.mu.TryLock() {
		t.check()
		t.mu.Unlock()
	}
	return t.cur.Load(), nil
}

// check loads the files again if they changed; t.mu is held.
func (t *TLS) check() {
	now := time.Now()
	if now.UnixNano() < t.next.Load() {
		return // checked by the handshake that held the lock before
	}
	t.next.Store(now.Add(TLSCheckInterval).UnixNano())
	read, err := t.readFiles()
	if err == nil && same(read, t.read) {
		t.lastErr = ""
		return
	}
	var cfg *tls.Config
	if err == nil {
		cfg, err = t.load()
	}
	if err != nil {
		if err.Error() != t.lastErr {
			t.lastErr = err.Error()
			t.log.Error("tls: the changed certificate files do not load; still serving the previous ones", "err", err)
		}
		return
	}
	t.cur.Store(cfg)
	t.read, t.lastErr = read, ""
	leaf := cfg.Certificates[0].Leaf
	t.log.Info("tls: certificate files reloaded", "subject", leaf.Subject.String(), "not_after", leaf.NotAfter)
}

// readFiles reads the files as they are now, to compare with the last reading.
func (t *TLS) readFiles() (read [3][]byte, err error) {
	for i, f := range []string{t.files.Cert, t.files.Key, t.files.ClientCA} {
		if f == "" {
			continue
		}
		if read[i], err = tlsfile.Read(f); err != nil {
			return read, err
		}
	}
	return read, nil
}

func same(a, b [3][]byte) bool {
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// load builds the configuration of later handshakes from the files.
func (t *TLS) load() (*tls.Config, error) {
	cert, err := tlsfile.LoadPair(t.files.Cert, t.files.Key)
	if err != nil {
		return nil, err
	}
	c := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	if t.files.ClientCA != "" {
		if c.ClientCAs, err = tlsfile.LoadPool(t.files.ClientCA); err != nil {
			return nil, err
		}
		c.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return c, nil
}
