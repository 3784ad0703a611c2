// Package certgen makes certificate authorities and the certificates they sign: servers,
// clients and Red Hat entitlement certificates (v3, as Candlepin issues them), as PEM.
// internal/testcert wraps it for tests; the benchmark studies use it directly. Keys are
// ECDSA P-256 (fast to make, and every server and client pith meets takes them);
// certificates are valid from an hour ago for a day.
package certgen

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA is a certificate authority.
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
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := template(name)
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	cert, der, err := sign(tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("CA %s: %w", name, err)
	}
	return &CA{Cert: cert, PEM: pemBlock("CERTIFICATE", der), key: key}, nil
}

// Server signs a server certificate for hosts (IP addresses or DNS names).
func (ca *CA) Server(hosts ...string) (Leaf, error) {
	if len(hosts) == 0 {
		return Leaf{}, fmt.Errorf("server certificate: no host")
	}
	tmpl := template(hosts[0])
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return ca.leaf(tmpl)
}

// Client signs a client certificate whose subject's common name is cn, with emails as
// its email addresses.
func (ca *CA) Client(cn string, emails ...string) (Leaf, error) {
	tmpl := template(cn)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	tmpl.EmailAddresses = emails
	return ca.leaf(tmpl)
}

func (ca *CA) leaf(tmpl *x509.Certificate) (Leaf, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Leaf{}, err
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	cert, der, err := sign(tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return Leaf{}, fmt.Errorf("certificate %s: %w", tmpl.Subject.CommonName, err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Leaf{}, err
	}
	return Leaf{Cert: cert, CertPEM: pemBlock("CERTIFICATE", der), KeyPEM: pemBlock("PRIVATE KEY", pk)}, nil
}

// TLS is the leaf as a crypto/tls certificate, for a Go client or server.
func (l Leaf) TLS() (tls.Certificate, error) {
	return tls.X509KeyPair(l.CertPEM, l.KeyPEM)
}

// Pool is a certificate pool holding the CA, for a Go client or server.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Write writes the CA certificate as dir/name and returns the path.
func (ca *CA) Write(dir, name string) (string, error) {
	return WriteFile(filepath.Join(dir, name), ca.PEM)
}

// Write writes the leaf's certificate as dir/name.crt and its key as dir/name.key (mode
// 0600, as PostgreSQL's clients want) and returns both paths.
func (l Leaf) Write(dir, name string) (certFile, keyFile string, err error) {
	if certFile, err = WriteFile(filepath.Join(dir, name+".crt"), l.CertPEM); err != nil {
		return "", "", err
	}
	keyFile, err = WriteFile(filepath.Join(dir, name+".key"), l.KeyPEM)
	return certFile, keyFile, err
}

// WriteFile replaces path with b the way renewal tools do (a new file renamed over the
// old one, never a half-written file in its place) and returns path.
func WriteFile(path string, b []byte) (string, error) {
	tmp := path + ".new"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return "", err
	}
	return path, os.Rename(tmp, path)
}

func template(cn string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
}

func sign(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, key *ecdsa.PrivateKey) (*x509.Certificate, []byte, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, der, err
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
