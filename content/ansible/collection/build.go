package collection

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
)

// BuildOptions tune Build.
type BuildOptions struct {
	// Limits bound the source tree and the artifact; a zero field takes DefaultLimits'
	// value. Entries bounds both the entries looked at and those built, Uncompressed
	// the bytes of the files built, Manifest galaxy.yml, FilesJSON FILES.json.
	Limits Limits
	// Time is the mtime of MANIFEST.json and FILES.json in the tarball and of the gzip
	// header, as ansible-galaxy takes the clock's; zero means now.
	Time time.Time
	// Root is the absolute path fsys stands for. ansible-galaxy matches the patterns of
	// global-include and global-exclude manifest directives against absolute paths, so
	// they can match the names of the directories above the collection; empty means
	// DefaultRoot.
	Root string
}

// DefaultRoot is the path Build takes the source tree to be at when BuildOptions.Root
// is empty.
const DefaultRoot = "/collection"

// Built describes an artifact Build wrote.
type Built struct {
	Filename Filename // namespace-name-version.tar.gz
	Manifest []byte   // MANIFEST.json as written
	Files    []byte   // FILES.json as written
	// Warnings are what ansible-galaxy warns about and builds anyway: unknown keys in
	// galaxy.yml, links leading out of the tree (skipped).
	Warnings []string
	SHA256   string // of the .tar.gz, hex
	Size     int64
}

// The modes ansible-galaxy gives members: executable files and directories 0755,
// everything else 0644 (links keep tarfile's default, 0644).
const (
	modeFile = 0o644
	modeExec = 0o755
)

// tarRecord is the size tarfile pads an archive to (20 blocks of 512 bytes).
const tarRecord = 20 * 512

// Build makes a collection artifact from the source tree in fsys (its root holds
// galaxy.yml) as `ansible-galaxy collection build` (ansible-core 2.19) does, and writes
// the .tar.gz to w. galaxy.yml is checked as the import checks MANIFEST.json, so that
// what is built imports. Links inside the tree are written as links; links leading
// out of it are skipped, never read. Every error is an *Error.
func Build(fsys fs.FS, w io.Writer, opt BuildOptions) (*Built, error) {
	lim := opt.Limits.withDefaults()
	now := opt.Time
	if now.IsZero() {
		now = time.Now()
	}
	t := &srcTree{fsys: fsys, root: opt.Root, lim: lim, steps: budget{matchSteps}}
	if t.root == "" {
		t.root = DefaultRoot
	}
	src, err := t.readGalaxyYML()
	if err != nil {
		return nil, err
	}
	m, err := parseGalaxyYML(src)
	if err != nil {
		return nil, err
	}
	label := m.namespace + "." + m.name + " " + m.version
	tag := func(err error) error {
		var e *Error
		if errors.As(err, &e) && e.Collection == "" {
			e.Collection = label
		}
		return err
	}
	entries := []buildEntry{{name: ".", dir: true}}
	var more []buildEntry
	warnings := m.warnings
	if m.manifest != nil {
		more, err = t.manifestFiles(m)
	} else {
		var w []string
		more, w, err = t.walkFiles(m)
		warnings = append(warnings, w...)
	}
	if err != nil {
		return nil, tag(err)
	}
	entries = append(entries, more...)
	for _, e := range more {
		// Only directives with omit_default_directives can select them: ansible-galaxy
		// would then write them a second time, after its own.
		if e.name == ManifestName || e.name == FilesJSONName {
			return nil, tag(errorf(ErrInvalid, e.name, "the manifest directives select this file, which the build writes itself"))
		}
	}
	if len(entries) > lim.Entries {
		return nil, tag(errorf(ErrLimit, "", "more than %d entries", lim.Entries))
	}
	var total int64
	for i := range entries {
		e := &entries[i]
		if e.dir {
			continue
		}
		if e.size, err = t.hashFile(e.real, e.sum[:0], lim.Uncompressed-total); err != nil {
			return nil, tag(err)
		}
		total += e.size
	}
	files := filesJSONFor(entries)
	if int64(len(files)) > lim.FilesJSON {
		return nil, tag(errorf(ErrLimit, FilesJSONName, "larger than %d bytes", lim.FilesJSON))
	}
	filesSum := sha256.Sum256(files)
	manifest := manifestJSONFor(m, hex.EncodeToString(filesSum[:]))
	b := &Built{
		Filename: Filename{m.namespace, m.name, m.version},
		Manifest: manifest, Files: files, Warnings: warnings,
	}
	out := &countWriter{w: w, h: sha256.New()}
	if err := t.writeTarball(out, b, entries, now); err != nil {
		return nil, tag(err)
	}
	b.SHA256, b.Size = hex.EncodeToString(out.h.Sum(nil)), out.n
	return b, nil
}

// readGalaxyYML reads galaxy.yml (a link to a file inside the tree will do).
func (t *srcTree) readGalaxyYML() ([]byte, error) {
	s, err := t.stat(GalaxyYML)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && errors.Is(e.Err, fs.ErrNotExist) {
			return nil, galaxyError(ErrMissing, "the collection galaxy.yml does not exist")
		}
		return nil, err
	}
	real, fi := GalaxyYML, s.info
	if s.link {
		if s.outside || s.missing != nil {
			return nil, galaxyError(ErrMissing, "the collection galaxy.yml is a symbolic link to nothing inside the collection")
		}
		real, fi = s.real, s.target
	}
	if !fi.Mode().IsRegular() {
		return nil, galaxyError(ErrMissing, "the collection galaxy.yml is not a file")
	}
	if fi.Size() > t.lim.Manifest {
		return nil, galaxyError(ErrLimit, "larger than %d bytes", t.lim.Manifest)
	}
	f, err := t.fsys.Open(real)
	if err != nil {
		return nil, readErr(real, err)
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, t.lim.Manifest+1))
	if err != nil {
		return nil, readErr(real, err)
	}
	if int64(len(src)) > t.lim.Manifest {
		return nil, galaxyError(ErrLimit, "larger than %d bytes", t.lim.Manifest)
	}
	return src, nil
}

