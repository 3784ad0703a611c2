package cert

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func mustCompile(t testing.TB, kind Kind, bundle string) *Guard {
	t.Helper()
	g, err := Compile(kind, bundle)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func mustHeader(t testing.TB, header string) *Cert {
	t.Helper()
	c, err := ParseHeader(header)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestX509Guard(t *testing.T) {
	t.Parallel()
	ca, other := newCA(t, "ca"), newCA(t, "other ca")
	inter := template{cn: "intermediate", ca: true}.make(t, ca)
	expiredInter := template{cn: "old intermediate", ca: true, to: now.Add(-time.Hour)}.make(t, ca)
	guard := mustCompile(t, X509, pemOf(ca.cert))
	// A bundle as Pulp stores them: text around the certificates, another CA first.
	bundle := mustCompile(t, X509, "Other CA\n"+pemOf(other.cert)+"\nOur CA\n"+pemOf(ca.cert)+"trailing text\n")
	// A bundle of the intermediate alone: it is a trust anchor (OpenSSL would want the
	// root too, unless told to accept a partial chain).
	interOnly := mustCompile(t, X509, pemOf(inter.cert))
	for name, tc := range map[string]struct {
		guard  *Guard
		header string
		at     time.Time
		want   error
		says   string
	}{
		"trusted":                     {guard, nginxHeader(template{cn: "c"}.make(t, ca).cert), now, nil, ""},
		"RSA, with client EKU":        {guard, nginxHeader(template{cn: "c", rsa: true, clientEKU: true}.make(t, ca).cert), now, nil, ""},
		"bundle":                      {bundle, nginxHeader(template{cn: "c"}.make(t, ca).cert), now, nil, ""},
		"wrong CA":                    {guard, nginxHeader(template{cn: "c"}.make(t, other).cert), now, ErrUntrusted, "not signed by the guard's CA"},
		"self-signed":                 {guard, nginxHeader(template{cn: "c"}.make(t, nil).cert), now, ErrUntrusted, "not signed by the guard's CA"},
		"the CA itself":               {guard, nginxHeader(ca.cert), now, nil, ""},
		"expired":                     {guard, nginxHeader(template{cn: "c", to: now.Add(-time.Second)}.make(t, ca).cert), now, ErrUntrusted, "it expired at"},
		"not yet valid":               {guard, nginxHeader(template{cn: "c", from: now.Add(time.Hour)}.make(t, ca).cert), now, ErrUntrusted, "not valid before"},
		"chain":                       {guard, nginxHeader(template{cn: "c"}.make(t, inter).cert, inter.cert), now, nil, ""},
		"chain without intermediate":  {guard, nginxHeader(template{cn: "c"}.make(t, inter).cert), now, ErrUntrusted, "not signed"},
		"intermediate in the bundle":  {interOnly, nginxHeader(template{cn: "c"}.make(t, inter).cert), now, nil, ""},
		"expired intermediate":        {guard, nginxHeader(template{cn: "c"}.make(t, expiredInter).cert, expiredInter.cert), now, ErrUntrusted, "its issuer CN=old intermediate expired"},
		"leaf posing as intermediate": {guard, nginxHeader(template{cn: "c"}.make(t, template{cn: "not a CA"}.make(t, ca)).cert, template{cn: "not a CA"}.make(t, ca).cert), now, ErrUntrusted, ""},
		"an RHSM certificate":         {guard, nginxHeader(template{cn: "c", exts: v3Exts(t, "/a")}.make(t, ca).cert), now, nil, ""},
	} {
		err := tc.guard.Permit(mustHeader(t, tc.header), "/any/path", tc.at)
		if !errors.Is(err, tc.want) || err != nil && !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: got %v, want %v saying %q", name, err, tc.want, tc.says)
		}
	}
	if err := guard.Permit(nil, "/a", now); !errors.Is(err, ErrNoCert) {
		t.Errorf("no certificate: %v", err)
	}
}

// TestTrustMemo: a verification is reused only while the chain it found is valid.
func TestTrustMemo(t *testing.T) {
	t.Parallel()
	ca := newCA(t, "ca")
	leaf := template{cn: "c", from: now.Add(-time.Hour), to: now.Add(time.Hour)}.make(t, ca)
	c := mustHeader(t, nginxHeader(leaf.cert))
	g := mustCompile(t, X509, pemOf(ca.cert))
	if err := g.Permit(c, "/", now); err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{now.Add(2 * time.Hour), now.Add(-2 * time.Hour)} {
		if err := g.Permit(c, "/", at); !errors.Is(err, ErrUntrusted) {
			t.Errorf("at %s, outside the certificate's validity, after a permit: %v", at, err)
		}
	}
	// Another guard, with another CA, is not answered from the first guard's memo.
	if err := mustCompile(t, X509, pemOf(newCA(t, "other").cert)).Permit(c, "/", now); !errors.Is(err, ErrUntrusted) {
		t.Errorf("a guard of another CA: %v", err)
	}
	// Neither is a guard recompiled from the same bundle and so identical, but
	// remembered apart: a memo never outlives what it was computed for.
	for range 2 * len(c.trust) {
		mustCompile(t, X509, pemOf(ca.cert)).Permit(c, "/", now)
	}
	if err := g.Permit(c, "/", now); err != nil {
		t.Errorf("after the memo turned over: %v", err)
	}
}

func TestCompile(t *testing.T) {
	t.Parallel()
	ca := newCA(t, "ca")
	for name, tc := range map[string]struct {
		kind   Kind
		bundle string
		says   string
	}{
		"kind":          {"header", pemOf(ca.cert), "kind"},
		"empty":         {X509, "", "no PEM certificate"},
		"only text":     {RHSM, "just words", "no PEM certificate"},
		"a key":         {X509, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "no PEM certificate"},
		"not DER":       {X509, "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n", "certificate 1"},
		"bad base64":    {X509, "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n", "base64"},
		"too large":     {X509, pemOf(ca.cert) + strings.Repeat(" ", MaxBundle), "more than"},
		"second is bad": {RHSM, pemOf(ca.cert) + "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n", "certificate 2"},
	} {
		if _, err := Compile(tc.kind, tc.bundle); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: got %v, want an error saying %q", name, err, tc.says)
		}
	}
	if g := mustCompile(t, RHSM, pemOf(ca.cert)); g.Kind() != RHSM {
		t.Errorf("kind %q", g.Kind())
	}
}

