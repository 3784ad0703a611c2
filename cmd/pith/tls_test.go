package main

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"pith/config"
	"pith/edge"
	"pith/internal/testcert"
)

// handshake connects to addr over TLS trusting roots, with client (if not nil) sent as
// the client certificate whichever CAs the server names, and GETs target on a
// connection of its own. It returns the answer and the serial number of the
// certificate the server sent.
func handshake(t *testing.T, addr, target string, roots *testcert.CA, client *tls.Certificate) (*http.Response, string, error) {
	t.Helper()
	cfg := &tls.Config{RootCAs: roots.Pool()}
	if client != nil {
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return client, nil }
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}, Timeout: 20 * time.Second}
	resp, err := c.Get("https://" + addr + target)
	if err != nil {
		return nil, "", err
	}
	resp.Body.Close()
	return resp, resp.TLS.PeerCertificates[0].SerialNumber.String(), nil
}

// With --tls-cert, --tls-key and --tls-client-ca every listener serves HTTPS; a client
// certificate of the client CA reaches the handlers verified and names its user
// (edge.CertUser), one of another CA is refused; renewed files serve new connections
// without a restart, and a broken renewal leaves the previous pair serving.
func TestServeTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	serverCA, clientCA, otherCA := testcert.NewCA(t, "server CA"), testcert.NewCA(t, "client CA"), testcert.NewCA(t, "other CA")
	first, second, third := serverCA.Server(t, "127.0.0.1"), serverCA.Server(t, "127.0.0.1"), serverCA.Server(t, "127.0.0.1")
	certFile, keyFile := first.Write(t, dir, "server")
	certUser := edge.CertUser(edge.CertUserCN)
	s := startNodeWith(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if name, ok := certUser(r); ok {
				w.Header().Set("Test-Cert-User", name)
			}
			h.ServeHTTP(w, r)
		})
	}, "--tls-cert", certFile, "--tls-key", keyFile, "--tls-client-ca", clientCA.Write(t, dir, "clients.pem"),
		"--content-listen", "127.0.0.1:24816")

	// Both listeners serve HTTPS; content_origin says so.
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: serverCA.Pool()}}}
	defer c.CloseIdleConnections()
	resp, err := c.Get("https://" + s.api + "/pulp/api/v3/status/")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("status over HTTPS: %v %v", resp, err)
	}
	var status struct {
		ContentSettings map[string]string `json:"content_settings"`
	}
	json.NewDecoder(resp.Body).Decode(&status)
	resp.Body.Close()
	if got := status.ContentSettings["content_origin"]; got != "https://127.0.0.1:24816" {
		t.Errorf("content_origin %q, want https://127.0.0.1:24816", got)
	}
	if resp, _, err := handshake(t, s.content, "/pulp/content/", serverCA, nil); err != nil || resp.StatusCode != 200 {
		t.Errorf("content over HTTPS: %v %v", resp, err)
	}
	if resp, err := http.Get("http://" + s.api + "/pulp/api/v3/status/"); err != nil || resp.StatusCode != 400 {
		t.Errorf("plain HTTP: %v %v, want net/http's 400", resp, err)
	}

	// Client certificates.
	alice := clientCA.Client(t, "alice").TLS(t)
	for _, addr := range []string{s.api, s.content} {
		resp, _, err := handshake(t, addr, "/pulp/content/", serverCA, &alice)
		if err != nil || resp.Header.Get("Test-Cert-User") != "alice" {
			t.Errorf("%s, the client CA's certificate: %v %v, want it named alice", addr, resp, err)
		}
		if resp, _, err = handshake(t, addr, "/pulp/content/", serverCA, nil); err != nil || resp.Header.Get("Test-Cert-User") != "" {
			t.Errorf("%s, no certificate: %v %v, want served, naming nobody", addr, resp, err)
		}
	}
	mallory := otherCA.Client(t, "mallory").TLS(t)
	if resp, _, err := handshake(t, s.api, "/pulp/api/v3/status/", serverCA, &mallory); err == nil {
		t.Errorf("another CA's certificate: served %d, want the handshake refused", resp.StatusCode)
	}

	// Renewal, without a restart.
	serving := func() string {
		_, serial, err := handshake(t, s.api, "/pulp/api/v3/status/", serverCA, nil)
		if err != nil {
			t.Fatal(err)
		}
		return serial
	}
	waitFor := func(l testcert.Leaf) {
		t.Helper()
		want := l.Cert.SerialNumber.String()
		for deadline := time.Now().Add(30 * time.Second); serving() != want; {
			if time.Now().After(deadline) {
				t.Fatalf("the renewed certificate %s is not served", want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if got := serving(); got != first.Cert.SerialNumber.String() {
		t.Fatalf("serving %s, want the first certificate", got)
	}
	second.Write(t, dir, "server")
	waitFor(second)
	// A broken renewal (the third certificate beside the second key): the second pair
	// serves on, through more than two checks of the files.
	testcert.WriteFile(t, certFile, third.CertPEM)
	for end := time.Now().Add(2*edge.TLSCheckInterval + time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if got := serving(); got != second.Cert.SerialNumber.String() {
			t.Fatalf("with a mismatched pair serving %s, want the second certificate", got)
		}
	}
	testcert.WriteFile(t, keyFile, third.KeyPEM)
	waitFor(third)
}

// Certificate files that do not load stop the start, with an error naming the file.
func TestServeTLSBadFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testcert.NewCA(t, "server CA")
	certFile, _ := ca.Server(t, "127.0.0.1").Write(t, dir, "a")
	_, otherKey := ca.Server(t, "127.0.0.1").Write(t, dir, "b")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", certFile, "--tls-key", otherKey}, otherKey},
		{[]string{"--tls-cert", certFile, "--tls-key", dir + "/a.key", "--tls-client-ca", otherKey}, otherKey},
	} {
		cfg, _, err := config.Load("serve", append([]string{"--data", t.TempDir()}, tc.args...), func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		n, err := build(t.Context(), cfg, roles{api: true, content: true, worker: true})
		if err == nil {
			n.db.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "tls: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error naming %s", tc.args, err, tc.want)
		}
	}
}

// A verified client certificate authenticates the API user its subject names (the CN by
// default): a certificate of a user who exists logs in without a password, one naming
// nobody is a 401, and without one the request is anonymous.
func TestCertificateAuthenticatesUser(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	serverCA, clientCA := testcert.NewCA(t, "server CA"), testcert.NewCA(t, "client CA")
	certFile, keyFile := serverCA.Server(t, "127.0.0.1").Write(t, dir, "server")
	s := startNode(t, "--tls-cert", certFile, "--tls-key", keyFile, "--tls-client-ca", clientCA.Write(t, dir, "clients.pem"))
	admin := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: serverCA.Pool()}}}
	req, _ := http.NewRequest("POST", "https://"+s.api+"/pulp/api/v3/users/", strings.NewReader(`{"username": "alice"}`))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("admin", testPassword)
	resp, err := admin.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("create alice: %v %v", resp, err)
	}
	resp.Body.Close()
	alice, bob := clientCA.Client(t, "alice").TLS(t), clientCA.Client(t, "bob").TLS(t)
	for _, tc := range []struct {
		name string
		cert *tls.Certificate
		code int
		user string
	}{{"alice's certificate", &alice, 200, "alice"}, {"a certificate naming nobody (anonymous)", &bob, 401, ""}, {"no certificate", nil, 401, ""}} {
		resp, _, err := handshake(t, s.api, "/pulp/api/v3/login/", serverCA, tc.cert)
		if err != nil || resp.StatusCode != tc.code {
			t.Errorf("%s: %v %v, want %d", tc.name, resp, err, tc.code)
		}
	}
}
