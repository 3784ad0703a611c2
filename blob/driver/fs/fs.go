package fs

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"syscall"

	"pith/blob"
	"pith/blob/driver/tempfile"
)

const (
	artifactDir = "artifact"
	tmpDir      = "tmp"
	tmpPrefix   = "blob-"
	dirMode     = 0o750
	fileMode    = 0o640
)

var (
	_ blob.Driver  = (*Driver)(nil)
	_ blob.Stager  = (*Driver)(nil)
	_ blob.Sweeper = (*Driver)(nil)
)

// Driver stores blobs in a directory tree. It is safe for concurrent use, also by several
// processes sharing the directory.
type Driver struct {
	root string
}

var (
	_ blob.Driver = (*Driver)(nil)
	_ blob.Pather = (*Driver)(nil)
)

// New returns a driver rooted at root, creating root/artifact and root/tmp if needed.
func New(root string) (*Driver, error) {
	if root == "" {
		return nil, errors.New("blob fs: empty root directory")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("blob fs: root %q: %w", root, err)
	}
	for _, d := range []string{artifactDir, tmpDir} {
		if err := os.MkdirAll(filepath.Join(abs, d), dirMode); err != nil {
			return nil, fmt.Errorf("blob fs: root %q: %w", root, err)
		}
	}
	return &Driver{root: abs}, nil
}

// Name is "fs".
func (d *Driver) Name() string { return "fs" }

// Root is the directory the driver was opened on, made absolute.
func (d *Driver) Root() string { return d.root }

// Path is where the blob with the digest lives (or would live); false for a bad digest.
func (d *Driver) Path(sha256 string) (string, bool) {
	if !blob.ValidDigest(sha256) {
		return "", false
	}
	return filepath.Join(d.root, artifactDir, sha256[:2], sha256[2:]), true
}

func (d *Driver) path(sha256 string) (string, error) {
	if err := blob.CheckDigest(sha256); err != nil {
		return "", err
	}
	p, _ := d.Path(sha256)
	return p, nil
}

// Create opens a new temporary file in root/tmp.
func (d *Driver) Create(ctx context.Context) (blob.Temp, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := tempfile.Create(filepath.Join(d.root, tmpDir), tmpPrefix)
	if err != nil {
		return nil, err
	}
	return &temp{d: d, f: f}, nil
}

// Open returns the blob as an *os.File.
func (d *Driver) Open(ctx context.Context, sha256 string) (blob.Reader, error) {
	p, err := d.path(sha256)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, notFound(err)
	}
	return f, nil
}

// Stat describes a blob.
func (d *Driver) Stat(ctx context.Context, sha256 string) (blob.Info, error) {
	p, err := d.path(sha256)
	if err != nil {
		return blob.Info{}, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return blob.Info{}, notFound(err)
	}
	if !fi.Mode().IsRegular() {
		return blob.Info{}, errors.New("not a regular file")
	}
	return blob.Info{Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// Delete removes a blob; a missing one gives blob.ErrNotFound. Empty fan-out directories
// stay: removing them would race with a concurrent commit into them.
func (d *Driver) Delete(ctx context.Context, sha256 string) error {
	p, err := d.path(sha256)
	if err != nil {
		return err
	}
	return notFound(os.Remove(p))
}

// Walk visits committed blobs in digest order; files that do not fit the layout are skipped.
func (d *Driver) Walk(ctx context.Context, fn func(sha256 string, info blob.Info) error) error {
	base := filepath.Join(d.root, artifactDir)
	dirs, err := os.ReadDir(base)
	if err != nil {
		return err
	}
	for _, dir := range dirs {
		if !dir.IsDir() || len(dir.Name()) != 2 {
			continue
		}
		files, err := os.ReadDir(filepath.Join(base, dir.Name()))
		if err != nil {
			if errors.Is(err, iofs.ErrNotExist) {
				continue
			}
			return err
		}
		for _, f := range files {
			if err := ctx.Err(); err != nil {
				return err
			}
			sha := dir.Name() + f.Name()
			if !f.Type().IsRegular() || !blob.ValidDigest(sha) {
				continue
			}
			fi, err := f.Info()
			if err != nil {
				continue // deleted since the directory was read
			}
			if err := fn(sha, blob.Info{Size: fi.Size(), ModTime: fi.ModTime()}); err != nil {
				return err
			}
		}
	}
	return nil
}

// SweepTemp removes the temporaries (of blobs in root/tmp, of parts beside them) whose
// writer is gone: a live writer, in this process or another, holds a lock on its file,
// and the kernel drops it when the writer dies (package tempfile).
func (d *Driver) SweepTemp(ctx context.Context) (int, error) {
	n, err := tempfile.Sweep(filepath.Join(d.root, tmpDir), tmpPrefix)
	errs := []error{err}
	ups, err := os.ReadDir(filepath.Join(d.root, partsDir))
	if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		errs = append(errs, err)
	}
	for _, u := range ups {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if u.IsDir() {
			k, err := tempfile.Sweep(filepath.Join(d.root, partsDir, u.Name()), partTmpPrefix)
			n += k
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}

// Usage reports the filesystem's total, used and free bytes (for status).
func (d *Driver) Usage() (total, used, free int64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(d.root, &st); err != nil {
		return 0, 0, 0, fmt.Errorf("blob fs: usage of %s: %w", d.root, err)
	}
	bs := int64(st.Bsize)
	total = int64(st.Blocks) * bs
	free = int64(st.Bavail) * bs
	return total, total - int64(st.Bfree)*bs, free, nil
}

func notFound(err error) error {
	if errors.Is(err, iofs.ErrNotExist) {
		return blob.ErrNotFound
	}
	return err
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
