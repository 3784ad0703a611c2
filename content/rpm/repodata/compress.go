package repodata

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// Magic numbers of the formats Decompress knows.
var (
	magicGzip   = []byte{0x1f, 0x8b}
	magicXz     = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}
	magicBzip2  = []byte("BZh")
	magicZstd   = []byte{0x28, 0xb5, 0x2f, 0xfd}
	magicZchunk = []byte("\x00ZCK1")
)

// Decompress returns the decompressed content of r: gzip, xz, bzip2, zstd or plain. The
// format is taken from the content's magic number, which a server's transparent
// decompression cannot make wrong; name only names the file in errors and marks zchunk
// (".zck"), which gives an ErrZchunk error (use the non-zchunk variant repomd also lists).
// Read errors of the decompressor name its format. Close releases the decompressor; it
// does not close r.
func Decompress(r io.Reader, name string) (io.ReadCloser, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(len(magicXz))
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, &Error{File: name, Offset: 0, Err: fmt.Errorf("read: %w", err)}
	}
	if strings.HasSuffix(name, ".zck") || bytes.HasPrefix(head, magicZchunk) {
		return nil, &Error{File: name, Offset: -1, Err: ErrZchunk}
	}
	fail := func(format string, err error) error {
		return &Error{File: name, Offset: 0, Err: fmt.Errorf("%s: %w", format, err)}
	}
	switch {
	case bytes.HasPrefix(head, magicGzip):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fail("gzip", err)
		}
		return &decompressor{r: zr, format: "gzip", close: zr.Close}, nil
	case bytes.HasPrefix(head, magicXz):
		zr, err := xz.NewReader(br)
		if err != nil {
			return nil, fail("xz", err)
		}
		return &decompressor{r: zr, format: "xz"}, nil
	case bytes.HasPrefix(head, magicBzip2):
		return &decompressor{r: bzip2.NewReader(br), format: "bzip2"}, nil
	case bytes.HasPrefix(head, magicZstd):
		zr, err := zstd.NewReader(br)
		if err != nil {
			return nil, fail("zstd", err)
		}
		return &decompressor{r: zr, format: "zstd", close: func() error { zr.Close(); return nil }}, nil
	}
	return io.NopCloser(br), nil
}

type decompressor struct {
	r      io.Reader
	format string
	close  func() error
}

func (d *decompressor) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%s: %w", d.format, err)
	}
	return n, err
}

func (d *decompressor) Close() error {
	if d.close == nil {
		return nil
	}
	return d.close()
}

// Compression is how published metadata is compressed.
type Compression string

// The compressions NewCompressWriter writes.
const (
	None Compression = "none"
	Gzip Compression = "gz"
	Zstd Compression = "zstd"
)

// Ext is the file name suffix of c: "", ".gz" or ".zst".
func (c Compression) Ext() string {
	switch c {
	case Gzip:
		return ".gz"
	case Zstd:
		return ".zst"
	}
	return ""
}

// NewHash returns a hash for a repodata checksum type: sha256, sha1 (or "sha"), sha512,
// sha384, sha224 or md5.
func NewHash(checksumType string) (hash.Hash, error) {
	switch strings.ToLower(checksumType) {
	case "sha256":
		return sha256.New(), nil
	case "sha1", "sha":
		return sha1.New(), nil
	case "sha512":
		return sha512.New(), nil
	case "sha384":
		return sha512.New384(), nil
	case "sha224":
		return sha256.New224(), nil
	case "md5":
		return md5.New(), nil
	}
	return nil, fmt.Errorf("unknown checksum type %q", checksumType)
}

// Sums describes a written metadata file as repomd.xml needs it.
type Sums struct {
	Compression  Compression
	ChecksumType string
	Size         int64  // bytes written (compressed)
	Checksum     string // hex, of the bytes written
	OpenSize     int64  // bytes before compression
	OpenChecksum string // hex, of the bytes before compression
}

// Record returns the repomd record of a file with these sums. For an uncompressed file
// the open-checksum and open-size are left out, as createrepo_c does.
func (s Sums) Record(typ, href string, timestamp int64) Record {
	rec := Record{Type: typ, LocationHref: href, Timestamp: timestamp,
		Checksum: s.Checksum, ChecksumType: s.ChecksumType, Size: s.Size, OpenSize: -1, HeaderSize: -1}
	if s.Compression != None {
		rec.OpenChecksum, rec.OpenChecksumType, rec.OpenSize = s.OpenChecksum, s.ChecksumType, s.OpenSize
	}
	return rec
}

// CompressWriter compresses what is written to it into an underlying writer and, in the
// same pass, measures the size and checksum of both the compressed and the open bytes.
type CompressWriter struct {
	in       io.Writer      // the multi-writer everything written goes to
	zw       io.WriteCloser // the compressor; nil for None
	open     counter
	packed   counter
	openH    hash.Hash
	packedH  hash.Hash
	sums     Sums
	closed   bool
	closeErr error
}

type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// NewCompressWriter returns a writer compressing into w with c, checksumming with
// checksumType. Gzip output is deterministic (no name, no time in the header).
func NewCompressWriter(w io.Writer, c Compression, checksumType string) (*CompressWriter, error) {
	openH, err := NewHash(checksumType)
	if err != nil {
		return nil, err
	}
	packedH, _ := NewHash(checksumType)
	cw := &CompressWriter{openH: openH, packedH: packedH,
		sums: Sums{Compression: c, ChecksumType: strings.ToLower(checksumType)}}
	if cw.sums.ChecksumType == "sha" {
		cw.sums.ChecksumType = "sha1"
	}
	out := io.MultiWriter(w, packedH, &cw.packed)
	switch c {
	case None:
		cw.in = io.MultiWriter(out, openH, &cw.open)
		return cw, nil
	case Gzip:
		cw.zw = gzip.NewWriter(out)
	case Zstd:
		zw, err := zstd.NewWriter(out, zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		cw.zw = zw
	default:
		return nil, fmt.Errorf("unknown compression %q (want %q, %q or %q)", c, Gzip, Zstd, None)
	}
	cw.in = io.MultiWriter(openH, &cw.open, cw.zw)
	return cw, nil
}

func (cw *CompressWriter) Write(p []byte) (int, error) {
	if cw.closed {
		return 0, fmt.Errorf("write after Close")
	}
	return cw.in.Write(p)
}

// Close flushes the compressor (it does not close the underlying writer) and fixes Sums.
func (cw *CompressWriter) Close() error {
	if cw.closed {
		return cw.closeErr
	}
	cw.closed = true
	if cw.zw != nil {
		cw.closeErr = cw.zw.Close()
	}
	cw.sums.Size, cw.sums.Checksum = cw.packed.n, hex.EncodeToString(cw.packedH.Sum(nil))
	cw.sums.OpenSize, cw.sums.OpenChecksum = cw.open.n, hex.EncodeToString(cw.openH.Sum(nil))
	return cw.closeErr
}

// Sums returns the sizes and checksums; valid after Close.
func (cw *CompressWriter) Sums() Sums { return cw.sums }
