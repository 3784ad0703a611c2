package s3

import (
	"context"
	"io"
	"strconv"

	"github.com/minio/minio-go/v7"
)

func partKey(upload string, key int64) string {
	return "parts/" + upload + "/" + strconv.FormatInt(key, 10)
}

// PutPart uploads the part as one object of known size (S3 makes it visible whole or
// not at all).
func (d *Driver) PutPart(ctx context.Context, upload string, key int64, r io.Reader, size int64) error {
	_, err := d.c.PutObject(ctx, d.bucket, partKey(upload, key), r, size,
		minio.PutObjectOptions{PartSize: d.part, ContentType: "application/octet-stream"})
	return full(err)
}

// OpenPart reads a part.
func (d *Driver) OpenPart(ctx context.Context, upload string, key int64) (io.ReadCloser, error) {
	k := partKey(upload, key)
	if _, err := d.c.StatObject(ctx, d.bucket, k, minio.StatObjectOptions{}); err != nil {
		return nil, notFound(err)
	}
	o, err := d.c.GetObject(ctx, d.bucket, k, minio.GetObjectOptions{})
	if err != nil {
		return nil, notFound(err)
	}
	return o, nil
}

// DeleteParts removes every object under the upload's prefix.
func (d *Driver) DeleteParts(ctx context.Context, upload string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	objs := d.c.ListObjects(ctx, d.bucket, minio.ListObjectsOptions{Prefix: "parts/" + upload + "/", Recursive: true})
	for e := range d.c.RemoveObjects(ctx, d.bucket, objs, minio.RemoveObjectsOptions{}) {
		if e.Err != nil {
			return e.Err
		}
	}
	return nil
}
