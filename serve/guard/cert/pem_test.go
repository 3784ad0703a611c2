package cert

import (
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestParseHeader(t *testing.T) {
	t.Parallel()
	ca := newCA(t, "ca")
	inter := template{cn: "intermediate", ca: true}.make(t, ca)
	leaf := template{cn: "client"}.make(t, inter)
	raw := pemOf(leaf.cert)
	body := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(raw), "-----BEGIN CERTIFICATE-----"), "-----END CERTIFICATE-----")
	oneLine := "-----BEGIN CERTIFICATE-----" + strings.ReplaceAll(body, "\n", " ") + "-----END CERTIFICATE-----"
	for name, tc := range map[string]struct {
		header string
		n      int // certificates read
	}{
		"nginx escaped":       {nginxHeader(leaf.cert), 1},
		"python quote":        {strings.ReplaceAll(url.PathEscape(raw), "%2F", "/"), 1},
		"plus for spaces":     {strings.ReplaceAll(url.QueryEscape(raw), "%20", "+"), 1},
		"%20 for spaces":      {strings.ReplaceAll(url.QueryEscape(raw), "+", "%20"), 1},
		"raw PEM":             {raw, 1},
		"CRLF":                {strings.ReplaceAll(raw, "\n", "\r\n"), 1},
		"spaces for newlines": {oneLine, 1},
		"tabs for newlines":   {strings.ReplaceAll(raw, "\n", "\t"), 1},
		"apache one line":     {url.PathEscape(oneLine), 1},
		"chain appended":      {nginxHeader(leaf.cert, inter.cert), 2},
		"entitlement file": {url.PathEscape(raw + "-----BEGIN ENTITLEMENT DATA-----\neJwr\n-----END ENTITLEMENT DATA-----\n" +
			"-----BEGIN RSA SIGNATURE-----\nAAAA\n-----END RSA SIGNATURE-----\n"), 1},
		"text around": {url.PathEscape("subject=CN=client\n" + raw + "trailing words\n"), 1},
	} {
		c, err := ParseHeader(tc.header)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(c.Intermediates)+1 != tc.n || !c.Leaf.Equal(leaf.cert) {
			t.Errorf("%s: %d certificates, leaf %s", name, len(c.Intermediates)+1, c.Leaf.Subject)
		}
	}

	big := url.PathEscape(raw)
	for name, tc := range map[string]struct {
		header string
		want   error
		says   string
	}{
		"empty":             {"", ErrNoCert, ""},
		"blank":             {"  \t", ErrNoCert, ""},
		"apache no cert":    {"(null)", ErrBadCert, "no PEM certificate"},
		"not a certificate": {"this is not cert data", ErrBadCert, "no PEM certificate"},
		"bad escape":        {"%zz" + big, ErrBadCert, "URL-encoded"},
		"a key alone":       {url.PathEscape("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), ErrBadCert, "no PEM certificate"},
		"no END":            {url.PathEscape(strings.TrimSuffix(raw, "-----END CERTIFICATE-----\n")), ErrBadCert, "no END line"},
		"END mismatched":    {url.PathEscape(strings.Replace(raw, "END CERTIFICATE", "END PRIVATE KEY", 1)), ErrBadCert, "does not match"},
		"glued BEGIN":       {strings.Replace(raw, "BEGIN CERTIFICATE", "BEGINCERTIFICATE", 1), ErrBadCert, "malformed BEGIN"},
		"bad base64":        {strings.Replace(raw, "MII", "M*I", 1), ErrBadCert, "base64"},
		"truncated DER":     {pemOf(leaf.cert)[:len(raw)-100] + "\n-----END CERTIFICATE-----\n", ErrBadCert, ""},
		"not DER":           {"-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n", ErrBadCert, "certificate 1 of 1"},
		"too large":         {big + strings.Repeat("%0A", MaxHeader/3), ErrBadCert, "more than 65536"},
		"too many":          {strings.Repeat(raw, MaxChain+1), ErrBadCert, "more than 8 certificates"},
	} {
		_, err := ParseHeader(tc.header)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: got %v, want %v saying %q", name, err, tc.want, tc.says)
		}
	}
}

func TestFromChain(t *testing.T) {
	t.Parallel()
	ca := newCA(t, "ca")
	leaf := template{cn: "client"}.make(t, ca)
	c, err := FromChain([]*x509.Certificate{leaf.cert, ca.cert})
	if err != nil || c.Leaf != leaf.cert || len(c.Intermediates) != 1 {
		t.Fatalf("FromChain: %v", err)
	}
	h, err := ParseHeader(nginxHeader(leaf.cert, ca.cert))
	if err != nil || h.Fingerprint() != c.Fingerprint() {
		t.Errorf("the header and the TLS chain of the same certificates differ in fingerprint (%v)", err)
	}
	if lone, _ := FromChain([]*x509.Certificate{leaf.cert}); lone.Fingerprint() != sha256.Sum256(leaf.cert.Raw) {
		t.Error("a lone certificate's fingerprint is not its SHA-256 fingerprint")
	}
	if _, err := FromChain(nil); !errors.Is(err, ErrNoCert) {
		t.Errorf("no chain: %v", err)
	}
	if _, err := FromChain(make([]*x509.Certificate, MaxChain+1)); !errors.Is(err, ErrBadCert) {
		t.Errorf("a long chain: %v", err)
	}
}

func FuzzParseHeader(f *testing.F) {
	ca := newCA(f, "ca")
	leaf := template{cn: "client"}.make(f, ca)
	f.Add(nginxHeader(leaf.cert))
	f.Add(nginxHeader(leaf.cert, ca.cert))
	f.Add(strings.ReplaceAll(pemOf(leaf.cert), "\n", "\t"))
	f.Add("-----BEGIN+CERTIFICATE-----%0AaGVsbG8=%0A-----END+CERTIFICATE-----")
	f.Add("-----BEGIN CERTIFICATE----------END CERTIFICATE-----")
	f.Fuzz(func(t *testing.T, header string) {
		c, err := ParseHeader(header)
		if err != nil {
			if !errors.Is(err, ErrBadCert) && !errors.Is(err, ErrNoCert) {
				t.Fatalf("an error that is neither ErrBadCert nor ErrNoCert: %v", err)
			}
			return
		}
		// What was read reads the same when sent again as nginx sends it.
		again, err := ParseHeader(nginxHeader(append([]*x509.Certificate{c.Leaf}, c.Intermediates...)...))
		if err != nil || again.Fingerprint() != c.Fingerprint() {
			t.Fatalf("the certificates read do not read again: %v", err)
		}
	})
}