// hashFile reads one file whole, returning its size and appending its sha256 to sum;
// more than max bytes is an error.
func (t *srcTree) hashFile(rel string, sum []byte, max int64) (int64, error) {
	f, err := t.fsys.Open(rel)
	if err != nil {
		return 0, readErr(rel, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, max+1))
	if err != nil {
		return 0, readErr(rel, err)
	}
	if n > max {
		return 0, errorf(ErrLimit, rel, "the files of the collection exceed %d bytes", t.lim.Uncompressed)
	}
	h.Sum(sum)
	return n, nil
}

// filesJSONFor is FILES.json as _make_manifest and _make_entry write it.
func filesJSONFor(entries []buildEntry) []byte {
	list := make([]any, 0, len(entries))
	for _, e := range entries {
		o := newOmap()
		o.set("name", e.name)
		if e.dir {
			o.set("ftype", "dir")
			o.set("chksum_type", nil)
			o.set("chksum_sha256", nil)
		} else {
			o.set("ftype", "file")
			o.set("chksum_type", "sha256")
			o.set("chksum_sha256", hex.EncodeToString(e.sum[:]))
		}
		o.set("format", 1)
		list = append(list, o)
	}
	top := newOmap()
	top.set("files", list)
	top.set("format", 1)
	return pyJSON(top)
}

// manifestJSONFor is MANIFEST.json as _build_manifest writes it.
func manifestJSONFor(m *buildMeta, filesSum string) []byte {
	ff := newOmap()
	ff.set("name", FilesJSONName)
	ff.set("ftype", "file")
	ff.set("chksum_type", "sha256")
	ff.set("chksum_sha256", filesSum)
	ff.set("format", 1)
	top := newOmap()
	top.set("collection_info", m.info)
	top.set("file_manifest_file", ff)
	top.set("format", 1)
	return pyJSON(top)
}

// writeTarball writes the gzip stream as _build_collection_tar does through tarfile
// (mode "w:gz"): level 9, the tar's name and the clock in the gzip header, PAX
// members owned by 0/0 with empty owner names, MANIFEST.json and FILES.json first, then
// every entry of FILES.json but ".", the archive padded to a whole record.
func (t *srcTree) writeTarball(out io.Writer, b *Built, entries []buildEntry, now time.Time) error {
	gz, err := gzip.NewWriterLevel(out, gzip.BestCompression)
	if err != nil {
		return err
	}
	gz.Name = strings.TrimSuffix(b.Filename.String(), ".gz")
	gz.ModTime = now
	gz.OS = 255
	body := &countWriter{w: gz}
	tw := tar.NewWriter(body)
	whole := now.Truncate(time.Second)
	for _, f := range []struct {
		name string
		data []byte
	}{{ManifestName, b.Manifest}, {FilesJSONName, b.Files}} {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Size: int64(len(f.data)), Mode: modeFile, ModTime: whole, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return writeErr(err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return writeErr(err)
		}
	}
	for _, e := range entries {
		if e.name == "." {
			continue
		}
		h := &tar.Header{Name: e.name, Format: tar.FormatPAX}
		switch {
		case e.link != "":
			h.Typeflag, h.Linkname, h.Mode, h.ModTime = tar.TypeSymlink, e.link, modeFile, time.Unix(0, 0)
		case e.dir:
			h.Typeflag, h.Name, h.Mode, h.ModTime = tar.TypeDir, e.name+"/", modeExec, e.info.ModTime()
		default:
			h.Typeflag, h.Size, h.Mode, h.ModTime = tar.TypeReg, e.size, modeFile, e.info.ModTime()
			if e.info.Mode().Perm()&0o100 != 0 {
				h.Mode = modeExec
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			return writeErr(err)
		}
		if h.Typeflag == tar.TypeReg {
			if err := t.copyFile(tw, e); err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return writeErr(err)
	}
	if pad := body.n % tarRecord; pad != 0 {
		if _, err := body.Write(make([]byte, tarRecord-pad)); err != nil {
			return writeErr(err)
		}
	}
	if err := gz.Close(); err != nil {
		return writeErr(err)
	}
	return nil
}

// copyFile writes a file's bytes, which must still be those hashed for FILES.json.
func (t *srcTree) copyFile(w io.Writer, e buildEntry) error {
	f, err := t.fsys.Open(e.real)
	if err != nil {
		return readErr(e.real, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(f, e.size))
	if err != nil {
		var we *writeError
		if errors.As(err, &we) {
			return writeErr(we.err)
		}
		return readErr(e.real, err)
	}
	if n != e.size || !bytes.Equal(h.Sum(nil), e.sum[:]) {
		return errorf(ErrRead, e.name, "the file changed while the collection was built")
	}
	return nil
}

// countWriter counts (and, with h, hashes) what passes; a failure of w is marked as
// the writer's, not the source's.
type countWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if c.h != nil {
		c.h.Write(p[:n])
	}
	if err != nil {
		return n, &writeError{err}
	}
	return n, nil
}

func writeErr(err error) error {
	var we *writeError
	if errors.As(err, &we) {
		err = we.err
	}
	return &Error{Kind: ErrRead, Msg: "writing the artifact: " + err.Error(), Err: err}
}
