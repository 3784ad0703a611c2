package cert

import (
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"sync"
	"time"
)

// Cert is a client certificate as presented, parsed once. It remembers what was derived
// from it (the entitlement, the guards it was found trusted by), so that a cached Cert
// makes the next request of the same client cheap. Safe for concurrent use.
type Cert struct {
	Leaf          *x509.Certificate
	Intermediates []*x509.Certificate // as presented after the leaf, untrusted
	pool          *x509.CertPool      // Intermediates, for Verify; nil when none
	fp            [sha256.Size]byte

	entOnce sync.Once
	ent     *Entitlement
	entErr  error

	mu    sync.Mutex
	trust [4]trusted // a ring: a certificate is rarely shown to more guards
	next  int
}

// trusted records that a guard verified the certificate, and for which span of time
// that verification holds: the intersection of the validity of the chain it found.
type trusted struct {
	guard       uint64
	from, until time.Time
}

// FromChain makes a Cert of the chain a TLS client presented
// (tls.ConnectionState.PeerCertificates): the leaf first.
func FromChain(chain []*x509.Certificate) (*Cert, error) {
	if len(chain) == 0 {
		return nil, ErrNoCert
	}
	if len(chain) > MaxChain {
		return nil, fmt.Errorf("%w: a chain of %d certificates, more than %d", ErrBadCert, len(chain), MaxChain)
	}
	return newCert(chain, chainFingerprint(chain)), nil
}

// Fingerprint is the SHA-256 of the presented chain's DER, concatenated: for a lone
// certificate its usual SHA-256 fingerprint.
func (c *Cert) Fingerprint() [sha256.Size]byte { return c.fp }

func newCert(chain []*x509.Certificate, fp [sha256.Size]byte) *Cert {
	c := &Cert{Leaf: chain[0], Intermediates: chain[1:], fp: fp}
	if len(c.Intermediates) > 0 {
		c.pool = x509.NewCertPool()
		for _, ic := range c.Intermediates {
			c.pool.AddCert(ic)
		}
	}
	return c
}

func parseDER(ders [][]byte, fp [sha256.Size]byte) (*Cert, error) {
	chain := make([]*x509.Certificate, len(ders))
	for i, der := range ders {
		c, err := parseCert(der)
		if err != nil {
			return nil, fmt.Errorf("%w: certificate %d of %d: %v", ErrBadCert, i+1, len(ders), err)
		}
		chain[i] = c
	}
	return newCert(chain, fp), nil
}

// The DER encodings are self-delimiting, so their concatenation names the chain.
func fingerprint(ders [][]byte) [sha256.Size]byte {
	h := sha256.New()
	for _, d := range ders {
		h.Write(d)
	}
	var fp [sha256.Size]byte
	h.Sum(fp[:0])
	return fp
}

func chainFingerprint(chain []*x509.Certificate) [sha256.Size]byte {
	ders := make([][]byte, len(chain))
	for i, c := range chain {
		ders[i] = c.Raw
	}
	return fingerprint(ders)
}

func (c *Cert) trusted(guard uint64, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.trust {
		if t.guard == guard && !now.Before(t.from) && !now.After(t.until) {
			return true
		}
	}
	return false
}

func (c *Cert) remember(t trusted) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.trust {
		if c.trust[i].guard == t.guard {
			c.trust[i] = t
			return
		}
	}
	c.trust[c.next] = t
	c.next = (c.next + 1) % len(c.trust)
}
