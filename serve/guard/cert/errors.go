package cert

import "errors"

// Every refusal wraps one of these; the text after it is safe to send to the client
// (Pulp answers 403 with its guard's message).
var (
	// ErrNoCert: no client certificate came with the request.
	ErrNoCert = errors.New("no client certificate")
	// ErrBadCert: what came is not a certificate the guard can read.
	ErrBadCert = errors.New("malformed client certificate")
	// ErrUntrusted: the certificate does not chain to the guard's CA, or is not valid now.
	ErrUntrusted = errors.New("client certificate is not trusted")
	// ErrBadEntitlement: an RHSM guard was shown a certificate without readable
	// entitlement data.
	ErrBadEntitlement = errors.New("client certificate carries no readable entitlement")
	// ErrPathDenied: the entitlement does not grant the requested path.
	ErrPathDenied = errors.New("requested path is not a subpath of a path in the client certificate")
)
