package port

import (
	"archive/tar"
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"pith/content"
)

// Export is an export being written: a tar streamed into chunk files. Its members may
// be added from several goroutines (each resource is spooled apart and added whole).
type Export struct {
	mu      sync.Mutex // held while a member is written
	buf     []byte     // the copy buffer of members, under mu
	tarPath string
	dir     string
	cw      *chunkWriter
	tw      *tar.Writer
	spools  []string
	done    bool
}

// Create starts an export at path (".../export-<id>-<timestamp>.tar"), split in
// chunks of chunkSize bytes when it is not 0. Resource files are spooled next to it.
func Create(path string, chunkSize int64) (*Export, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o775); err != nil {
		return nil, err
	}
	cw := newChunkWriter(path, chunkSize)
	return &Export{tarPath: path, dir: dir, cw: cw, tw: tar.NewWriter(cw)}, nil
}

// Member adds a file of size bytes read from r.
func (e *Export) Member(name string, size int64, r io.Reader) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.tw.WriteHeader(&tar.Header{Name: name, Size: size, Mode: 0o644, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		return fmt.Errorf("export member %s: %w", name, err)
	}
	if e.buf == nil {
		e.buf = make([]byte, 256<<10)
	}
	// One buffer for every member: the tar writer has no ReadFrom, so io.Copy would
	// allocate 32 KiB per artifact.
	n, err := io.CopyBuffer(e.tw, r, e.buf)
	if err != nil {
		return fmt.Errorf("export member %s: %w", name, err)
	}
	if n != size {
		return fmt.Errorf("export member %s: %d bytes, not %d", name, n, size)
	}
	return nil
}

// JSON adds a small JSON file (versions.json, content_mapping.json), written as
// Python's json.dumps writes it.
func (e *Export) JSON(name string, v any) error {
	s, err := pyJSON(v)
	if err != nil {
		return err
	}
	return e.Member(name, int64(len(s)), strings.NewReader(s))
}

// Stream adds a file that write writes whole, spooled first (a tar member's size comes
// before its bytes). Python's separators are write's to give.
func (e *Export) Stream(name string, write func(w *bufio.Writer) error) error {
	f, w, err := e.spool()
	if err != nil {
		return err
	}
	defer closeSpool(f)
	if err := write(w); err != nil {
		return fmt.Errorf("export member %s: %w", name, err)
	}
	return e.addSpool(name, f, w)
}

// spool is a temporary file next to the export, for a member written before it is
// added.
func (e *Export) spool() (*os.File, *bufio.Writer, error) {
	f, err := os.CreateTemp(e.dir, ".pith-export-spool-*")
	if err != nil {
		return nil, nil, err
	}
	e.mu.Lock()
	e.spools = append(e.spools, f.Name())
	e.mu.Unlock()
	return f, bufio.NewWriterSize(f, 256<<10), nil
}

// addSpool adds what was written to a spool as the member name.
func (e *Export) addSpool(name string, f *os.File, w *bufio.Writer) error {
	if err := w.Flush(); err != nil {
		return fmt.Errorf("export member %s: %w", name, err)
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return e.Member(name, size, bufio.NewReaderSize(f, 256<<10))
}

func closeSpool(f *os.File) {
	f.Close()
	os.Remove(f.Name())
}

// Resource starts a resource file: a JSON list of rows, each an object of the columns
// in order. It is added to the tar when closed, unless it has no rows.
func (e *Export) Resource(name string, columns ...string) (content.RowWriter, error) {
	f, w, err := e.spool()
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(columns))
	for i, c := range columns {
		k, err := pyJSON(c)
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	return &resource{e: e, name: name, keys: keys, f: f, w: w}, nil
}

// resource spools one resource file's rows.
type resource struct {
	e    *Export
	name string
	keys []string
	f    *os.File
	w    *bufio.Writer
	rows int
	buf  []byte // a cell's JSON
}

func (r *resource) Row(values ...any) error {
	if len(values) != len(r.keys) {
		return fmt.Errorf("resource %s: %d values for %d columns", r.name, len(values), len(r.keys))
	}
	if r.rows == 0 {
		r.w.WriteString("[{")
	} else {
		r.w.WriteString(", {")
	}
	for i, v := range values {
		cell, err := content.Cell(v)
		if err != nil {
			return fmt.Errorf("resource %s: column %s: %w", r.name, r.keys[i], err)
		}
		if i > 0 {
			r.w.WriteString(", ")
		}
		r.w.WriteString(r.keys[i])
		r.w.WriteString(": ")
		r.buf, err = content.AppendJSON(r.buf[:0], cell)
		if err != nil {
			return fmt.Errorf("resource %s: column %s: %w", r.name, r.keys[i], err)
		}
		r.w.Write(r.buf)
	}
	r.w.WriteByte('}')
	r.rows++
	return nil
}

func (r *resource) Close() error {
	defer closeSpool(r.f)
	if r.rows == 0 {
		return nil
	}
	r.w.WriteByte(']')
	return r.e.addSpool(r.name, r.f, r.w)
}

// Result is what a finished export wrote.
type Result struct {
	// Files are the tar or its chunks, with their crc32.
	Files []Written
	// TOC is the table of contents' path and TOCSHA256 its sha256.
	TOC       string
	TOCSHA256 string
}

// Finish ends the tar and writes the table of contents with meta (the export's own
// meta, checksum_type and, for chunks, chunk_size added).
func (e *Export) Finish(ctx context.Context, meta map[string]any) (Result, error) {
	if err := e.tw.Close(); err != nil {
		return Result{}, err
	}
	files, err := e.cw.close()
	if err != nil {
		return Result{}, err
	}
	m := map[string]any{}
	for k, v := range meta {
		m[k] = v
	}
	m["checksum_type"] = "crc32"
	if e.cw.size > 0 {
		m["chunk_size"] = e.cw.size
	}
	toc := filepath.Join(filepath.Dir(e.tarPath), strings.TrimSuffix(filepath.Base(e.tarPath), ".tar")+"-toc.json")
	sum, err := writeTOC(toc, m, files)
	if err != nil {
		os.Remove(toc)
		return Result{}, err
	}
	e.done = true
	e.cleanSpools()
	return Result{Files: files, TOC: toc, TOCSHA256: sum}, nil
}

// Abort removes everything the export wrote; after Finish it does nothing, so it can be
// deferred.
func (e *Export) Abort() {
	if e.done {
		return
	}
	e.done = true
	e.cw.abort()
	e.cleanSpools()
}

func (e *Export) cleanSpools() {
	for _, p := range e.spools {
		os.Remove(p)
	}
}
