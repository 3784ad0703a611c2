package inmem

import (
	"bytes"
	"context"
	"io"

	"pith/blob"
)

// PutPart keeps a copy of the part.
func (d *Driver) PutPart(ctx context.Context, upload string, key int64, r io.Reader, size int64) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.parts[upload] == nil {
		d.parts[upload] = map[int64][]byte{}
	}
	d.parts[upload][key] = data
	return nil
}

// OpenPart reads a part.
func (d *Driver) OpenPart(ctx context.Context, upload string, key int64) (io.ReadCloser, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	data, ok := d.parts[upload][key]
	if !ok {
		return nil, blob.ErrNotFound
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

// DeleteParts forgets the upload's parts.
func (d *Driver) DeleteParts(ctx context.Context, upload string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.parts, upload)
	return nil
}
