// Package sqlblob is the database blob driver: blobs live in the metadata database, on
// SQLite or PostgreSQL, as rows of at most ChunkSize bytes, so no blob is ever held whole
// in memory.
//
// A write buffers one chunk and flushes it as a row of a temporary upload (blob_uploads).
// Chunks belong to a data id, not to a digest: Commit makes the upload's data id the
// blob's in one short transaction (blob_objects), so committing a 1 GiB blob copies no
// data and holds SQLite's single write lock only for a moment. If the digest is stored
// already the upload's chunks are discarded: identical content is stored once. Open,
// Stat and Walk read blob_objects only, so a temporary is never visible. A crash leaves at
// most uploads behind, which SweepTemp removes. Data ids come from a sequence that never
// reuses a value, so a reader of a deleted blob never sees another blob's chunks.
//
// Its tables come with the metadata migrations (meta/migrations, 0009_blobs.sql).
package sqlblob