func TestRHSMGuard(t *testing.T) {
	t.Parallel()
	ca, other := newCA(t, "katello ca"), newCA(t, "other ca")
	guard := mustCompile(t, RHSM, pemOf(ca.cert))
	granted := []string{"/ACME/Library/content/dist/rhel/server/7/$releasever/$basearch/os", "/ACME/Library/custom/Product/Repo"}
	v1 := template{cn: "v1", rsa: true, exts: v1Exts(t, granted...)}.make(t, ca)
	v3 := template{cn: "v3", rsa: true, exts: v3Exts(t, granted...)}.make(t, ca)
	for name, tc := range map[string]struct {
		header string
		path   string
		want   error
	}{
		"v1 granted":           {nginxHeader(v1.cert), "/ACME/Library/content/dist/rhel/server/7/7Server/x86_64/os/repodata/repomd.xml", nil},
		"v3 granted":           {nginxHeader(v3.cert), "/ACME/Library/content/dist/rhel/server/7/7Server/x86_64/os/repodata/repomd.xml", nil},
		"v1 custom":            {nginxHeader(v1.cert), "ACME/Library/custom/Product/Repo/Packages/a.rpm", nil},
		"v3 custom":            {nginxHeader(v3.cert), "ACME/Library/custom/Product/Repo/Packages/a.rpm", nil},
		"v1 elsewhere":         {nginxHeader(v1.cert), "/ACME/Dev/custom/Product/Repo/a.rpm", ErrPathDenied},
		"v3 elsewhere":         {nginxHeader(v3.cert), "/ACME/Dev/custom/Product/Repo/a.rpm", ErrPathDenied},
		"v3 escaping with ..":  {nginxHeader(v3.cert), "/ACME/Library/custom/Product/Repo/../../Other/x", ErrPathDenied},
		"v3 wrong CA":          {nginxHeader(template{cn: "v3", exts: v3Exts(t, granted...)}.make(t, other).cert), "/ACME/Library/custom/Product/Repo/a", ErrUntrusted},
		"v3 expired":           {nginxHeader(template{cn: "v3", exts: v3Exts(t, granted...), to: now.Add(-time.Minute)}.make(t, ca).cert), "/ACME/Library/custom/Product/Repo/a", ErrUntrusted},
		"not an entitlement":   {nginxHeader(template{cn: "plain"}.make(t, ca).cert), "/ACME/Library/custom/Product/Repo/a", ErrBadEntitlement},
		"v3 without data":      {nginxHeader(template{cn: "v3", exts: v3Exts(t, granted...)[:1]}.make(t, ca).cert), "/ACME/Library/custom/Product/Repo/a", ErrBadEntitlement},
		"v3 with bad data":     {nginxHeader(template{cn: "v3", exts: v3DataExts(t, []byte("not zlib"))}.make(t, ca).cert), "/ACME/Library/custom/Product/Repo/a", ErrBadEntitlement},
		"bad version":          {nginxHeader(template{cn: "v", exts: append(v1Exts(t, granted...), utf8Ext(t, oid(oidVersion), "three"))}.make(t, ca).cert), "/ACME/Library/custom/Product/Repo/a", ErrBadEntitlement},
		"v1 stated 1.0":        {nginxHeader(template{cn: "v", exts: append(v1Exts(t, granted...), utf8Ext(t, oid(oidVersion), "1.0"))}.make(t, ca).cert), "/ACME/Library/custom/Product/Repo/a", nil},
		"v1 path not a string": {nginxHeader(template{cn: "v", exts: append(v1Exts(t), pkixExt(oid(oidContent+"7.1.6"), []byte{4, 1, 'x'}))}.make(t, ca).cert), "/x", ErrBadEntitlement},
	} {
		err := guard.Permit(mustHeader(t, tc.header), tc.path, now)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", name, err, tc.want)
		}
	}
}

