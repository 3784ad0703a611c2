// Package fs is the filesystem blob driver: committed blobs live at
// root/artifact/<sha[0:2]>/<sha[2:]> (Pulp's layout) and temporaries in root/tmp on the
// same filesystem, so a commit is fsync + rename + fsync of the directory.
package fs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"pith/blob"
)

// Driver stores blobs in a directory.
type Driver struct{ root string }

// New creates (if needed) and returns a driver rooted at root.
func New(root string) (*Driver, error) {
	for _, d := range []string{"artifact", "tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o750); err != nil {
			return nil, fmt.Errorf("blob fs: %w", err)
		}
	}
	return &Driver{root: root}, nil
}

// Name is "fs".
func (d *Driver) Name() string { return "fs" }

// Path is where a blob lives.
func (d *Driver) Path(sha256 string) (string, bool) {
	return filepath.Join(d.root, "artifact", sha256[:2], sha256[2:]), true
}

func (d *Driver) path(sha string) string { p, _ := d.Path(sha); return p }

type temp struct {
	d *Driver
	f *os.File
}

// Create opens a temporary file.
func (d *Driver) Create(ctx context.Context) (blob.Temp, error) {
	f, err := os.CreateTemp(filepath.Join(d.root, "tmp"), "blob-*")
	if err != nil {
		return nil, err
	}
	return &temp{d: d, f: f}, nil
}

func (t *temp) Write(p []byte) (int, error) { return t.f.Write(p) }

func (t *temp) Commit(ctx context.Context, sha string) error {
	if err := t.f.Sync(); err != nil {
		t.Cancel(ctx)
		return err
	}
	if err := t.f.Close(); err != nil {
		os.Remove(t.f.Name())
		return err
	}
	dst := t.d.path(sha)
	if _, err := os.Stat(dst); err == nil {
		os.Remove(t.f.Name()) // identical content is stored once
		return nil
	}
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		os.Remove(t.f.Name())
		return err
	}
	if err := os.Rename(t.f.Name(), dst); err != nil {
		os.Remove(t.f.Name())
		return err
	}
	if df, err := os.Open(dir); err == nil {
		df.Sync()
		df.Close()
	}
	return nil
}

func (t *temp) Cancel(ctx context.Context) error {
	t.f.Close()
	err := os.Remove(t.f.Name())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func notFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return blob.ErrNotFound
	}
	return err
}

// Open returns the blob as an *os.File.
func (d *Driver) Open(ctx context.Context, sha string) (blob.Reader, error) {
	f, err := os.Open(d.path(sha))
	if err != nil {
		return nil, notFound(err)
	}
	return f, nil
}

// Stat describes a blob.
func (d *Driver) Stat(ctx context.Context, sha string) (blob.Info, error) {
	fi, err := os.Stat(d.path(sha))
	if err != nil {
		return blob.Info{}, notFound(err)
	}
	return blob.Info{Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// Delete removes a blob.
func (d *Driver) Delete(ctx context.Context, sha string) error {
	return notFound(os.Remove(d.path(sha)))
}

// Walk visits committed blobs.
func (d *Driver) Walk(ctx context.Context, fn func(string, blob.Info) error) error {
	base := filepath.Join(d.root, "artifact")
	return filepath.WalkDir(base, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		sha := strings.ReplaceAll(rel, string(filepath.Separator), "")
		if !blob.ValidDigest(sha) {
			return nil
		}
		fi, err := e.Info()
		if err != nil {
			return nil
		}
		return fn(sha, blob.Info{Size: fi.Size(), ModTime: fi.ModTime()})
	})
}

// CleanTemp removes temporaries older than age, left by a crash.
func (d *Driver) CleanTemp(age time.Duration) error {
	dir := filepath.Join(d.root, "tmp")
	es, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range es {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > age {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return nil
}

// Usage reports the filesystem's total, used and free bytes (for status).
func (d *Driver) Usage() (total, used, free int64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(d.root, &st); err != nil {
		return 0, 0, 0, err
	}
	total = int64(st.Blocks) * st.Bsize
	free = int64(st.Bavail) * st.Bsize
	return total, total - int64(st.Bfree)*st.Bsize, free, nil
}
