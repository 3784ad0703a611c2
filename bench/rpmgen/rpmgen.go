// Package rpmgen writes minimal but valid binary .rpm files from package metadata, so
// that benchmarks can give createrepo_c, rpm and pith real packages made in bulk,
// without rpmbuild.
//
// A package written here has a lead, a signature header with the size, payload size,
// sha1 and sha256 header digests and md5 digest that rpm checks, a main header sealed by
// an immutable region, and a gzip-compressed cpio payload of deterministic pseudo-random
// file contents. rpm -K accepts it, rpm -q and rpm2cpio read it, createrepo_c indexes it,
// and pith's rpmfile reader gives back the metadata it was written from.
package rpmgen

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"strconv"

	"pith/content/rpm/repodata"
)

// rpmVersion is the rpm version the header claims to be built by.
const rpmVersion = "4.18.0"

const leadSize = 96

// Write writes a binary .rpm for p to w and returns the number of bytes written.
//
// The header holds p's NEVRA, descriptive fields, build time, dependencies (with the
// rpmlib() requirements rpm expects), files and changelog. p.Changelogs is read in
// other.xml order, oldest first, and written in header order, newest first. Files keep
// their order; directories get mode 040755, other files 0100644, ghosts the ghost flag.
// An epoch of "" or "0" is left out of the header, as rpmbuild does without an Epoch
// line. The fields that describe the file rather than the header (PkgID, sizes, times
// and location, header range) are ignored. A package whose Arch is "src" is marked as a
// source package.
//
// The payload is a gzip-compressed cpio "newc" archive holding the package's regular
// files and directories; the regular files share payloadBytes of deterministic
// pseudo-random data (payloadBytes/n bytes each), seeded by the NEVRA. A package without
// regular files has no file data.
func Write(w io.Writer, p *repodata.Package, payloadBytes int64) (int64, error) {
	pl, err := buildPayload(p, payloadBytes)
	if err != nil {
		return 0, fmt.Errorf("rpmgen: %s: %w", p.NEVRA(), err)
	}
	hdr, err := mainHeader(p, pl)
	if err != nil {
		return 0, fmt.Errorf("rpmgen: %s: %w", p.NEVRA(), err)
	}
	sig, err := signatureHeader(hdr, pl)
	if err != nil {
		return 0, fmt.Errorf("rpmgen: %s: %w", p.NEVRA(), err)
	}
	var n int64
	for _, part := range [][]byte{lead(p), sig, hdr, pl.compressed} {
		k, err := w.Write(part)
		n += int64(k)
		if err != nil {
			return n, fmt.Errorf("rpmgen: writing %s: %w", p.NEVRA(), err)
		}
	}
	return n, nil
}

// lead is the 96-byte lead of rpm format 3, which rpm only checks for its magic and
// type; the signature type 5 says a header-style signature follows.
func lead(p *repodata.Package) []byte {
	b := make([]byte, leadSize)
	copy(b, []byte{0xed, 0xab, 0xee, 0xdb, 3, 0})
	if p.Arch == "src" {
		b[7] = 1
	}
	binary.BigEndian.PutUint16(b[8:], 1) // archnum
	name := p.Name + "-" + p.Version + "-" + p.Release
	copy(b[10:75], name)                  // at most 65 bytes, so the field keeps a NUL
	binary.BigEndian.PutUint16(b[76:], 1) // osnum
	binary.BigEndian.PutUint16(b[78:], 5) // signature type
	return b
}

// signatureHeader returns the signature header, padded to a multiple of 8 bytes, with
// the digests and sizes of hdr and the payload.
func signatureHeader(hdr []byte, pl *payload) ([]byte, error) {
	size := int64(len(hdr)) + int64(len(pl.compressed))
	if size > math.MaxUint32 || pl.archiveSize > math.MaxUint32 {
		return nil, fmt.Errorf("package of %d bytes (archive %d) too large for 32-bit sizes", size, pl.archiveSize)
	}
	s1 := sha1.Sum(hdr)
	s256 := sha256.Sum256(hdr)
	m := md5.New()
	m.Write(hdr)
	m.Write(pl.compressed)
	var b headerBuilder
	b.str(sigSHA1, hex.EncodeToString(s1[:]))
	b.str(sigSHA256, hex.EncodeToString(s256[:]))
	b.i32(sigSize, uint32(size))
	b.bin(sigMD5, m.Sum(nil))
	b.i32(sigPayloadSize, uint32(pl.archiveSize))
	out := b.marshal(tagHeaderSignatures)
	for len(out)%8 != 0 {
		out = append(out, 0)
	}
	return out, nil
}

