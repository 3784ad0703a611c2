package blob

import (
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"sync"
)

// Store is a blob store over a driver: it hashes, verifies and checks digests, and tags
// driver errors. It is safe for concurrent use; a Writer is not.
type Store struct {
	driver  Driver
	allowed []string // in Pulp's order; always holds sha256
}

// New returns a store over d that records the allowed checksums (nil or empty: Pulp's
// default sha224, sha256, sha384, sha512). sha256 is always recorded, as it names blobs.
func New(d Driver, allowed []string) (*Store, error) {
	if d == nil {
		return nil, errors.New("blob store: nil driver")
	}
	if len(allowed) == 0 {
		allowed = defaultChecksums
	}
	set := map[string]bool{"sha256": true}
	for _, a := range allowed {
		a = strings.ToLower(strings.TrimSpace(a))
		if a == "" {
			continue // tolerate "sha256,sha512," from a comma-separated setting
		}
		if !knownChecksum(a) {
			return nil, fmt.Errorf("blob store: allowed checksums: %w", unknownChecksum(a))
		}
		set[a] = true
	}
	s := &Store{driver: d}
	for _, c := range checksums {
		if set[c] {
			s.allowed = append(s.allowed, c)
		}
	}
	return s, nil
}

// Driver returns the store's driver, for capability checks (Redirector, Pather).
func (s *Store) Driver() Driver { return s.driver }

// Allowed returns the names of the checksums the store records.
func (s *Store) Allowed() []string { return append([]string(nil), s.allowed...) }

func (s *Store) fail(op, digest string, err error) error {
	return &DriverError{Driver: s.driver.Name(), Op: op, Digest: digest, Err: err}
}

func newHash(name string) hash.Hash {
	switch name {
	case "md5":
		return md5.New()
	case "sha1":
		return sha1.New()
	case "sha224":
		return sha256.New224()
	case "sha256":
		return sha256.New()
	case "sha384":
		return sha512.New384()
	default:
		return sha512.New()
	}
}

// Writer streams one new blob into the store. It is not safe for concurrent use.
type Writer struct {
	s      *Store
	temp   Temp
	names  []string
	hashes []hash.Hash
	n      int64  // bytes accepted, buffered included
	buf    []byte // small writes gathered up to bufSize, so hashing runs on big blocks
	err    error  // sticky write error: such a blob is never committed
	done   bool
}

// bufSize is the block the writer hands to the driver and the hashers at once: readers
// such as multipart bodies yield 4 KiB at a time, too little to hash in parallel.
const bufSize = 256 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, bufSize); return &b }}

// copyPool holds Put's copy buffers.
var copyPool = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// NewWriter starts a new blob; the caller must Commit or Cancel it.
func (s *Store) NewWriter(ctx context.Context) (*Writer, error) {
	t, err := s.driver.Create(ctx)
	if err != nil {
		return nil, s.fail("create", "", err)
	}
	w := &Writer{s: s, temp: t, names: s.allowed}
	for _, n := range s.allowed {
		w.hashes = append(w.hashes, newHash(n))
	}
	return w, nil
}

var errFinished = errors.New("blob writer: already committed or cancelled")

// parallelHash is the block size from which the digests are computed concurrently, and
// concurrently with the driver's write: four digests one after another cost about 10 ms
// per MiB, the bulk of a large upload.
const parallelHash = 16 << 10

// put hands one block to the driver and the hashers.
func (w *Writer) put(p []byte) error {
	if len(p) < parallelHash || len(w.hashes) < 2 {
		for _, h := range w.hashes {
			h.Write(p)
		}
		_, err := w.temp.Write(p)
		return err
	}
	var wg sync.WaitGroup
	for _, h := range w.hashes {
		wg.Add(1)
		go func() { defer wg.Done(); h.Write(p) }()
	}
	_, err := w.temp.Write(p)
	wg.Wait()
	return err
}

// Write gathers p into blocks for the driver and the hashers.
func (w *Writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, errFinished
	}
	if w.err != nil {
		return 0, w.err
	}
	n := len(p)
	for len(p) > 0 {
		if len(w.buf) == 0 && len(p) >= bufSize { // a whole block: no need to copy it
			if err := w.put(p); err != nil {
				w.err = w.s.fail("write", "", err)
				return 0, w.err
			}
			break
		}
		if w.buf == nil {
			w.buf = (*bufPool.Get().(*[]byte))[:0]
		}
		k := copy(w.buf[len(w.buf):cap(w.buf)], p)
		w.buf, p = w.buf[:len(w.buf)+k], p[k:]
		if len(w.buf) == cap(w.buf) {
			if err := w.flush(); err != nil {
				return 0, err
			}
		}
	}
	w.n += int64(n)
	return n, nil
}

// flush writes out the gathered block.
func (w *Writer) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	err := w.put(w.buf)
	w.buf = w.buf[:0]
	if err != nil {
		w.err = w.s.fail("write", "", err)
	}
	return w.err
}

// release returns the block buffer to the pool.
func (w *Writer) release() {
	if w.buf != nil {
		b := w.buf[:0]
		bufPool.Put(&b)
		w.buf = nil
	}
}

// Written is the number of bytes written so far.
func (w *Writer) Written() int64 { return w.n }

func (w *Writer) digests() Digests { return digestsOf(w.names, w.hashes, w.n) }

