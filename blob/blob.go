package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrNotFound means no blob has the digest.
var ErrNotFound = errors.New("blob not found")

// ErrInvalidDigest means a string is not a lower-case hex sha256.
var ErrInvalidDigest = errors.New("invalid blob digest")

// ErrFull means the storage has no room for a write. A driver wraps it around its own
// error when its storage says so; a full disk (ENOSPC) or quota (EDQUOT) is found
// without. A *DriverError of a full storage matches it with errors.Is.
var ErrFull = errors.New("no space left")

// Digests are a blob's size and checksums; digests outside the store's allowed set are empty.
type Digests struct {
	Size   int64  `json:"size"`
	MD5    string `json:"md5,omitempty"`
	SHA1   string `json:"sha1,omitempty"`
	SHA224 string `json:"sha224,omitempty"`
	SHA256 string `json:"sha256"`
	SHA384 string `json:"sha384,omitempty"`
	SHA512 string `json:"sha512,omitempty"`
}

// Get returns the digest with the given name ("md5" … "sha512"), or "" if none.
func (d Digests) Get(name string) string {
	switch name {
	case "md5":
		return d.MD5
	case "sha1":
		return d.SHA1
	case "sha224":
		return d.SHA224
	case "sha256":
		return d.SHA256
	case "sha384":
		return d.SHA384
	case "sha512":
		return d.SHA512
	}
	return ""
}

// Expect is what a caller knows about a blob before writing it. Size -1 means unknown
// (0 means empty); empty digests are not checked. Digests names other checksums
// ("md5", "sha512", ...); those outside the store's allowed set are not computed and so
// are not checked.
type Expect struct {
	Size    int64
	SHA256  string
	Digests map[string]string
}

// MismatchError says that written data differs from what was expected.
type MismatchError struct {
	What string // "size" or a checksum name
	Want string
	Got  string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s mismatch: expected %s, got %s", e.What, e.Want, e.Got)
}

// DriverError names the driver, operation and digest of a failure. Its message names
// files by their base name only: where a storage keeps its files on the server is no
// business of the clients and task errors that show it.
type DriverError struct {
	Driver string
	Op     string
	Digest string // empty when the operation has none (create, walk)
	Err    error
}

func (e *DriverError) Error() string {
	msg := pathless(e.Err)
	if e.Full() {
		return fmt.Sprintf("the %s blob storage is full: %s: %s", Storage(e.Driver), e.Op, msg)
	}
	if e.Digest == "" {
		return fmt.Sprintf("blob driver %s: %s: %s", e.Driver, e.Op, msg)
	}
	return fmt.Sprintf("blob driver %s: %s %s: %s", e.Driver, e.Op, e.Digest, msg)
}

func (e *DriverError) Unwrap() error { return e.Err }

// Full reports whether the storage had no room for the operation.
func (e *DriverError) Full() bool {
	return errors.Is(e.Err, ErrFull) || errors.Is(e.Err, syscall.ENOSPC) || errors.Is(e.Err, syscall.EDQUOT)
}

// Is makes a full storage's error match ErrFull.
func (e *DriverError) Is(target error) bool { return target == ErrFull && e.Full() }

// Storage names a driver's storage for people: "filesystem" for fs.
func Storage(driver string) string {
	switch driver {
	case "fs":
		return "filesystem"
	case "inmem":
		return "in-memory"
	}
	return driver
}

// pathless is err's message with the paths of the files it names cut to their base name.
func pathless(err error) string {
	msg := err.Error()
	var pe *os.PathError
	if errors.As(err, &pe) && filepath.IsAbs(pe.Path) {
		msg = strings.ReplaceAll(msg, pe.Path, filepath.Base(pe.Path))
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		for _, p := range []string{le.Old, le.New} {
			if filepath.IsAbs(p) {
				msg = strings.ReplaceAll(msg, p, filepath.Base(p))
			}
		}
	}
	return msg
}

// Info describes a stored blob.
type Info struct {
	Size    int64
	ModTime time.Time
}

// Reader reads a blob. The filesystem driver's concrete value is *os.File, so net/http
// can send it with sendfile.
type Reader interface{ io.ReadSeekCloser }

