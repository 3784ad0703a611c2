package rpmfile

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// A small writer of .rpm headers, so tests can make exactly the header they need.

// tent is one header entry to write; off, when set, replaces the computed data offset.
type tent struct {
	tag, typ, count uint32
	data            []byte
	off             *uint32
}

func tStr(tag uint32, s string) tent {
	return tent{tag: tag, typ: typeString, count: 1, data: []byte(s + "\x00")}
}

func tI18N(tag uint32, s ...string) tent {
	e := tStrs(tag, s...)
	e.typ = typeI18NString
	return e
}

func tStrs(tag uint32, s ...string) tent {
	var b []byte
	for _, x := range s {
		b = append(append(b, x...), 0)
	}
	return tent{tag: tag, typ: typeStringArray, count: uint32(len(s)), data: b}
}

func tI32(tag uint32, v ...uint32) tent {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.BigEndian.PutUint32(b[4*i:], x)
	}
	return tent{tag: tag, typ: typeInt32, count: uint32(len(v)), data: b}
}

func tI16(tag uint32, v ...uint16) tent {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.BigEndian.PutUint16(b[2*i:], x)
	}
	return tent{tag: tag, typ: typeInt16, count: uint32(len(v)), data: b}
}

func tI64(tag uint32, v ...uint64) tent {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.BigEndian.PutUint64(b[8*i:], x)
	}
	return tent{tag: tag, typ: typeInt64, count: uint32(len(v)), data: b}
}

func tBin(tag uint32, b []byte) tent {
	return tent{tag: tag, typ: typeBin, count: uint32(len(b)), data: b}
}

// header writes a header: intro, index and data; with regionTag != 0 it is sealed by a
// region entry first in the index and its trailer last in the data, as rpm writes it.
func headerBytes(entries []tent, regionTag uint32) []byte {
	var data []byte
	var index []byte
	put := func(tag, typ, off, count uint32) {
		var b [16]byte
		binary.BigEndian.PutUint32(b[0:], tag)
		binary.BigEndian.PutUint32(b[4:], typ)
		binary.BigEndian.PutUint32(b[8:], off)
		binary.BigEndian.PutUint32(b[12:], count)
		index = append(index, b[:]...)
	}
	for _, e := range entries {
		if a := typeAlign[e.typ%uint32(len(typeAlign))]; a > 1 {
			for uint32(len(data))%a != 0 {
				data = append(data, 0)
			}
		}
		off := uint32(len(data))
		if e.off != nil {
			off = *e.off
		}
		put(e.tag, e.typ, off, e.count)
		data = append(data, e.data...)
	}
	il := uint32(len(entries))
	if regionTag != 0 {
		il++
		trailer := make([]byte, 16)
		binary.BigEndian.PutUint32(trailer[0:], regionTag)
		binary.BigEndian.PutUint32(trailer[4:], typeBin)
		binary.BigEndian.PutUint32(trailer[8:], uint32(-int32(il*16)))
		binary.BigEndian.PutUint32(trailer[12:], 16)
		off := uint32(len(data))
		data = append(data, trailer...)
		var first [16]byte
		binary.BigEndian.PutUint32(first[0:], regionTag)
		binary.BigEndian.PutUint32(first[4:], typeBin)
		binary.BigEndian.PutUint32(first[8:], off)
		binary.BigEndian.PutUint32(first[12:], 16)
		index = append(first[:], index...)
	}
	out := append([]byte{}, headerMagic[:]...)
	out = binary.BigEndian.AppendUint32(out, il)
	out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
	out = append(out, index...)
	return append(out, data...)
}

func leadBytes(source bool) []byte {
	b := make([]byte, leadSize)
	copy(b, leadMagic[:])
	b[4] = 3
	if source {
		b[7] = 1
	}
	copy(b[10:], "test-1-1")
	b[79] = 5 // signature type: header-style
	return b
}

// rpmBytes writes a whole package: lead, signature header and padding, main header and
// a few bytes of payload.
func rpmBytes(sig, hdr []tent) []byte {
	out := leadBytes(false)
	s := headerBytes(sig, tagHeaderSignatures)
	out = append(out, s...)
	for len(out)%8 != 0 {
		out = append(out, 0)
	}
	out = append(out, headerBytes(hdr, tagHeaderImmutable)...)
	return append(out, "payload"...)
}

// minimal is a header with the tags every package has.
func minimal(extra ...tent) []tent {
	return append([]tent{
		tStr(tagName, "test"), tStr(tagVersion, "1.0"), tStr(tagRelease, "1"),
		tI18N(tagSummary, "summary"), tI18N(tagDescription, "description"),
		tI32(tagBuildTime, 1700000000), tI32(tagSize, 42),
		tStr(tagArch, "x86_64"), tStr(tagSourceRPM, "test-1.0-1.src.rpm"),
	}, extra...)
}

func sigMinimal(extra ...tent) []tent {
	return append([]tent{tI32(1000, 1234), tI32(sigPayloadSize, 99)}, extra...)
}

func readBytes(t *testing.T, b []byte) *Header {
	t.Helper()
	h, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return h
}
