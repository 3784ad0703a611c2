package port

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"pith/content"
	"sort"
	"strconv"
	"strings"
)

// Written is one file an export wrote, with its checksum as Pulp renders it: crc32 in
// lower-case hex without padding.
type Written struct {
	Path string
	CRC  string
}

// crcHex renders a crc32 as Pulp's Crc32Hasher.hexdigest does: hex(value)[2:].
func crcHex(h hash.Hash32) string { return strconv.FormatUint(uint64(h.Sum32()), 16) }

// chunkWriter writes a stream to path, or with a chunk size to path.0000, path.0001, …
// of exactly that many bytes each but the last, hashing each file as it goes. No empty
// file is made: a file is opened when there is something to write to it.
type chunkWriter struct {
	path  string
	size  int64 // 0: one file
	f     *os.File
	crc   hash.Hash32
	n     int64 // bytes in f
	files []Written
	all   []string // every file created, for abort
}

func newChunkWriter(path string, size int64) *chunkWriter {
	return &chunkWriter{path: path, size: size}
}

func (w *chunkWriter) open() error {
	name := w.path
	if w.size > 0 {
		name = fmt.Sprintf("%s.%04d", w.path, len(w.files))
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	w.f, w.crc, w.n = f, crc32.NewIEEE(), 0
	w.all = append(w.all, name)
	return nil
}

// finishFile closes the current file and records it.
func (w *chunkWriter) finishFile() error {
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.files = append(w.files, Written{Path: w.f.Name(), CRC: crcHex(w.crc)})
	w.f = nil
	return err
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if w.f == nil {
			if err := w.open(); err != nil {
				return written, err
			}
		}
		part := p
		if w.size > 0 && int64(len(part)) > w.size-w.n {
			part = part[:w.size-w.n]
		}
		n, err := w.f.Write(part)
		w.crc.Write(part[:n])
		w.n += int64(n)
		written += n
		if err != nil {
			return written, err
		}
		p = p[n:]
		if w.size > 0 && w.n == w.size {
			if err := w.finishFile(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// close ends the last file (making an empty one when nothing was written at all, so
// an export always has a file) and lists the files written.
func (w *chunkWriter) close() ([]Written, error) {
	if w.f == nil && len(w.files) == 0 {
		if err := w.open(); err != nil {
			return nil, err
		}
	}
	if err := w.finishFile(); err != nil {
		return nil, err
	}
	return w.files, nil
}

// abort removes every file written.
func (w *chunkWriter) abort() {
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
	for _, p := range w.all {
		os.Remove(p)
	}
}

// TOC is a table of contents: the chunks of an export by name (relative to the TOC's
// directory) with their crc32, and meta (checksum_type, chunk_size and the export's
// own meta).
type TOC struct {
	Meta  map[string]any    `json:"meta"`
	Files map[string]string `json:"files"`
}

// writeTOC writes a table of contents as Pulp's json.dump does and returns its sha256.
// Files keep the order they were written in (Go's maps would not): Pulp's dict does.
func writeTOC(path string, meta map[string]any, files []Written) (string, error) {
	var b strings.Builder
	b.WriteString(`{"meta": `)
	m, err := pyJSON(meta)
	if err != nil {
		return "", err
	}
	b.WriteString(m)
	b.WriteString(`, "files": {`)
	for i, f := range files {
		if i > 0 {
			b.WriteString(", ")
		}
		k, _ := pyJSON(filepath.Base(f.Path))
		v, _ := pyJSON(f.CRC)
		b.WriteString(k + ": " + v)
	}
	b.WriteString("}}")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:]), nil
}

// maxTOC bounds a table of contents read for an import.
const maxTOC = 16 << 20

// maxChunks bounds the chunks a table of contents may name.
const maxChunks = 100000

// ReadTOC reads a table of contents and its chunks' paths, sorted by name as Pulp sorts
// them. Errors are Pulp's messages where Pulp has one.
func ReadTOC(path string) (TOC, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return TOC{}, nil, fmt.Errorf("table of contents %s: %w", filepath.Base(path), errors.Unwrap(err))
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxTOC+1))
	if err != nil {
		return TOC{}, nil, fmt.Errorf("table of contents %s: %w", filepath.Base(path), err)
	}
	if len(raw) > maxTOC {
		return TOC{}, nil, fmt.Errorf("table of contents %s is over %d MiB", filepath.Base(path), maxTOC>>20)
	}
	var t TOC
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return TOC{}, nil, fmt.Errorf("table of contents %s is not JSON: %w", filepath.Base(path), err)
	}
	if keys["files"] == nil || keys["meta"] == nil {
		return TOC{}, nil, errors.New("Missing 'files' or 'meta' keys in table-of-contents!")
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return TOC{}, nil, fmt.Errorf("table of contents %s: %w", filepath.Base(path), err)
	}
	if len(t.Files) == 0 || len(t.Files) > maxChunks {
		return TOC{}, nil, fmt.Errorf("table of contents %s names %d chunks (1 to %d)", filepath.Base(path), len(t.Files), maxChunks)
	}
	names := make([]string, 0, len(t.Files))
	for name := range t.Files {
		if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
			return TOC{}, nil, fmt.Errorf("table of contents %s: chunk name %q is not a file name in its directory", filepath.Base(path), name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	dir := filepath.Dir(path)
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = filepath.Join(dir, n)
	}
	return t, paths, nil
}

