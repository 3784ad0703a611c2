// Package cert decides whether a client certificate grants access to a content path,
// as Pulp's certguard content guards do: an X509 guard admits a certificate that
// chains to its CA bundle and is valid now; an RHSM guard also requires the path to
// fall under a path of the certificate's Red Hat entitlement (v1 content extensions or
// the v3 Huffman-coded path tree, as Candlepin and Katello issue them).
//
// The content app compiles a Guard once per content guard (Compile), reads the
// certificate of each request through a Cache (Cache.Header for the X-Client-Cert
// header a trusted reverse proxy sets, Cache.Chain for a TLS peer chain), and asks
// Guard.Permit. Every refusal wraps one of the package's Err values.
//
// Invariants:
//   - Trusted: only the guard's CA bundle. Certificates the client sends after its
//     leaf serve as untrusted intermediates; every certificate of the chain must be
//     valid at the time given. Nothing else is checked: no revocation and no key usage,
//     as in Pulp (docs/compatibility.md lists the differences).
//   - The header is trusted to come from the proxy: the package cannot tell, the
//     content app must only read it from a proxy it trusts.
//   - Bounded: the header (MaxHeader), the chain (MaxChain), the CA bundle (MaxBundle);
//     a v3 entitlement's decompressed word list, words, nodes and edges, and a v1
//     certificate's paths (maxLex, maxWords, maxNodes, maxEdges, maxPaths). Decoding is
//     linear in its input; a path check costs at most segments × edges and refuses
//     paths of more than maxSegments segments. Hostile input fails with an error.
//   - A request path with a "." or ".." segment is never allowed, whatever is granted.
//   - A Cert is immutable once parsed but for its memos: the entitlement is decoded
//     once, and a guard's verification is reused while the verified chain stays valid.
//     Guards are immutable: a changed guard is compiled anew, with a new identity.
package cert
