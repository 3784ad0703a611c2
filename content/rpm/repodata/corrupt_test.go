package repodata

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorrupt feeds broken metadata through ReadPackages and checks that the error names
// the file, the line, the package and the problem.
func TestCorrupt(t *testing.T) {
	t.Parallel()
	good := func() (pri, fil, oth string) {
		p, f, o := writeDocs(t, []*Package{testPackage("a"), testPackage("b")})
		return string(p), string(f), string(o)
	}
	pri0, fil0, _ := good()
	gz, err := os.ReadFile(filepath.Join(data, "yum-katello/zoo/repodata/b45d07d607ce97be7b13d0f6925c54ac93dc18b5467b9e5e78668a25d5f8befe-primary.xml.gz"))
	if err != nil {
		t.Fatal(err)
	}
	// Edits of one of the three documents: replace old with new, in primary unless the
	// case says filelists or other.
	for _, tc := range []struct {
		name     string
		file     Kind
		old, new string
		want     string
		kind     error
	}{
		{"truncated XML", Primary, "  <format>\n    <rpm:license></rpm:license>\n    <rpm:vendor></rpm:vendor>\n    <rpm:group></rpm:group>\n    <rpm:buildhost></rpm:buildhost>\n    <rpm:sourcerpm></rpm:sourcerpm>\n    <rpm:header-range start=\"0\" end=\"0\"/>\n    <file>/usr/bin/b</file>\n  </format>\n</package>\n</metadata>", "  <format>\n    <rpm:lic",
			`primary.xml: line 38: package "b": unexpected end of file: <format> not closed`, ErrSyntax},
		{"mismatched tag", Primary, "<arch>noarch</arch>", "<arch>noarch</name>",
			`primary.xml: line 5: package "a": end tag </name> does not match <arch>`, ErrSyntax},
		{"unknown entity", Primary, "<summary>s</summary>", "<summary>&nbsp;</summary>",
			`primary.xml: line 8: package "a": unknown entity &nbsp;`, ErrSyntax},
		{"bare ampersand", Filelists, "<file>/usr/bin/a</file>", "<file>/usr/bin/a&b</file>",
			`filelists.xml: line 5: package "a": "&" not followed by an entity (write &amp;)`, ErrSyntax},
		{"unquoted attribute", Primary, `<time file="0"`, `<time file=0`,
			`primary.xml: line 12: package "a": attribute file of <time>: value not quoted`, ErrSyntax},
		{"control character", Primary, "<description>d</description>", "<description>d\x01</description>",
			`primary.xml: line 9: package "a": character U+0001 is not allowed in XML`, ErrSyntax},
		{"invalid UTF-8", Other, "<changelog author=\"me\"", "<changelog author=\"m\xe9\"",
			`other.xml: line 5: package "a": invalid UTF-8`, ErrSyntax},
		{"missing pkgid", Primary, "<checksum type=\"sha256\" pkgid=\"YES\">6161616161616161616161616161616161616161616161616161616161616161</checksum>", "",
			`primary.xml: line 3: package "a": missing <checksum pkgid="YES">`, ErrInvalid},
		{"missing pkgid in other", Other, ` pkgid="6262626262626262626262626262626262626262626262626262626262626262"`, "",
			`other.xml: line 7: package "b": missing <package pkgid="...">`, ErrInvalid},
		{"bad pkgid", Primary, ">6161616161616161616161616161616161616161616161616161616161616161<", ">61zz<",
			`primary.xml: line 7: package "a": pkgid "61zz" is not a hex checksum`, ErrInvalid},
		{"missing name", Primary, "<name>b</name>", "",
			`primary.xml: line 25: package "6262626262626262626262626262626262626262626262626262626262626262": missing <name>`, ErrInvalid},
		{"missing location", Primary, `<location href="a-1.0-1.noarch.rpm"/>`, `<location/>`,
			`primary.xml: line 3: package "a": missing <location href="...">`, ErrInvalid},
		{"missing version", Primary, `<version epoch="0" ver="1.0" rel="1"/>`, ``,
			`primary.xml: line 3: package "a": missing <version ver="...">`, ErrInvalid},
		{"bad number", Primary, `<size package="0"`, `<size package="-1"`,
			`primary.xml: line 13: package "a": <size package="-1">: not a number`, ErrInvalid},
		{"huge number", Primary, `<time file="0"`, `<time file="99999999999999999999"`,
			`primary.xml: line 12: package "a": <time file="99999999999999999999">: not a number`, ErrInvalid},
		{"bad changelog date", Other, `date="1"`, `date="yesterday"`,
			`other.xml: line 5: package "a": <changelog date="yesterday">: not a number`, ErrInvalid},
		{"too many packages declared", Primary, `packages="2"`, `packages="3"`,
			`primary.xml: line 47: <metadata packages="3"> but 2 packages found`, ErrInvalid},
		{"too few packages declared", Filelists, `packages="2"`, `packages="1"`,
			`filelists.xml: line 13: <filelists packages="1"> but 2 packages found`, ErrInvalid},
		{"bad count", Other, `packages="2"`, `packages="two"`,
			`other.xml: line 2: <otherdata packages="two">: not a count`, ErrInvalid},
		{"wrong file", Primary, pri0, fil0,
			`primary.xml: line 2: root element is <filelists>, expected <metadata> of primary.xml`, ErrInvalid},
		{"entry without name", Primary, `<rpm:header-range start="0" end="0"/>`, `<rpm:header-range start="0" end="0"/><rpm:provides><rpm:entry flags="EQ"/></rpm:provides>`,
			`primary.xml: line 21: package "a": <rpm:entry> without a name`, ErrInvalid},
		{"name mismatch", Other, `name="b"`, `name="c"`,
			`other.xml: line 7: package "c": pkgid 6262626262626262626262626262626262626262626262626262626262626262: name "c", but "b" in primary.xml`, ErrMismatch},
		{"version mismatch", Filelists, `<version epoch="0" ver="1.0" rel="1"/>`, `<version epoch="1" ver="1.0" rel="1"/>`,
			`filelists.xml: line 3: package "a": pkgid 6161616161616161616161616161616161616161616161616161616161616161: epoch "1", but "0" in primary.xml`, ErrMismatch},
		{"junk after root", Primary, `</metadata>`, `</metadata><metadata/>`,
			`primary.xml: line 47: element after the end of the root element`, ErrSyntax},
		{"text after root", Primary, `</metadata>`, `</metadata>junk`,
			`primary.xml: line 47: text outside the root element`, ErrSyntax},
		{"billion laughs", Primary, `<?xml version="1.0" encoding="UTF-8"?>`, `<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE lolz [<!ENTITY lol "lol">]>`,
			`primary.xml: line 1: DOCTYPE with an internal subset is not supported`, ErrInvalid},
		{"latin1 declared", Primary, `encoding="UTF-8"`, `encoding="ISO-8859-1"`,
			`primary.xml: line 1: unsupported encoding "ISO-8859-1" (only UTF-8)`, ErrInvalid},
		{"empty", Primary, pri0, "", `primary.xml: line 1: unexpected end of file: no root element`, ErrSyntax},
	} {
		pri, fil, oth := good()
		doc := map[Kind]*string{Primary: &pri, Filelists: &fil, Other: &oth}[tc.file]
		if !strings.Contains(*doc, tc.old) {
			t.Fatalf("%s: %q not in the document", tc.name, tc.old)
		}
		*doc = strings.Replace(*doc, tc.old, tc.new, 1)
		_, err := collect(Source{"primary.xml", strings.NewReader(pri)},
			Source{"filelists.xml", strings.NewReader(fil)}, Source{"other.xml", strings.NewReader(oth)})
		if err == nil || err.Error() != tc.want || !errors.Is(err, tc.kind) {
			t.Errorf("%s: error\n%v\nwant\n%s (%v)", tc.name, err, tc.want, tc.kind)
		}
		var e *Error
		if !errors.As(err, &e) || e.File == "" {
			t.Errorf("%s: %T is not an *Error naming the file", tc.name, err)
		}
	}

	// A truncated gzip stream: the error says where the XML stopped and why.
	rc, err := Decompress(bytes.NewReader(gz[:len(gz)/2]), "primary.xml.gz")
	if err != nil {
		t.Fatal(err)
	}
	_, err = countPackages(Source{"primary.xml.gz", rc}, Primary)
	if err == nil || !strings.HasPrefix(err.Error(), "primary.xml.gz: line ") ||
		!strings.HasSuffix(err.Error(), "read: gzip: unexpected EOF") || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated gzip: %v", err)
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	p := testPackage("a")
	p.Description = strings.Repeat("x", 100_000)
	pri, _, _ := writeDocs(t, []*Package{p})
	r := NewReader(bytes.NewReader(pri), "primary.xml", Primary)
	r.t.limit = 64 << 10
	_, err := r.Next()
	if want := `primary.xml: line 9: package "a": a single text node or tag is larger than 65536 bytes`; err == nil ||
		err.Error() != want || !errors.Is(err, ErrTooLarge) {
		t.Errorf("large text: %v", err)
	}

	p = testPackage("a")
	for i := range 10 {
		p.Provides = append(p.Provides, Dep{Name: strings.Repeat("p", i+1)})
	}
	pri, _, _ = writeDocs(t, []*Package{p})
	r = NewReader(bytes.NewReader(pri), "primary.xml", Primary)
	r.maxEntries = 5
	_, err = r.Next()
	if want := `primary.xml: line 28: package "a": more than 5 entries in one package`; err == nil ||
		err.Error() != want || !errors.Is(err, ErrTooLarge) {
		t.Errorf("many entries: %v", err)
	}
}