// mainHeader returns the main header of p with pl's files.
func mainHeader(p *repodata.Package, pl *payload) ([]byte, error) {
	if p.Name == "" || p.Version == "" || p.Release == "" || p.Arch == "" {
		return nil, fmt.Errorf("name, version, release and arch are required")
	}
	if pl.installed > math.MaxUint32 {
		return nil, fmt.Errorf("installed size %d too large for a 32-bit size", pl.installed)
	}
	var b headerBuilder
	b.strs(tagI18NTable, []string{"C"})
	if err := addNEVRA(&b, p); err != nil {
		return nil, err
	}
	addDescription(&b, p)
	b.i32(tagSize, uint32(pl.installed))
	b.str(tagRPMVersion, rpmVersion)
	addFiles(&b, pl.files, uint32(p.TimeBuild))
	if err := addAllDeps(&b, p); err != nil {
		return nil, err
	}
	addChangelogs(&b, p.Changelogs)
	addPayloadTags(&b, pl)
	return b.marshal(tagHeaderImmutable), nil
}

// addNEVRA adds the name, epoch, version, release and arch, and marks the package as a
// binary one (by its source rpm) or a source one.
func addNEVRA(b *headerBuilder, p *repodata.Package) error {
	b.str(tagName, p.Name)
	b.str(tagVersion, p.Version)
	b.str(tagRelease, p.Release)
	if p.Epoch != "" && p.Epoch != "0" {
		e, err := strconv.ParseUint(p.Epoch, 10, 32)
		if err != nil {
			return fmt.Errorf("epoch %q: %w", p.Epoch, err)
		}
		b.i32(tagEpoch, uint32(e))
	}
	b.str(tagOS, "linux")
	b.str(tagArch, p.Arch)
	if p.Arch == "src" {
		b.i32(tagSourcePackage, 1)
	} else {
		b.str(tagSourceRPM, p.SourceRPM)
	}
	return nil
}

// addDescription adds the descriptive tags; summary and description always, the
// others when set.
func addDescription(b *headerBuilder, p *repodata.Package) {
	b.i18n(tagSummary, p.Summary)
	b.i18n(tagDescription, p.Description)
	if p.Group != "" {
		b.i18n(tagGroup, p.Group)
	}
	b.i32(tagBuildTime, uint32(p.TimeBuild))
	b.optStr(tagBuildHost, p.BuildHost)
	b.optStr(tagVendor, p.Vendor)
	b.optStr(tagLicense, p.License)
	b.optStr(tagPackager, p.Packager)
	b.optStr(tagURL, p.URL)
}

