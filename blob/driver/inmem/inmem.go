package inmem

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"pith/blob"
)

// Driver keeps blobs in a map. It is safe for concurrent use.
type Driver struct {
	mu    sync.Mutex
	blobs map[string]object
	parts map[string]map[int64][]byte // upload → offset → bytes
}

type object struct {
	data    []byte
	modTime time.Time
}

var (
	_ blob.Driver = (*Driver)(nil)
	_ blob.Stager = (*Driver)(nil)
)

// New returns an empty driver.
func New() *Driver { return &Driver{blobs: map[string]object{}, parts: map[string]map[int64][]byte{}} }

// Name is "inmem".
func (d *Driver) Name() string { return "inmem" }

// Create starts a temporary buffer.
func (d *Driver) Create(ctx context.Context) (blob.Temp, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &temp{d: d}, nil
}

type temp struct {
	d    *Driver
	buf  bytes.Buffer
	done bool
}

var errFinished = errors.New("temporary already committed or cancelled")

func (t *temp) Write(p []byte) (int, error) {
	if t.done {
		return 0, errFinished
	}
	return t.buf.Write(p)
}

func (t *temp) Commit(ctx context.Context, sha256 string) error {
	if t.done {
		return errFinished
	}
	t.done = true
	if err := blob.CheckDigest(sha256); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	data := t.buf.Bytes() // the temporary is finished, so the buffer can be handed over
	t.buf = bytes.Buffer{}
	t.d.mu.Lock()
	defer t.d.mu.Unlock()
	if _, ok := t.d.blobs[sha256]; !ok {
		t.d.blobs[sha256] = object{data: data, modTime: time.Now()}
	}
	return nil
}

func (t *temp) Cancel(ctx context.Context) error {
	if !t.done {
		t.done = true
		t.buf = bytes.Buffer{}
	}
	return nil
}

func (d *Driver) get(sha256 string) (object, error) {
	if err := blob.CheckDigest(sha256); err != nil {
		return object{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	o, ok := d.blobs[sha256]
	if !ok {
		return object{}, blob.ErrNotFound
	}
	return o, nil
}

type reader struct{ *bytes.Reader }

func (reader) Close() error { return nil }

// Open reads a blob.
func (d *Driver) Open(ctx context.Context, sha256 string) (blob.Reader, error) {
	o, err := d.get(sha256)
	if err != nil {
		return nil, err
	}
	return reader{bytes.NewReader(o.data)}, nil
}

// Stat describes a blob.
func (d *Driver) Stat(ctx context.Context, sha256 string) (blob.Info, error) {
	o, err := d.get(sha256)
	if err != nil {
		return blob.Info{}, err
	}
	return blob.Info{Size: int64(len(o.data)), ModTime: o.modTime}, nil
}

// Delete removes a blob; a missing one gives blob.ErrNotFound.
func (d *Driver) Delete(ctx context.Context, sha256 string) error {
	if err := blob.CheckDigest(sha256); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.blobs[sha256]; !ok {
		return blob.ErrNotFound
	}
	delete(d.blobs, sha256)
	return nil
}

// Walk visits blobs in digest order, without holding the lock while fn runs, so fn may
// call the driver (to delete, say).
func (d *Driver) Walk(ctx context.Context, fn func(sha256 string, info blob.Info) error) error {
	d.mu.Lock()
	keys := make([]string, 0, len(d.blobs))
	for k := range d.blobs {
		keys = append(keys, k)
	}
	d.mu.Unlock()
	sort.Strings(keys)
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		i, err := d.Stat(ctx, k)
		if err != nil {
			continue // deleted since the snapshot
		}
		if err := fn(k, i); err != nil {
			return err
		}
	}
	return nil
}
