package certgen_test

import (
	"crypto/tls"
	"crypto/x509"
	"testing"

	"pith/internal/certgen"
	"pith/serve/guard/cert"
)

// What the CA signs verifies against it for its use, the written files load as a key
// pair, and an entitlement grants its paths and no others.
func TestCertificates(t *testing.T) {
	ca, err := certgen.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	other, err := certgen.NewCA("other CA")
	if err != nil {
		t.Fatal(err)
	}
	server, err := ca.Server("127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.Client("host-1", "host-1@example.com")
	if err != nil {
		t.Fatal(err)
	}
	ent, err := ca.Entitlement("host-2", "/ACME/Library/content/dist/x/$releasever", "/ACME/Library/custom/p/r")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		leaf  certgen.Leaf
		roots *x509.CertPool
		usage x509.ExtKeyUsage
		host  string
		ok    bool
	}{
		{"server", server, ca.Pool(), x509.ExtKeyUsageServerAuth, "127.0.0.1", true},
		{"server by name", server, ca.Pool(), x509.ExtKeyUsageServerAuth, "localhost", true},
		{"server, another host", server, ca.Pool(), x509.ExtKeyUsageServerAuth, "127.0.0.2", false},
		{"server as a client", server, ca.Pool(), x509.ExtKeyUsageClientAuth, "", false},
		{"client", client, ca.Pool(), x509.ExtKeyUsageClientAuth, "", true},
		{"entitlement", ent, ca.Pool(), x509.ExtKeyUsageClientAuth, "", true},
		{"client, another CA", client, other.Pool(), x509.ExtKeyUsageClientAuth, "", false},
	} {
		_, err := tc.leaf.Cert.Verify(x509.VerifyOptions{Roots: tc.roots, DNSName: tc.host, KeyUsages: []x509.ExtKeyUsage{tc.usage}})
		if (err == nil) != tc.ok {
			t.Errorf("%s: verify: %v, want ok %t", tc.name, err, tc.ok)
		}
	}

	dir := t.TempDir()
	certFile, keyFile, err := client.Write(dir, "client")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatalf("the written pair: %v", err)
	}
	if !pair.Leaf.Equal(client.Cert) {
		t.Errorf("the written certificate is not the client's")
	}

	e, err := cert.ParseEntitlement(ent.Cert)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{
		"/ACME/Library/content/dist/x/9/Packages/a.rpm": true,
		"/ACME/Library/custom/p/r/f.iso":                true,
		"/ACME/Library/content/dist/y/9/Packages/a.rpm": false,
		"/ACME/Library/custom/p":                        false,
	} {
		if got := e.Allows(path); got != want {
			t.Errorf("entitlement allows %s: %t, want %t", path, got, want)
		}
	}
}
