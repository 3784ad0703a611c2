package cert

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/url"
	"pith/internal/certgen"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The tests make their own CAs and client certificates; "now" is fixed so that
// validity periods are exact.
var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// issuer is a CA that can sign certificates.
type issuer struct {
	cert *x509.Certificate
	key  crypto.Signer
}

var (
	keyOnce sync.Once
	ecKey   crypto.Signer
	rsaKey  crypto.Signer
)

// keys are made once: RSA keys are slow to make, and the tests need no more than one
// of each kind (which key signs what is irrelevant to the guard).
func keys(t testing.TB) (crypto.Signer, crypto.Signer) {
	keyOnce.Do(func() {
		var err error
		if ecKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			panic(err)
		}
		if rsaKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
	})
	return ecKey, rsaKey
}

var serial atomic.Int64 // tests run in parallel

// template is a certificate valid for a year around now.
type template struct {
	cn        string
	ca        bool
	from, to  time.Time
	exts      []pkix.Extension
	rsa       bool // an RSA key, as Candlepin's, instead of ECDSA P-256
	clientEKU bool
}

func (tp template) make(t testing.TB, parent *issuer) *issuer {
	t.Helper()
	ec, rk := keys(t)
	key := ec
	if tp.rsa {
		key = rk
	}
	if tp.from.IsZero() {
		tp.from = now.AddDate(0, -6, 0)
	}
	if tp.to.IsZero() {
		tp.to = now.AddDate(0, 6, 0)
	}
	x := &x509.Certificate{
		SerialNumber:    big.NewInt(serial.Add(1)),
		Subject:         pkix.Name{CommonName: tp.cn},
		NotBefore:       tp.from,
		NotAfter:        tp.to,
		ExtraExtensions: tp.exts,
		KeyUsage:        x509.KeyUsageDigitalSignature,
	}
	if tp.clientEKU {
		x.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	if tp.ca {
		x.IsCA, x.BasicConstraintsValid = true, true
		x.KeyUsage |= x509.KeyUsageCertSign
	}
	signer, parentCert := key, x
	if parent != nil {
		signer, parentCert = parent.key, parent.cert
	}
	der, err := x509.CreateCertificate(rand.Reader, x, parentCert, key.Public(), signer)
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseCert(der) // crypto/x509 refuses the big OIDs of v1Exts
	if err != nil {
		t.Fatal(err)
	}
	return &issuer{cert: c, key: key}
}

func newCA(t testing.TB, cn string) *issuer {
	return template{cn: cn, ca: true, from: now.AddDate(-1, 0, 0), to: now.AddDate(5, 0, 0)}.make(t, nil)
}

func pemOf(cs ...*x509.Certificate) string {
	var b strings.Builder
	for _, c := range cs {
		pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return b.String()
}

// nginxHeader is how nginx's $ssl_client_escaped_cert sends certificates.
func nginxHeader(cs ...*x509.Certificate) string {
	return url.QueryEscape(pemOf(cs...))
}

func utf8Ext(t testing.TB, id asn1.ObjectIdentifier, s string) pkix.Extension {
	t.Helper()
	v, err := asn1.MarshalWithParams(s, "utf8")
	if err != nil {
		t.Fatal(err)
	}
	return pkix.Extension{Id: id, Value: v}
}

// oid parses a dotted OID.
func oid(s string) asn1.ObjectIdentifier {
	var id asn1.ObjectIdentifier
	for a := range strings.SplitSeq(s, ".") {
		n, err := strconv.Atoi(a)
		if err != nil {
			panic(s)
		}
		id = append(id, n)
	}
	return id
}

// v1Exts are the extensions of a v1 entitlement certificate granting paths, as
// Candlepin writes them: a product, and content sets that also carry a name (the guard
// ignores both). Their IDs are beyond 2^31, as Katello gives custom products and
// content.
func v1Exts(t testing.TB, paths ...string) []pkix.Extension {
	exts := []pkix.Extension{utf8Ext(t, oid(oidOrder), "an order"), utf8Ext(t, oid("1.3.6.1.4.1.2312.9.1.1583437887001.1"), "a product")}
	for i, p := range paths {
		n := fmt.Sprint(1583437887307 + i)
		exts = append(exts, utf8Ext(t, oid(oidContent+n+".1.1"), "content "+p))
		exts = append(exts, utf8Ext(t, oid(oidContent+n+".1.6"), p))
	}
	return exts
}

// v3Exts are the extensions of a v3 entitlement certificate granting paths.
func v3Exts(t testing.TB, paths ...string) []pkix.Extension {
	t.Helper()
	return v3DataExts(t, certgen.EncodeV3(paths))
}

func v3DataExts(t testing.TB, data []byte) []pkix.Extension {
	t.Helper()
	v, err := asn1.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return []pkix.Extension{utf8Ext(t, oid(oidVersion), "3.4"), {Id: oid(oidData), Value: v}}
}

func pkixExt(id asn1.ObjectIdentifier, value []byte) pkix.Extension {
	return pkix.Extension{Id: id, Value: value}
}

// mustParse reads der as the package does; pemOf needs only its Raw.
func mustParse(t testing.TB, der []byte) *x509.Certificate {
	t.Helper()
	c, err := parseCert(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
