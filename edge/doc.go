// Package edge guards a pith listener against clients that hold its resources (request
// bodies that arrive too slowly, one address opening too many connections), serves it
// over TLS, and names the user of a verified client certificate.
//
// Invariants:
//   - A request with a body has a read deadline from the moment its handler starts
//     (Bodies); only a handler that has decided the body is worth waiting for extends it
//     (ExtendBody), so an unauthenticated client gets no more than the short deadline.
//   - A body the handler left unread is never drained: the answer goes out with
//     Connection: close at once and the connection ends.
//   - Once a body has been read to its end its deadline is gone (net/http lifts it), so a
//     long handler or response is never cut short by it.
//   - A connection over the per-address cap is closed as it is accepted, before a byte
//     is read (Conns), and before any TLS handshake.
//   - A TLS listener always serves a pair that loaded: changed files are taken only
//     whole (TLS); a client certificate that does not verify fails the handshake, so a
//     request's r.TLS.VerifiedChains, when present, is the only client identity there
//     is (CertUser).
package edge
