package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"pith/blob"
	"pith/blob/driver/tempfile"
)

// Config locates a bucket.
type Config struct {
	Endpoint  string // host:port
	Bucket    string
	Region    string
	AccessKey string
	SecretKey string
	PathStyle bool
	Insecure  bool   // plain http
	PartSize  uint64 // multipart part size; default 8 MiB (objects up to 80 GB, one part buffered per write)
}

// ParseURL reads s3://key:secret@host:port/bucket?region=…&path_style=true&insecure=true.
func ParseURL(raw string) (Config, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return Config{}, fmt.Errorf("storage %q: want s3://key:secret@host:port/bucket?region=…", redact(raw))
	}
	c := Config{Endpoint: u.Host, Bucket: strings.Trim(u.Path, "/"), Region: u.Query().Get("region")}
	if c.Bucket == "" || strings.Contains(c.Bucket, "/") {
		return Config{}, fmt.Errorf("storage %q: the path must name one bucket", redact(raw))
	}
	if u.User != nil {
		c.AccessKey = u.User.Username()
		c.SecretKey, _ = u.User.Password()
	}
	for _, b := range []struct {
		key string
		dst *bool
	}{{"path_style", &c.PathStyle}, {"insecure", &c.Insecure}} {
		if v := u.Query().Get(b.key); v != "" {
			x, err := strconv.ParseBool(v)
			if err != nil {
				return Config{}, fmt.Errorf("storage: %s=%q is not a boolean", b.key, v)
			}
			*b.dst = x
		}
	}
	return c, nil
}

func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		u.User = url.User(u.User.Username())
		return u.String()
	}
	return raw
}

var (
	_ blob.Driver  = (*Driver)(nil)
	_ blob.Stager  = (*Driver)(nil)
	_ blob.Sweeper = (*Driver)(nil)
)

// Driver stores blobs in a bucket.
type Driver struct {
	c      *minio.Client
	bucket string
	part   uint64
}

// New connects to the bucket, creating it when missing.
func New(ctx context.Context, cfg Config) (*Driver, error) {
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	c, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds: credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""), Secure: !cfg.Insecure,
		Region: cfg.Region, BucketLookup: lookup,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 %s: %w", cfg.Endpoint, err)
	}
	ok, err := c.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return nil, fmt.Errorf("s3 %s bucket %s: %w", cfg.Endpoint, cfg.Bucket, err)
	}
	if !ok {
		// Several processes may start at once: another one creating it is fine.
		err := c.MakeBucket(ctx, cfg.Bucket, minio.MakeBucketOptions{Region: cfg.Region})
		if code := minio.ToErrorResponse(err).Code; err != nil && code != "BucketAlreadyOwnedByYou" && code != "BucketAlreadyExists" {
			return nil, fmt.Errorf("s3 %s: create bucket %s: %w", cfg.Endpoint, cfg.Bucket, err)
		}
	}
	part := cfg.PartSize
	if part == 0 {
		part = 8 << 20
	}
	return &Driver{c: c, bucket: cfg.Bucket, part: part}, nil
}

// Name is "s3".
func (d *Driver) Name() string { return "s3" }

func key(sha string) string { return "artifact/" + sha[:2] + "/" + sha[2:] }

func notFound(err error) error {
	if minio.ToErrorResponse(err).Code == "NoSuchKey" {
		return fmt.Errorf("%w: %v", blob.ErrNotFound, err)
	}
	return err
}

// temp spools a write to a local temporary file: the object is uploaded once, under its
// digest, only when the blob is complete and verified, and not at all when the bucket
// has it already. A small blob is one PUT; nothing half-written ever reaches the bucket.
type temp struct {
	d     *Driver
	f     *tempfile.File
	n     int64
	ended bool // committed or cancelled
}

// spoolPrefix begins the names of the spool files in $TMPDIR.
const spoolPrefix = "pith-s3-"

// Create starts a temporary object in the local temporary directory ($TMPDIR).
func (d *Driver) Create(ctx context.Context) (blob.Temp, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := tempfile.Create(os.TempDir(), spoolPrefix)
	if err != nil {
		return nil, fmt.Errorf("local spool directory: %w", err)
	}
	return &temp{d: d, f: f}, nil
}

func (t *temp) Write(p []byte) (int, error) {
	if t.ended {
		return 0, errors.New("s3: write to a temporary that was already committed or cancelled")
	}
	n, err := t.f.Write(p)
	t.n += int64(n)
	if err != nil {
		err = fmt.Errorf("local spool directory: %w", err)
	}
	return n, err
}

// remove deletes the spool file, then closes it (which drops its lock).
func (t *temp) remove() {
	os.Remove(t.f.Name())
	t.f.Close()
}

