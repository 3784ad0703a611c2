package collection

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
)

type entryKind uint8

const (
	kindFile entryKind = iota
	kindDir
	kindSymlink
)

// entry is what the tarball says about one path. A hard link is stored as the file it
// names (same size and digest): that is what extracting it makes.
type entry struct {
	kind   entryKind
	size   int64
	sum    [sha256.Size]byte
	target string // symlinks: the link text as written
}

// archive is everything kept from one pass over the tarball.
type archive struct {
	lim     Limits
	entries map[string]*entry    // cleaned relative path → entry
	kept    map[string][]byte    // contents of the files the metadata needs
	docs    map[string]*fileDocs // plugin documentation read from sources, by path
	keptLen int64
	label   string // "namespace.name version" as soon as MANIFEST.json was seen
	sha256  string // of the whole .tar.gz
	size    int64
}

// counter counts and hashes the compressed bytes and enforces Compressed.
type counter struct {
	r   io.Reader
	h   hash.Hash
	n   int64
	max int64
	err error // the first limit error, which the readers above may wrap or hide
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.h.Write(p[:n])
	if c.n > c.max {
		c.err = errorf(ErrLimit, "", "the artifact is larger than %d bytes", c.max)
		return n, c.err
	}
	if err != nil && err != io.EOF {
		c.err = &Error{Kind: ErrRead, Msg: "reading the artifact: " + err.Error(), Err: err}
		return n, c.err
	}
	return n, err
}

// inflated counts the decompressed bytes, enforcing Uncompressed and Ratio.
type inflated struct {
	r   io.Reader
	c   *counter
	n   int64
	lim *Limits
	err error
}

func (f *inflated) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	f.n += int64(n)
	switch {
	case f.n > f.lim.Uncompressed:
		f.err = errorf(ErrLimit, "", "the artifact unpacks to more than %d bytes", f.lim.Uncompressed)
	case f.n > f.lim.RatioFloor && f.n > f.lim.Ratio*f.c.n:
		f.err = errorf(ErrLimit, "", "the artifact unpacks to more than %d times its size (a decompression bomb?)", f.lim.Ratio)
	}
	if f.err != nil {
		return n, f.err
	}
	return n, err
}

// readArchive reads the whole .tar.gz once: every entry is checked as it comes, every
// regular file hashed, and only the files the metadata needs are kept.
func readArchive(r io.Reader, lim Limits) (*archive, error) {
	a := &archive{
		lim:     lim,
		entries: map[string]*entry{},
		kept:    map[string][]byte{},
		docs:    map[string]*fileDocs{},
	}
	c := &counter{r: r, h: sha256.New(), max: lim.Compressed}
	in := &inflated{c: c, lim: &a.lim}
	// Whichever reader failed first explains the failure best.
	cause := func(err error) error {
		switch {
		case c.err != nil:
			return c.err
		case in.err != nil:
			return in.err
		}
		return err
	}
	gz, err := gzip.NewReader(c)
	if err != nil {
		return a, a.tag(wrapFormat(cause(err), "not a gzip file"))
	}
	gz.Multistream(false)
	in.r = gz
	tr := tar.NewReader(in)
	count := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return a, a.tag(wrapFormat(cause(err), "not a valid tar archive"))
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		if count++; count > lim.Entries {
			return a, a.tag(errorf(ErrLimit, "", "more than %d entries", lim.Entries))
		}
		if err := a.add(h, tr); err != nil {
			return a, a.tag(wrapFormat(cause(err), "reading "+h.Name))
		}
	}
	// Read to the end: the gzip trailer's CRC is checked, and the digest covers every byte.
	if _, err := io.Copy(io.Discard, in); err != nil {
		return a, a.tag(wrapFormat(cause(err), "not a valid gzip stream"))
	}
	if _, err := io.Copy(io.Discard, c); err != nil {
		return a, a.tag(cause(err))
	}
	a.sha256, a.size = hex.EncodeToString(c.h.Sum(nil)), c.n
	return a, nil
}

// wrapFormat keeps an *Error as it is and makes anything else an ErrFormat.
func wrapFormat(err error, msg string) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: ErrFormat, Msg: msg + ": " + err.Error(), Err: err}
}

// tag names the collection in err once it is known.
func (a *archive) tag(err error) error {
	var e *Error
	if errors.As(err, &e) && e.Collection == "" {
		e.Collection = a.label
	}
	return err
}

// cleanName checks an entry's name as galaxy-importer and Python's "data" extraction
// filter do, and returns it relative to the collection's root.
func (a *archive) cleanName(name string) (string, error) {
	switch {
	case name == "":
		return "", errorf(ErrFormat, "", "an entry has no name")
	case !utf8.ValidString(name):
		return "", errorf(ErrFormat, fmt.Sprintf("%q", name), "the name is not valid UTF-8")
	case len(name) > a.lim.PathLen:
		return "", errorf(ErrLimit, name[:min(len(name), 64)]+"…", "path longer than %d bytes", a.lim.PathLen)
	case strings.HasPrefix(name, "/"), strings.Contains(name, "../"), name == "..", strings.HasSuffix(name, "/.."):
		return "", errorf(ErrUnsafe, name, "invalid file paths detected")
	}
	p := path.Clean(name)
	if p != "." && strings.Count(p, "/")+1 > a.lim.Depth {
		return "", errorf(ErrLimit, name, "nested deeper than %d directories", a.lim.Depth)
	}
	return p, nil
}

