package fs

import (
	"context"
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"

	"pith/blob/driver/tempfile"
)

// temp is a file in root/tmp, renamed into place on commit. It stays open (and locked)
// until it is renamed or removed, so a sweep never takes it.
type temp struct {
	d    *Driver
	f    *tempfile.File
	done bool
}

var errFinished = errors.New("temporary already committed or cancelled")

func (t *temp) Write(p []byte) (int, error) {
	if t.done {
		return 0, errFinished
	}
	return t.f.Write(p)
}

// Commit syncs the file and renames it into place, then syncs the directory. If the blob
// exists already the temporary is dropped: identical content is stored once.
func (t *temp) Commit(ctx context.Context, sha256 string) error {
	if t.done {
		return errFinished
	}
	dst, err := t.d.path(sha256)
	if err != nil {
		t.Cancel(ctx)
		return err
	}
	if err := ctx.Err(); err != nil {
		t.Cancel(ctx)
		return err
	}
	if fi, err := os.Stat(dst); err == nil && fi.Mode().IsRegular() {
		return t.Cancel(ctx)
	}
	t.done = true
	name := t.f.Name()
	err = t.f.Chmod(fileMode)
	if err == nil {
		err = t.f.Sync()
	}
	if err == nil {
		err = t.place(name, dst)
	}
	if err != nil {
		os.Remove(name)
	}
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// place renames a synced file to dst and makes the rename durable. A concurrent commit of
// the same digest may rename over it: the content is identical, so either wins.
func (t *temp) place(name, dst string) error {
	dir := filepath.Dir(dst)
	_, err := os.Stat(dir)
	created := errors.Is(err, iofs.ErrNotExist)
	if created {
		if err := os.MkdirAll(dir, dirMode); err != nil {
			return err
		}
	}
	if err := os.Rename(name, dst); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	if created {
		return syncDir(filepath.Dir(dir))
	}
	return nil
}

// Cancel closes and removes the temporary; it does nothing after Commit or Cancel.
func (t *temp) Cancel(ctx context.Context) error {
	if t.done {
		return nil
	}
	t.done = true
	defer t.f.Close()
	if err := os.Remove(t.f.Name()); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return err
	}
	return nil
}
