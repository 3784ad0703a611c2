package edge

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"pith/internal/testcert"
)

// tlsServer serves over TLS with the server pair and client CA bundle of its files,
// answering with what CertUser names by each field.
func tlsServer(t *testing.T, server testcert.Leaf, clientCA *testcert.CA) string {
	t.Helper()
	dir := t.TempDir()
	certFile, keyFile := server.Write(t, dir, "server")
	tl, err := NewTLS(TLSFiles{Cert: certFile, Key: keyFile, ClientCA: clientCA.Write(t, dir, "clients.pem")}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, field := range []string{CertUserCN, CertUserEmail, CertUserNone} {
			name, ok := CertUser(field)(r)
			fmt.Fprintf(w, "%s=%s,%v ", field, name, ok)
		}
	}))
	srv.Listener.Close()
	srv.Listener = tl.Listener(ln)
	srv.Start()
	t.Cleanup(srv.Close)
	return ln.Addr().String()
}

// A client with a certificate of the client CA is named by it; one without is served
// and named by nothing; one with a certificate the bundle does not verify is refused at
// the handshake.
func TestClientCertificates(t *testing.T) {
	t.Parallel()
	serverCA, clientCA, otherCA := testcert.NewCA(t, "server CA"), testcert.NewCA(t, "client CA"), testcert.NewCA(t, "other CA")
	addr := tlsServer(t, serverCA.Server(t, "127.0.0.1"), clientCA)
	get := func(certs ...tls.Certificate) (string, error) {
		cfg := &tls.Config{RootCAs: serverCA.Pool()}
		if len(certs) > 0 {
			// Sent whichever CAs the server names (Go's client would otherwise keep a
			// certificate of a CA the server did not name to itself, as curl does not).
			cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &certs[0], nil }
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
		defer c.CloseIdleConnections()
		resp, err := c.Get("https://" + addr + "/")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	for _, tc := range []struct {
		name  string
		certs []tls.Certificate
		want  string // "" for a refused handshake
	}{
		{"no certificate", nil, "cn=,false email=,false none=,false "},
		{"client CA", []tls.Certificate{clientCA.Client(t, "alice", "alice@example.com", "a2@example.com").TLS(t)},
			"cn=alice,true email=alice@example.com,true none=,false "},
		{"client CA, no email", []tls.Certificate{clientCA.Client(t, "bob").TLS(t)}, "cn=bob,true email=,false none=,false "},
		{"another CA", []tls.Certificate{otherCA.Client(t, "mallory").TLS(t)}, ""},
		{"the server CA", []tls.Certificate{serverCA.Client(t, "mallory").TLS(t)}, ""},
		// Signed by the client CA, but for servers only.
		{"not for clients", []tls.Certificate{clientCA.Server(t, "mallory").TLS(t)}, ""},
	} {
		got, err := get(tc.certs...)
		if tc.want == "" && err == nil {
			t.Errorf("%s: served (%s), want the handshake refused", tc.name, got)
		}
		if tc.want != "" && (err != nil || got != tc.want) {
			t.Errorf("%s: %q %v, want %q", tc.name, got, err, tc.want)
		}
	}
	// Plain HTTP to the TLS listener is told so (net/http's 400), and TLS before 1.2 is refused.
	resp, err := http.Get("http://" + addr + "/")
	if err != nil || resp.StatusCode != 400 {
		t.Errorf("plain HTTP: %v %v, want a 400", resp, err)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: serverCA.Pool(), MaxVersion: tls.VersionTLS11}}}
	if _, err := c.Get("https://" + addr + "/"); err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("TLS 1.1: %v, want the handshake refused for its version", err)
	}
}

// A name a certificate gives is taken only if it could be a user name.
func TestCertUserNames(t *testing.T) {
	t.Parallel()
	req := func(cn string, emails ...string) *http.Request {
		r := httptest.NewRequest("GET", "/", nil)
		leaf := &x509.Certificate{Subject: pkix.Name{CommonName: cn}, EmailAddresses: emails}
		r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}, VerifiedChains: [][]*x509.Certificate{{leaf}}}
		return r
	}
	unverified := req("alice")
	unverified.TLS.VerifiedChains = nil
	for _, tc := range []struct {
		name  string
		field string
		r     *http.Request
		want  string // "" for ok false
	}{
		{"cn", CertUserCN, req("alice"), "alice"},
		{"email", CertUserEmail, req("alice", "a@example.com"), "a@example.com"},
		{"none", CertUserNone, req("alice", "a@example.com"), ""},
		{"unknown field", "uid", req("alice"), ""},
		{"plain HTTP", CertUserCN, httptest.NewRequest("GET", "/", nil), ""},
		{"not verified", CertUserCN, unverified, ""},
		{"empty cn", CertUserCN, req(""), ""},
		{"no email", CertUserEmail, req("alice"), ""},
		{"150 bytes", CertUserCN, req(strings.Repeat("a", 150)), strings.Repeat("a", 150)},
		{"151 bytes", CertUserCN, req(strings.Repeat("a", 151)), ""},
		{"control character", CertUserCN, req("ali\nce"), ""},
		{"invalid UTF-8", CertUserCN, req("ali\xffce"), ""},
		{"non-ASCII", CertUserCN, req("Zoë"), "Zoë"},
	} {
		name, ok := CertUser(tc.field)(tc.r)
		if ok != (tc.want != "") || name != tc.want {
			t.Errorf("%s: %q %v, want %q", tc.name, name, ok, tc.want)
		}
	}
}
