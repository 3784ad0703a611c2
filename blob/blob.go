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
	"time"
)

// ErrNotFound means no blob has the digest.
var ErrNotFound = errors.New("blob not found")

// Digests are a blob's size and checksums; digests outside the allowed set are empty.
type Digests struct {
	Size   int64  `json:"size"`
	MD5    string `json:"md5,omitempty"`
	SHA1   string `json:"sha1,omitempty"`
	SHA224 string `json:"sha224,omitempty"`
	SHA256 string `json:"sha256"`
	SHA384 string `json:"sha384,omitempty"`
	SHA512 string `json:"sha512,omitempty"`
}

// Expect is what a caller knows about a blob before writing it. Size -1 means unknown;
// empty digests are not checked.
type Expect struct {
	Size    int64
	SHA256  string
	Digests map[string]string // other digests by name ("md5", "sha512", ...)
}

// MismatchError says that written data differs from what was expected.
type MismatchError struct {
	What, Want, Got string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s mismatch: expected %s, got %s", e.What, e.Want, e.Got)
}

// DriverError names the driver and operation that failed.
type DriverError struct {
	Driver, Op, Digest string
	Err                error
}

func (e *DriverError) Error() string {
	return fmt.Sprintf("blob %s: %s %s: %v", e.Driver, e.Op, e.Digest, e.Err)
}

func (e *DriverError) Unwrap() error { return e.Err }

// Info describes a stored blob.
type Info struct {
	Size    int64
	ModTime time.Time
}

// Reader reads a blob; the filesystem driver returns *os.File, so net/http can send it
// with sendfile.
type Reader interface{ io.ReadSeekCloser }

// Temp is a driver's temporary object: written, then committed under a digest or
// cancelled.
type Temp interface {
	io.Writer
	Commit(ctx context.Context, sha256 string) error
	Cancel(ctx context.Context) error
}

// Driver is a storage backend.
type Driver interface {
	Name() string
	Create(ctx context.Context) (Temp, error)
	Open(ctx context.Context, sha256 string) (Reader, error)
	Stat(ctx context.Context, sha256 string) (Info, error)
	Delete(ctx context.Context, sha256 string) error
	Walk(ctx context.Context, fn func(sha256 string, info Info) error) error
}

// URLOptions shape a presigned URL's response.
type URLOptions struct {
	ContentType, ContentDisposition string
	Expires                         time.Duration
}

// Redirector is implemented by drivers that can hand out URLs for direct download.
type Redirector interface {
	URL(ctx context.Context, sha256 string, opt URLOptions) (string, error)
}

// Pather is implemented by drivers that keep blobs as local files.
type Pather interface {
	Path(sha256 string) (string, bool)
}

var hashers = map[string]func() hash.Hash{
	"md5": md5.New, "sha1": sha1.New, "sha224": sha256.New224, "sha256": sha256.New, "sha384": sha512.New384, "sha512": sha512.New,
}

// Store is a blob store over a driver.
type Store struct {
	driver  Driver
	allowed []string
}

// New returns a store; allowed names the digests to record (default: Pulp's sha224,
// sha256, sha384, sha512). sha256 is always recorded.
func New(d Driver, allowed []string) (*Store, error) {
	if len(allowed) == 0 {
		allowed = []string{"sha224", "sha256", "sha384", "sha512"}
	}
	set := map[string]bool{"sha256": true}
	for _, a := range allowed {
		if _, ok := hashers[a]; !ok {
			return nil, fmt.Errorf("unknown checksum %q (known: md5, sha1, sha224, sha256, sha384, sha512)", a)
		}
		set[a] = true
	}
	s := &Store{driver: d}
	for _, n := range []string{"md5", "sha1", "sha224", "sha256", "sha384", "sha512"} {
		if set[n] {
			s.allowed = append(s.allowed, n)
		}
	}
	return s, nil
}

// Driver returns the store's driver.
func (s *Store) Driver() Driver { return s.driver }

