package cert

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
)

const (
	// Header is the request header a trusted reverse proxy puts the client certificate
	// in, URL-encoded PEM (nginx: $ssl_client_escaped_cert), as Pulp reads it.
	Header = "X-Client-Cert"
	// MaxHeader bounds that header: 64 KiB, four times the 16 KiB field Pulp accepts, so
	// that a v1 entitlement certificate of about a hundred content sets (Candlepin
	// writes some 500 bytes of extensions for each, more URL-encoded) or a post-quantum
	// chain (an ML-DSA-87 certificate is about 11 KiB as URL-encoded PEM) fits.
	MaxHeader = 64 << 10
	// MaxChain bounds the certificates a client presents: the leaf and its intermediates.
	MaxChain = 8
)

// ParseHeader reads the certificate a reverse proxy forwarded in the Header: URL-encoded
// PEM, leaf first, intermediates after it. It tolerates what proxies send: spaces
// encoded as "+" or "%20", newlines replaced by spaces or tabs, a chain appended, and
// what Pulp's OpenSSL skips: text and PEM blocks other than certificates.
func ParseHeader(v string) (*Cert, error) {
	ders, err := headerDER(v)
	if err != nil {
		return nil, err
	}
	return parseDER(ders, fingerprint(ders))
}

// headerDER decodes the header to the DER of each certificate in it.
func headerDER(v string) ([][]byte, error) {
	if strings.TrimSpace(v) == "" {
		return nil, ErrNoCert
	}
	if len(v) > MaxHeader {
		return nil, fmt.Errorf("%w: the header has %d bytes, more than %d", ErrBadCert, len(v), MaxHeader)
	}
	// Not QueryUnescape: "+" is a base64 character. In the armour lines, where it
	// can only stand for a space, pemBlocks reads it as one.
	s, err := url.PathUnescape(v)
	if err != nil {
		return nil, fmt.Errorf("%w: not URL-encoded PEM: %v", ErrBadCert, err)
	}
	ders, err := pemBlocks(s, MaxChain)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadCert, err)
	}
	if len(ders) == 0 {
		return nil, fmt.Errorf("%w: no PEM certificate in the header", ErrBadCert)
	}
	return ders, nil
}

const (
	pemBegin = "-----BEGIN"
	pemEnd   = "-----END"
	pemDash  = "-----"
)

// pemBlocks returns the DER of the CERTIFICATE blocks in s, at most max of them. As
// OpenSSL (and so Pulp) does, it skips text and blocks of other types: an entitlement
// certificate's file holds its ENTITLEMENT DATA and RSA SIGNATURE blocks after the
// certificate. It tolerates "+" for a space in the armour, and whitespace anywhere in
// the base64.
func pemBlocks(s string, max int) ([][]byte, error) {
	var out [][]byte
	for n := 1; ; n++ {
		i := strings.Index(s, pemBegin)
		if i < 0 {
			return out, nil
		}
		s = s[i+len(pemBegin):]
		label, rest, ok := strings.Cut(s, pemDash)
		if !ok || label == "" || !isSpace(label[0]) && label[0] != '+' {
			return nil, fmt.Errorf("PEM block %d: malformed BEGIN line", n)
		}
		typ := armour(label)
		body, rest, ok := strings.Cut(rest, pemEnd)
		if !ok {
			return nil, fmt.Errorf("PEM block %d (%s): no END line", n, typ)
		}
		endLabel, rest, ok := strings.Cut(rest, pemDash)
		if !ok || armour(endLabel) != typ {
			return nil, fmt.Errorf("PEM block %d (%s): the END line does not match", n, typ)
		}
		s = rest
		if typ != "CERTIFICATE" {
			continue
		}
		if len(out) == max {
			return nil, fmt.Errorf("more than %d certificates", max)
		}
		der, err := base64Body(body)
		if err != nil {
			return nil, fmt.Errorf("PEM block %d: %v", n, err)
		}
		out = append(out, der)
	}
}

// armour normalises a PEM label: "+", tabs and runs of spaces read as one space.
func armour(label string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(label, "+", " ")), " ")
}

func base64Body(body string) ([]byte, error) {
	b := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		if !isSpace(body[i]) {
			b = append(b, body[i])
		}
	}
	der := make([]byte, base64.StdEncoding.DecodedLen(len(b)))
	n, err := base64.StdEncoding.Decode(der, b)
	if err != nil {
		return nil, fmt.Errorf("bad base64: %v", err)
	}
	return der[:n], nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
