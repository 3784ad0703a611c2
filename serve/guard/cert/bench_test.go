package cert

import (
	"fmt"
	"testing"
)

// BenchmarkPermit is the per-request cost of a guarded request: reading the header
// through the Cache and Guard.Permit, for a client that came before ("cached": the
// parse, the entitlement and the verification are remembered) and for one seen the
// first time ("cold": a new Cert every time). Candlepin's keys are RSA-2048; the
// entitlement is a Katello organisation's 200 content sets.
func BenchmarkPermit(b *testing.B) {
	ca := template{cn: "katello ca", ca: true, rsa: true, from: now.AddDate(-1, 0, 0), to: now.AddDate(5, 0, 0)}.make(b, nil)
	var paths []string
	for i := range 200 {
		paths = append(paths, fmt.Sprintf("/ACME/Library/content/dist/rhel/server/%d/$releasever/$basearch/repo%d/os", 7+i%3, i))
	}
	path := "/ACME/Library/content/dist/rhel/server/8/8.9/x86_64/repo199/os/Packages/b/bash-5.1.rpm"
	for _, tc := range []struct {
		name string
		kind Kind
	}{
		{"x509", X509},
		{"rhsm-v1", RHSM},
		{"rhsm-v3", RHSM},
	} {
		tp := template{cn: "client", rsa: true}
		switch tc.name {
		case "rhsm-v1":
			tp.exts = v1Exts(b, paths...)
		case "rhsm-v3":
			tp.exts = v3Exts(b, paths...)
		}
		header := nginxHeader(tp.make(b, ca).cert)
		g := mustCompile(b, tc.kind, pemOf(ca.cert))
		b.Run(tc.name+"/cached", func(b *testing.B) {
			cache := NewCache(100)
			b.ReportAllocs()
			for b.Loop() {
				c, err := cache.Header(header)
				if err != nil {
					b.Fatal(err)
				}
				if err := g.Permit(c, path, now); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(header)), "header-bytes")
		})
		b.Run(tc.name+"/cold", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c, err := ParseHeader(header)
				if err != nil {
					b.Fatal(err)
				}
				if err := g.Permit(c, path, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
