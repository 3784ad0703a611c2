package cert

import (
	"crypto/x509"
	"errors"
	"strings"
	"sync"
	"testing"
)

func TestCache(t *testing.T) {
	t.Parallel()
	ca := newCA(t, "ca")
	a := template{cn: "a", exts: v3Exts(t, "/a")}.make(t, ca)
	b := template{cn: "b"}.make(t, ca)
	c := NewCache(1)
	if _, err := c.Header(nginxHeader(a.cert) + strings.Repeat("%0A", MaxHeader)); !errors.Is(err, ErrBadCert) {
		t.Errorf("a header too large: %v", err)
	}
	first, err := c.Header(nginxHeader(a.cert))
	if err != nil {
		t.Fatal(err)
	}
	ent, err := first.Entitlement()
	if err != nil {
		t.Fatal(err)
	}
	// The same certificate sent the same way again is the same Cert, with its
	// entitlement decoded once; sent another way, it is another.
	if again, err := c.Header(nginxHeader(a.cert)); err != nil || again != first {
		t.Errorf("the same header: another Cert (%v)", err)
	} else if e, _ := again.Entitlement(); e != ent {
		t.Error("the entitlement was decoded again")
	}
	tls, err := c.Chain([]*x509.Certificate{a.cert})
	if err != nil || tls == first || tls.Fingerprint() != first.Fingerprint() {
		t.Errorf("the TLS chain of the same certificate: %v", err)
	}
	if again, err := c.Chain([]*x509.Certificate{a.cert}); err != nil || again != tls {
		t.Errorf("the same TLS chain: another Cert (%v)", err)
	}
	// Bounded: b evicts a.
	if _, err := c.Header(nginxHeader(b.cert)); err != nil {
		t.Fatal(err)
	}
	if again, _ := c.Chain([]*x509.Certificate{a.cert}); again == tls {
		t.Error("a cache of one kept two certificates")
	}
	// Failures are errors, and not kept.
	if _, err := c.Header("garbage"); !errors.Is(err, ErrBadCert) {
		t.Errorf("garbage: %v", err)
	}
	if _, err := c.Chain(nil); !errors.Is(err, ErrNoCert) {
		t.Errorf("no chain: %v", err)
	}
}

// TestConcurrentPermit: requests of one client at once share its cached Cert, its
// entitlement and its trust memo (run with -race).
func TestConcurrentPermit(t *testing.T) {
	t.Parallel()
	ca := newCA(t, "ca")
	header := nginxHeader(template{cn: "c", exts: v3Exts(t, "/org/env/custom/p/r")}.make(t, ca).cert)
	guards := []*Guard{mustCompile(t, RHSM, pemOf(ca.cert)), mustCompile(t, X509, pemOf(ca.cert))}
	cache := NewCache(4)
	errs := make(chan error, 8*50)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 50 {
				c, err := cache.Header(header)
				if err == nil {
					err = guards[i%2].Permit(c, "/org/env/custom/p/r/a.rpm", now)
				}
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
