// Package tlsfile reads TLS material from PEM files: a certificate chain with its key,
// and bundles of CA certificates.
//
// Invariants: a file is read whole or not at all, and never beyond MaxSize; an error
// names the file and what is wrong with it (never the key's bytes); a bundle without a
// single certificate is an error, not an empty pool that would trust nothing in silence.
package tlsfile
