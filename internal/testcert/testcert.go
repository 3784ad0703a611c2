// Package testcert makes certificate authorities and the certificates they sign, for
// tests of TLS: servers (pith, Redis, PostgreSQL) and clients, written as PEM files
// where the programs under test read them. Keys are ECDSA P-256 (fast to make, and
// every server and client the tests drive takes them); certificates are valid from an
// hour ago for a day.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a test certificate authority.
type CA struct {
	Cert *x509.Certificate
	PEM  []byte // the CA certificate
	key  *ecdsa.PrivateKey
}

// Leaf is a certificate a CA signed, with its key.
type Leaf struct {
	Cert    *x509.Certificate
	CertPEM []byte
	KeyPEM  []byte // PKCS #8
}

// NewCA makes a self-signed CA whose subject's common name is name.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := template(name)
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	cert, der := sign(t, tmpl, tmpl, &key.PublicKey, key)
	return &CA{Cert: cert, PEM: pemBlock("CERTIFICATE", der), key: key}
}

// Server signs a server certificate for hosts (IP addresses or DNS names).
func (ca *CA) Server(t testing.TB, hosts ...string) Leaf {
	t.Helper()
	tmpl := template(hosts[0])
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return ca.leaf(t, tmpl)
}

// Client signs a client certificate whose subject's common name is cn, with emails as
// its email addresses.
func (ca *CA) Client(t testing.TB, cn string, emails ...string) Leaf {
	t.Helper()
	tmpl := template(cn)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	tmpl.EmailAddresses = emails
	return ca.leaf(t, tmpl)
}

func (ca *CA) leaf(t testing.TB, tmpl *x509.Certificate) Leaf {
	t.Helper()
	key := newKey(t)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	cert, der := sign(t, tmpl, ca.Cert, &key.PublicKey, ca.key)
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return Leaf{Cert: cert, CertPEM: pemBlock("CERTIFICATE", der), KeyPEM: pemBlock("PRIVATE KEY", pk)}
}

// TLS is the leaf as a crypto/tls certificate, for a Go client or server.
func (l Leaf) TLS(t testing.TB) tls.Certificate {
	t.Helper()
	c, err := tls.X509KeyPair(l.CertPEM, l.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Pool is a certificate pool holding the CA, for a Go client or server.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Write writes the CA certificate as dir/name and returns the path.
func (ca *CA) Write(t testing.TB, dir, name string) string {
	t.Helper()
	return WriteFile(t, filepath.Join(dir, name), ca.PEM)
}

// Write writes the leaf's certificate as dir/name.crt and its key as dir/name.key (mode 0600,
// as PostgreSQL's clients want) and returns both paths.
func (l Leaf) Write(t testing.TB, dir, name string) (certFile, keyFile string) {
	t.Helper()
	return WriteFile(t, filepath.Join(dir, name+".crt"), l.CertPEM), WriteFile(t, filepath.Join(dir, name+".key"), l.KeyPEM)
}

// WriteFile replaces path with b the way renewal tools do (a new file renamed over the
// old one, never a half-written file in its place) and returns path.
func WriteFile(t testing.TB, path string, b []byte) string {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func template(cn string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
}

func sign(t testing.TB, tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, key *ecdsa.PrivateKey) (*x509.Certificate, []byte) {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, der
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
