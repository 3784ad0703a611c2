package tlsfile

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxSize bounds a PEM file: far above a certificate chain (a few KiB) or a system
// bundle of every public CA (about 200 KiB).
const MaxSize = 1 << 20

// Read reads a PEM file of at most MaxSize bytes.
func Read(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if len(b) > MaxSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", file, MaxSize)
	}
	return b, nil
}

// Pool parses a bundle of CA certificates.
func Pool(bundle []byte) (*x509.CertPool, error) {
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(bundle) {
		return nil, errors.New("no PEM certificate in it")
	}
	return p, nil
}

// LoadPair reads and parses a certificate chain and its key from their files.
func LoadPair(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := Read(certFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := Read(keyFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return c, fmt.Errorf("certificate %s and key %s: %w", certFile, keyFile, err)
	}
	return c, nil
}

// LoadPool reads and parses a bundle of CA certificates from its file.
func LoadPool(file string) (*x509.CertPool, error) {
	b, err := Read(file)
	if err != nil {
		return nil, err
	}
	p, err := Pool(b)
	if err != nil {
		return nil, fmt.Errorf("CA bundle %s: %w", file, err)
	}
	return p, nil
}
