// Package inmem is an in-memory blob driver for unit tests.
package inmem

import (
	"bytes"
	"context"
	"sort"
	"sync"
	"time"

	"pith/blob"
)

// Driver keeps blobs in a map.
type Driver struct {
	mu    sync.Mutex
	blobs map[string][]byte
	times map[string]time.Time
}

// New returns an empty driver.
func New() *Driver { return &Driver{blobs: map[string][]byte{}, times: map[string]time.Time{}} }

// Name is "inmem".
func (d *Driver) Name() string { return "inmem" }

type temp struct {
	d   *Driver
	buf bytes.Buffer
}

// Create starts a temporary buffer.
func (d *Driver) Create(ctx context.Context) (blob.Temp, error) { return &temp{d: d}, nil }

func (t *temp) Write(p []byte) (int, error) { return t.buf.Write(p) }

func (t *temp) Commit(ctx context.Context, sha string) error {
	t.d.mu.Lock()
	defer t.d.mu.Unlock()
	if _, ok := t.d.blobs[sha]; !ok {
		t.d.blobs[sha] = bytes.Clone(t.buf.Bytes())
		t.d.times[sha] = time.Now()
	}
	return nil
}

func (t *temp) Cancel(ctx context.Context) error { t.buf.Reset(); return nil }

type reader struct{ *bytes.Reader }

func (reader) Close() error { return nil }

// Open reads a blob.
func (d *Driver) Open(ctx context.Context, sha string) (blob.Reader, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, ok := d.blobs[sha]
	if !ok {
		return nil, blob.ErrNotFound
	}
	return reader{bytes.NewReader(b)}, nil
}

// Stat describes a blob.
func (d *Driver) Stat(ctx context.Context, sha string) (blob.Info, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, ok := d.blobs[sha]
	if !ok {
		return blob.Info{}, blob.ErrNotFound
	}
	return blob.Info{Size: int64(len(b)), ModTime: d.times[sha]}, nil
}

// Delete removes a blob.
func (d *Driver) Delete(ctx context.Context, sha string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.blobs[sha]; !ok {
		return blob.ErrNotFound
	}
	delete(d.blobs, sha)
	delete(d.times, sha)
	return nil
}

// Walk visits blobs in digest order.
func (d *Driver) Walk(ctx context.Context, fn func(string, blob.Info) error) error {
	d.mu.Lock()
	keys := make([]string, 0, len(d.blobs))
	for k := range d.blobs {
		keys = append(keys, k)
	}
	d.mu.Unlock()
	sort.Strings(keys)
	for _, k := range keys {
		i, err := d.Stat(ctx, k)
		if err != nil {
			continue
		}
		if err := fn(k, i); err != nil {
			return err
		}
	}
	return nil
}
