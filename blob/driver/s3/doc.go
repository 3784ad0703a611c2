// Package s3 is the S3-compatible object storage blob driver (MinIO, Ceph, AWS).
// Committed blobs are objects at artifact/<sha[0:2]>/<sha[2:]> (Pulp's layout); a write
// streams as a multipart upload to tmp/<uuid> — one part in memory at a time, never the
// whole file — and is committed by a server-side copy to its digest's key. The driver
// hands out presigned URLs (blob.Redirector), so the content app can redirect clients to
// the object store.
package s3
