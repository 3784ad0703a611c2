package rpmgen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"pith/content/rpm/repodata"
	"pith/content/rpm/rpmfile"
)

// samplePackage is a package with every kind of dependency, files of each type and a
// changelog of three entries. Its epoch is "0"; rpmfile reads a missing epoch as "0" and
// a dependency's missing epoch as "0" when it has a version, so those are spelled out.
func samplePackage(name, epoch string) *repodata.Package {
	p := &repodata.Package{
		Name: name, Epoch: epoch, Version: "1.2.3", Release: "4.el9", Arch: "x86_64",
		Summary: "A generated package", Description: "It has a description,\nover two lines.",
		URL: "https://example.invalid/" + name, Packager: "Pith <pith@example.invalid>", License: "MIT",
		Vendor: "Pith", Group: "Applications/System", BuildHost: "builder.example.invalid",
		SourceRPM: name + "-1.2.3-4.el9.src.rpm", TimeBuild: 1700000000,
		LocationHref: "Packages/" + name[:1] + "/" + name + "-1.2.3-4.el9.x86_64.rpm",
	}
	p.Provides = []repodata.Dep{
		{Name: name, Flags: "EQ", Epoch: epoch, Version: "1.2.3", Release: "4.el9"},
		{Name: "lib" + name + ".so.1()(64bit)"},
		{Name: "config(" + name + ")", Flags: "EQ", Epoch: epoch, Version: "1.2.3", Release: "4.el9"},
	}
	p.Requires = []repodata.Dep{
		{Name: "/bin/sh", Pre: true},
		{Name: "glibc", Flags: "GE", Epoch: "0", Version: "2.34"},
		{Name: "libfoo", Flags: "EQ", Epoch: "1", Version: "2.0", Release: "3"},
		{Name: "oldthing", Flags: "LT", Epoch: "0", Version: "5"},
		{Name: "(foo if bar)"},
		{Name: "setup", Flags: "GE", Epoch: "0", Version: "2.8", Release: "1", Pre: true},
	}
	p.Conflicts = []repodata.Dep{{Name: "enemy"}, {Name: "rival", Flags: "LE", Epoch: "0", Version: "1.0"}}
	p.Obsoletes = []repodata.Dep{{Name: name + "-old", Flags: "LT", Epoch: "0", Version: "1.0"}}
	p.Suggests = []repodata.Dep{{Name: name + "-doc"}, {Name: "(docs if man)"}}
	p.Enhances = []repodata.Dep{{Name: "shell", Flags: "GT", Epoch: "0", Version: "3"}}
	p.Recommends = []repodata.Dep{{Name: name + "-extras", Flags: "GE", Epoch: "0", Version: "1"}}
	p.Supplements = []repodata.Dep{{Name: "(" + name + " and desktop)"}}
	p.Files = []repodata.File{
		{Type: "dir", Path: "/etc/" + name},
		{Path: "/etc/" + name + "/" + name + ".conf"},
		{Path: "/usr/bin/" + name},
		{Type: "dir", Path: "/usr/share/doc/" + name},
		{Path: "/usr/share/doc/" + name + "/README"},
		{Type: "ghost", Path: "/var/log/" + name + ".log"},
	}
	p.Changelogs = []repodata.Changelog{
		{Author: "Ann <ann@example.invalid> - 1.0-1", Date: 1600000000, Text: "- First release"},
		{Author: "Bob <bob@example.invalid> - 1.1-1", Date: 1650000000, Text: "- Second release\n- with two lines"},
		{Author: "Cy <cy@example.invalid> - 1.2.3-4", Date: 1690000000, Text: "- Third release"},
	}
	return p
}

func writeBytes(t testing.TB, p *repodata.Package, payloadBytes int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := Write(&buf, p, payloadBytes)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("Write returned %d, wrote %d bytes", n, buf.Len())
	}
	return buf.Bytes()
}

