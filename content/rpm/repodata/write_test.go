package repodata

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeDocs writes pkgs as primary, filelists and other documents.
func writeDocs(t testing.TB, pkgs []*Package) (pri, fil, oth []byte) {
	t.Helper()
	var out [3]bytes.Buffer
	for i, kind := range []Kind{Primary, Filelists, Other} {
		w := NewDocumentWriter(&out[i], kind, len(pkgs))
		for _, p := range pkgs {
			if err := w.WritePackage(p); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out[0].Bytes(), out[1].Bytes(), out[2].Bytes()
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{
		"yum-katello/zoo", "yum-katello/zoo2", "rpm-edge-cases/repo_02", "rpm-edge-cases/repo_04",
		"rpm-edge-cases/repo_koji_01", "rpm-edge-cases/repo_koji_02",
		"rpm-edge-cases/repo_with_duplicate_packages",
	} {
		pkgs := readRepo(t, filepath.Join(data, dir))
		pri, fil, oth := writeDocs(t, pkgs)
		again, err := collect(Source{"primary.xml", bytes.NewReader(pri)},
			Source{"filelists.xml", bytes.NewReader(fil)}, Source{"other.xml", bytes.NewReader(oth)})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if diff := cmp.Diff(pkgs, again); diff != "" {
			t.Errorf("%s: (-read +written and read again):\n%s", dir, diff)
		}
	}
}

// TestByteExact checks that the writers reproduce files written by a recent createrepo_c
// byte for byte.
func TestByteExact(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{
		"rpm-edge-cases/repo_04", "rpm-edge-cases/repo_koji_01", "rpm-edge-cases/repo_koji_02",
		"rpm-edge-cases/repo_with_duplicate_packages",
	} {
		path := filepath.Join(data, dir)
		pkgs := readRepo(t, path)
		pri, fil, oth := writeDocs(t, pkgs)
		orig := make([][]byte, 3)
		srcs := make([]Source, 3)
		srcs[0], srcs[1], srcs[2] = repoSources(t, path)
		for i, s := range srcs {
			orig[i], _ = io.ReadAll(s.R)
		}
		for i, got := range [][]byte{pri, fil, oth} {
			if diff := cmp.Diff(string(orig[i]), string(got)); diff != "" {
				t.Errorf("%s %s (-createrepo_c +ours):\n%s", dir, srcs[i].Name, diff)
			}
		}
	}
}

func TestFragments(t *testing.T) {
	t.Parallel()
	p := &Package{
		Name: "a&b", Epoch: "", Version: "1", Release: "2", Arch: "x86_64",
		PkgID: "00ff", ChecksumType: "sha256",
		Summary:      "tab\there \"quoted\" <x> Šabata \r\n\x01bell\ufffe",
		Description:  "bad latin1 \xe9\x85 end",
		LocationHref: "a b.rpm", LocationBase: "/srv/repo",
		Requires: []Dep{{Name: "(foo if bar)"}, {Name: "x", Flags: "GE", Epoch: "1", Version: "2", Pre: true}},
		Provides: []Dep{{Name: "y", Pre: true}},
		Suggests: []Dep{{Name: ""}},
		Files: []File{{Path: "/etc/a"}, {Path: "/usr/share/a"}, {Path: "/usr/lib/sendmail"},
			{Path: "/opt/sbin/x", Type: "ghost"}, {Path: "/usr/lib/sendmail.d", Type: "dir"}},
		Changelogs: []Changelog{{Author: "A\nB", Date: 1, Text: "one"}, {Author: "C", Date: 2, Text: "two"}, {Author: "D", Date: 3, Text: "three"}},
	}
	want := `<package type="rpm">
  <name>a&amp;b</name>
  <arch>x86_64</arch>
  <version epoch="0" ver="1" rel="2"/>
  <checksum type="sha256" pkgid="YES">00ff</checksum>
  <summary>tab	here "quoted" &lt;x&gt; &#x160;abata &#xD;
bell</summary>
  <description>bad latin1 &#xE9; end</description>
  <packager></packager>
  <url></url>
  <time file="0" build="0"/>
  <size package="0" installed="0" archive="0"/>
  <location xml:base="file:///srv/repo" href="a b.rpm"/>
  <format>
    <rpm:license></rpm:license>
    <rpm:vendor></rpm:vendor>
    <rpm:group></rpm:group>
    <rpm:buildhost></rpm:buildhost>
    <rpm:sourcerpm></rpm:sourcerpm>
    <rpm:header-range start="0" end="0"/>
    <rpm:provides>
      <rpm:entry name="y"/>
    </rpm:provides>
    <rpm:requires>
      <rpm:entry name="(foo if bar)"/>
      <rpm:entry name="x" flags="GE" epoch="1" ver="2" pre="1"/>
    </rpm:requires>
    <rpm:suggests/>
    <file>/etc/a</file>
    <file>/usr/lib/sendmail</file>
    <file type="ghost">/opt/sbin/x</file>
  </format>
</package>
`
	if diff := cmp.Diff(want, string(PrimaryFragment(p))); diff != "" {
		t.Errorf("primary (-want +got):\n%s", diff)
	}
	want = `<package pkgid="00ff" name="a&amp;b" arch="x86_64">
  <version epoch="0" ver="1" rel="2"/>
  <file>/etc/a</file>
  <file>/usr/share/a</file>
  <file>/usr/lib/sendmail</file>
  <file type="ghost">/opt/sbin/x</file>
  <file type="dir">/usr/lib/sendmail.d</file>
</package>
`
	if diff := cmp.Diff(want, string(FilelistsFragment(p))); diff != "" {
		t.Errorf("filelists (-want +got):\n%s", diff)
	}
	want = `<package pkgid="00ff" name="a&amp;b" arch="x86_64">
  <version epoch="0" ver="1" rel="2"/>
  <changelog author="C" date="2">two</changelog>
  <changelog author="D" date="3">three</changelog>
</package>
`
	if diff := cmp.Diff(want, string(OtherFragment(p, 2))); diff != "" {
		t.Errorf("other (-want +got):\n%s", diff)
	}
	if got := string(OtherFragment(p, 0)); !strings.Contains(got, `author="A&#10;B" date="1">one<`) {
		t.Errorf("other without limit:\n%s", got)
	}
	// Newest first in the Package: the limit still keeps the newest.
	p.Changelogs = []Changelog{p.Changelogs[2], p.Changelogs[1], p.Changelogs[0]}
	if got := string(OtherFragment(p, 1)); !strings.Contains(got, `date="3"`) || strings.Contains(got, `date="2"`) {
		t.Errorf("other, newest first, limit 1:\n%s", got)
	}
}

func TestDocumentWriter(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := NewDocumentWriter(&b, Filelists, 0)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := `<?xml version="1.0" encoding="UTF-8"?>
<filelists xmlns="http://linux.duke.edu/metadata/filelists" packages="0">
</filelists>`
	if b.String() != want {
		t.Errorf("empty filelists:\n%s\nwant\n%s", b.String(), want)
	}
	w = NewDocumentWriter(io.Discard, Primary, 2)
	w.WritePackage(testPackage("a"))
	if err := w.Close(); err == nil || err.Error() != "primary document: 1 packages written, 2 declared" {
		t.Errorf("count mismatch: %v", err)
	}
	if err := w.WritePackage(testPackage("b")); err == nil {
		t.Error("write after close: no error")
	}
}

func TestRelocate(t *testing.T) {
	p := &Package{Name: "a&b", Epoch: "0", Version: "1", Release: "1", Arch: "noarch", PkgID: "ab", ChecksumType: "sha256",
		LocationHref: "old/a&b.rpm", LocationBase: "http://mirror/"}
	got := Relocate(PrimaryFragment(p), "Packages/a/a&b.rpm")
	q := *p
	q.LocationHref, q.LocationBase = "Packages/a/a&b.rpm", ""
	if want := PrimaryFragment(&q); !bytes.Equal(got, want) {
		t.Fatalf("Relocate:\n%s\nwant\n%s", got, want)
	}
}
