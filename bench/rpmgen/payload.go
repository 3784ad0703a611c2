package rpmgen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"

	"pith/content/rpm/repodata"
)

// gzipLevel is the payload's compression level. The file contents are random, so a
// higher level would only cost time.
const gzipLevel = gzip.BestSpeed

// fileInfo is what the header says about one file.
type fileInfo struct {
	dir, base string // dir ends in '/'
	mode      uint16
	flags     uint32
	size      uint32
	digest    string // sha256 hex of the content; empty for directories and ghosts
	content   []byte // regular files only
}

// payload is a package's files and its compressed cpio archive.
type payload struct {
	files       []fileInfo
	archiveSize int64  // bytes of the uncompressed cpio archive
	installed   int64  // sum of the file sizes
	compressed  []byte // the gzip stream stored in the .rpm
}

// buildPayload lays out p's files, fills the regular ones with payloadBytes of
// deterministic pseudo-random data split evenly between them, and archives and
// compresses them.
func buildPayload(p *repodata.Package, payloadBytes int64) (*payload, error) {
	if payloadBytes < 0 {
		return nil, fmt.Errorf("negative payload size %d", payloadBytes)
	}
	files, err := layoutFiles(p.Files)
	if err != nil {
		return nil, err
	}
	pl := &payload{files: files}
	if err := fillFiles(pl, p.NEVRA(), payloadBytes); err != nil {
		return nil, err
	}
	archive := writeCPIO(files, uint32(p.TimeBuild))
	pl.archiveSize = int64(len(archive))
	if pl.compressed, err = compress(archive); err != nil {
		return nil, err
	}
	return pl, nil
}

// layoutFiles splits each path into directory and base name and gives it its mode and
// flags.
func layoutFiles(in []repodata.File) ([]fileInfo, error) {
	files := make([]fileInfo, len(in))
	for i, f := range in {
		slash := strings.LastIndexByte(f.Path, '/')
		if !strings.HasPrefix(f.Path, "/") || slash == len(f.Path)-1 {
			return nil, fmt.Errorf("file %q: want an absolute path not ending in '/'", f.Path)
		}
		fi := fileInfo{dir: f.Path[:slash+1], base: f.Path[slash+1:], mode: modeRegular}
		switch f.Type {
		case "":
		case "dir":
			fi.mode = modeDir
		case "ghost":
			fi.flags = fileGhost
		default:
			return nil, fmt.Errorf("file %q: unknown type %q", f.Path, f.Type)
		}
		files[i] = fi
	}
	return files, nil
}

// fillFiles gives each regular file payloadBytes/n bytes of content, drawn from a
// generator seeded by the package's NEVRA, and its digest.
func fillFiles(pl *payload, seed string, payloadBytes int64) error {
	n := 0
	for _, f := range pl.files {
		if f.regular() {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	per := payloadBytes / int64(n)
	if per > math.MaxUint32 {
		return fmt.Errorf("file size %d over the cpio limit of 4 GiB", per)
	}
	data := make([]byte, per*int64(n))
	rand.NewChaCha8(sha256.Sum256([]byte(seed))).Read(data)
	for i := range pl.files {
		f := &pl.files[i]
		if !f.regular() {
			continue
		}
		f.content, data = data[:per], data[per:]
		f.size = uint32(per)
		sum := sha256.Sum256(f.content)
		f.digest = hex.EncodeToString(sum[:])
		pl.installed += per
	}
	return nil
}

// regular reports whether the file is a regular file with content in the payload.
func (f *fileInfo) regular() bool { return f.mode == modeRegular && f.flags&fileGhost == 0 }

// inArchive reports whether the file is in the cpio archive: every file but ghosts, as
// rpmbuild writes it.
func (f *fileInfo) inArchive() bool { return f.flags&fileGhost == 0 }

// writeCPIO writes the archive in the "newc" format with rpm's "./" prefix on the names.
// Inode numbers are the file's position plus one, as in the header's FILEINODES.
func writeCPIO(files []fileInfo, mtime uint32) []byte {
	size := 0
	for _, f := range files {
		size += 110 + 2 + len(f.dir) + len(f.base) + 4 + len(f.content) + 4
	}
	b := bytes.NewBuffer(make([]byte, 0, size+128))
	for i, f := range files {
		if !f.inArchive() {
			continue
		}
		nlink := uint32(1)
		if f.mode == modeDir {
			nlink = 2
		}
		cpioEntry(b, uint32(i+1), uint32(f.mode), nlink, mtime, "."+f.dir+f.base, f.content)
	}
	cpioEntry(b, 0, 0, 1, 0, "TRAILER!!!", nil)
	return b.Bytes()
}

// cpioEntry writes one newc header, the name and the data, each padded to 4 bytes.
func cpioEntry(b *bytes.Buffer, ino, mode, nlink, mtime uint32, name string, data []byte) {
	b.WriteString("070701")
	for _, v := range [...]uint32{ino, mode, 0, 0, nlink, mtime, uint32(len(data)), 0, 0, 0, 0, uint32(len(name) + 1), 0} {
		putHex8(b, v)
	}
	b.WriteString(name)
	b.WriteByte(0)
	pad4(b)
	b.Write(data)
	pad4(b)
}

// putHex8 writes v as 8 upper-case hex digits, a newc header field.
func putHex8(b *bytes.Buffer, v uint32) {
	const digits = "0123456789ABCDEF"
	for shift := 28; shift >= 0; shift -= 4 {
		b.WriteByte(digits[v>>shift&0xf])
	}
}

func pad4(b *bytes.Buffer) {
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
}

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzipLevel)
	return w
}}

// compress gzips the archive.
func compress(archive []byte) ([]byte, error) {
	var out bytes.Buffer
	out.Grow(len(archive) + len(archive)/100 + 64)
	w := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(w)
	w.Reset(&out)
	if _, err := w.Write(archive); err != nil {
		return nil, fmt.Errorf("compressing the payload: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("compressing the payload: %w", err)
	}
	return out.Bytes(), nil
}
