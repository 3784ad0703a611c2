package cert

import (
	"crypto/sha256"
	"crypto/x509"

	"pith/internal/lru"
)

// Cache keeps parsed client certificates, with what they remember (the decoded
// entitlement, the guards that trusted them), so that a client coming again costs a
// hash and a lookup. A header is known by the SHA-256 of its value as sent (decoding
// it costs more than a Katello certificate's check: a proxy sends a client's
// certificate the same way every time), a TLS chain by its fingerprint. Failures are
// not kept. Safe for concurrent use.
type Cache struct {
	m *lru.Cache[cacheKey, *Cert]
}

type cacheKey struct {
	header bool // sum is of a header's value, else of a chain (Cert.Fingerprint)
	sum    [sha256.Size]byte
}

// NewCache returns a cache of at most n certificates.
func NewCache(n int) *Cache {
	return &Cache{m: lru.New[cacheKey, *Cert](n)}
}

// Header is ParseHeader through the cache.
func (c *Cache) Header(v string) (*Cert, error) {
	if len(v) > MaxHeader {
		return ParseHeader(v) // its error, before hashing
	}
	k := cacheKey{header: true, sum: sumString(v)}
	if cert, ok := c.m.Get(k); ok {
		return cert, nil
	}
	cert, err := ParseHeader(v)
	if err != nil {
		return nil, err
	}
	c.m.Put(k, cert)
	return cert, nil
}

// Chain is FromChain through the cache.
func (c *Cache) Chain(chain []*x509.Certificate) (*Cert, error) {
	if len(chain) == 0 || len(chain) > MaxChain {
		return FromChain(chain) // its error
	}
	k := cacheKey{sum: chainFingerprint(chain)}
	if cert, ok := c.m.Get(k); ok {
		return cert, nil
	}
	cert := newCert(chain, k.sum)
	c.m.Put(k, cert)
	return cert, nil
}

// sumString is the SHA-256 of s, without copying s whole (as []byte(s) would).
func sumString(s string) [sha256.Size]byte {
	h := sha256.New()
	var buf [4096]byte
	for len(s) > 0 {
		n := copy(buf[:], s)
		h.Write(buf[:n])
		s = s[n:]
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
