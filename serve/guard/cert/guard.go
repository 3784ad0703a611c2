package cert

import (
	"crypto/x509"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Kind is a certificate guard's type, named as Pulp names it.
type Kind string

const (
	// X509 admits a client whose certificate chains to the guard's CA.
	X509 Kind = "x509"
	// RHSM admits a client whose certificate chains to the guard's CA and whose
	// entitlement grants the requested path.
	RHSM Kind = "rhsm"
)

// MaxBundle bounds a guard's CA bundle.
const MaxBundle = 1 << 20

// Guard is a compiled certificate guard: its CA bundle parsed once, for every request.
// Immutable and safe for concurrent use; compile a new one when the guard changes.
type Guard struct {
	kind  Kind
	roots *x509.CertPool
	id    uint64 // names the guard in the trust memo of a Cert
}

var guardIDs atomic.Uint64

// Compile parses a guard's CA bundle: the PEM certificates it trusts, possibly with
// text between them, as Pulp stores it in ca_certificate.
func Compile(kind Kind, bundle string) (*Guard, error) {
	if kind != X509 && kind != RHSM {
		return nil, fmt.Errorf("certificate guard kind %q: want %q or %q", kind, X509, RHSM)
	}
	if len(bundle) > MaxBundle {
		return nil, fmt.Errorf("ca_certificate has %d bytes, more than %d", len(bundle), MaxBundle)
	}
	ders, err := pemBlocks(bundle, MaxBundle)
	if err != nil {
		return nil, fmt.Errorf("ca_certificate: %w", err)
	}
	if len(ders) == 0 {
		return nil, errors.New("ca_certificate holds no PEM certificate")
	}
	roots := x509.NewCertPool()
	for i, der := range ders {
		c, err := parseCert(der)
		if err != nil {
			return nil, fmt.Errorf("ca_certificate, certificate %d: %w", i+1, err)
		}
		roots.AddCert(c)
	}
	return &Guard{kind: kind, roots: roots, id: guardIDs.Add(1)}, nil
}

// Kind returns the guard's type.
func (g *Guard) Kind() Kind { return g.kind }

// Permit returns nil when the guard admits the client certificate c to path at time
// now, else why not (wrapping ErrNoCert, ErrUntrusted, ErrBadEntitlement or
// ErrPathDenied). path is the request's decoded URL path below the content app's
// prefix ("/<base_path>/<relative path>"); an X509 guard ignores it.
func (g *Guard) Permit(c *Cert, path string, now time.Time) error {
	if c == nil {
		return ErrNoCert
	}
	if err := g.verify(c, now); err != nil {
		return err
	}
	if g.kind == X509 {
		return nil
	}
	e, err := c.Entitlement()
	if err != nil {
		return err
	}
	if !e.Allows(path) {
		return ErrPathDenied
	}
	return nil
}

// verify checks that c chains to the guard's CA and that every certificate of that
// chain is valid at now, as Pulp's OpenSSL store context does. Like Pulp it checks no
// revocation and no key usage (any extended key usage passes).
func (g *Guard) verify(c *Cert, now time.Time) error {
	if c.trusted(g.id, now) {
		return nil
	}
	chains, err := c.Leaf.Verify(x509.VerifyOptions{
		Roots:         g.roots,
		Intermediates: c.pool,
		CurrentTime:   now,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
	})
	if err != nil {
		return untrusted(err, c.Leaf, now)
	}
	// Any chain will do; the first one's validity span is how long this result holds.
	t := trusted{guard: g.id, from: chains[0][0].NotBefore, until: chains[0][0].NotAfter}
	for _, ch := range chains[0][1:] {
		if ch.NotBefore.After(t.from) {
			t.from = ch.NotBefore
		}
		if ch.NotAfter.Before(t.until) {
			t.until = ch.NotAfter
		}
	}
	c.remember(t)
	return nil
}

func untrusted(err error, leaf *x509.Certificate, now time.Time) error {
	var ua x509.UnknownAuthorityError
	var ci x509.CertificateInvalidError
	switch {
	case errors.As(err, &ua):
		return fmt.Errorf("%w: not signed by the guard's CA certificate", ErrUntrusted)
	case errors.As(err, &ci) && ci.Reason == x509.Expired:
		which := "it"
		if ci.Cert != leaf {
			which = "its issuer " + ci.Cert.Subject.String()
		}
		if now.Before(ci.Cert.NotBefore) {
			return fmt.Errorf("%w: %s is not valid before %s", ErrUntrusted, which, ci.Cert.NotBefore.UTC().Format(time.RFC3339))
		}
		return fmt.Errorf("%w: %s expired at %s", ErrUntrusted, which, ci.Cert.NotAfter.UTC().Format(time.RFC3339))
	}
	return fmt.Errorf("%w: %v", ErrUntrusted, err)
}
