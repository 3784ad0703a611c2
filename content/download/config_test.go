package download

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// clientCert makes a self-signed client certificate and its key, as PEM.
func clientCert(t *testing.T) (certPEM, keyPEM string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "pith client"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err = x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})), cert
}

func TestTLS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("secure")) }))
	defer srv.Close()
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))

	d, _ := newD(t, Config{CACert: ca, TLSValidation: true})
	if _, sinks, err := fetch(context.Background(), d, srv.URL+"/", Expect{Size: -1}); err != nil || sinks[0].String() != "secure" {
		t.Errorf("with the server's CA: %v", err)
	}
	d, _ = newD(t, Config{TLSValidation: true})
	_, _, err := fetch(context.Background(), d, srv.URL+"/", Expect{Size: -1})
	if de, ok := errors.AsType[*Error](err); !ok || de.Attempts != 1 || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("unknown CA: %v; want one attempt failing on the certificate", err)
	}
	d, _ = newD(t, Config{TLSValidation: false})
	if _, _, err := fetch(context.Background(), d, srv.URL+"/", Expect{Size: -1}); err != nil {
		t.Errorf("tls_validation off: %v", err)
	}
}

func TestClientCertificate(t *testing.T) {
	t.Parallel()
	certPEM, keyPEM, cert := clientCert(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(r.TLS.PeerCertificates[0].Subject.CommonName))
	}))
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))

	d, _ := newD(t, Config{CACert: ca, TLSValidation: true, ClientCert: certPEM, ClientKey: keyPEM})
	if _, sinks, err := fetch(context.Background(), d, srv.URL+"/", Expect{Size: -1}); err != nil || sinks[0].String() != "pith client" {
		t.Errorf("with a client certificate: %v", err)
	}
	d, _ = newD(t, Config{CACert: ca, TLSValidation: true, MaxRetries: -1})
	if _, _, err := fetch(context.Background(), d, srv.URL+"/", Expect{Size: -1}); err == nil {
		t.Error("a server requiring a client certificate accepted none")
	}
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	certPEM, keyPEM, _ := clientCert(t)
	_, otherKey, _ := clientCert(t)
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"ca not pem", Config{CACert: "not pem"}, "ca_cert: no PEM certificate found"},
		{"key without cert", Config{ClientKey: keyPEM}, "client_cert: missing, client_key is set"},
		{"cert without key", Config{ClientCert: certPEM}, "client_key: missing, client_cert is set"},
		{"cert not pem", Config{ClientCert: "junk", ClientKey: keyPEM}, "client_cert: no PEM certificate found"},
		{"key given as cert", Config{ClientCert: keyPEM, ClientKey: keyPEM}, "client_cert: no PEM certificate found"},
		{"key not pem", Config{ClientCert: certPEM, ClientKey: "junk"}, "client_key: no PEM private key found"},
		{"key of another cert", Config{ClientCert: certPEM, ClientKey: otherKey}, "client_cert/client_key: "},
		{"proxy not a url", Config{ProxyURL: "::bad"}, `proxy_url: "::bad" is not a URL`},
		{"proxy scheme", Config{ProxyURL: "ftp://proxy:21"}, `proxy_url: "ftp://proxy:21": scheme "ftp" is not http, https or socks5`},
		{"proxy user without proxy", Config{ProxyUsername: "u"}, "proxy_username: set without a proxy_url"},
		{"remote url scheme", Config{URL: "ftp://host/x"}, `url: "ftp://host/x": scheme "ftp" is not http or https`},
		{"remote url host", Config{URL: "http:///x"}, `url: "http:///x" has no host`},
		{"negative timeout", Config{SockReadTimeout: -1}, "sock_read_timeout: -1 is negative"},
		{"negative rate", Config{RateLimit: -2}, "rate_limit: -2 is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := New(tc.cfg)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("New: %v, %v; want an error starting %q", d, err, tc.want)
			}
		})
	}
	if _, err := New(Config{URL: "https://example.com/repo/", CACert: certPEM, ClientCert: certPEM, ClientKey: keyPEM,
		ProxyURL: "http://proxy:3128", ProxyUsername: "u", ProxyPassword: "p"}); err != nil {
		t.Errorf("a full valid config: %v", err)
	}
}