// digestsOf renders finished hashes by name.
func digestsOf(names []string, hashes []hash.Hash, n int64) Digests {
	d := Digests{Size: n}
	for i, name := range names {
		v := hex.EncodeToString(hashes[i].Sum(nil))
		switch name {
		case "md5":
			d.MD5 = v
		case "sha1":
			d.SHA1 = v
		case "sha224":
			d.SHA224 = v
		case "sha256":
			d.SHA256 = v
		case "sha384":
			d.SHA384 = v
		case "sha512":
			d.SHA512 = v
		}
	}
	return d
}

// verify returns a *MismatchError, or another error for an unusable expectation.
func verify(d Digests, want Expect) error {
	for name := range want.Digests {
		if !knownChecksum(name) {
			return fmt.Errorf("blob writer: expected digests: %w", unknownChecksum(name))
		}
	}
	if want.Size >= 0 && want.Size != d.Size {
		return &MismatchError{What: "size", Want: fmt.Sprint(want.Size), Got: fmt.Sprint(d.Size)}
	}
	if want.SHA256 != "" && !strings.EqualFold(want.SHA256, d.SHA256) {
		return &MismatchError{What: "sha256", Want: want.SHA256, Got: d.SHA256}
	}
	for _, name := range checksums { // a fixed order, so the error is deterministic
		v, ok := want.Digests[name]
		if !ok || v == "" {
			continue
		}
		got := d.Get(name)
		if got == "" {
			continue // not an allowed checksum here: not computed, cannot be checked
		}
		if !strings.EqualFold(v, got) {
			return &MismatchError{What: name, Want: v, Got: got}
		}
	}
	return nil
}

// Commit verifies the blob against want and stores it under its sha256. On any error
// nothing is stored and the writer is cancelled; a mismatch is a *MismatchError.
func (w *Writer) Commit(ctx context.Context, want Expect) (Digests, error) {
	if w.done {
		return Digests{}, errFinished
	}
	if w.err == nil {
		w.flush()
	}
	w.release()
	if w.err != nil {
		err := w.err
		w.Cancel(ctx)
		return Digests{}, err
	}
	if err := ctx.Err(); err != nil {
		w.Cancel(ctx)
		return Digests{}, fmt.Errorf("blob writer: commit: %w", err)
	}
	d := w.digests()
	if err := verify(d, want); err != nil {
		w.Cancel(ctx)
		return Digests{}, err
	}
	w.done = true // a failed Temp.Commit cleans up after itself
	if err := w.temp.Commit(ctx, d.SHA256); err != nil {
		return Digests{}, w.s.fail("commit", d.SHA256, err)
	}
	return d, nil
}

// Cancel discards the blob. After Commit or Cancel it does nothing, so it can be deferred.
func (w *Writer) Cancel(ctx context.Context) error {
	if w == nil || w.done {
		return nil
	}
	w.done = true
	w.release()
	if err := w.temp.Cancel(ctx); err != nil {
		return w.s.fail("cancel", "", err)
	}
	return nil
}

// Put stores everything r yields, verified against want.
func (s *Store) Put(ctx context.Context, r io.Reader, want Expect) (Digests, error) {
	w, err := s.NewWriter(ctx)
	if err != nil {
		return Digests{}, err
	}
	defer w.Cancel(ctx)
	// A pooled copy buffer: io.Copy would allocate 32 KiB per blob (an import or a sync
	// puts thousands).
	cb := copyPool.Get().(*[]byte)
	defer copyPool.Put(cb)
	if _, err := io.CopyBuffer(w, ctxReader{ctx, r}, *cb); err != nil {
		if w.err != nil {
			return Digests{}, err // already tagged by the driver
		}
		return Digests{}, fmt.Errorf("blob put: read source: %w", err)
	}
	return w.Commit(ctx, want)
}

// ctxReader stops a long copy when the context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Open opens a blob for reading.
func (s *Store) Open(ctx context.Context, sha256 string) (Reader, error) {
	if err := CheckDigest(sha256); err != nil {
		return nil, err
	}
	r, err := s.driver.Open(ctx, sha256)
	if err != nil {
		return nil, s.fail("open", sha256, err)
	}
	return r, nil
}

// Stat describes a blob.
func (s *Store) Stat(ctx context.Context, sha256 string) (Info, error) {
	if err := CheckDigest(sha256); err != nil {
		return Info{}, err
	}
	i, err := s.driver.Stat(ctx, sha256)
	if err != nil {
		return Info{}, s.fail("stat", sha256, err)
	}
	return i, nil
}

// Delete removes a blob; a missing blob gives an error matching ErrNotFound.
func (s *Store) Delete(ctx context.Context, sha256 string) error {
	if err := CheckDigest(sha256); err != nil {
		return err
	}
	if err := s.driver.Delete(ctx, sha256); err != nil {
		return s.fail("delete", sha256, err)
	}
	return nil
}

// SweepTemp removes the temporaries that writers which died left in the storage
// (blob.Sweeper) and returns how many; a driver that leaves none sweeps nothing.
func (s *Store) SweepTemp(ctx context.Context) (int, error) {
	sw, ok := s.driver.(Sweeper)
	if !ok {
		return 0, nil
	}
	n, err := sw.SweepTemp(ctx)
	if err != nil {
		return n, s.fail("sweep temporaries", "", err)
	}
	return n, nil
}

// Walk visits every committed blob. An error from fn stops the walk and is returned as is.
func (s *Store) Walk(ctx context.Context, fn func(sha256 string, info Info) error) error {
	var fnErr error
	err := s.driver.Walk(ctx, func(d string, i Info) error {
		fnErr = fn(d, i)
		return fnErr
	})
	if err != nil && (fnErr == nil || !errors.Is(err, fnErr)) {
		return s.fail("walk", "", err)
	}
	return err
}
