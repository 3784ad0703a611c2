package rpmfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Limits on a header's size, as rpm's hdrblobVerifyLengths and hdrblobInit set them.
const (
	sigMaxTags   = 32
	sigMaxData   = 64 << 20
	hdrMaxTags   = 0xffff
	hdrMaxData   = 0x0fffffff
	hdrMaxBytes  = 256 << 20 // whole blob: 8 + 16*tags + data
	arrayMaxElem = 0x000fffff
	leadSize     = 96
	introSize    = 16 // magic (8), index length (4), data length (4)
	entrySize    = 16
)

var (
	leadMagic   = [4]byte{0xed, 0xab, 0xee, 0xdb}
	headerMagic = [8]byte{0x8e, 0xad, 0xe8, 0x01, 0, 0, 0, 0}
	typeAlign   = [...]uint32{1, 1, 1, 2, 4, 8, 1, 1, 1, 1}
)

// countReader reads exactly what it is asked for and knows where in the file it is.
type countReader struct {
	r   io.Reader
	off int64
}

// full reads n bytes. Past 256 KiB it grows its buffer as bytes arrive, so that a size
// field claiming 256 MiB costs memory only if the bytes are really there.
func (c *countReader) full(s Section, n int, what string) ([]byte, error) {
	const chunk = 256 << 10
	start := c.off
	var buf []byte
	if n <= chunk {
		buf = make([]byte, n)
		k, err := io.ReadFull(c.r, buf)
		c.off += int64(k)
		if err != nil {
			return nil, c.readErr(s, start, n, k, what, err)
		}
		return buf, nil
	}
	buf = make([]byte, 0, chunk)
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(cap(buf), n-len(buf)))
		}
		k, err := io.ReadFull(c.r, buf[len(buf):min(cap(buf), n)])
		buf = buf[:len(buf)+k]
		c.off += int64(k)
		if err != nil {
			return nil, c.readErr(s, start, n, len(buf), what, err)
		}
	}
	return buf, nil
}

func (c *countReader) readErr(s Section, start int64, want, got int, what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &Error{Section: s, Offset: start, Err: ErrTruncated,
			Msg: fmt.Sprintf("truncated: want %d bytes of %s, the file ends after %d", want, what, got)}
	}
	return &Error{Section: s, Offset: start, Err: err, Msg: fmt.Sprintf("reading %s: %v", what, err)}
}

// lead is the part of the 96-byte lead still worth reading.
type lead struct {
	source bool // package type 1: a source package
}

func readLead(c *countReader) (lead, error) {
	var b [leadSize]byte
	k, err := io.ReadFull(c.r, b[:])
	c.off += int64(k)
	eof := err == io.EOF || err == io.ErrUnexpectedEOF
	if k == 0 && eof {
		return lead{}, &Error{Section: SectionLead, Err: ErrNotRPM, Msg: "not an RPM file (empty file)"}
	}
	if m := min(k, len(leadMagic)); string(b[:m]) != string(leadMagic[:m]) {
		return lead{}, &Error{Section: SectionLead, Err: ErrNotRPM, Msg: "not an RPM file (bad lead magic)"}
	}
	if err != nil {
		return lead{}, c.readErr(SectionLead, 0, leadSize, k, "the lead", err)
	}
	return lead{source: binary.BigEndian.Uint16(b[6:8]) == 1}, nil
}

// entry is one validated index entry.
type entry struct {
	tag, typ, off, count uint32
	length               uint32 // bytes of data
	pos                  int    // position in the index
}

// header is one validated header structure: the signature header or the main header.
type header struct {
	sect    Section
	start   int64 // file offset of the header's magic
	end     int64 // file offset just past its data (before any padding)
	il, dl  uint32
	data    string // the data store; strings handed out are substrings of it
	entries []entry
	region  bool
}

func (h *header) entryOffset(pos int) int64 { return h.start + introSize + int64(pos)*entrySize }
func (h *header) dataOffset(off uint32) int64 {
	return h.start + introSize + int64(h.il)*entrySize + int64(off)
}

