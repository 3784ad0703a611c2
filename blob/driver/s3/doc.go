// Package s3 is the S3-compatible object storage blob driver (MinIO, Ceph, AWS).
// Committed blobs are objects at artifact/<sha[0:2]>/<sha[2:]> (Pulp's layout). A write
// is spooled to a local temporary file ($TMPDIR) while it is hashed, and uploaded once,
// under its digest, when it commits: one PUT for a blob up to a part (8 MiB by default),
// a multipart upload one part at a time beyond; nothing when the bucket has the blob
// already. So a failed or mismatched write never reaches the bucket, and memory holds at
// most one part whatever the blob's size; a spool file a crashed process left is removed
// by SweepTemp. Chunks of uploads in progress are objects at parts/<upload>/<key>. The driver hands out presigned URLs (blob.Redirector), so the
// content app can redirect clients to the object store.
package s3
