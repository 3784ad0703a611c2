// Package testcert makes certificate authorities and the certificates they sign, for
// tests of TLS: servers (pith, Redis, PostgreSQL) and clients, written as PEM files
// where the programs under test read them. It is internal/certgen with a failed step
// failing the test.
package testcert

import (
	"crypto/tls"
	"testing"

	"pith/internal/certgen"
)

// CA is a test certificate authority.
type CA struct{ *certgen.CA }

// Leaf is a certificate a CA signed, with its key.
type Leaf struct{ certgen.Leaf }

// NewCA makes a self-signed CA whose subject's common name is name.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	ca, err := certgen.NewCA(name)
	must(t, err)
	return &CA{ca}
}

// Server signs a server certificate for hosts (IP addresses or DNS names).
func (ca *CA) Server(t testing.TB, hosts ...string) Leaf {
	t.Helper()
	l, err := ca.CA.Server(hosts...)
	must(t, err)
	return Leaf{l}
}

// Client signs a client certificate whose subject's common name is cn, with emails as
// its email addresses.
func (ca *CA) Client(t testing.TB, cn string, emails ...string) Leaf {
	t.Helper()
	l, err := ca.CA.Client(cn, emails...)
	must(t, err)
	return Leaf{l}
}

// Entitlement signs a client certificate (common name cn) whose Red Hat entitlement (v3,
// as Candlepin issues them) grants paths, such as "/ACME/Library/content/dist/$releasever/os".
func (ca *CA) Entitlement(t testing.TB, cn string, paths ...string) Leaf {
	t.Helper()
	l, err := ca.CA.Entitlement(cn, paths...)
	must(t, err)
	return Leaf{l}
}

// TLS is the leaf as a crypto/tls certificate, for a Go client or server.
func (l Leaf) TLS(t testing.TB) tls.Certificate {
	t.Helper()
	c, err := l.Leaf.TLS()
	must(t, err)
	return c
}

// Write writes the CA certificate as dir/name and returns the path.
func (ca *CA) Write(t testing.TB, dir, name string) string {
	t.Helper()
	p, err := ca.CA.Write(dir, name)
	must(t, err)
	return p
}

// Write writes the leaf's certificate as dir/name.crt and its key as dir/name.key (mode 0600,
// as PostgreSQL's clients want) and returns both paths.
func (l Leaf) Write(t testing.TB, dir, name string) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile, err := l.Leaf.Write(dir, name)
	must(t, err)
	return certFile, keyFile
}

// WriteFile replaces path with b the way renewal tools do (a new file renamed over the
// old one, never a half-written file in its place) and returns path.
func WriteFile(t testing.TB, path string, b []byte) string {
	t.Helper()
	p, err := certgen.WriteFile(path, b)
	must(t, err)
	return p
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
