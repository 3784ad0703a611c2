package repodata

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinels: every error this package returns wraps one of them (or a read error of the
// underlying stream), so callers can tell a broken mirror from a bug.
var (
	// ErrSyntax: the XML is not well-formed (truncated, mismatched tags, bad entity...).
	ErrSyntax = errors.New("malformed XML")
	// ErrInvalid: well-formed XML that breaks the metadata's rules (missing pkgid, bad number...).
	ErrInvalid = errors.New("invalid metadata")
	// ErrMismatch: primary, filelists and other do not describe the same packages.
	ErrMismatch = errors.New("metadata files disagree")
	// ErrTooLarge: a text node, tag or package is beyond the sizes this package accepts.
	ErrTooLarge = errors.New("too large")
	// ErrZchunk: the file is zchunk-compressed, which is not supported; use the
	// non-zchunk variant the repository also lists.
	ErrZchunk = errors.New("zchunk is not supported")
)

// Error is a problem in one metadata file: which file (as the caller named it), where,
// which package, and what.
type Error struct {
	File    string // the name the caller gave, e.g. "primary.xml.gz"
	Line    int    // 1-based line in the decompressed text; 0 when unknown
	Offset  int64  // byte offset in the decompressed text; -1 when unknown
	Package string // name (or pkgid) of the package concerned, if any
	Err     error  // the problem; wraps a sentinel of this package or a read error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(": line ")
		b.WriteString(strconv.Itoa(e.Line))
	}
	if e.Package != "" {
		b.WriteString(": package ")
		b.WriteString(strconv.Quote(e.Package))
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// problem is an error whose message is msg and which matches kind with errors.Is, so
// messages stay short ("missing <arch>") yet classifiable.
type problem struct {
	kind error
	msg  string
}

func (p *problem) Error() string { return p.msg }
func (p *problem) Unwrap() error { return p.kind }

func syntaxErr(msg string) error  { return &problem{ErrSyntax, msg} }
func invalidErr(msg string) error { return &problem{ErrInvalid, msg} }
