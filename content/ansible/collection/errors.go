package collection

import (
	"errors"
	"fmt"
)

// Kinds of problem; every *Error unwraps to one of them (test with errors.Is).
var (
	// ErrFormat: the input is not a gzipped tar, or MANIFEST.json, FILES.json or a
	// YAML file the import reads is not well-formed.
	ErrFormat = errors.New("malformed collection artifact")
	// ErrLimit: the tarball exceeds one of the Limits.
	ErrLimit = errors.New("collection artifact too large")
	// ErrUnsafe: an entry's path is absolute or climbs out of the collection, a link
	// points outside it, or the entry is a device, FIFO or other special file.
	ErrUnsafe = errors.New("unsafe collection artifact")
	// ErrMissing: a file the import needs or FILES.json lists is not in the tarball.
	ErrMissing = errors.New("missing file")
	// ErrUnlisted: the tarball holds a file or directory FILES.json does not list.
	ErrUnlisted = errors.New("file not in the file manifest")
	// ErrChecksum: a file's sha256 is not the one FILES.json (or MANIFEST.json, for
	// FILES.json itself) gives.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrInvalid: a metadata value breaks Galaxy's rules (names, versions, tags,
	// licenses, dependencies, requires_ansible, content names).
	ErrInvalid = errors.New("invalid collection metadata")
	// ErrMismatch: the artifact's namespace, name or version is not the expected one.
	ErrMismatch = errors.New("collection does not match its filename")
	// ErrRead: the reader failed; the artifact itself may be fine (not a client error).
	ErrRead = errors.New("reading the collection artifact failed")
)

// Error is a problem with a collection artifact: which collection, which file in it,
// and what is wrong.
type Error struct {
	Collection string // "namespace.name version" once MANIFEST.json was read, else ""
	Path       string // the file in the tarball, "" when the problem is not in one file
	Kind       error  // one of the Err* sentinels
	Msg        string
	Err        error // the underlying error (the reader's, the JSON decoder's), or nil
}

// Error reads "collection foo.bar 1.0.0: plugins/modules/x.py: <problem>".
func (e *Error) Error() string {
	s := ""
	if e.Collection != "" {
		s = "collection " + e.Collection + ": "
	}
	if e.Path != "" {
		s += e.Path + ": "
	}
	return s + e.Msg
}

// Unwrap returns the kind and the underlying error.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

func errorf(kind error, path, format string, args ...any) *Error {
	return &Error{Kind: kind, Path: path, Msg: fmt.Sprintf(format, args...)}
}