func (a *archive) add(h *tar.Header, body io.Reader) error {
	p, err := a.cleanName(h.Name)
	if err != nil {
		return err
	}
	if p == "." {
		if h.Typeflag == tar.TypeDir {
			return nil // "./": the root itself
		}
		return errorf(ErrUnsafe, h.Name, "invalid file paths detected")
	}
	if _, dup := a.entries[p]; dup {
		return errorf(ErrFormat, p, "the tarball holds this path twice")
	}
	e := &entry{}
	switch h.Typeflag {
	case tar.TypeReg, tar.TypeRegA:
		e.kind, e.size = kindFile, h.Size
		if err := a.readFile(p, e, body); err != nil {
			return err
		}
	case tar.TypeDir:
		e.kind = kindDir
	case tar.TypeSymlink:
		if err := linkInside(p, h.Linkname, true); err != nil {
			return err
		}
		e.kind, e.target = kindSymlink, h.Linkname
	case tar.TypeLink:
		if err := linkInside(p, h.Linkname, false); err != nil {
			return err
		}
		t, ok := a.entries[path.Clean(h.Linkname)]
		if !ok || t.kind != kindFile {
			return errorf(ErrFormat, p, "hard link to %s, which is not a file earlier in the tarball", h.Linkname)
		}
		*e = *t
		// The same file under a second name: what was kept of it serves both.
		if b, ok := a.kept[path.Clean(h.Linkname)]; ok {
			a.kept[p] = b
		}
		if d, ok := a.docs[path.Clean(h.Linkname)]; ok {
			a.docs[p] = d
		}
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		return errorf(ErrUnsafe, p, "device files and FIFOs are not allowed")
	default:
		return errorf(ErrFormat, p, "unsupported tar entry type %q", h.Typeflag)
	}
	a.entries[p] = e
	return nil
}

// linkInside refuses a link whose target is absolute or lies outside the collection;
// a symlink's target is relative to its directory, a hard link's to the root.
func linkInside(p, target string, symlink bool) error {
	if target == "" || strings.HasPrefix(target, "/") {
		return errorf(ErrUnsafe, p, "invalid link target detected: %q", target)
	}
	t := target
	if symlink {
		t = path.Join(path.Dir(p), target)
	}
	if escapes(path.Clean(t)) {
		return errorf(ErrUnsafe, p, "invalid link target detected: %q", target)
	}
	return nil
}

func escapes(clean string) bool {
	return clean == ".." || strings.HasPrefix(clean, "../")
}

// readFile hashes a regular file and keeps its contents when the metadata needs them.
func (a *archive) readFile(p string, e *entry, body io.Reader) error {
	h := sha256.New()
	want, max := a.wants(p)
	if want == keepNone || e.size > max {
		if _, err := io.Copy(h, body); err != nil {
			return err
		}
		h.Sum(e.sum[:0])
		return nil
	}
	if a.keptLen+e.size > a.lim.Kept {
		return errorf(ErrLimit, p, "the files read for the collection's metadata exceed %d bytes", a.lim.Kept)
	}
	buf := make([]byte, e.size)
	if _, err := io.ReadFull(body, buf); err != nil {
		return err
	}
	h.Write(buf)
	h.Sum(e.sum[:0])
	switch want {
	case keepText:
		a.kept[p] = buf
		a.keptLen += e.size
		if p == ManifestName {
			a.label = manifestLabel(buf)
		}
	case keepPython, keepSidecar:
		d := readDocs(buf, want == keepSidecar, a.lim.Source)
		if d != nil {
			a.docs[p] = d
			a.keptLen += d.size()
		}
	}
	return nil
}

type keepKind uint8

const (
	keepNone    keepKind = iota
	keepText             // kept whole
	keepPython           // a plugin source: its documentation strings are read
	keepSidecar          // a plugin's YAML documentation beside it
)

// wants says which files the metadata reads, and up to what size. Files past the size
// are hashed only; whether that is an error depends on their use (a README is
// refused, a plugin only loses its documentation).
func (a *archive) wants(p string) (keepKind, int64) {
	dir, base := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	ext := strings.ToLower(path.Ext(base))
	top, _, _ := strings.Cut(p, "/")
	switch {
	case dir == "" && ext == ".json":
		return keepText, max(a.lim.FilesJSON, a.lim.Manifest)
	case p == "README.md", dir == "docs" && ext == ".md", top == "roles" && base == "README.md":
		return keepText, a.lim.DocFile
	case p == runtimeFile, p == extensionsFile:
		return keepText, a.lim.Manifest
	case top == "roles" && isRoleMeta(p):
		return keepText, a.lim.Manifest
	case (top == "plugins" || top == "extensions") && ext == ".py":
		return keepPython, a.lim.Source
	case top == "plugins" && (ext == ".yml" || ext == ".yaml"):
		return keepSidecar, a.lim.Source
	}
	return keepNone, 0
}

// manifestLabel reads "namespace.name version" from MANIFEST.json leniently, only to
// name the collection in errors found before the manifest is checked.
func manifestLabel(b []byte) string {
	var m struct {
		Info struct {
			Namespace, Name, Version string
		} `json:"collection_info"`
	}
	if json.Unmarshal(b, &m) != nil || m.Info.Namespace == "" || m.Info.Name == "" {
		return ""
	}
	l := m.Info.Namespace + "." + m.Info.Name
	if m.Info.Version != "" {
		l += " " + m.Info.Version
	}
	if len(l) > 200 || !utf8.ValidString(l) {
		return ""
	}
	return l
}
