// Package blob is the content-addressed blob store. Blobs are named by lower-case hex
// sha256. A write streams through every allowed hasher into a temporary object of the
// driver and is committed under its sha256 only when complete, verified against what the
// caller expected, and durable; identical content is stored once. Nothing half-written
// is ever visible under a digest.
package blob