// CheckChunks verifies that every chunk a table of contents names exists and has its
// crc32, reporting each chunk checked; all mismatches are reported together, as Pulp
// does.
func CheckChunks(t TOC, paths []string, checked func()) error {
	var missing []string
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, filepath.Base(p))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("Missing import-chunks named in table-of-contents: %q.", missing)
	}
	var bad []string
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("chunk %s: %w", filepath.Base(p), errors.Unwrap(err))
		}
		h := crc32.NewIEEE()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("chunk %s: %w", filepath.Base(p), err)
		}
		want := t.Files[filepath.Base(p)]
		if got := crcHex(h); !strings.EqualFold(strings.TrimLeft(got, "0"), strings.TrimLeft(want, "0")) {
			bad = append(bad, fmt.Sprintf("File %s expected checksum : %s, computed checksum : %s", filepath.Base(p), want, got))
		}
		checked()
	}
	if len(bad) > 0 {
		return fmt.Errorf("Import chunk hash mismatch: %q", bad)
	}
	return nil
}

// files reads several files as one, in order (the chunks of an export).
type files struct {
	fs    []*os.File
	start []int64 // offset of each file in the whole
	size  int64
}

// openFiles opens paths as one file.
func openFiles(paths []string) (*files, error) {
	m := &files{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			m.Close()
			return nil, fmt.Errorf("open %s: %w", filepath.Base(p), errors.Unwrap(err))
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			m.Close()
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			f.Close()
			m.Close()
			return nil, fmt.Errorf("%s is not a file", filepath.Base(p))
		}
		m.fs, m.start = append(m.fs, f), append(m.start, m.size)
		m.size += fi.Size()
	}
	return m, nil
}

// ReadAt reads across file boundaries.
func (m *files) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for len(p) > 0 {
		if off >= m.size {
			return n, io.EOF
		}
		i := sort.Search(len(m.start), func(i int) bool { return m.start[i] > off }) - 1
		k, err := m.fs[i].ReadAt(p, off-m.start[i])
		n, off, p = n+k, off+int64(k), p[k:]
		if err == io.EOF {
			continue
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Close closes every file.
func (m *files) Close() error {
	for _, f := range m.fs {
		f.Close()
	}
	return nil
}

// pyJSON encodes v as Python's json.dumps does by default: ", " and ": " separators,
// keys in the map's sorted order (Go's), non-ASCII kept.
func pyJSON(v any) (string, error) {
	b, err := content.AppendJSON(nil, v)
	if err != nil {
		return "", err
	}
	return spaced(b), nil
}

// spaced adds Python's separators to compact JSON, outside strings.
func spaced(b []byte) string {
	var out strings.Builder
	inStr, esc := false, false
	for _, c := range b {
		out.WriteByte(c)
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case !inStr && (c == ',' || c == ':'):
			out.WriteByte(' ')
		}
	}
	return out.String()
}
