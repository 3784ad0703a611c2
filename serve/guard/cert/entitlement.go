package cert

import (
	"crypto/x509"
	"encoding/asn1"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Red Hat's certificate extensions (Candlepin's OIDUtil): under 1.3.6.1.4.1.2312.9,
// .6 is the entitlement version ("1.0" when absent), .4.1 the order name (v1 only),
// .2.<content>.1.6 the path of one content set (v1), .7 the v3 entitlement data.
const (
	oidVersion = "1.3.6.1.4.1.2312.9.6"
	oidOrder   = "1.3.6.1.4.1.2312.9.4.1"
	oidData    = "1.3.6.1.4.1.2312.9.7"
	oidContent = "1.3.6.1.4.1.2312.9.2."
)

// Bounds of a decoded entitlement, far above what Candlepin writes (a tree of a few
// hundred nodes for an organisation with every Red Hat product), so that a hostile
// certificate costs bounded memory and time.
const (
	maxPaths    = 1 << 14 // v1 content paths
	maxNodes    = 1 << 16 // nodes of a path tree
	maxEdges    = 1 << 18 // edges of a path tree
	maxWords    = 1 << 16 // distinct segments of a v3 tree
	maxLex      = 1 << 20 // bytes of a v3 word list, decompressed
	maxSegments = 256     // segments of a request path (the content app's bound)
)

// Entitlement is the set of content paths an RHSM certificate grants, as a tree of
// path segments.
type Entitlement struct {
	Version string // as the certificate states it
	tree    tree
}

// Entitlement decodes the certificate's entitlement once and returns it.
func (c *Cert) Entitlement() (*Entitlement, error) {
	c.entOnce.Do(func() { c.ent, c.entErr = ParseEntitlement(c.Leaf) })
	return c.ent, c.entErr
}

// ParseEntitlement reads the content paths an entitlement certificate grants: from
// the Huffman-coded tree of a v3 certificate or the content extensions of a v1 one.
func ParseEntitlement(c *x509.Certificate) (*Entitlement, error) {
	e := &Entitlement{Version: "1.0"}
	var data []byte
	var paths []string
	order := false
	exts, err := extensions(c.RawTBSCertificate)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadEntitlement, err)
	}
	for _, x := range exts {
		switch id := x.id; {
		case id == oidVersion:
			v, err := derString(x.value)
			if err != nil {
				return nil, fmt.Errorf("%w: version: %v", ErrBadEntitlement, err)
			}
			e.Version = v
		case id == oidOrder:
			order = true
		case id == oidData:
			var b []byte
			if rest, err := asn1.Unmarshal(x.value, &b); err != nil || len(rest) > 0 {
				return nil, fmt.Errorf("%w: the entitlement data is not an OCTET STRING", ErrBadEntitlement)
			}
			data = b
		case isContentPath(id):
			if len(paths) == maxPaths {
				return nil, fmt.Errorf("%w: more than %d content paths", ErrBadEntitlement, maxPaths)
			}
			p, err := derString(x.value)
			if err != nil {
				return nil, fmt.Errorf("%w: content path %s: %v", ErrBadEntitlement, id, err)
			}
			paths = append(paths, p)
		}
	}
	major, err := majorVersion(e.Version)
	if err != nil {
		return nil, fmt.Errorf("%w: version %q", ErrBadEntitlement, e.Version)
	}
	if major >= 3 {
		if data == nil {
			return nil, fmt.Errorf("%w: a version %s certificate without entitlement data", ErrBadEntitlement, e.Version)
		}
		t, err := decodeV3(data)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadEntitlement, err)
		}
		e.tree = t
		return e, nil
	}
	if !order {
		return nil, fmt.Errorf("%w: not an entitlement certificate (no order extension)", ErrBadEntitlement)
	}
	t, err := v1Tree(paths)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadEntitlement, err)
	}
	e.tree = t
	return e, nil
}

// isContentPath matches 1.3.6.1.4.1.2312.9.2.<n>.1.6.
func isContentPath(id string) bool {
	n, ok := strings.CutPrefix(id, oidContent)
	n, ok2 := strings.CutSuffix(n, ".1.6")
	return ok && ok2 && n != "" && strings.Trim(n, "0123456789") == ""
}

// derString reads an extension value holding a UTF8String, as Candlepin writes them.
func derString(b []byte) (string, error) {
	var v asn1.RawValue
	rest, err := asn1.Unmarshal(b, &v)
	if err != nil || len(rest) > 0 || v.Class != asn1.ClassUniversal || v.Tag != asn1.TagUTF8String || !utf8.Valid(v.Bytes) {
		return "", fmt.Errorf("not a UTF8String")
	}
	return string(v.Bytes), nil
}

func majorVersion(v string) (int, error) {
	major, _, _ := strings.Cut(v, ".")
	if len(major) == 0 || len(major) > 3 || strings.Trim(major, "0123456789") != "" {
		return 0, fmt.Errorf("bad version")
	}
	return strconv.Atoi(major)
}

// Allows reports whether path falls under a granted path, as Pulp checks it: at
// segment boundaries, empty segments ignored, a granted segment that is a $variable
// matching any one segment. A path with a "." or ".." segment, or with more than
// maxSegments segments, is never allowed: it could name something outside what it
// appears to.
func (e *Entitlement) Allows(path string) bool {
	return e.tree.allows(path)
}