// readHeader reads and validates one header, with the checks of rpm's hdrblobRead,
// hdrblobVerifyRegion and hdrblobVerifyInfo.
func readHeader(c *countReader, s Section) (*header, error) {
	start := c.off
	intro, err := c.full(s, introSize, "the header intro")
	if err != nil {
		return nil, err
	}
	if [8]byte(intro[:8]) != headerMagic {
		return nil, corrupt(s, start, 0, "bad header magic % x", intro[:8])
	}
	il := binary.BigEndian.Uint32(intro[8:12])
	dl := binary.BigEndian.Uint32(intro[12:16])
	maxTags, maxData, regionTag := uint32(hdrMaxTags), uint32(hdrMaxData), uint32(tagHeaderImmutable)
	if s == SectionSignature {
		maxTags, maxData, regionTag = sigMaxTags, sigMaxData, tagHeaderSignatures
	}
	if il < 1 || il > maxTags {
		return nil, corrupt(s, start+8, 0, "index entry count %d out of range 1..%d", il, maxTags)
	}
	if dl > maxData {
		return nil, corrupt(s, start+12, 0, "data length %d over the limit of %d", dl, maxData)
	}
	if 8+int64(il)*entrySize+int64(dl) >= hdrMaxBytes {
		return nil, corrupt(s, start+8, 0, "header of %d entries and %d data bytes is too large", il, dl)
	}
	raw, err := c.full(s, int(il)*entrySize+int(dl), fmt.Sprintf("the index (%d entries) and data (%d bytes)", il, dl))
	if err != nil {
		return nil, err
	}
	h := &header{sect: s, start: start, end: c.off, il: il, dl: dl, data: string(raw[il*entrySize:])}
	if s == SectionSignature {
		// The signature header is padded to a multiple of 8 bytes.
		if pad := (8 - dl%8) % 8; pad > 0 {
			if _, err := c.full(s, int(pad), "the signature header padding"); err != nil {
				return nil, err
			}
		}
	}
	h.entries = make([]entry, il)
	for i := range h.entries {
		b := raw[i*entrySize:]
		h.entries[i] = entry{
			tag:   binary.BigEndian.Uint32(b[0:4]),
			typ:   binary.BigEndian.Uint32(b[4:8]),
			off:   binary.BigEndian.Uint32(b[8:12]),
			count: binary.BigEndian.Uint32(b[12:16]),
			pos:   i,
		}
	}
	rdl, err := h.verifyRegion(regionTag)
	if err != nil {
		return nil, err
	}
	if err := h.verifyEntries(rdl); err != nil {
		return nil, err
	}
	return h, nil
}

// verifyRegion checks the region tag that seals a header, if the header has one, and
// returns the length of the data it covers.
func (h *header) verifyRegion(regionTag uint32) (uint32, error) {
	e := h.entries[0]
	if e.tag != regionTag {
		return 0, nil // a legacy header without a region
	}
	at := h.entryOffset(0)
	if e.typ != typeBin || e.count != entrySize {
		return 0, corrupt(h.sect, at, e.tag, "region tag has type %s and count %d, want bin and 16", typeName(e.typ), e.count)
	}
	if uint64(e.off)+entrySize > uint64(h.dl) {
		return 0, corrupt(h.sect, at, e.tag, "region trailer at data offset %d runs past the header end (%d bytes)", e.off, h.dl)
	}
	t := h.data[e.off : e.off+entrySize]
	ttag := beUint32(t[0:4])
	ttyp := beUint32(t[4:8])
	toff := -int64(int32(beUint32(t[8:12]))) // stored negated
	tcount := beUint32(t[12:16])
	if h.sect == SectionSignature && ttag == tagHeaderImage {
		ttag = tagHeaderSignatures // some old packages have this in the trailer
	}
	tat := h.dataOffset(e.off)
	if ttag != regionTag || ttyp != typeBin || tcount != entrySize {
		return 0, corrupt(h.sect, tat, e.tag, "bad region trailer: tag %d type %s count %d", ttag, typeName(ttyp), tcount)
	}
	rdl := e.off + entrySize
	if toff < 0 || toff%entrySize != 0 || toff/entrySize > int64(h.il) {
		return 0, corrupt(h.sect, tat, e.tag, "region trailer claims %d index bytes, the header has %d entries", toff, h.il)
	}
	if h.sect == SectionHeader && (toff/entrySize != int64(h.il) || rdl != h.dl) {
		return 0, corrupt(h.sect, tat, e.tag, "region covers %d entries and %d bytes, the header has %d and %d", toff/entrySize, rdl, h.il, h.dl)
	}
	h.region = true
	return rdl, nil
}

// verifyEntries checks every entry's tag, type, count, alignment and data, and that the
// data areas follow each other without overlapping, as rpm does.
func (h *header) verifyEntries(rdl uint32) error {
	first := 0
	if h.region {
		first = 1
	}
	var end uint32
	for i := first; i < len(h.entries); i++ {
		e := &h.entries[i]
		at := h.entryOffset(i)
		switch {
		case e.tag < tagI18NTable:
			return corrupt(h.sect, at, e.tag, "tag number below %d", tagI18NTable)
		case e.typ < typeChar || e.typ > typeI18NString:
			return corrupt(h.sect, at, e.tag, "bad data type %d", e.typ)
		case e.count < 1 || e.count > h.dl:
			return corrupt(h.sect, at, e.tag, "count %d out of range 1..%d", e.count, h.dl)
		case e.off > h.dl:
			return corrupt(h.sect, at, e.tag, "data offset %d past the data end (%d bytes)", e.off, h.dl)
		case e.off%typeAlign[e.typ] != 0:
			return corrupt(h.sect, at, e.tag, "data offset %d not aligned for %s", e.off, typeName(e.typ))
		case end > e.off:
			return corrupt(h.sect, at, e.tag, "data offset %d overlaps the previous tag's data (ending at %d)", e.off, end)
		case e.typ != typeBin && e.count > arrayMaxElem:
			return corrupt(h.sect, at, e.tag, "%d elements, over the limit of %d", e.count, arrayMaxElem)
		}
		if h.sect == SectionHeader {
			if ti, ok := headerTags[e.tag]; ok && ti.typ != e.typ && !(stringClass(ti.typ) && stringClass(e.typ)) {
				return corrupt(h.sect, at, e.tag, "type %s, want %s", typeName(e.typ), typeName(ti.typ))
			}
		}
		n, err := h.dataLength(e)
		if err != nil {
			return err
		}
		e.length = n
		end = e.off + n
		if h.region && end > rdl-entrySize && e.off < rdl {
			return corrupt(h.sect, h.dataOffset(e.off), e.tag, "data overlaps the region trailer")
		}
	}
	return nil
}

