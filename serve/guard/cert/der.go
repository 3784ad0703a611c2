package cert

import (
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Candlepin names products and content sets in extension OIDs by their ID
// (1.3.6.1.4.1.2312.9.1.<product>…, 1.3.6.1.4.1.2312.9.2.<content>…), and the IDs
// Katello gives custom products and content are beyond 2^31, which crypto/x509 refuses
// in an OID. So the package reads the extensions itself (extensions), and a
// certificate crypto/x509 refuses is parsed again with such OIDs renamed (parseCert).

// ext is one certificate extension: its OID in dotted form, and its extnValue.
type ext struct {
	id    string
	value []byte
}

// parseCert is x509.ParseCertificate, which also reads certificates whose extension
// OIDs have arcs beyond 2^31: those extensions are renamed (2.25.<n>, an arc
// crypto/x509 gives no meaning to) in a copy that crypto/x509 parses, and the copy's
// raw bytes are set back to the signed original, so that signatures are checked over
// what the issuer signed. Only OIDs change, never a field crypto/x509 interprets.
func parseCert(der []byte) (*x509.Certificate, error) {
	c, err := x509.ParseCertificate(der)
	if err == nil {
		return c, nil
	}
	renamed, tbs, ok := renameBigOIDs(der)
	if !ok {
		return nil, err
	}
	c, err2 := x509.ParseCertificate(renamed)
	if err2 != nil {
		return nil, err
	}
	c.Raw, c.RawTBSCertificate = der, tbs
	return c, nil
}

// renameBigOIDs returns der with big-arc extension OIDs renamed, and the original
// TBSCertificate; ok is false when nothing was renamed or der is malformed.
func renameBigOIDs(der []byte) (out, tbs []byte, ok bool) {
	cert, err := elements(der, asn1.TagSequence)
	if err != nil || len(cert) != 3 {
		return nil, nil, false
	}
	tbs = cert[0].FullBytes
	fields, at, exts, err := tbsExtensions(tbs)
	if err != nil || at < 0 {
		return nil, nil, false
	}
	changed := false
	renamed := make([]asn1.RawValue, len(exts))
	for n, parts := range exts {
		if _, err := oidString(parts[0].Bytes); err == errBigArc {
			parts[0] = asn1.RawValue{FullBytes: must(asn1.Marshal(asn1.ObjectIdentifier{2, 25, n}))}
			changed = true
		}
		renamed[n] = asn1.RawValue{FullBytes: compound(asn1.ClassUniversal, asn1.TagSequence, parts)}
	}
	if !changed {
		return nil, nil, false
	}
	seq := asn1.RawValue{FullBytes: compound(asn1.ClassUniversal, asn1.TagSequence, renamed)}
	fields[at] = asn1.RawValue{FullBytes: compound(asn1.ClassContextSpecific, 3, []asn1.RawValue{seq})}
	cert[0] = asn1.RawValue{FullBytes: compound(asn1.ClassUniversal, asn1.TagSequence, fields)}
	return compound(asn1.ClassUniversal, asn1.TagSequence, cert), tbs, true
}

// extensions lists the extensions of a DER TBSCertificate.
func extensions(tbs []byte) ([]ext, error) {
	_, _, exts, err := tbsExtensions(tbs)
	if err != nil {
		return nil, err
	}
	out := make([]ext, 0, len(exts))
	for _, parts := range exts {
		id, err := oidString(parts[0].Bytes)
		if err != nil && err != errBigArc {
			return nil, err
		}
		val := parts[len(parts)-1]
		if len(parts) < 2 || val.Class != asn1.ClassUniversal || val.Tag != asn1.TagOctetString {
			return nil, errors.New("malformed extension value")
		}
		out = append(out, ext{id: id, value: val.Bytes})
	}
	return out, nil
}

// tbsExtensions splits a DER TBSCertificate into its fields and, if it has extensions,
// the index of their field (else -1) and each extension's parts, the first an OID.
func tbsExtensions(tbs []byte) (fields []asn1.RawValue, at int, exts [][]asn1.RawValue, err error) {
	fields, err = elements(tbs, asn1.TagSequence)
	if err != nil {
		return nil, -1, nil, err
	}
	for i, f := range fields {
		if f.Class != asn1.ClassContextSpecific || f.Tag != 3 {
			continue
		}
		list, err := elements(f.Bytes, asn1.TagSequence)
		if err != nil {
			return nil, -1, nil, err
		}
		for _, e := range list {
			parts, err := elements(e.FullBytes, asn1.TagSequence)
			if err != nil || len(parts) == 0 || parts[0].Class != asn1.ClassUniversal || parts[0].Tag != asn1.TagOID {
				return nil, -1, nil, errors.New("malformed extension")
			}
			exts = append(exts, parts)
		}
		return fields, i, exts, nil
	}
	return fields, -1, nil, nil
}

// elements splits a DER element, which must be a universal one of tag (or, for the
// explicit [3] of the extensions, already its content), into its children.
func elements(b []byte, tag int) ([]asn1.RawValue, error) {
	var outer asn1.RawValue
	rest, err := asn1.Unmarshal(b, &outer)
	if err != nil || len(rest) > 0 || !outer.IsCompound || outer.Class != asn1.ClassUniversal || outer.Tag != tag {
		return nil, fmt.Errorf("malformed DER")
	}
	var out []asn1.RawValue
	for in := outer.Bytes; len(in) > 0; {
		var v asn1.RawValue
		if in, err = asn1.Unmarshal(in, &v); err != nil {
			return nil, fmt.Errorf("malformed DER: %v", err)
		}
		out = append(out, v)
	}
	return out, nil
}

func compound(class, tag int, parts []asn1.RawValue) []byte {
	var body []byte
	for _, p := range parts {
		body = append(body, p.FullBytes...)
	}
	return must(asn1.Marshal(asn1.RawValue{Class: class, Tag: tag, IsCompound: true, Bytes: body}))
}

// must is for marshalling RawValues and small OIDs, which cannot fail.
func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// errBigArc reports an OID read whole but with an arc beyond crypto/x509's 2^31.
var errBigArc = errors.New("an OID arc beyond 2^31")

// oidString returns the dotted form of the content of a DER OBJECT IDENTIFIER, with
// arcs up to 2^63.
func oidString(b []byte) (string, error) {
	if len(b) == 0 || b[len(b)-1]&0x80 != 0 {
		return "", errors.New("malformed OID")
	}
	var s strings.Builder
	big := false
	for first := true; len(b) > 0; first = false {
		var v uint64
		for i := 0; ; i++ {
			if i == 9 || i == 0 && b[0] == 0x80 {
				return "", errors.New("malformed OID")
			}
			v = v<<7 | uint64(b[i]&0x7f)
			if b[i]&0x80 == 0 {
				b = b[i+1:]
				break
			}
		}
		if v > 1<<31-1 {
			big = true
		}
		if first {
			x := min(v/40, 2)
			s.WriteString(strconv.FormatUint(x, 10))
			v -= 40 * x
		}
		s.WriteByte('.')
		s.WriteString(strconv.FormatUint(v, 10))
	}
	if big {
		return s.String(), errBigArc
	}
	return s.String(), nil
}