// ValidDigest reports whether d is a lower-case hex sha256.
func ValidDigest(d string) bool {
	if len(d) != 64 {
		return false
	}
	for _, c := range d {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func checkDigest(d string) error {
	if !ValidDigest(d) {
		return fmt.Errorf("invalid blob digest %q: want 64 lower-case hex digits", d)
	}
	return nil
}

// Writer streams a new blob.
type Writer struct {
	s      *Store
	temp   Temp
	hashes map[string]hash.Hash
	n      int64
	done   bool
}

// NewWriter starts a new blob.
func (s *Store) NewWriter(ctx context.Context) (*Writer, error) {
	t, err := s.driver.Create(ctx)
	if err != nil {
		return nil, &DriverError{Driver: s.driver.Name(), Op: "create", Err: err}
	}
	w := &Writer{s: s, temp: t, hashes: map[string]hash.Hash{}}
	for _, n := range s.allowed {
		w.hashes[n] = hashers[n]()
	}
	return w, nil
}

// Write writes to the blob and its hashers.
func (w *Writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, errors.New("blob writer: write after commit or cancel")
	}
	n, err := w.temp.Write(p)
	for _, h := range w.hashes {
		h.Write(p[:n])
	}
	w.n += int64(n)
	return n, err
}

// Written is the number of bytes written so far.
func (w *Writer) Written() int64 { return w.n }

// Commit verifies the blob against want and stores it under its sha256. On a mismatch
// nothing is stored and the error is a *MismatchError.
func (w *Writer) Commit(ctx context.Context, want Expect) (Digests, error) {
	if w.done {
		return Digests{}, errors.New("blob writer: already committed or cancelled")
	}
	d := Digests{Size: w.n}
	sum := func(n string) string {
		if h, ok := w.hashes[n]; ok {
			return hex.EncodeToString(h.Sum(nil))
		}
		return ""
	}
	d.MD5, d.SHA1, d.SHA224, d.SHA256, d.SHA384, d.SHA512 = sum("md5"), sum("sha1"), sum("sha224"), sum("sha256"), sum("sha384"), sum("sha512")
	var mismatch error
	switch {
	case want.Size >= 0 && want.Size != w.n:
		mismatch = &MismatchError{What: "size", Want: fmt.Sprint(want.Size), Got: fmt.Sprint(w.n)}
	case want.SHA256 != "" && want.SHA256 != d.SHA256:
		mismatch = &MismatchError{What: "sha256", Want: want.SHA256, Got: d.SHA256}
	}
	for name, v := range want.Digests {
		if mismatch != nil {
			break
		}
		h, ok := hashers[name]
		if !ok {
			mismatch = fmt.Errorf("unknown checksum %q", name)
			break
		}
		got := sum(name)
		if got == "" {
			_ = h
			continue // not recorded here: cannot be checked
		}
		if got != v {
			mismatch = &MismatchError{What: name, Want: v, Got: got}
		}
	}
	if mismatch != nil {
		w.Cancel(ctx)
		return Digests{}, mismatch
	}
	w.done = true
	if err := w.temp.Commit(ctx, d.SHA256); err != nil {
		return Digests{}, &DriverError{Driver: w.s.driver.Name(), Op: "commit", Digest: d.SHA256, Err: err}
	}
	return d, nil
}

// Cancel discards the blob; after Commit it does nothing, so it can be deferred.
func (w *Writer) Cancel(ctx context.Context) error {
	if w == nil || w.done {
		return nil
	}
	w.done = true
	return w.temp.Cancel(ctx)
}

// Put stores everything r yields, verified against want.
func (s *Store) Put(ctx context.Context, r io.Reader, want Expect) (Digests, error) {
	w, err := s.NewWriter(ctx)
	if err != nil {
		return Digests{}, err
	}
	defer w.Cancel(ctx)
	if _, err := io.Copy(w, r); err != nil {
		return Digests{}, err
	}
	return w.Commit(ctx, want)
}

// Open opens a blob for reading.
func (s *Store) Open(ctx context.Context, sha256 string) (Reader, error) {
	if err := checkDigest(sha256); err != nil {
		return nil, err
	}
	r, err := s.driver.Open(ctx, sha256)
	if err != nil {
		return nil, &DriverError{Driver: s.driver.Name(), Op: "open", Digest: sha256, Err: err}
	}
	return r, nil
}

// Stat describes a blob.
func (s *Store) Stat(ctx context.Context, sha256 string) (Info, error) {
	if err := checkDigest(sha256); err != nil {
		return Info{}, err
	}
	i, err := s.driver.Stat(ctx, sha256)
	if err != nil {
		return Info{}, &DriverError{Driver: s.driver.Name(), Op: "stat", Digest: sha256, Err: err}
	}
	return i, nil
}

// Delete removes a blob.
func (s *Store) Delete(ctx context.Context, sha256 string) error {
	if err := checkDigest(sha256); err != nil {
		return err
	}
	if err := s.driver.Delete(ctx, sha256); err != nil {
		return &DriverError{Driver: s.driver.Name(), Op: "delete", Digest: sha256, Err: err}
	}
	return nil
}

// Walk visits every committed blob.
func (s *Store) Walk(ctx context.Context, fn func(sha256 string, info Info) error) error {
	return s.driver.Walk(ctx, fn)
}