// TestRoundTrip reads a written package back with rpmfile and compares every field the
// header carries.
func TestRoundTrip(t *testing.T) {
	for _, epoch := range []string{"0", "3"} {
		t.Run("epoch"+epoch, func(t *testing.T) {
			want := samplePackage("roundtrip", epoch)
			const payloadBytes = 3000
			b := writeBytes(t, want, payloadBytes)
			h, err := rpmfile.ReadPackage(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			got := h.Package
			slices.Reverse(got.Changelogs) // header order is newest first
			ignore := cmpopts.IgnoreFields(repodata.Package{}, "PkgID", "ChecksumType", "SizePackage",
				"SizeInstalled", "SizeArchive", "HeaderStart", "HeaderEnd", "LocationHref")
			if d := cmp.Diff(want, &got, ignore, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("read back (-written +read):\n%s", d)
			}
			sum := sha256.Sum256(b)
			if got.PkgID != hex.EncodeToString(sum[:]) || got.SizePackage != int64(len(b)) {
				t.Errorf("pkgid %s size %d, want %x and %d", got.PkgID, got.SizePackage, sum, len(b))
			}
			if got.SizeInstalled != payloadBytes {
				t.Errorf("installed size %d, want %d (3 regular files of 1000 bytes)", got.SizeInstalled, payloadBytes)
			}
			checkHeaderRange(t, b, got.HeaderStart, got.HeaderEnd)
			checkArchiveSize(t, b, got.HeaderEnd, got.SizeArchive)
		})
	}
}

// checkHeaderRange checks the header range against the layout: lead, signature header
// padded to 8 bytes, main header, and that the payload starts with gzip's magic.
func checkHeaderRange(t *testing.T, b []byte, start, end int64) {
	t.Helper()
	sigData := int64(be32(b[leadSize+12:]))
	sigLen := 16 + 16*int64(be32(b[leadSize+8:])) + sigData
	wantStart := leadSize + sigLen + (8-sigData%8)%8
	wantEnd := wantStart + 16 + 16*int64(be32(b[wantStart+8:])) + int64(be32(b[wantStart+12:]))
	if start != wantStart || end != wantEnd {
		t.Errorf("header range %d-%d, want %d-%d", start, end, wantStart, wantEnd)
	}
	if !bytes.HasPrefix(b[end:], []byte{0x1f, 0x8b}) {
		t.Errorf("payload at %d starts with % x, not gzip's magic", end, b[end:min(int64(len(b)), end+2)])
	}
}

// checkArchiveSize checks that the archive size in the header is that of the payload.
func checkArchiveSize(t *testing.T, b []byte, payloadStart, archiveSize int64) {
	t.Helper()
	archive := gunzip(t, b[payloadStart:])
	if int64(len(archive)) != archiveSize {
		t.Errorf("archive size %d, header says %d", len(archive), archiveSize)
	}
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// TestEmptyAndErrors writes a package without files or dependencies and checks that bad
// input is refused.
func TestEmptyAndErrors(t *testing.T) {
	p := &repodata.Package{Name: "empty", Version: "1", Release: "1", Arch: "noarch", SourceRPM: "empty-1-1.src.rpm"}
	b := writeBytes(t, p, 1000)
	h, err := rpmfile.ReadPackage(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if h.Package.NEVRA() != "empty-0:1-1.noarch" || len(h.Package.Files) != 0 || h.Package.SizeInstalled != 0 {
		t.Errorf("read back %s with %d files, %d bytes installed", h.Package.NEVRA(), len(h.Package.Files), h.Package.SizeInstalled)
	}
	checkHeaderRange(t, b, h.Package.HeaderStart, h.Package.HeaderEnd)
	checkArchiveSize(t, b, h.Package.HeaderEnd, h.Package.SizeArchive)

	bad := []func(p *repodata.Package){
		func(p *repodata.Package) { p.Name = "" },
		func(p *repodata.Package) { p.Epoch = "x" },
		func(p *repodata.Package) { p.Requires = []repodata.Dep{{Name: "a", Flags: "NE", Version: "1"}} },
		func(p *repodata.Package) { p.Requires = []repodata.Dep{{Name: "a", Flags: "GE"}} },
		func(p *repodata.Package) { p.Files = []repodata.File{{Path: "relative"}} },
		func(p *repodata.Package) { p.Files = []repodata.File{{Path: "/a", Type: "link"}} },
	}
	for i, mutate := range bad {
		q := samplePackage("bad", "0")
		mutate(q)
		if _, err := Write(io.Discard, q, 10); err == nil {
			t.Errorf("bad package %d: no error", i)
		}
	}
}

// TestDeterministic checks that the same package gives the same bytes.
func TestDeterministic(t *testing.T) {
	p := samplePackage("same", "0")
	if !bytes.Equal(writeBytes(t, p, 5000), writeBytes(t, p, 5000)) {
		t.Error("two writes of the same package differ")
	}
}

// TestWriteDir writes packages in parallel and checks the returned sums against the
// files.
func TestWriteDir(t *testing.T) {
	dir := t.TempDir()
	const n = 20
	ws, err := WriteDir(dir, func(i int) *repodata.Package { return samplePackage(fmt.Sprintf("pkg%03d", i), "0") }, n, 2000, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != n {
		t.Fatalf("%d results, want %d", len(ws), n)
	}
	for i, w := range ws {
		want := filepath.Join(dir, "Packages", "p", fmt.Sprintf("pkg%03d-1.2.3-4.el9.x86_64.rpm", i))
		b, err := os.ReadFile(w.Path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if w.Path != want || w.SHA256 != hex.EncodeToString(sum[:]) || w.Size != int64(len(b)) {
			t.Errorf("result %d: %+v, want %s with sha256 %x and size %d", i, w, want, sum, len(b))
		}
	}
	_, err = WriteDir(dir, func(i int) *repodata.Package {
		p := samplePackage("escape", "0")
		p.LocationHref = "../escape.rpm"
		return p
	}, 3, 10, 2)
	if err == nil {
		t.Error("WriteDir wrote outside its directory")
	}
}

// benchPackage is a package like the sync benchmark's: 50 files in 4 directories, a
// dozen dependencies and 10 changelog entries.
func benchPackage(i int) *repodata.Package {
	p := samplePackage(fmt.Sprintf("bench%05d", i), "0")
	p.Files = p.Files[:0]
	for j := range 50 {
		dir := []string{"/usr/bin/", "/usr/lib64/p/", "/usr/share/doc/p/", "/etc/p/"}[j%4]
		p.Files = append(p.Files, repodata.File{Path: fmt.Sprintf("%sfile%02d", dir, j)})
	}
	p.Changelogs = p.Changelogs[:0]
	for j := range 10 {
		p.Changelogs = append(p.Changelogs, repodata.Changelog{Author: "Builder <b@example.invalid>",
			Date: 1600000000 + int64(j)*86400, Text: "- Rebuilt"})
	}
	return p
}

func BenchmarkWrite(b *testing.B) {
	p := benchPackage(1)
	var n int64
	for b.Loop() {
		k, err := Write(io.Discard, p, 20000)
		if err != nil {
			b.Fatal(err)
		}
		n = k
	}
	b.SetBytes(n)
}

// TestWriteDirTiming logs how long writing 2,000 packages of 50 files and 20 kB of file
// data each takes; it asserts nothing about the time.
func TestWriteDirTiming(t *testing.T) {
	if testing.Short() {
		t.Skip("timing run")
	}
	const n = 2000
	dir := t.TempDir()
	start := time.Now()
	ws, err := WriteDir(dir, benchPackage, n, 20000, 8)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	var total int64
	for _, w := range ws {
		total += w.Size
	}
	t.Logf("wrote %d packages (%d MB) with 8 workers in %v (%v per package)", n, total>>20, elapsed, elapsed/n)

	start = time.Now()
	for i := range n {
		if _, err := Write(io.Discard, benchPackage(i), 20000); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("Write of %d packages on one goroutine, to io.Discard: %v", n, time.Since(start))
}
