package rpmfile

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"regexp"
	"testing"
	"unicode/utf8"

	"pith/content/rpm/repodata"
)

var keyIDPattern = regexp.MustCompile(`^[0-9a-f]{16}$`)

// FuzzRead: whatever the bytes, Read returns a package or an *Error, never panics, never
// reads past the header, and hands out only valid UTF-8.
func FuzzRead(f *testing.F) {
	// The real rpms cut at the end of their header (the payload is never read), and
	// headers made to reach the signature parser and the legacy paths.
	for _, path := range rpmFiles(f) {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		h, err := Read(bytes.NewReader(b))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:h.Package.HeaderEnd])
	}
	b64 := base64.StdEncoding.EncodeToString
	f.Add(rpmBytes(sigMinimal(tBin(sigRSA, sigV3("0123456789abcdef")), tStrs(sigOpenPGP, b64(sigV6(make([]byte, 32))))),
		minimal(tI16(tagFileModes, 0o40755), tI32(tagFileFlags, 0), tStrs(tagOldFilenames, "/a"),
			tI32(tagChangelogTime, 1, 1), tStrs(tagChangelogName, "a ", "b"), tStrs(tagChangelogText, "x", "y"))))
	f.Add(rpmRaw(sigMinimal(), minimal(tStrs(tagRequireName, "libc.so.6(GLIBC_2.3)", "libc.so.6(GLIBC_2.4)"),
		tI32(tagRequireFlags, 0, 0), tStrs(tagRequireVersion, "", ""))))

	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		h, err := Read(r)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !(errors.Is(err, ErrNotRPM) || errors.Is(err, ErrTruncated) || errors.Is(err, ErrCorrupt)) {
				t.Fatalf("error %T %v is not an *Error with a sentinel", err, err)
			}
			return
		}
		p := &h.Package
		if p.HeaderStart <= leadSize || p.HeaderEnd <= p.HeaderStart || p.HeaderEnd > int64(len(data)) {
			t.Fatalf("header range %d-%d in %d bytes", p.HeaderStart, p.HeaderEnd, len(data))
		}
		if left := int64(r.Len()); left != int64(len(data))-p.HeaderEnd {
			t.Fatalf("Read left %d bytes, want %d", left, int64(len(data))-p.HeaderEnd)
		}
		for _, id := range h.KeyIDs {
			if !keyIDPattern.MatchString(id) {
				t.Fatalf("key ID %q", id)
			}
		}
		for _, s := range packageStrings(p) {
			if !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8 %q", s)
			}
		}
	})
}

func packageStrings(p *repodata.Package) []string {
	s := []string{p.Name, p.Epoch, p.Version, p.Release, p.Arch, p.Summary, p.Description, p.URL,
		p.Packager, p.License, p.Vendor, p.Group, p.BuildHost, p.SourceRPM}
	for _, deps := range [][]repodata.Dep{p.Provides, p.Requires, p.Conflicts, p.Obsoletes,
		p.Suggests, p.Enhances, p.Recommends, p.Supplements} {
		for _, d := range deps {
			s = append(s, d.Name, d.Flags, d.Epoch, d.Version, d.Release)
		}
	}
	for _, f := range p.Files {
		s = append(s, f.Path, f.Type)
	}
	for _, c := range p.Changelogs {
		s = append(s, c.Author, c.Text)
	}
	return s
}
