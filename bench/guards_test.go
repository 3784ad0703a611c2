package bench

import (
	"regexp"
	"testing"

	"pith/internal/certgen"
	"pith/serve/guard/cert"
)

// The header the study sends is what nginx's $ssl_client_escaped_cert holds: only
// unreserved characters and %XX escapes, read back by the content app as the same
// certificate.
func TestEscapeCert(t *testing.T) {
	ca, err := certgen.NewCA("hosts")
	if err != nil {
		t.Fatal(err)
	}
	ent, err := ca.Entitlement("host", "/"+guardsBase+"$releasever")
	if err != nil {
		t.Fatal(err)
	}
	h := escapeCert(ent.CertPEM)
	if !regexp.MustCompile(`^([A-Za-z0-9._~-]|%[0-9A-F]{2})+$`).MatchString(h) {
		t.Errorf("escaped certificate has other characters: %.80s…", h)
	}
	c, err := cert.ParseHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Leaf.Equal(ent.Cert) {
		t.Error("the header reads back as another certificate")
	}
}
