// Package secret keeps credentials out of sight. It seals the secrets pith stores (a
// remote's passwords, client key and tokens) with the keys of an encryption key file,
// Pulp's DB_ENCRYPTION_KEY model: the file holds one or more keys, the first seals and
// every one opens, so a key is rotated by putting a new one first and sealing again.
// And it redacts credentials in URLs from text bound for logs and task errors.
//
// Invariants: a sealed value names the key that sealed it; Open returns exactly the
// plaintext that was sealed or an error naming the key file (AES-256-GCM authenticates
// every value), never garbage; key files are written readable by their owner only.
package secret
