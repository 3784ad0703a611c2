package cert

import (
	"bytes"
	"encoding/asn1"
	"testing"
)

func TestOIDString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		oid  string
		big  bool
		want string
	}{
		{"1.3.6.1.4.1.2312.9.7", false, ""},
		{"2.5.29.15", false, ""},
		{"1.3.6.1.4.1.2312.9.2.1583437887307.1.6", true, ""},
		{"1.3.6.1.4.1.2312.9.2.2147483647.1.6", false, ""}, // the largest crypto/x509 reads
		{"1.3.6.1.4.1.2312.9.2.2147483648.1.6", true, ""},
		{"2.999.3", false, ""},
	} {
		der, err := asn1.Marshal(oid(tc.oid))
		if err != nil {
			t.Fatal(err)
		}
		got, err := oidString(der[2:])
		if got != tc.oid || (err == errBigArc) != tc.big || err != nil && err != errBigArc {
			t.Errorf("%s: got %q, %v", tc.oid, got, err)
		}
	}
	for name, b := range map[string][]byte{
		"empty":              {},
		"unterminated":       {0x2b, 0x86},
		"leading 0x80":       {0x2b, 0x80, 0x01},
		"beyond 63 bits":     {0x2b, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00},
		"leading 0x80 first": {0x80, 0x01},
	} {
		if _, err := oidString(b); err == nil || err == errBigArc {
			t.Errorf("%s: read", name)
		}
	}
}

// FuzzParseCert: any DER either fails or is a certificate whose raw bytes are those
// given, its big OIDs renamed only in what crypto/x509 was shown.
func FuzzParseCert(f *testing.F) {
	ca := newCA(f, "ca")
	f.Add(template{cn: "v1", exts: v1Exts(f, "/a/$b/c")}.make(f, ca).cert.Raw)
	f.Add(template{cn: "v3", exts: v3Exts(f, "/a/$b/c")}.make(f, ca).cert.Raw)
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x01})
	f.Fuzz(func(t *testing.T, der []byte) {
		c, err := parseCert(der)
		if err != nil {
			return
		}
		if !bytes.Equal(c.Raw, der) || !bytes.Contains(der, c.RawTBSCertificate) {
			t.Fatal("the certificate's raw bytes are not what was given")
		}
		// The package's reading of the extensions is stricter than crypto/x509's (it
		// refuses trailing bytes), but where both read them they agree.
		if exts, err := extensions(c.RawTBSCertificate); err == nil && len(exts) != len(c.Extensions) {
			t.Fatalf("%d extensions read, crypto/x509 read %d", len(exts), len(c.Extensions))
		}
		ParseEntitlement(c)
	})
}