// TestBigOIDSignature: a certificate crypto/x509 reads only with its big OIDs renamed
// is still checked against the signature over what was signed.
func TestBigOIDSignature(t *testing.T) {
	t.Parallel()
	ca := newCA(t, "ca")
	leaf := template{cn: "v1", exts: v1Exts(t, "/a/b")}.make(t, ca)
	c := mustHeader(t, nginxHeader(leaf.cert))
	if c.Leaf.Subject.CommonName != "v1" || len(c.Leaf.Raw) != len(leaf.cert.Raw) {
		t.Fatalf("read as %s, %d bytes", c.Leaf.Subject, len(c.Leaf.Raw))
	}
	g := mustCompile(t, RHSM, pemOf(ca.cert))
	if err := g.Permit(c, "/a/b/c", now); err != nil {
		t.Fatal(err)
	}
	// The same certificate with one byte of its path changed ("/a/b" to "/a/c"): it
	// still parses, but its signature no longer holds.
	der := append([]byte(nil), leaf.cert.Raw...)
	i := strings.LastIndex(string(der), "/a/b")
	der[i+3] = 'c'
	forged := mustHeader(t, pemOf(mustParse(t, der)))
	if err := g.Permit(forged, "/a/c/d", now); !errors.Is(err, ErrUntrusted) {
		t.Errorf("a forged path: %v", err)
	}
}
