package content

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"

	"pith/blob"
	"pith/content/download"
	"pith/meta"
)

// blobSink adapts a blob writer to the downloader's per-attempt sink.
type blobSink struct {
	ctx context.Context
	w   *blob.Writer
}

func (s *blobSink) Write(p []byte) (int, error) { return s.w.Write(p) }
func (s *blobSink) Abort()                      { s.w.Cancel(s.ctx) }

// tempSink stages one download attempt in an unnamed temporary file while hashing it,
// up to a limit.
type tempSink struct {
	f        *os.File
	h        hash.Hash
	n        int64
	limit    int64
	tooLarge error
}

func (s *tempSink) Write(p []byte) (int, error) {
	if s.n += int64(len(p)); s.n > s.limit {
		return 0, s.tooLarge
	}
	s.h.Write(p)
	n, err := s.f.Write(p)
	if err != nil {
		err = tempFailed(err)
	}
	return n, err
}

func tooLarge(limit int64) error {
	return fmt.Errorf("larger than %d MiB, the limit of a metadata file (max-metadata-mib)", limit>>20)
}

// tooLargeDoc is the error of a document above a type's own bound, smaller than the
// setting's.
type tooLargeDoc int64

func (l tooLargeDoc) Error() string {
	return fmt.Sprintf("larger than %d MiB, the limit of such a document", int64(l)>>20)
}

func (s *tempSink) Abort() { s.f.Close() }

// FetchTemp downloads url (with the downloader's retries) into an unnamed temporary
// file, rewound, and returns it with the hex digest newHash computed of it. Metadata is
// staged this way so it can be checked whole before it is parsed. A file larger than
// the core's metadata limit fails, whether or not its size was declared: the
// upstream decides what it sends, and the temporary directory is not without end.
func (c *Core) FetchTemp(ctx context.Context, d *download.Downloader, url string, want download.Expect, newHash func() hash.Hash) (*os.File, string, error) {
	return c.FetchTempUpTo(ctx, d, url, want, newHash, c.maxMetadata)
}

// FetchTempUpTo is FetchTemp for a document a type bounds itself (an API answer the size
// of a page): the bound is limit, or the setting's when that is smaller.
func (c *Core) FetchTempUpTo(ctx context.Context, d *download.Downloader, url string, want download.Expect, newHash func() hash.Hash, limit int64) (*os.File, string, error) {
	var over error = tooLargeDoc(limit)
	if limit >= c.maxMetadata {
		limit, over = c.maxMetadata, tooLarge(c.maxMetadata)
	}
	if want.Size > limit {
		return nil, "", &download.Error{URL: url, Err: fmt.Errorf("declared size %d is %w", want.Size, over)}
	}
	var last *tempSink
	_, err := d.Fetch(ctx, url, want, func() (download.Sink, error) {
		f, err := TempFile()
		if err != nil {
			return nil, err
		}
		last = &tempSink{f: f, h: newHash(), limit: limit, tooLarge: over}
		return last, nil
	})
	if err != nil {
		return nil, "", err
	}
	if _, err := last.f.Seek(0, io.SeekStart); err != nil {
		last.f.Close()
		return nil, "", err
	}
	return last.f, hex.EncodeToString(last.h.Sum(nil)), nil
}

// Downloader makes the downloader of a stored remote; errors name the remote.
func Downloader(r meta.Remote) (*download.Downloader, error) {
	cfg, err := DownloadConfig(r)
	if err != nil {
		return nil, fmt.Errorf("remote %q: %w", r.Name, err)
	}
	d, err := download.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("remote %q: %w", r.Name, err)
	}
	return d, nil
}

// FetchBlob downloads url into the blob store, verified against want while streaming.
func FetchBlob(ctx context.Context, store *blob.Store, d *download.Downloader, url string, want download.Expect) (blob.Digests, error) {
	var last *blobSink
	_, err := d.Fetch(ctx, url, want, func() (download.Sink, error) {
		w, err := store.NewWriter(ctx)
		if err != nil {
			return nil, err
		}
		last = &blobSink{ctx: ctx, w: w}
		return last, nil
	})
	if err != nil {
		return blob.Digests{}, err
	}
	digests, err := last.w.Commit(ctx, blob.Expect{Size: want.Size, SHA256: want.SHA256})
	if err != nil {
		return blob.Digests{}, fmt.Errorf("store %s: %w", url, err)
	}
	return digests, nil
}

// StoreFrom stores what src reads in the blob store, checked against sha256 unless it
// is "".
func StoreFrom(ctx context.Context, store *blob.Store, src io.Reader, sha256 string) (meta.Artifact, error) {
	w, err := store.NewWriter(ctx)
	if err != nil {
		return meta.Artifact{}, err
	}
	if _, err := io.Copy(w, src); err != nil {
		w.Cancel(ctx)
		return meta.Artifact{}, err
	}
	d, err := w.Commit(ctx, blob.Expect{Size: -1, SHA256: sha256})
	if err != nil {
		return meta.Artifact{}, err
	}
	return meta.ArtifactOf(d), nil
}

// Refetch stores a missing or corrupt unit file again from its first working remote
// source (repair).
func Refetch(ctx context.Context, db *meta.DB, store *blob.Store, f meta.FileRef) error {
	srcs := f.Remote
	if len(srcs) == 0 {
		srcs, _ = meta.RemoteSources(ctx, db, f.ContentArtifactID)
	}
	var errs []error
	for _, src := range srcs {
		m, err := meta.RemoteByID(ctx, db, src.RemoteID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		d, err := Downloader(m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		want := download.Expect{Size: -1}
		if f.Artifact != nil {
			want = download.Expect{Size: f.Artifact.Size, SHA256: f.Artifact.SHA256}
		}
		dg, err := FetchBlob(ctx, store, d, src.URL, want)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		a, _, err := meta.PutArtifact(ctx, db, meta.ArtifactOf(dg))
		if err != nil {
			return err
		}
		return meta.SetContentArtifact(ctx, db, f.ContentArtifactID, a.ID)
	}
	if len(errs) == 0 {
		return fmt.Errorf("%s: no remote source to fetch it from", f.RelativePath)
	}
	return errors.Join(errs...)
}

// TempFile returns an unnamed temporary file for staging metadata; it is gone when
// closed.
func TempFile() (*os.File, error) {
	f, err := os.CreateTemp("", "pith-metadata-*")
	if err != nil {
		return nil, tempFailed(err)
	}
	os.Remove(f.Name())
	return f, nil
}

// tempFailed says that staging in the temporary directory failed and why (a full disk),
// without the file's path on the server: task errors show it to clients.
func tempFailed(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return fmt.Errorf("stage a download in the temporary directory: %w", err)
}
