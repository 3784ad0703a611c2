package repodata

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// XML namespaces of yum metadata.
const (
	nsCommon    = "http://linux.duke.edu/metadata/common"
	nsFilelists = "http://linux.duke.edu/metadata/filelists"
	nsOther     = "http://linux.duke.edu/metadata/other"
	nsRepo      = "http://linux.duke.edu/metadata/repo"
	nsRPM       = "http://linux.duke.edu/metadata/rpm"
)

// maxEntries bounds the dependencies, files and changelogs of one package.
const maxEntries = 10_000_000

// Kind is one of the three per-package metadata files.
type Kind uint8

// The metadata files, by their repomd type.
const (
	Primary Kind = iota + 1
	Filelists
	Other
)

func (k Kind) String() string {
	switch k {
	case Primary:
		return "primary"
	case Filelists:
		return "filelists"
	case Other:
		return "other"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

func (k Kind) root() string {
	switch k {
	case Primary:
		return "metadata"
	case Filelists:
		return "filelists"
	}
	return "otherdata"
}

// Reader reads one metadata file (primary, filelists or other) a package at a time, in
// constant memory. A primary package carries the files primary lists (a subset); a
// filelists package carries pkgid, name, arch, version and all files; an other package
// carries pkgid, name, arch, version and changelogs.
type Reader struct {
	kind       Kind
	t          *scanner
	rootNS     string
	declared   int
	count      int
	skipped    bool // an unknown element was skipped at the top level
	state      uint8
	line       int // line of the current package's start tag
	offset     int64
	entries    int
	maxEntries int
	err        error

	// Lists of the current package are gathered here and copied out at its end, one
	// allocation of the right size each instead of a growing slice.
	deps       []Dep
	files      []File
	changelogs []Changelog
}

const (
	stateProlog = iota
	stateBody
	stateDone
)

// NewReader returns a Reader of the decompressed metadata r; name (e.g.
// "primary.xml.gz") is used in errors only.
func NewReader(r io.Reader, name string, kind Kind) *Reader {
	return &Reader{kind: kind, t: newScanner(r, name), declared: -1, maxEntries: maxEntries}
}

// Declared returns the root element's packages="N" count, or -1 when it is absent or
// the root has not been read yet.
func (r *Reader) Declared() int { return r.declared }

// Next returns the next package, or io.EOF after the last one. Every package is newly
// allocated; the caller may keep it. At the end it checks the declared count.
func (r *Reader) Next() (*Package, error) {
	if r.err != nil {
		return nil, r.err
	}
	p, err := r.next()
	if err != nil {
		r.err = err
	}
	return p, err
}

func (r *Reader) next() (*Package, error) {
	t := r.t
	if r.kind < Primary || r.kind > Other {
		return nil, &Error{File: t.file, Offset: -1, Err: fmt.Errorf("invalid Kind %d", r.kind)}
	}
	if r.state == stateProlog {
		if err := r.readRoot(); err != nil {
			return nil, err
		}
	}
	for r.state == stateBody {
		k, err := t.next()
		if err != nil {
			return nil, err
		}
		switch k {
		case tokStart:
			if uri, local := t.resolve(t.name); uri == r.rootNS && string(local) == "package" {
				r.count++
				return r.readPackage()
			}
			// Skipped whole, <package> elements inside included, as createrepo_c and
			// libsolv do.
			r.skipped = true
			if err := t.skip(); err != nil {
				return nil, err
			}
		case tokEnd:
			r.state = stateDone
		}
	}
	if _, err := t.next(); err != nil { // only EOF may follow the root element
		return nil, err
	}
	// A skipped element may have held <package> elements the count includes.
	if r.declared >= 0 && r.declared != r.count && !r.skipped {
		return nil, t.errAt(t.end, invalidErr(fmt.Sprintf("<%s packages=\"%d\"> but %d packages found", r.kind.root(), r.declared, r.count)))
	}
	return nil, io.EOF
}

func (r *Reader) readRoot() error {
	t := r.t
	for {
		k, err := t.next()
		if err != nil {
			return err
		}
		if k == tokStart {
			break
		}
	}
	uri, local := t.resolve(t.name)
	if string(local) != r.kind.root() {
		return t.errAt(t.tokPos, invalidErr(fmt.Sprintf("root element is <%s>, expected <%s> of %s.xml", t.name, r.kind.root(), r.kind)))
	}
	r.rootNS = uri
	if v, ok := t.attr("packages"); ok {
		n, ok := parseNum(v)
		if !ok || n > maxEntries*100 {
			return t.errAt(t.tokPos, invalidErr(fmt.Sprintf("<%s packages=%q>: not a count", t.name, v)))
		}
		r.declared = int(n)
	}
	r.state = stateBody
	if t.empty {
		r.state = stateDone
	}
	return nil
}

func (r *Reader) readPackage() (*Package, error) {
	t := r.t
	r.line, r.offset = t.line(), t.discarded+int64(t.tokPos)
	r.entries = 0
	r.files, r.changelogs = r.files[:0], r.changelogs[:0]
	p := &Package{}
	var err error
	if r.kind == Primary {
		err = r.readPrimary(p)
	} else {
		err = r.readSecondary(p)
	}
	if err != nil {
		if e, ok := err.(*Error); ok && e.Package == "" {
			e.Package = label(p)
		}
		return nil, err
	}
	if len(r.files) > 0 {
		p.Files = slices.Clone(r.files)
	}
	if len(r.changelogs) > 0 {
		p.Changelogs = slices.Clone(r.changelogs)
	}
	return p, nil
}

// label names a package in errors.
func label(p *Package) string {
	if p.Name != "" {
		return p.Name
	}
	return p.PkgID
}

// pkgErr is an error about the current package as a whole, placed at its start tag.
func (r *Reader) pkgErr(p *Package, err error) *Error {
	return &Error{File: r.t.file, Line: r.line, Offset: r.offset, Package: label(p), Err: err}
}

// tagErr is an error about the current start tag.
func (r *Reader) tagErr(msg string) *Error {
	return r.t.errAt(r.t.tokPos, invalidErr(msg))
}

func (r *Reader) count1() error {
	if r.entries++; r.entries > r.maxEntries {
		return r.t.errAt(r.t.tokPos, &problem{ErrTooLarge, fmt.Sprintf("more than %d entries in one package", r.maxEntries)})
	}
	return nil
}

func (r *Reader) text() (string, error) {
	b, err := r.t.textContent()
	return string(b), err
}

// numAttr parses a non-negative integer attribute of the current tag; absent is 0.
func (r *Reader) numAttr(name string) (int64, error) {
	v, ok := r.t.attr(name)
	if !ok {
		return 0, nil
	}
	n, ok := parseNum(v)
	if !ok {
		return 0, r.tagErr(fmt.Sprintf("<%s %s=%q>: not a number", r.t.name, name, v))
	}
	return n, nil
}

// parseNum parses a non-negative decimal int64, surrounding spaces allowed.
func parseNum(b []byte) (int64, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
		if n < 0 {
			return 0, false
		}
	}
	return n, true
}

// pkgID checks a pkgid (hex, at most 128 digits) and returns it in lower case.
func (r *Reader) pkgID(b []byte) (string, error) {
	b = bytes.TrimSpace(b)
	upper := false
	ok := len(b) > 0 && len(b) <= 128
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9' || c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			upper = true
		default:
			ok = false
		}
	}
	if !ok {
		return "", r.tagErr(fmt.Sprintf("pkgid %q is not a hex checksum", b))
	}
	if upper {
		return strings.ToLower(string(b)), nil
	}
	return string(b), nil
}

// checksumType normalizes a checksum type name: lower case, yum's old "sha" is sha1.
func checksumType(b []byte) string {
	s := intern(b)
	if s == "sha" {
		return "sha1"
	}
	for _, c := range b {
		if c >= 'A' && c <= 'Z' {
			return checksumType([]byte(strings.ToLower(s)))
		}
	}
	return s
}

// interned holds strings that recur in every package, to save an allocation each.
var interned = map[string]string{}

func init() {
	for _, s := range []string{"", "0", "1", "EQ", "LT", "LE", "GT", "GE",
		"noarch", "x86_64", "i686", "i586", "i386", "aarch64", "armv7hl", "ppc64le", "ppc64", "s390x", "src", "nosrc",
		"sha256", "sha1", "sha", "sha512", "sha384", "sha224", "md5", "dir", "ghost"} {
		interned[s] = s
	}
}

func intern(b []byte) string {
	if s, ok := interned[string(b)]; ok {
		return s
	}
	return string(b)
}