// SweepTemp removes the spool files in this host's $TMPDIR whose writer is gone (a live
// writer holds a lock on its file; see package tempfile). Each host sweeps its own when
// a process starts; the maintenance schedule sweeps the host it runs on.
func (d *Driver) SweepTemp(ctx context.Context) (int, error) {
	return tempfile.Sweep(os.TempDir(), spoolPrefix)
}

func (t *temp) Commit(ctx context.Context, sha string) error {
	if t.ended {
		return errors.New("s3: commit of a temporary that was already committed or cancelled")
	}
	t.ended = true
	defer t.remove()
	if err := blob.CheckDigest(sha); err != nil {
		return err
	}
	if _, err := t.d.c.StatObject(ctx, t.d.bucket, key(sha), minio.StatObjectOptions{}); err == nil {
		return nil // identical content is stored once
	}
	if _, err := t.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	// One part at a time: memory stays at one part whatever the object's size.
	_, err := t.d.c.PutObject(ctx, t.d.bucket, key(sha), t.f, t.n,
		minio.PutObjectOptions{PartSize: t.d.part, NumThreads: 1, ContentType: "application/octet-stream"})
	if err != nil {
		return fmt.Errorf("upload %s: %w", key(sha), full(err))
	}
	return nil
}

// full marks the error of an object store that has no room left as blob.ErrFull.
func full(err error) error {
	if minio.ToErrorResponse(err).Code == "XMinioStorageFull" {
		return fmt.Errorf("%w: %w", blob.ErrFull, err)
	}
	return err
}

func (t *temp) Cancel(ctx context.Context) error {
	if t.ended {
		return nil
	}
	t.ended = true
	t.remove()
	return nil
}

// Open reads a blob (seekable; a seek turns into a ranged GET).
func (d *Driver) Open(ctx context.Context, sha string) (blob.Reader, error) {
	if err := blob.CheckDigest(sha); err != nil {
		return nil, err
	}
	if _, err := d.Stat(ctx, sha); err != nil {
		return nil, err
	}
	o, err := d.c.GetObject(ctx, d.bucket, key(sha), minio.GetObjectOptions{})
	if err != nil {
		return nil, notFound(err)
	}
	return o, nil
}

// Stat describes a blob.
func (d *Driver) Stat(ctx context.Context, sha string) (blob.Info, error) {
	if err := blob.CheckDigest(sha); err != nil {
		return blob.Info{}, err
	}
	i, err := d.c.StatObject(ctx, d.bucket, key(sha), minio.StatObjectOptions{})
	if err != nil {
		return blob.Info{}, notFound(err)
	}
	return blob.Info{Size: i.Size, ModTime: i.LastModified}, nil
}

// Delete removes a blob.
func (d *Driver) Delete(ctx context.Context, sha string) error {
	if _, err := d.Stat(ctx, sha); err != nil {
		return err
	}
	return d.c.RemoveObject(ctx, d.bucket, key(sha), minio.RemoveObjectOptions{})
}

// Walk visits committed blobs in key (digest) order.
func (d *Driver) Walk(ctx context.Context, fn func(string, blob.Info) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := d.c.ListObjects(ctx, d.bucket, minio.ListObjectsOptions{Prefix: "artifact/", Recursive: true})
	// minio-go's lister blocks on its channel: drain it when stopping early.
	defer func() {
		for range ch {
		}
	}()
	for o := range ch {
		if o.Err != nil {
			return o.Err
		}
		sha := strings.ReplaceAll(strings.TrimPrefix(o.Key, "artifact/"), "/", "")
		if !blob.ValidDigest(sha) {
			continue
		}
		if err := fn(sha, blob.Info{Size: o.Size, ModTime: o.LastModified}); err != nil {
			return err
		}
	}
	return nil
}

// URL presigns a GET (or, when asked, a HEAD) of a blob; the response carries the given
// content type and disposition (S3 response overrides).
func (d *Driver) URL(ctx context.Context, sha string, opt blob.URLOptions) (string, error) {
	if err := blob.CheckDigest(sha); err != nil {
		return "", err
	}
	q := url.Values{}
	if opt.ContentType != "" {
		q.Set("response-content-type", opt.ContentType)
	}
	if opt.ContentDisposition != "" {
		q.Set("response-content-disposition", opt.ContentDisposition)
	}
	exp := opt.Expires
	if exp <= 0 {
		exp = time.Hour
	}
	var u *url.URL
	var err error
	if opt.Method == http.MethodHead {
		u, err = d.c.PresignedHeadObject(ctx, d.bucket, key(sha), exp, q)
	} else {
		u, err = d.c.PresignedGetObject(ctx, d.bucket, key(sha), exp, q)
	}
	if err != nil {
		return "", err
	}
	return u.String(), nil
}