// Temp is a driver's temporary object: written, then committed under a digest or
// cancelled. Cancel after Commit does nothing.
type Temp interface {
	io.Writer
	// Commit makes the object durable and visible under sha256; if an object with that
	// digest exists already the temporary is discarded. On error the temporary is gone and
	// the caller must not record the blob (at worst an unrecorded orphan remains, for the
	// garbage collector).
	Commit(ctx context.Context, sha256 string) error
	Cancel(ctx context.Context) error
}

// Driver is a storage backend. Missing blobs give errors matching ErrNotFound; bad digests
// give errors matching ErrInvalidDigest.
type Driver interface {
	Name() string
	Create(ctx context.Context) (Temp, error)
	Open(ctx context.Context, sha256 string) (Reader, error)
	Stat(ctx context.Context, sha256 string) (Info, error)
	Delete(ctx context.Context, sha256 string) error
	// Walk visits committed blobs only; an error from fn stops the walk and is returned.
	Walk(ctx context.Context, fn func(sha256 string, info Info) error) error
}

// Stager is a Driver that also holds the chunks of uploads in progress (parts) beside
// the blobs, so that every process sharing the storage can take a chunk of an upload
// and commit it. A part is named by its upload and a key the caller chooses (pith
// chooses a new random key for each chunk it receives, so a chunk refused after its
// bytes were stored never replaces the part of one that was recorded). A store whose
// driver is no Stager refuses chunked uploads (ErrNoStaging).
type Stager interface {
	// PutPart stores exactly size bytes of r as the upload's part under key, replacing
	// one stored there; r yields exactly size bytes (the Store checks). A part is visible
	// only once PutPart returned nil.
	PutPart(ctx context.Context, upload string, key int64, r io.Reader, size int64) error
	// OpenPart reads a part; a missing one gives an error matching ErrNotFound.
	OpenPart(ctx context.Context, upload string, key int64) (io.ReadCloser, error)
	// DeleteParts removes every part of an upload; an upload without parts is fine.
	DeleteParts(ctx context.Context, upload string) error
}

// Sweeper is a Driver whose writes leave temporaries behind when their process dies (a
// crash, a kill, a power cut): SweepTemp removes those. Pith sweeps when a process
// starts and on the maintenance schedule; drivers whose temporaries die with their
// process (inmem) are no Sweepers.
type Sweeper interface {
	// SweepTemp removes the temporaries whose writer is gone and returns how many it
	// removed. It never removes one that a live writer, in this process or another, still
	// writes; how it tells is the driver's own (a lock the writer holds, or an age no
	// write lasts).
	SweepTemp(ctx context.Context) (int, error)
}

// URLOptions shape the response to a presigned URL.
type URLOptions struct {
	// Method is the HTTP method the URL is for: GET (the default) or HEAD. A URL is
	// signed for one method; S3 refuses another.
	Method             string
	ContentType        string
	ContentDisposition string
	Expires            time.Duration
}

// Redirector is implemented by drivers that can hand out URLs for direct download.
type Redirector interface {
	URL(ctx context.Context, sha256 string, opt URLOptions) (string, error)
}

// Pather is implemented by drivers that keep blobs as local files.
type Pather interface {
	// Path is where the blob with the digest lives (or would live); false for a bad digest.
	Path(sha256 string) (string, bool)
}

// ValidDigest reports whether d is a lower-case hex sha256.
func ValidDigest(d string) bool {
	if len(d) != 64 {
		return false
	}
	for i := 0; i < len(d); i++ {
		if c := d[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// CheckDigest returns an error matching ErrInvalidDigest, naming d, unless d is a valid digest.
func CheckDigest(d string) error {
	if ValidDigest(d) {
		return nil
	}
	const max = 80 // keep hostile input from flooding logs
	shown := d
	if len(shown) > max {
		shown = shown[:max] + "…"
	}
	return fmt.Errorf("%w %q: want 64 lower-case hex digits", ErrInvalidDigest, shown)
}

// checksums are the digest names Pulp knows, in its order.
var checksums = []string{"md5", "sha1", "sha224", "sha256", "sha384", "sha512"}

// defaultChecksums is Pulp's default ALLOWED_CONTENT_CHECKSUMS.
var defaultChecksums = []string{"sha224", "sha256", "sha384", "sha512"}

func knownChecksum(name string) bool {
	for _, c := range checksums {
		if c == name {
			return true
		}
	}
	return false
}

func unknownChecksum(name string) error {
	return fmt.Errorf("unknown checksum %q (known: %s)", name, strings.Join(checksums, ", "))
}