// dataLength measures an entry's data, which must lie within the data store.
func (h *header) dataLength(e *entry) (uint32, error) {
	rest := h.data[e.off:]
	switch e.typ {
	case typeString, typeStringArray, typeI18NString:
		if e.typ == typeString && e.count != 1 {
			return 0, corrupt(h.sect, h.entryOffset(e.pos), e.tag, "string with count %d, want 1", e.count)
		}
		var n int
		for range e.count {
			k := strings.IndexByte(rest[n:], 0)
			if k < 0 {
				return 0, corrupt(h.sect, h.dataOffset(e.off), e.tag, "string runs past the header end without a NUL")
			}
			n += k + 1
		}
		return uint32(n), nil
	default:
		n := uint64(typeSize[e.typ]) * uint64(e.count)
		if n > uint64(len(rest)) {
			return 0, corrupt(h.sect, h.dataOffset(e.off), e.tag, "%d %s values (%d bytes) run past the header end (%d bytes left)", e.count, typeName(e.typ), n, len(rest))
		}
		return uint32(n), nil
	}
}

func beUint32(s string) uint32 {
	return uint32(s[0])<<24 | uint32(s[1])<<16 | uint32(s[2])<<8 | uint32(s[3])
}

// find returns the first entry with the tag.
func (h *header) find(tag uint32) *entry {
	for i := range h.entries {
		if h.entries[i].tag == tag && !(h.region && i == 0) {
			return &h.entries[i]
		}
	}
	return nil
}

func (h *header) typeErr(e *entry, want string) error {
	return corrupt(h.sect, h.entryOffset(e.pos), e.tag, "type %s, want %s", typeName(e.typ), want)
}

// str returns the first string of a string tag (the untranslated one of an i18n string).
func (h *header) str(tag uint32) (string, bool, error) {
	e := h.find(tag)
	if e == nil {
		return "", false, nil
	}
	if !stringClass(e.typ) {
		return "", false, h.typeErr(e, "string")
	}
	s := h.data[e.off : e.off+e.length]
	return s[:strings.IndexByte(s, 0)], true, nil
}

// strs returns all strings of a string tag; nil when the tag is absent.
func (h *header) strs(tag uint32) ([]string, error) {
	e := h.find(tag)
	if e == nil {
		return nil, nil
	}
	if !stringClass(e.typ) {
		return nil, h.typeErr(e, "string array")
	}
	out := make([]string, 0, e.count)
	s := h.data[e.off : e.off+e.length]
	for range e.count {
		k := strings.IndexByte(s, 0)
		out = append(out, s[:k])
		s = s[k+1:]
	}
	return out, nil
}

// ints is an integer array in the data store, read element by element.
type ints struct {
	data string
	size int
}

func (a ints) len() int { return len(a.data) / max(a.size, 1) }

func (a ints) at(i int) uint64 {
	s := a.data[i*a.size:]
	switch a.size {
	case 1:
		return uint64(s[0])
	case 2:
		return uint64(s[0])<<8 | uint64(s[1])
	case 4:
		return uint64(beUint32(s))
	default:
		return uint64(beUint32(s))<<32 | uint64(beUint32(s[4:]))
	}
}

// nums returns an integer tag's values; ok is false when the tag is absent.
func (h *header) nums(tag uint32, want uint32) (a ints, ok bool, err error) {
	e := h.find(tag)
	if e == nil {
		return ints{}, false, nil
	}
	if e.typ != want {
		return ints{}, false, h.typeErr(e, typeName(want))
	}
	return ints{data: h.data[e.off : e.off+e.length], size: int(typeSize[e.typ])}, true, nil
}

// num returns the first value of an integer tag.
func (h *header) num(tag uint32, want uint32) (uint64, bool, error) {
	a, ok, err := h.nums(tag, want)
	if !ok || err != nil {
		return 0, ok, err
	}
	return a.at(0), true, nil
}

// bin returns a binary tag's bytes.
func (h *header) bin(tag uint32) (string, bool, error) {
	e := h.find(tag)
	if e == nil {
		return "", false, nil
	}
	if e.typ != typeBin {
		return "", false, h.typeErr(e, "bin")
	}
	return h.data[e.off : e.off+e.length], true, nil
}
