package rpmgen

import (
	"cmp"
	"encoding/binary"
	"slices"
)

// headerMagic starts every header structure: magic, version 1, four reserved bytes.
var headerMagic = [8]byte{0x8e, 0xad, 0xe8, 0x01, 0, 0, 0, 0}

const entrySize = 16 // bytes of one index entry

// entry is one tag of a header being built.
type entry struct {
	tag, typ, count uint32
	data            []byte
}

// headerBuilder collects the entries of one header and lays them out as rpm does.
type headerBuilder struct {
	entries []entry
}

func (b *headerBuilder) add(tag, typ, count uint32, data []byte) {
	b.entries = append(b.entries, entry{tag: tag, typ: typ, count: count, data: data})
}

// str adds a string tag.
func (b *headerBuilder) str(tag uint32, s string) {
	b.add(tag, typeString, 1, append([]byte(s), 0))
}

// optStr adds a string tag unless s is empty, as rpmbuild leaves unset tags out.
func (b *headerBuilder) optStr(tag uint32, s string) {
	if s != "" {
		b.str(tag, s)
	}
}

// i18n adds an i18n string with only the untranslated ("C") text.
func (b *headerBuilder) i18n(tag uint32, s string) {
	b.add(tag, typeI18NString, 1, append([]byte(s), 0))
}

// strs adds a string array; an empty one is left out, since rpm refuses a count of 0.
func (b *headerBuilder) strs(tag uint32, ss []string) {
	if len(ss) == 0 {
		return
	}
	n := 0
	for _, s := range ss {
		n += len(s) + 1
	}
	data := make([]byte, 0, n)
	for _, s := range ss {
		data = append(append(data, s...), 0)
	}
	b.add(tag, typeStringArray, uint32(len(ss)), data)
}

// i32 adds an int32 array; an empty one is left out.
func (b *headerBuilder) i32(tag uint32, v ...uint32) {
	if len(v) == 0 {
		return
	}
	data := make([]byte, 0, 4*len(v))
	for _, x := range v {
		data = binary.BigEndian.AppendUint32(data, x)
	}
	b.add(tag, typeInt32, uint32(len(v)), data)
}

// i16 adds an int16 array; an empty one is left out.
func (b *headerBuilder) i16(tag uint32, v ...uint16) {
	if len(v) == 0 {
		return
	}
	data := make([]byte, 0, 2*len(v))
	for _, x := range v {
		data = binary.BigEndian.AppendUint16(data, x)
	}
	b.add(tag, typeInt16, uint32(len(v)), data)
}

// bin adds a binary tag.
func (b *headerBuilder) bin(tag uint32, data []byte) {
	b.add(tag, typeBin, uint32(len(data)), data)
}

// marshal lays the header out: the intro, then the index with the region entry first and
// the others sorted by tag, then the data, each entry's aligned for its type, ending with
// the region trailer. The region covers the whole header, as rpm requires of a package.
func (b *headerBuilder) marshal(regionTag uint32) []byte {
	entries := slices.Clone(b.entries)
	slices.SortStableFunc(entries, func(x, y entry) int { return cmp.Compare(x.tag, y.tag) })
	il := len(entries) + 1
	dl := 0
	for _, e := range entries {
		dl = align(dl, typeAlign[e.typ]) + len(e.data)
	}
	trailerOff := dl
	dl += entrySize

	out := make([]byte, 0, len(headerMagic)+8+il*entrySize+dl)
	out = append(out, headerMagic[:]...)
	out = binary.BigEndian.AppendUint32(out, uint32(il))
	out = binary.BigEndian.AppendUint32(out, uint32(dl))
	out = appendEntry(out, regionTag, typeBin, uint32(trailerOff), entrySize)
	off := 0
	for _, e := range entries {
		off = align(off, typeAlign[e.typ])
		out = appendEntry(out, e.tag, e.typ, uint32(off), e.count)
		off += len(e.data)
	}
	base := len(out)
	for _, e := range entries {
		out = padTo(out, base, typeAlign[e.typ])
		out = append(out, e.data...)
	}
	// The trailer's offset is the negated size of the region's index.
	return appendEntry(out, regionTag, typeBin, uint32(-int32(il*entrySize)), entrySize)
}

func appendEntry(out []byte, tag, typ, off, count uint32) []byte {
	out = binary.BigEndian.AppendUint32(out, tag)
	out = binary.BigEndian.AppendUint32(out, typ)
	out = binary.BigEndian.AppendUint32(out, off)
	return binary.BigEndian.AppendUint32(out, count)
}

// align rounds n up to a multiple of a.
func align(n, a int) int {
	return (n + a - 1) / a * a
}

// padTo appends zero bytes until the data that starts at out[base] is a multiple of a long.
func padTo(out []byte, base, a int) []byte {
	for (len(out)-base)%a != 0 {
		out = append(out, 0)
	}
	return out
}
