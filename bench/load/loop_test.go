package load

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"pith/internal/testcert"
)

// Each arm's requests go out as it says (its client certificate at the handshake, its
// header), over at most Connections connections per round, and are counted as its own;
// an arm answered 403 fails the loop with its errors.
func TestLoop(t *testing.T) {
	ca := testcert.NewCA(t, "client CA")
	client := ca.Client(t, "host-1").TLS(t)
	var mu sync.Mutex
	seen := map[string]int{}   // "path|cert|header" -> requests
	conns := map[string]bool{} // remote addresses
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		withCert := r.TLS != nil && len(r.TLS.PeerCertificates) > 0
		mu.Lock()
		seen[r.URL.Path+"|"+map[bool]string{true: "cert"}[withCert]+"|"+r.Header.Get("X-Test")]++
		conns[r.RemoteAddr] = true
		mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/refused/") {
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		w.Write([]byte("hello"))
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: ca.Pool()}
	srv.StartTLS()
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	plain := &tls.Config{RootCAs: roots}
	withCert := &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{client}}
	urls := func(dir string) []string { return []string{srv.URL + "/" + dir + "/a", srv.URL + "/" + dir + "/b"} }

	cfg := LoopConfig{Connections: 3, Duration: 100 * time.Millisecond, Warmup: 20 * time.Millisecond, Rounds: 2, Timeout: 5 * time.Second,
		Arms: []Arm{
			{Name: "plain", URLs: urls("plain"), TLS: plain},
			{Name: "cert", URLs: urls("cert"), TLS: withCert},
			{Name: "header", URLs: urls("header"), TLS: plain, Header: http.Header{"X-Test": {"yes"}}},
		}}
	res, err := Loop(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Name != cfg.Arms[i].Name || r.Requests == 0 || r.Errors != 0 || len(r.RoundRPS) != 2 || r.P50 <= 0 || r.P99 < r.P50 {
			t.Errorf("arm %s: %+v", cfg.Arms[i].Name, r)
		}
	}
	mu.Lock()
	for key := range seen {
		if !map[string]bool{"/plain/a||": true, "/plain/b||": true, "/cert/a|cert|": true, "/cert/b|cert|": true,
			"/header/a||yes": true, "/header/b||yes": true}[key] {
			t.Errorf("a request went out as %q", key)
		}
	}
	// Fresh connections per arm and round, each kept alive for all its requests.
	if n := len(conns); n > 3*3*2 {
		t.Errorf("%d connections, want at most %d", n, 3*3*2)
	}
	mu.Unlock()

	cfg.Arms = append(cfg.Arms[:1], Arm{Name: "refused", URLs: urls("refused"), TLS: plain})
	res, err = Loop(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "refused") || !strings.Contains(err.Error(), "403") {
		t.Errorf("a refused arm: %v, want its 403s named", err)
	}
	if len(res) != 2 || res[1].Requests != 0 || res[1].Errors == 0 {
		t.Errorf("a refused arm's result: %+v", res[1])
	}

	if _, err := Loop(context.Background(), LoopConfig{Arms: []Arm{{Name: "none"}}}); err == nil {
		t.Error("an arm without URLs: no error")
	}
}
