package fs

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"pith/blob/driver/tempfile"
)

const (
	partsDir      = "parts"
	partTmpPrefix = ".tmp-"
)

func (d *Driver) partPath(upload string, key int64) string {
	return filepath.Join(d.root, partsDir, upload, strconv.FormatInt(key, 10))
}

// PutPart writes the part to a temporary file beside it, syncs it and renames it into
// place, so a part is whole or absent.
func (d *Driver) PutPart(ctx context.Context, upload string, key int64, r io.Reader, size int64) error {
	dir := filepath.Join(d.root, partsDir, upload)
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return err
	}
	f, err := tempfile.Create(dir, partTmpPrefix)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, r)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(f.Name(), d.partPath(upload, key))
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// OpenPart opens a part's file.
func (d *Driver) OpenPart(ctx context.Context, upload string, key int64) (io.ReadCloser, error) {
	f, err := os.Open(d.partPath(upload, key))
	if err != nil {
		return nil, notFound(err)
	}
	return f, nil
}

// DeleteParts removes the upload's directory of parts.
func (d *Driver) DeleteParts(ctx context.Context, upload string) error {
	err := os.RemoveAll(filepath.Join(d.root, partsDir, upload))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
