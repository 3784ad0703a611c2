package content

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"iter"
	"os"
	"path"
	"strings"
	"sync"

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

// tempSink stages one download attempt in an unnamed temporary file while hashing it.
type tempSink struct {
	f *os.File
	h hash.Hash
}

func (s *tempSink) Write(p []byte) (int, error) {
	s.h.Write(p)
	return s.f.Write(p)
}

func (s *tempSink) Abort() { s.f.Close() }

// FetchTemp downloads url (with the downloader's retries) into an unnamed temporary
// file, rewound, and returns it with the hex digest newHash computed of it. Metadata is
// staged this way so it can be checked whole before it is parsed.
func FetchTemp(ctx context.Context, d *download.Downloader, url string, want download.Expect, newHash func() hash.Hash) (*os.File, string, error) {
	var last *tempSink
	_, err := d.Fetch(ctx, url, want, func() (download.Sink, error) {
		f, err := TempFile()
		if err != nil {
			return nil, err
		}
		last = &tempSink{f: f, h: newHash()}
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

// Parallel runs fn for every item on at most n goroutines; the first failure cancels the
// rest and is returned, named by what name says of its item. items may yield while the
// work runs (a queue that fills as a sync stores what it parsed); it must not block once
// ctx ends.
func Parallel[T any](ctx context.Context, n int, items iter.Seq[T], name func(T) string, fn func(context.Context, T) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	work := make(chan T)
	var wg sync.WaitGroup
	for i := 0; i < max(n, 1); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				if err := fn(ctx, it); err != nil {
					cancel(fmt.Errorf("%s: %w", name(it), err))
				}
			}
		}()
	}
	for it := range items {
		select {
		case work <- it:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(work)
	wg.Wait()
	return context.Cause(ctx)
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
		a, _, err := meta.PutArtifact(ctx, db, Artifact(dg))
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

// Retain deletes a repository's versions older than the newest keep ones (version 0
// stays), as retain_repo_versions asks.
func Retain(ctx context.Context, db *meta.DB, repo meta.Repository, keep int64) error {
	vs, _, err := meta.ListVersions(ctx, db, meta.List{Where: []string{"v.repository_id = ?", "v.number > 0"}, Args: []any{repo.ID}, OrderBy: "v.number DESC"})
	if err != nil {
		return err
	}
	for i, v := range vs {
		if int64(i) < keep {
			continue
		}
		if err := db.Tx(ctx, func(tx *meta.Tx) error { return meta.DeleteVersion(ctx, tx, v) }); err != nil {
			return err
		}
	}
	return nil
}

// URLBase is the directory of a URL, against which relative paths resolve.
func URLBase(u string) string {
	i := strings.LastIndex(u, "/")
	if i < 0 {
		return u
	}
	return u[:i+1]
}

// JoinURL appends a relative path to a base URL ending in "/", escaping each segment.
func JoinURL(base, rel string) string {
	parts := strings.Split(rel, "/")
	for i, s := range parts {
		parts[i] = pathEscape(s)
	}
	return base + path.Join(parts...)
}

func pathEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~!$&'()*+,;=:@", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// TempFile returns an unnamed temporary file for staging metadata; it is gone when
// closed.
func TempFile() (*os.File, error) {
	f, err := os.CreateTemp("", "pith-metadata-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
}
