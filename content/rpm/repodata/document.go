package repodata

import (
	"fmt"
	"io"
	"strconv"
)

// DocumentWriter writes a primary, filelists or other document: the header with the
// package count, the packages' fragments as they come, and the footer. The count is
// needed up front (it is in the root element), and Close fails if a different number of
// packages was written, so a document never lies about its size.
type DocumentWriter struct {
	w       io.Writer
	kind    Kind
	count   int
	n       int
	limit   int
	buf     []byte
	started bool
	closed  bool
	err     error
}

// NewDocumentWriter returns a writer of a kind document of count packages to w.
func NewDocumentWriter(w io.Writer, kind Kind, count int) *DocumentWriter {
	return &DocumentWriter{w: w, kind: kind, count: count}
}

// LimitChangelogs makes an other document keep only the n newest changelog entries of
// each package (n <= 0: all).
func (d *DocumentWriter) LimitChangelogs(n int) { d.limit = n }

// WritePackage writes p's fragment.
func (d *DocumentWriter) WritePackage(p *Package) error {
	switch d.kind {
	case Primary:
		d.buf = appendPrimary(d.buf[:0], p)
	case Filelists:
		d.buf = appendFilelists(d.buf[:0], p)
	case Other:
		d.buf = appendOther(d.buf[:0], p, d.limit)
	}
	return d.WriteFragment(d.buf)
}

// WriteFragment writes a fragment made before by PrimaryFragment, FilelistsFragment or
// OtherFragment (of this document's kind).
func (d *DocumentWriter) WriteFragment(frag []byte) error {
	if d.closed {
		return fmt.Errorf("%s document: write after Close", d.kind)
	}
	if err := d.header(); err != nil {
		return err
	}
	d.n++
	return d.write(frag)
}

func (d *DocumentWriter) write(b []byte) error {
	if d.err != nil {
		return d.err
	}
	if _, err := d.w.Write(b); err != nil {
		d.err = fmt.Errorf("%s document: %w", d.kind, err)
	}
	return d.err
}

func (d *DocumentWriter) header() error {
	if d.started {
		return d.err
	}
	d.started = true
	h := xmlHeader
	switch d.kind {
	case Primary:
		h += `<metadata xmlns="` + nsCommon + `" xmlns:rpm="` + nsRPM + `"`
	case Filelists:
		h += `<filelists xmlns="` + nsFilelists + `"`
	case Other:
		h += `<otherdata xmlns="` + nsOther + `"`
	default:
		d.err = fmt.Errorf("invalid Kind %d", d.kind)
		return d.err
	}
	return d.write([]byte(h + ` packages="` + strconv.Itoa(d.count) + "\">\n"))
}

// Close writes the footer. It does not close the underlying writer.
func (d *DocumentWriter) Close() error {
	if d.closed {
		return d.err
	}
	if err := d.header(); err != nil {
		return err
	}
	d.closed = true
	if err := d.write([]byte("</" + d.kind.root() + ">")); err != nil {
		return err
	}
	if d.n != d.count {
		d.err = fmt.Errorf("%s document: %d packages written, %d declared", d.kind, d.n, d.count)
	}
	return d.err
}