// addFiles adds the file list: compressed names and one value per file in each of the
// per-file tags rpm reads. A package without files has none of these tags.
func addFiles(b *headerBuilder, files []fileInfo, mtime uint32) {
	if len(files) == 0 {
		return
	}
	n := len(files)
	var (
		dirs     []string
		dirIndex = map[string]uint32{}
		indexes  = make([]uint32, n)
		bases    = make([]string, n)
		sizes    = make([]uint32, n)
		modes    = make([]uint16, n)
		rdevs    = make([]uint16, n)
		mtimes   = make([]uint32, n)
		digests  = make([]string, n)
		empty    = make([]string, n)
		flags    = make([]uint32, n)
		owners   = make([]string, n)
		verify   = make([]uint32, n)
		devices  = make([]uint32, n)
		inodes   = make([]uint32, n)
	)
	for i, f := range files {
		j, ok := dirIndex[f.dir]
		if !ok {
			j = uint32(len(dirs))
			dirIndex[f.dir] = j
			dirs = append(dirs, f.dir)
		}
		indexes[i], bases[i] = j, f.base
		sizes[i], modes[i], mtimes[i] = f.size, f.mode, mtime
		digests[i], flags[i], owners[i] = f.digest, f.flags, "root"
		verify[i], devices[i], inodes[i] = math.MaxUint32, 1, uint32(i+1)
	}
	b.i32(tagFileSizes, sizes...)
	b.i16(tagFileModes, modes...)
	b.i16(tagFileRdevs, rdevs...)
	b.i32(tagFileMtimes, mtimes...)
	b.strs(tagFileDigests, digests)
	b.strs(tagFileLinkTos, empty)
	b.i32(tagFileFlags, flags...)
	b.strs(tagFileUserName, owners)
	b.strs(tagFileGroupName, owners)
	b.i32(tagFileVerifyFlags, verify...)
	b.i32(tagFileDevices, devices...)
	b.i32(tagFileInodes, inodes...)
	b.strs(tagFileLangs, empty)
	b.i32(tagDirIndexes, indexes...)
	b.strs(tagBasenames, bases)
	b.strs(tagDirnames, dirs)
	b.i32(tagFileDigestAlgo, hashSHA256)
}

// addAllDeps adds every kind of dependency, and to the requires the rpmlib()
// requirements of the package's format.
func addAllDeps(b *headerBuilder, p *repodata.Package) error {
	rpmlib := rpmlibRequires
	if hasRich(p.Requires, p.Conflicts, p.Obsoletes, p.Recommends, p.Suggests, p.Supplements, p.Enhances) {
		rpmlib = append(rpmlib[:len(rpmlib):len(rpmlib)], richRequire)
	}
	kinds := []struct {
		kind  string
		tags  depTags
		deps  []repodata.Dep
		extra []rpmlibDep
	}{
		{"provides", depTags{tagProvideName, tagProvideFlags, tagProvideVersion}, p.Provides, nil},
		{"requires", depTags{tagRequireName, tagRequireFlags, tagRequireVersion}, p.Requires, rpmlib},
		{"conflicts", depTags{tagConflictName, tagConflictFlags, tagConflictVersion}, p.Conflicts, nil},
		{"obsoletes", depTags{tagObsoleteName, tagObsoleteFlags, tagObsoleteVersion}, p.Obsoletes, nil},
		{"recommends", depTags{tagRecommendName, tagRecommendFlags, tagRecommendVersion}, p.Recommends, nil},
		{"suggests", depTags{tagSuggestName, tagSuggestFlags, tagSuggestVersion}, p.Suggests, nil},
		{"supplements", depTags{tagSupplementName, tagSupplementFlags, tagSupplementVersion}, p.Supplements, nil},
		{"enhances", depTags{tagEnhanceName, tagEnhanceFlags, tagEnhanceVersion}, p.Enhances, nil},
	}
	for _, k := range kinds {
		if err := addDeps(b, k.kind, k.tags, k.deps, k.extra); err != nil {
			return err
		}
	}
	return nil
}

// addChangelogs adds the changelog, newest entry first as in rpm headers, from entries
// listed oldest first.
func addChangelogs(b *headerBuilder, cl []repodata.Changelog) {
	n := len(cl)
	if n == 0 {
		return
	}
	times := make([]uint32, n)
	names := make([]string, n)
	texts := make([]string, n)
	for i, c := range cl {
		j := n - 1 - i
		times[j], names[j], texts[j] = uint32(c.Date), c.Author, c.Text
	}
	b.i32(tagChangelogTime, times...)
	b.strs(tagChangelogName, names)
	b.strs(tagChangelogText, texts)
}

// addPayloadTags describes the payload: format, compression and its sha256 digest.
func addPayloadTags(b *headerBuilder, pl *payload) {
	b.str(tagPayloadFormat, "cpio")
	b.str(tagPayloadCompressor, "gzip")
	b.str(tagPayloadFlags, strconv.Itoa(gzipLevel))
	sum := sha256.Sum256(pl.compressed)
	b.strs(tagPayloadDigest, []string{hex.EncodeToString(sum[:])})
	b.i32(tagPayloadDigestAlgo, hashSHA256)
}
