package edge

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"pith/internal/testcert"
)

// lockedBuffer is a log destination safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// served is the serial number of the certificate the next handshake gets, the files
// checked first (as if the reload interval had passed).
func served(t *testing.T, tl *TLS) string {
	t.Helper()
	tl.next.Store(0)
	cfg, err := tl.forClient(nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Certificates[0].Leaf.SerialNumber.String()
}

// Changed files serve the next handshakes; files that do not load are logged once and
// the previous pair keeps serving; files that load again are taken.
func TestTLSReload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testcert.NewCA(t, "server CA")
	a, b, c := ca.Server(t, "127.0.0.1"), ca.Server(t, "127.0.0.1"), ca.Server(t, "127.0.0.1")
	certFile, keyFile := a.Write(t, dir, "server")
	var log lockedBuffer
	tl, err := NewTLS(TLSFiles{Cert: certFile, Key: keyFile}, slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	serial := func(l testcert.Leaf) string { return l.Cert.SerialNumber.String() }
	if got := served(t, tl); got != serial(a) {
		t.Fatalf("serving %s, want the first certificate %s", got, serial(a))
	}
	b.Write(t, dir, "server")
	if got := served(t, tl); got != serial(b) {
		t.Fatalf("after renewal serving %s, want %s", got, serial(b))
	}
	// Half-way through a renewal: c's certificate beside b's key.
	testcert.WriteFile(t, certFile, c.CertPEM)
	for range 3 {
		if got := served(t, tl); got != serial(b) {
			t.Fatalf("with a mismatched pair serving %s, want the previous %s", got, serial(b))
		}
	}
	if n := strings.Count(log.String(), "do not load"); n != 1 || !strings.Contains(log.String(), certFile) {
		t.Errorf("the broken pair logged %d times, want once, naming %s:\n%s", n, certFile, log.String())
	}
	testcert.WriteFile(t, keyFile, c.KeyPEM)
	if got := served(t, tl); got != serial(c) {
		t.Fatalf("after the key followed serving %s, want %s", got, serial(c))
	}
	// A file that goes away (a symlink being replaced) keeps the loaded pair too.
	os.Remove(keyFile)
	if got := served(t, tl); got != serial(c) {
		t.Errorf("without the key file serving %s, want %s", got, serial(c))
	}
	if !strings.Contains(log.String(), "certificate files reloaded") {
		t.Errorf("reloads not logged:\n%s", log.String())
	}
}

// Between checks the files are not read: a handshake costs nothing more.
func TestTLSChecksAtMostEveryInterval(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testcert.NewCA(t, "server CA")
	a := ca.Server(t, "127.0.0.1")
	certFile, keyFile := a.Write(t, dir, "server")
	tl, err := NewTLS(TLSFiles{Cert: certFile, Key: keyFile}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ca.Server(t, "127.0.0.1").Write(t, dir, "server")
	cfg, _ := tl.forClient(nil) // within TLSCheckInterval of NewTLS
	if cfg.Certificates[0].Leaf.SerialNumber.Cmp(a.Cert.SerialNumber) != 0 {
		t.Error("the files were read again before the interval passed")
	}
}

// Files that do not load at start are an error naming the file (tlsfile tests what
// does not load).
func TestNewTLSErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testcert.NewCA(t, "server CA")
	certFile, keyFile := ca.Server(t, "127.0.0.1").Write(t, dir, "a")
	_, otherKey := ca.Server(t, "127.0.0.1").Write(t, dir, "b")
	for _, tc := range []struct {
		files TLSFiles
		want  string
	}{
		{TLSFiles{Cert: filepath.Join(dir, "missing.crt"), Key: keyFile}, "missing.crt"},
		{TLSFiles{Cert: certFile, Key: otherKey}, "b.key"},
		{TLSFiles{Cert: certFile, Key: keyFile, ClientCA: keyFile}, "a.key: no PEM certificate"},
		{TLSFiles{Cert: certFile, Key: keyFile, ClientCA: ca.Write(t, dir, "ca.pem")}, ""},
	} {
		_, err := NewTLS(tc.files, slog.New(slog.DiscardHandler))
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error naming %q", tc.files, err, tc.want)
		}
	}
}

// The client CA bundle follows its file like the pair.
func TestTLSClientCAReload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testcert.NewCA(t, "server CA")
	certFile, keyFile := ca.Server(t, "127.0.0.1").Write(t, dir, "server")
	first, second := testcert.NewCA(t, "first client CA"), testcert.NewCA(t, "second client CA")
	caFile := first.Write(t, dir, "clients.pem")
	tl, err := NewTLS(TLSFiles{Cert: certFile, Key: keyFile, ClientCA: caFile}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	trusts := func(ca *testcert.CA) bool {
		tl.next.Store(0)
		cfg, _ := tl.forClient(nil)
		_, err := ca.Client(t, "alice").Cert.Verify(x509.VerifyOptions{Roots: cfg.ClientCAs,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		return cfg.ClientAuth == tls.VerifyClientCertIfGiven && err == nil
	}
	if !trusts(first) || trusts(second) {
		t.Fatal("at start: want the first client CA only")
	}
	second.Write(t, dir, "clients.pem")
	if trusts(first) || !trusts(second) {
		t.Error("after the bundle changed: want the second client CA only")
	}
}
