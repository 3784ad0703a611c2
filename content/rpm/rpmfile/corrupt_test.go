package rpmfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
)

// rpmRaw joins a lead, a signature header with its padding and a main header written
// without a region, for entries whose data must end the header.
func rpmRaw(sig, hdr []tent) []byte {
	out := leadBytes(false)
	out = append(out, headerBytes(sig, tagHeaderSignatures)...)
	for len(out)%8 != 0 {
		out = append(out, 0)
	}
	return append(out, headerBytes(hdr, 0)...)
}

func u32(v uint32) *uint32 { return &v }

func put32(b []byte, off int64, v uint32) []byte {
	b = bytes.Clone(b)
	binary.BigEndian.PutUint32(b[off:], v)
	return b
}

func TestCorrupt(t *testing.T) {
	t.Parallel()
	real, err := os.ReadFile(zooDir + "/cheetah-0.3-0.8.noarch.rpm")
	if err != nil {
		t.Fatal(err)
	}
	good := readBytes(t, real).Package
	hs, he := good.HeaderStart, good.HeaderEnd
	sigEnd := leadSize + introSize + int64(binary.BigEndian.Uint32(real[104:]))*entrySize + int64(binary.BigEndian.Uint32(real[108:]))

	// A signature header whose data (4 + 4 + 3 bytes) needs padding.
	padded := rpmBytes(sigMinimal(tStr(269, "ab")), minimal())
	paddedSigEnd := leadSize + introSize + 4*entrySize + 11 + 16

	// A header whose region trailer is the last 16 bytes; the data of the entry given
	// after minimal() starts at off.
	regionAt := func(e tent) []byte { return rpmBytes(sigMinimal(), minimal(e)) }
	trailerOff := func() uint32 { // where the trailer of minimal() plus one 4-byte entry starts
		h := headerBytes(minimal(tI32(tagEpoch, 1)), tagHeaderImmutable)
		return binary.BigEndian.Uint32(h[introSize+8:])
	}()

	bigData := make([]byte, arrayMaxElem+1)
	cases := []struct {
		name    string
		in      []byte
		is      error
		section Section
		tag     uint32
		msg     string
	}{
		{"empty file", nil, ErrNotRPM, SectionLead, 0, "not an RPM file (empty file)"},
		{"not an rpm", []byte("<!DOCTYPE html><html><body>404 not found</body></html>" + strings.Repeat(" ", 100)), ErrNotRPM, SectionLead, 0, "not an RPM file (bad lead magic)"},
		{"two bytes of text", []byte("hi"), ErrNotRPM, SectionLead, 0, "bad lead magic"},
		{"truncated in the lead", real[:50], ErrTruncated, SectionLead, 0, "truncated: want 96 bytes of the lead, the file ends after 50"},
		{"lead only", real[:leadSize], ErrTruncated, SectionSignature, 0, "want 16 bytes of the header intro, the file ends after 0"},
		{"truncated in the signature index", real[:leadSize+introSize+8], ErrTruncated, SectionSignature, 0, "truncated"},
		{"truncated in the signature data", real[:sigEnd-1], ErrTruncated, SectionSignature, 0, "truncated"},
		{"truncated in the signature padding", padded[:paddedSigEnd+1], ErrTruncated, SectionSignature, 0, "signature header padding"},
		{"truncated in the header intro", real[:hs+5], ErrTruncated, SectionHeader, 0, "want 16 bytes of the header intro, the file ends after 5"},
		{"truncated in the header index", real[:hs+introSize+40], ErrTruncated, SectionHeader, 0, "truncated"},
		{"truncated in the header data", real[:he-1], ErrTruncated, SectionHeader, 0, "truncated"},
		{"bad signature header magic", put32(real, leadSize, 0x8eade802), ErrCorrupt, SectionSignature, 0, "bad header magic"},
		{"bad header magic", put32(real, hs+4, 1), ErrCorrupt, SectionHeader, 0, "bad header magic"},
		{"index count huge", put32(real, hs+8, 0xffffffff), ErrCorrupt, SectionHeader, 0, "index entry count 4294967295 out of range 1..65535"},
		{"index count zero", put32(real, hs+8, 0), ErrCorrupt, SectionHeader, 0, "index entry count 0"},
		{"signature index count over 32", put32(real, leadSize+8, 33), ErrCorrupt, SectionSignature, 0, "out of range 1..32"},
		{"data length over the limit", put32(real, hs+12, 0x10000000), ErrCorrupt, SectionHeader, 0, "data length 268435456 over the limit"},
		{"data length lies", put32(real, hs+12, 200<<20), ErrTruncated, SectionHeader, 0, "the file ends after"},
		{"offset past the data end", rpmRaw(sigMinimal(), minimal(tent{tag: tagEpoch, typ: typeInt32, count: 1, data: []byte{0, 0, 0, 1}, off: u32(0xffffff00)})),
			ErrCorrupt, SectionHeader, tagEpoch, "data offset 4294967040 past the data end"},
		{"negative offset", rpmRaw(sigMinimal(), []tent{{tag: tagEpoch, typ: typeInt32, count: 1, data: []byte{0, 0, 0, 1}, off: u32(0x80000000)}}),
			ErrCorrupt, SectionHeader, tagEpoch, "past the data end"},
		{"count past the data", rpmRaw(sigMinimal(), minimal(tent{tag: tagDirIndexes, typ: typeInt32, count: 3, data: []byte{0, 0, 0, 1}})),
			ErrCorrupt, SectionHeader, tagDirIndexes, "3 int32 values (12 bytes) run past the header end (4 bytes left)"},
		{"count over the data length", rpmRaw(sigMinimal(), []tent{{tag: tagDirIndexes, typ: typeInt32, count: 0x40000001, data: []byte{0, 0, 0, 1}}}),
			ErrCorrupt, SectionHeader, tagDirIndexes, "count 1073741825 out of range 1..4"},
		{"zero count", rpmRaw(sigMinimal(), []tent{{tag: tagEpoch, typ: typeInt32, count: 0, data: []byte{0, 0, 0, 1}}}),
			ErrCorrupt, SectionHeader, tagEpoch, "count 0 out of range"},
		{"string without NUL", rpmRaw(sigMinimal(), minimal(tent{tag: tagURL, typ: typeString, count: 1, data: []byte("http://x")})),
			ErrCorrupt, SectionHeader, tagURL, "string runs past the header end without a NUL"},
		{"string array count past the data", rpmRaw(sigMinimal(), minimal(tent{tag: tagBasenames, typ: typeStringArray, count: 5, data: []byte("a\x00b\x00")})),
			ErrCorrupt, SectionHeader, tagBasenames, "without a NUL"},
		{"string with count 2", rpmBytes(sigMinimal(), minimal(tent{tag: tagURL, typ: typeString, count: 2, data: []byte("a\x00b\x00")})),
			ErrCorrupt, SectionHeader, tagURL, "string with count 2"},
		{"misaligned int32", rpmBytes(sigMinimal(), []tent{tStr(tagName, "n"), {tag: tagEpoch, typ: typeInt32, count: 1, data: []byte{0, 0, 0, 1}, off: u32(1)}}),
			ErrCorrupt, SectionHeader, tagEpoch, "not aligned for int32"},
		{"overlapping data", rpmBytes(sigMinimal(), []tent{tStr(tagName, "name"), {tag: tagVersion, typ: typeString, count: 1, data: []byte("1\x00"), off: u32(2)}}),
			ErrCorrupt, SectionHeader, tagVersion, "overlaps the previous tag's data"},
		{"tag below 100", rpmBytes(sigMinimal(), minimal(tStr(50, "x"))), ErrCorrupt, SectionHeader, 50, "tag number below 100"},
		{"bad type", rpmBytes(sigMinimal(), minimal(tent{tag: 5000, typ: 10, count: 1, data: []byte{1}})), ErrCorrupt, SectionHeader, 5000, "bad data type 10"},
		{"wrong type for a known tag", rpmBytes(sigMinimal(), []tent{tI32(tagName, 1)}), ErrCorrupt, SectionHeader, tagName, "tag 1000 (name) at offset 0x"},
		{"too many elements", rpmBytes(sigMinimal(), minimal(tent{tag: 5999, typ: typeChar, count: arrayMaxElem + 1, data: bigData})),
			ErrCorrupt, SectionHeader, 5999, "1048576 elements, over the limit"},
		{"signature tag of the wrong type", rpmBytes(sigMinimal(tStr(sigLongArchiveSize, "1")), minimal()),
			ErrCorrupt, SectionSignature, sigLongArchiveSize, "type string, want int64"},
		{"bad region trailer", regionAt(tent{tag: tagEpoch, typ: typeInt32, count: 1, data: []byte{0, 0, 0, 1}}) /* patched below */, nil, "", 0, ""},
		{"data overlaps the region trailer", regionAt(tent{tag: tagEpoch, typ: typeInt32, count: 1, data: []byte{0, 0, 0, 1}, off: u32(trailerOff)}),
			ErrCorrupt, SectionHeader, tagEpoch, "overlaps the region trailer"},
	}
	// Patch the region trailer of the "bad region trailer" case: tag 62 instead of 63.
	for i := range cases {
		if cases[i].name == "bad region trailer" {
			b := cases[i].in
			h := readBytes(t, b).Package
			cases[i].in = put32(b, h.HeaderEnd-16, tagHeaderSignatures)
			cases[i].is, cases[i].section, cases[i].tag, cases[i].msg = ErrCorrupt, SectionHeader, tagHeaderImmutable, "bad region trailer: tag 62"
		}
	}
	// A region that claims fewer entries than the header has.
	{
		b := rpmBytes(sigMinimal(), minimal())
		h := readBytes(t, b).Package
		cases = append(cases, struct {
			name    string
			in      []byte
			is      error
			section Section
			tag     uint32
			msg     string
		}{"region smaller than the header", put32(b, h.HeaderEnd-8, 0xffffffe0), ErrCorrupt, SectionHeader, tagHeaderImmutable, "region covers 2 entries"})
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := Read(bytes.NewReader(c.in))
			if err == nil {
				t.Fatalf("read %+v, want an error", h.Package.Name)
			}
			t.Log(err)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not an *Error", err, err)
			}
			if !errors.Is(err, c.is) || e.Section != c.section || e.Tag != c.tag || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("got %v (section %q, tag %d), want %v in section %q, tag %d, saying %q", err, e.Section, e.Tag, c.is, c.section, c.tag, c.msg)
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	e := corrupt(SectionHeader, 0x1234, tagName, "data runs past the header end")
	if got, want := e.Error(), "rpm header: tag 1000 (name) at offset 0x1234: data runs past the header end"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestLyingSizeCostsNothing: a header claiming 200 MiB of data in a small file must not
// make Read allocate anything like that.
func TestLyingSizeCostsNothing(t *testing.T) {
	real, err := os.ReadFile(zooDir + "/cheetah-0.3-0.8.noarch.rpm")
	if err != nil {
		t.Fatal(err)
	}
	b := put32(real, 280+12, 200<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		if _, err := Read(bytes.NewReader(b)); !errors.Is(err, ErrTruncated) {
			t.Fatalf("got %v, want truncated", err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 10; per > 1<<20 {
		t.Errorf("Read allocated %d bytes per call on a lying header", per)
	}
}

// errReader fails after n bytes.
type errReader struct {
	r io.Reader
	n int
}

var errDisk = errors.New("disk on fire")

func (e *errReader) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, errDisk
	}
	p = p[:min(len(p), e.n)]
	n, err := e.r.Read(p)
	e.n -= n
	return n, err
}

func TestReaderError(t *testing.T) {
	t.Parallel()
	real, err := os.ReadFile(zooDir + "/cheetah-0.3-0.8.noarch.rpm")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 10, 200, 1000, len(real) - 10} {
		_, err := ReadPackage(&errReader{bytes.NewReader(real), n})
		var e *Error
		if !errors.Is(err, errDisk) || !errors.As(err, &e) {
			t.Errorf("failing after %d bytes: got %v, want the reader's error in an *Error", n, err)
		}
	}
}
