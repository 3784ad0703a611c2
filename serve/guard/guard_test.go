package guard

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"pith/internal/testcert"
	"pith/meta"
	"pith/serve/guard/cert"
)

func attrs(v map[string]any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// status is what Permit answers: 0 for allowed, else the refusal's status.
func status(t *testing.T, err error) int {
	t.Helper()
	var d *Denied
	switch {
	case err == nil:
		return 0
	case errors.As(err, &d):
		return d.Status
	}
	t.Fatalf("not a refusal: %v", err)
	return 0
}

func TestGuards(t *testing.T) {
	ca, other := testcert.NewCA(t, "entitlement CA"), testcert.NewCA(t, "other CA")
	granted := ca.Entitlement(t, "host-1", "/ACME/Library/content/dist/$releasever/os")
	stranger := other.Entitlement(t, "host-2", "/ACME/Library/content/dist/$releasever/os")
	plain := ca.Client(t, "host-3")
	guards := []meta.ContentGuard{
		{PulpID: "header", Type: "core.header", Name: "header", Attrs: attrs(map[string]any{"header_name": "X-Key", "header_value": "sesame"})},
		{PulpID: "jq", Type: "core.header", Name: "jq", Attrs: attrs(map[string]any{"header_name": "X-Id", "header_value": "acme", "jq_filter": ".org"})},
		{PulpID: "x509", Type: "certguard.x509", Name: "x509", Attrs: attrs(map[string]any{"ca_certificate": string(ca.PEM)})},
		{PulpID: "rhsm", Type: "certguard.rhsm", Name: "rhsm", Attrs: attrs(map[string]any{"ca_certificate": string(ca.PEM)})},
		{PulpID: "either", Type: "core.composite", Name: "either", Members: []string{"header", "rhsm"}},
		{PulpID: "open", Type: "core.composite", Name: "open", Members: []string{}},
		{PulpID: "broken", Type: "certguard.x509", Name: "broken", Attrs: attrs(map[string]any{"ca_certificate": "not a certificate"})},
	}
	fromProxy := false
	set := Compile(Env{Certs: cert.NewCache(10), FromProxy: func(*http.Request) bool { return fromProxy }}, guards, nil)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	header := func(l testcert.Leaf) string { return url.QueryEscape(string(l.CertPEM)) }
	tlsOf := func(l testcert.Leaf) *tls.ConnectionState {
		block, _ := pem.Decode(l.CertPEM)
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return &tls.ConnectionState{PeerCertificates: []*x509.Certificate{c}}
	}
	const path = "/ACME/Library/content/dist/9/os/repodata/repomd.xml"
	for _, tc := range []struct {
		name, guard, path string
		hdr               []string
		tls               *tls.ConnectionState
		proxy             bool
		want              int
	}{
		{"header missing", "header", path, nil, nil, false, 403},
		{"header right", "header", path, []string{"X-Key", b64("sesame")}, nil, false, 0},
		{"header wrong", "header", path, []string{"X-Key", b64("open up")}, nil, false, 403},
		{"header not base64", "header", path, []string{"X-Key", "sesame"}, nil, false, 403},
		{"jq matching", "jq", path, []string{"X-Id", b64(`{"org": "acme"}`)}, nil, false, 0},
		{"jq not matching", "jq", path, []string{"X-Id", b64(`{"org": "evil"}`)}, nil, false, 403},
		{"jq not JSON", "jq", path, []string{"X-Id", b64(`acme`)}, nil, false, 403},
		{"jq not a string", "jq", path, []string{"X-Id", b64(`{"org": 7}`)}, nil, false, 403},
		{"x509 by TLS", "x509", path, nil, tlsOf(plain), false, 0},
		{"x509 by TLS, another CA", "x509", path, nil, tlsOf(stranger), false, 403},
		{"x509 by proxy header", "x509", path, []string{"X-Client-Cert", header(plain)}, nil, true, 0},
		{"x509 header not from a trusted proxy", "x509", path, []string{"X-Client-Cert", header(plain)}, nil, false, 403},
		{"x509 no certificate", "x509", path, nil, nil, true, 403},
		{"rhsm granted path", "rhsm", path, nil, tlsOf(granted), false, 0},
		{"rhsm other path", "rhsm", "/ACME/Library/content/other/repomd.xml", nil, tlsOf(granted), false, 403},
		{"rhsm dot-dot escape", "rhsm", "/ACME/Library/content/dist/9/os/../../../other", nil, tlsOf(granted), false, 403},
		{"rhsm without entitlement", "rhsm", path, nil, tlsOf(plain), false, 403},
		{"rhsm by proxy header", "rhsm", path, []string{"X-Client-Cert", header(granted)}, nil, true, 0},
		{"composite, one member admits", "either", path, []string{"X-Key", b64("sesame")}, nil, false, 0},
		{"composite, the other admits", "either", path, nil, tlsOf(granted), false, 0},
		{"composite, neither", "either", path, nil, nil, false, 403},
		{"empty composite", "open", path, nil, nil, false, 0},
		{"a guard that does not compile", "broken", path, nil, tlsOf(plain), false, 403},
		{"a guard that is gone", "gone", path, nil, nil, false, 403},
	} {
		r := httptest.NewRequest("GET", "/pulp/content"+tc.path, nil)
		for i := 0; i+1 < len(tc.hdr); i += 2 {
			r.Header.Set(tc.hdr[i], tc.hdr[i+1])
		}
		r.TLS, fromProxy = tc.tls, tc.proxy
		if got := status(t, set.Permit(r, tc.guard, tc.path)); got != tc.want {
			t.Errorf("%s: %d (%v), want %d", tc.name, got, set.Permit(r, tc.guard, tc.path), tc.want)
		}
	}
}

// A guard that did not change is kept, compiled, across reloads; one that changed is
// compiled anew.
func TestCompileReuses(t *testing.T) {
	ca := testcert.NewCA(t, "CA")
	g := meta.ContentGuard{PulpID: "x", Type: "certguard.x509", Name: "x", Attrs: attrs(map[string]any{"ca_certificate": string(ca.PEM)}), Updated: 1}
	first := Compile(Env{}, []meta.ContentGuard{g}, nil)
	again := Compile(Env{}, []meta.ContentGuard{g}, first)
	if again.byID["x"] != first.byID["x"] {
		t.Error("an unchanged guard was compiled again")
	}
	g.Updated = 2
	if changed := Compile(Env{}, []meta.ContentGuard{g}, first); changed.byID["x"] == first.byID["x"] {
		t.Error("a changed guard was kept")
	}
}

// A signed URL stays valid for an hour; its path and query are part of the signature.
func TestPreauthenticate(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	set := Compile(Env{Now: func() time.Time { return now }}, []meta.ContentGuard{{PulpID: "r", Type: "core.content_redirect", Name: "r",
		Attrs: attrs(map[string]any{"shared_secret": "00112233445566778899aabbccddeeff"})}}, nil)
	signed, err := Preauthenticate("00112233445566778899aabbccddeeff", "http://h/pulp/content/a/b.rpm?x=1", []byte{1, 2, 3}, now)
	if err != nil {
		t.Fatal(err)
	}
	check := func(u string) int {
		return status(t, set.Permit(httptest.NewRequest("GET", u, nil), "r", "/a/b.rpm"))
	}
	if got := check(signed); got != 0 {
		t.Fatalf("signed URL refused: %d", got)
	}
	for _, bad := range []string{"http://h/pulp/content/a/c.rpm?" + signed[len("http://h/pulp/content/a/b.rpm?"):], signed + "x", "http://h/pulp/content/a/b.rpm?x=1"} {
		if got := check(bad); got != 403 {
			t.Errorf("%s: %d, want 403", bad, got)
		}
	}
	now = now.Add(2 * time.Hour)
	if got := check(signed); got != 403 {
		t.Errorf("expired: %d", got)
	}
}
