package rpmfile

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strconv"

	"pith/content/rpm/repodata"
)

// Header is what an .rpm file's signature and main headers say about the package.
type Header struct {
	// Package is filled as createrepo_c fills a package from a header. PkgID,
	// ChecksumType, SizePackage, TimeFile and the location depend on the file, not the
	// header, and are left to the caller (ReadPackage sets the first three).
	Package repodata.Package `json:"package"`
	// KeyIDs are the IDs of the OpenPGP keys that signed the package, 16 lower-case hex
	// digits each, sorted and unique; empty for an unsigned package.
	KeyIDs []string `json:"key_ids"`
}

// Read reads an .rpm file's lead, signature header and main header from r, and stops at
// the start of the payload. Errors are *Error values wrapping ErrNotRPM, ErrTruncated,
// ErrCorrupt or the reader's error.
func Read(r io.Reader) (*Header, error) {
	c := &countReader{r: r}
	ld, err := readLead(c)
	if err != nil {
		return nil, err
	}
	sig, err := readHeader(c, SectionSignature)
	if err != nil {
		return nil, err
	}
	h, err := readHeader(c, SectionHeader)
	if err != nil {
		return nil, err
	}
	return build(ld, sig, h)
}

// ReadPackage reads a whole .rpm file: the headers as Read does, then the payload, which
// it only hashes. Besides what Read fills, it sets PkgID to the file's sha256,
// ChecksumType to "sha256" and SizePackage to the file's size.
func ReadPackage(r io.Reader) (*Header, error) {
	sum := sha256.New()
	tee := io.TeeReader(r, sum)
	hd, err := Read(tee)
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(sum, r)
	if err != nil {
		return nil, &Error{Section: SectionPayload, Offset: hd.Package.HeaderEnd + n, Err: err, Msg: "reading the payload: " + err.Error()}
	}
	hd.Package.PkgID = hex.EncodeToString(sum.Sum(nil))
	hd.Package.ChecksumType = "sha256"
	hd.Package.SizePackage = hd.Package.HeaderEnd + n
	return hd, nil
}

func build(ld lead, sig, h *header) (*Header, error) {
	p := repodata.Package{HeaderStart: h.start, HeaderEnd: h.end}
	var err error
	str := func(tag uint32) string {
		if err != nil {
			return ""
		}
		var s string
		s, _, err = h.str(tag)
		return text(s)
	}
	p.Name = str(tagName)
	p.Version = str(tagVersion)
	p.Release = str(tagRelease)
	p.Summary = str(tagSummary)
	p.Description = str(tagDescription)
	p.URL = str(tagURL)
	p.License = str(tagLicense)
	p.Vendor = str(tagVendor)
	p.Group = str(tagGroup)
	p.BuildHost = str(tagBuildHost)
	p.Packager = str(tagPackager)
	p.SourceRPM = str(tagSourceRPM)
	arch := str(tagArch)
	if err != nil {
		return nil, err
	}

	epoch, _, err := h.num(tagEpoch, typeInt32)
	if err != nil {
		return nil, err
	}
	p.Epoch = strconv.FormatUint(epoch, 10)
	buildTime, _, err := h.num(tagBuildTime, typeInt32)
	if err != nil {
		return nil, err
	}
	p.TimeBuild = int64(buildTime)

	src, err := isSource(ld, h)
	if err != nil {
		return nil, err
	}
	p.Arch = arch
	if src {
		p.Arch = "src"
	} else if h.find(tagSourceRPM) == nil && h.find(tagSourcePackage) == nil {
		p.SourceRPM = "(none)" // rpm retrofits this for a binary package that lacks it
	}

	if p.SizeInstalled, err = firstNum(numTag{h, tagLongSize, typeInt64}, numTag{h, tagSize, typeInt32}); err != nil {
		return nil, err
	}
	if p.SizeArchive, err = archiveSize(sig, h); err != nil {
		return nil, err
	}

	files, paths, err := readFiles(h)
	if err != nil {
		return nil, err
	}
	p.Files = files
	if err := readDeps(h, &p, paths); err != nil {
		return nil, err
	}
	if p.Changelogs, err = readChangelogs(h); err != nil {
		return nil, err
	}
	ids, err := readKeyIDs(sig, h)
	if err != nil {
		return nil, err
	}
	return &Header{Package: p, KeyIDs: ids}, nil
}

// isSource tells a source package as createrepo_c and rpm do: by the sourcepackage tag,
// which rpm retrofits when neither it nor sourcerpm is present and the file list looks
// like a source package's (a single empty directory name). The lead's type stands in
// too, as it did in older rpm.
func isSource(ld lead, h *header) (bool, error) {
	v, ok, err := h.num(tagSourcePackage, typeInt32)
	if err != nil || ok {
		return v != 0, err
	}
	if h.find(tagSourceRPM) != nil {
		return false, nil
	}
	if ld.source {
		return true, nil
	}
	if h.find(tagBasenames) == nil {
		old, err := h.strs(tagOldFilenames)
		return len(old) > 0 && (old[0] == "" || old[0][0] != '/'), err
	}
	dirs, err := h.strs(tagDirnames)
	return len(dirs) == 1 && dirs[0] == "", err
}

// archiveSize is rpm's longarchivesize: the 64-bit tag, else the 32-bit one, each looked
// for in the main header and then the signature header, where rpm puts them and whence it
// merges them (ignoring the signature header's 32-bit tag in an rpm v6 package). An rpm
// v6 package may have neither, only payloadsizealt, the same size under its new name.
func archiveSize(sig, h *header) (int64, error) {
	format, _, err := h.num(tagRPMFormat, typeInt32)
	if err != nil {
		return 0, err
	}
	sig32 := numTag{sig, sigPayloadSize, typeInt32}
	if format >= 6 {
		sig32 = numTag{h, tagPayloadSizeAlt, typeInt64}
	}
	return firstNum(numTag{h, tagLongArchiveSize, typeInt64}, numTag{sig, sigLongArchiveSize, typeInt64},
		numTag{h, tagArchiveSize, typeInt32}, sig32)
}

type numTag struct {
	h        *header
	tag, typ uint32
}

// firstNum returns the first value of the first tag present, 0 if none is.
func firstNum(tags ...numTag) (int64, error) {
	for _, t := range tags {
		v, ok, err := t.h.num(t.tag, t.typ)
		if ok || err != nil {
			return int64(v), err
		}
	}
	return 0, nil
}
