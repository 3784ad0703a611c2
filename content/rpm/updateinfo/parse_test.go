package updateinfo

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ulikunitz/xz"

	"pith/internal/testfiles"
)

// data is the third-party test data (testdata/README.md).
var data = testfiles.Path() + "/"

// readFile returns a test file's bytes, decompressed when its name says .gz or .xz.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r io.Reader
	switch filepath.Ext(path) {
	case ".gz":
		if r, err = gzip.NewReader(bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
	case ".xz":
		if r, err = xz.NewReader(bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
	default:
		return b
	}
	if b, err = io.ReadAll(r); err != nil {
		t.Fatal(err)
	}
	return b
}

// parseAll collects every update of doc; on error it returns the updates read before it.
func parseAll(doc []byte, name string) ([]*Update, error) {
	var us []*Update
	err := Parse(bytes.NewReader(doc), name, func(u *Update) error {
		us = append(us, u)
		return nil
	})
	return us, err
}

// goodFiles are the real updateinfo documents that parse.
var goodFiles = []string{
	"yum-katello/zoo/updateinfo.xml",
	"yum-katello/zoo/repodata/e944908cfd1357c7c6d9da70fdaf0e1d89db23a92079e56b0c89e95542cd51e6-updateinfo.xml.gz",
	"yum-katello/zoo2/updateinfo.xml",
	"yum-katello/zoo2/repodata/c5a7c24acc5082c6c4386404a1148a95d025b187f0c544322a61acf029eac57a-updateinfo.xml.gz",
	"rpm-edge-cases/updateinfo_files/updateinfo_00.xml",
	"rpm-edge-cases/updateinfo_files/updateinfo_01.xml",
}

func TestParseZoo(t *testing.T) {
	t.Parallel()
	us, err := parseAll(readFile(t, data+"yum-katello/zoo/updateinfo.xml"), "updateinfo.xml")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	refs, cves, bugs, pkgs := 0, 0, 0, 0
	for _, u := range us {
		ids = append(ids, u.ID)
		refs += len(u.References)
		for _, r := range u.References {
			switch r.Type {
			case "cve":
				cves++
			case "bugzilla":
				bugs++
			}
		}
		for _, c := range u.Pkglist {
			pkgs += len(c.Packages)
		}
	}
	wantIDs := []string{"KATELLO-RHEA-2010:0001", "KATELLO-RHSA-2010:0858", "KATELLO-RHEA-2010:0002",
		"KATELLO-RHEA-2022:98765", "KATELLO-RHEA-2010:99143", "KATELLO-RHEA-2010:0111",
		"KATELLO-RHEA-2012:0059", "RHEA-2021:9999"}
	if diff := cmp.Diff(wantIDs, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	if refs != 4 || cves != 1 || bugs != 1 || pkgs != 14 {
		t.Errorf("references %d (cve %d, bugzilla %d), packages %d; want 4 (1, 1), 14", refs, cves, bugs, pkgs)
	}

	bzip := func(name, arch, sum string) Package {
		return Package{Name: name, Epoch: "0", Version: "1.0.5", Release: "7.el6_0", Arch: arch,
			Src: "bzip2-1.0.5-7.el6_0.src.rpm", Filename: name + "-1.0.5-7.el6_0." + arch + ".rpm",
			Sum: sum, SumType: "sha256"}
	}
	want := &Update{
		ID:          "KATELLO-RHSA-2010:0858",
		UpdatedDate: "2010-11-10 00:00:00",
		Description: "bzip2 is a freely available, high-quality data compressor. It provides both\n" +
			"libbz2 library must be restarted for the update to take effect.",
		IssuedDate: "2010-11-10 00:00:00",
		FromStr:    "security@redhat.com",
		Status:     "final",
		Title:      "Important: bzip2 security update",
		Summary:    "Updated bzip2 packages that fix one security issue",
		Version:    "3",
		Type:       "security",
		Severity:   "Important",
		Solution: "Before applying this update, make sure all previously-released errata\n" +
			"relevant to your system have been applied.\n\n" +
			"This update is available via the Red Hat Network. Details on how to\n" +
			"use the Red Hat Network to apply this update are available at\n" +
			"http://kbase.redhat.com/faq/docs/DOC-11259",
		Rights: "Copyright 2010 Red Hat Inc",
		Pkglist: []Collection{{
			Name:      "Red Hat Enterprise Linux Server (v. 6 for 64-bit x86_64)",
			ShortName: "rhel-x86_64-server-6",
			Packages: []Package{
				bzip("bzip2-devel", "i686", "ea67c664da1ff96a6dc94d33009b73d8fab31b59824183fb45e9ba2ebf82d583"),
				bzip("bzip2-libs", "i686", "c9f064a6862573fb9f2a6aff7c3621f1940b492df2edfc2ebbdc0b8305f51147"),
				bzip("bzip2", "x86_64", "b8a3f72bc2b0d89ba737099ac98bf8d2af4bea02d31884c02db97f7f66c3d5c2"),
				bzip("bzip2-devel", "x86_64", "7f63124e4655b7c92d23ec4c38226f5d3746568853dff750fc85e058e74b5cf6"),
				bzip("bzip2-libs", "x86_64", "802f4399dbdd01476e254c3b32c40aff59cf5d23a45fa488c6917ce8904d6b4d"),
			},
		}},
		References: []Reference{
			{Href: "https://rhn.redhat.com/errata/RHSA-2010-0858.html", Type: "self", Title: "RHSA-2010:0858"},
			{Href: "https://bugzilla.redhat.com/bugzilla/show_bug.cgi?id=627882", ID: "627882", Type: "bugzilla",
				Title: "CVE-2010-0405 bzip2: integer overflow flaw in BZ2_decompress"},
			{Href: "https://www.redhat.com/security/data/cve/CVE-2010-0405.html", ID: "CVE-2010-0405", Type: "cve",
				Title: "CVE-2010-0405"},
			{Href: "http://www.redhat.com/security/updates/classification/#important", Type: "other"},
		},
	}
	if diff := cmp.Diff(want, us[1]); diff != "" {
		t.Errorf("KATELLO-RHSA-2010:0858 (-want +got):\n%s", diff)
	}

	modular := &Update{
		ID: "KATELLO-RHEA-2012:0059", UpdatedDate: "2018-07-20 06:00:01 UTC",
		Description: "Duck_Kangaro_Erratum description", IssuedDate: "2018-01-27 16:08:09",
		FromStr: "errata@redhat.com", Status: "stable", Title: "Duck_Kangaroo_Erratum", Version: "1",
		Type: "enhancement", Release: "1", References: []Reference{},
		Pkglist: []Collection{
			{Name: "coll_name1", Module: &Module{Name: "kangaroo", Stream: "0", Version: 20180730223407,
				Context: "deadbeef", Arch: "noarch"},
				Packages: []Package{{Name: "kangaroo", Epoch: "0", Version: "0.3", Release: "1", Arch: "noarch",
					Src: "http://www.fedoraproject.org", Filename: "kangaroo-0.3-1.noarch.rpm"}}},
			{Name: "coll_name2", Module: &Module{Name: "duck", Stream: "0", Version: 20180730233102,
				Context: "deadbeef", Arch: "noarch"},
				Packages: []Package{{Name: "duck", Epoch: "0", Version: "0.7", Release: "1", Arch: "noarch",
					Src: "http://www.fedoraproject.org", Filename: "duck-0.7-1.noarch.rpm"}}},
		},
	}
	if diff := cmp.Diff(modular, us[6]); diff != "" {
		t.Errorf("KATELLO-RHEA-2012:0059 (-want +got):\n%s", diff)
	}
}

func TestParseEdgeCases(t *testing.T) {
	t.Parallel()
	dir := data + "rpm-edge-cases/updateinfo_files/"

	us, err := parseAll(readFile(t, dir+"updateinfo_00.xml"), "updateinfo_00.xml")
	if err != nil || len(us) != 0 {
		t.Errorf("updateinfo_00.xml: %d updates, %v; want none", len(us), err)
	}

	us, err = parseAll(readFile(t, dir+"updateinfo_01.xml"), "updateinfo_01.xml")
	if err != nil {
		t.Fatal(err)
	}
	want := []*Update{{
		ID: "foobarupdate_1", UpdatedDate: "2012-12-12 00:00:00", Description: "description_1",
		IssuedDate: "2012-12-12 00:00:00", FromStr: "secresponseteam@foo.bar", Status: "final",
		Title: "title_1", Summary: "summary_1", Version: "3", Type: "enhancement", Severity: "severity_1",
		Solution: "solution_1", Release: "release_1", Rights: "rights_1", PushCount: "pushcount_1",
		RebootSuggested: true,
		Pkglist: []Collection{{Name: "Foo component", ShortName: "foo.component", Packages: []Package{{
			Name: "bar", Epoch: "0", Version: "2.0.1", Release: "3", Arch: "noarch", Src: "bar-2.0.1-3.src.rpm",
			Filename: "bar-2.0.1-3.noarch.rpm", SumType: "sha256",
			Sum:             "29be985e1f652cd0a29ceed6a1c49964d3618bddd22f0be3292421c8777d26c8",
			RebootSuggested: true, ReloginSuggested: true, RestartSuggested: true,
		}}}},
		References: []Reference{{Href: "https://foobar/foobarupdate_1", ID: "1", Type: "self", Title: "update_1"}},
	}}
	if diff := cmp.Diff(want, us); diff != "" {
		t.Errorf("updateinfo_01.xml (-want +got):\n%s", diff)
	}

	// An update with nothing in it: the package without a name is the first thing wrong.
	_, err = parseAll(readFile(t, dir+"updateinfo_02.xml.xz"), "updateinfo_02.xml")
	checkError(t, err, ErrInvalid, "updateinfo_02.xml: line 9: pkglist package without name")

	// A mangled issued date stops the parse at the third update.
	us, err = parseAll(readFile(t, dir+"updateinfo_03.xml"), "updateinfo_03.xml")
	checkError(t, err, ErrInvalid,
		`updateinfo_03.xml: line 53: update "RHEA-2012:0057": issued date "15mangled2" is not a date`)
	if len(us) != 2 {
		t.Errorf("updateinfo_03.xml: %d updates before the error, want 2", len(us))
	}
}

func TestParseRepodata(t *testing.T) {
	t.Parallel()
	for file, n := range map[string]int{goodFiles[1]: 7, goodFiles[2]: 3, goodFiles[3]: 3} {
		us, err := parseAll(readFile(t, data+file), filepath.Base(file))
		if err != nil || len(us) != n {
			t.Errorf("%s: %d updates, %v; want %d", file, len(us), err, n)
		}
	}
}

func checkError(t *testing.T, err, kind error, msg string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, kind) {
		t.Fatalf("error %v (%T), want an *Error wrapping %v", err, err, kind)
	}
	if err.Error() != msg {
		t.Errorf("error\n  %s\nwant\n  %s", err, msg)
	}
}

func TestParseCorrupt(t *testing.T) {
	t.Parallel()
	const head = "<?xml version=\"1.0\"?>\n<updates>\n"
	tests := []struct {
		name, doc string
		kind      error
		msg       string
	}{
		{"empty", "", ErrSyntax, "f.xml: line 1: no <updates> element"},
		{"not xml", "hello", ErrSyntax, "f.xml: line 1: no <updates> element"},
		{"wrong root", "<?xml version=\"1.0\"?>\n<comps/>", ErrInvalid, "f.xml: line 2: root element is <comps>, not <updates>"},
		{"truncated", head + "<update>\n<id>A</id>\n<title>x", ErrSyntax, `f.xml: line 5: update "A": unexpected EOF`},
		{"mismatched tag", head + "<update>\n<id>A</id>\n<title>x</titel>\n</update></updates>", ErrSyntax,
			`f.xml: line 5: update "A": element <title> closed by </titel>`},
		{"bad entity", head + "<update>\n<id>A&nbsp;</id>\n</update></updates>", ErrSyntax,
			"f.xml: line 4: invalid character entity &nbsp;"},
		{"control character", head + "<update><id>A</id><title>\x01</title></update></updates>", ErrSyntax,
			`f.xml: line 3: update "A": illegal character code U+0001`},
		{"invalid utf-8", head + "<update><id>A\xff</id></update></updates>", ErrSyntax,
			"f.xml: line 3: invalid UTF-8"},
		{"unknown encoding", "<?xml version=\"1.0\" encoding=\"EBCDIC\"?><updates/>", ErrSyntax,
			`f.xml: line 1: opening charset "EBCDIC": unsupported encoding "EBCDIC"`},
		{"no id", head + "<update from=\"x\">\n  <title>t</title>\n</update>\n</updates>", ErrInvalid,
			"f.xml: line 3: update without id"},
		{"blank id", head + "<update><id>  </id></update></updates>", ErrInvalid, "f.xml: line 3: update without id"},
		{"package without name", head + "<update><id>RHSA-2020:1</id><pkglist><collection>\n" +
			"<package version=\"1\"><filename>a.rpm</filename></package></collection></pkglist></update></updates>",
			ErrInvalid, `f.xml: line 4: update "RHSA-2020:1": pkglist package without name`},
		{"bad issued date", head + "<update><id>A</id>\n<issued date=\"2020-13-01\"/></update></updates>", ErrInvalid,
			`f.xml: line 4: update "A": issued date "2020-13-01" is not a date`},
		{"bad updated date", head + "<update><id>A</id>\n<updated date=\"yesterday\"/></update></updates>", ErrInvalid,
			`f.xml: line 4: update "A": updated date "yesterday" is not a date`},
		{"bad module version", head + "<update><id>A</id><pkglist><collection>\n<module name=\"m\" version=\"1.2\"/>" +
			"</collection></pkglist></update></updates>", ErrInvalid,
			`f.xml: line 4: update "A": module version "1.2" is not a number`},
		{"element after root", head + "</updates>\n<updates/>", ErrSyntax, "f.xml: line 4: element <updates> after </updates>"},
		{"text after root", head + "</updates>\njunk", ErrSyntax, "f.xml: line 3: text after </updates>"},
		{"duplicate id", head + "<update><id>A</id></update>\n<update>\n<id>A</id></update></updates>", ErrDuplicate,
			`f.xml: line 4: update "A": duplicate update id, first at line 3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseAll([]byte(tt.doc), "f.xml")
			checkError(t, err, tt.kind, tt.msg)
		})
	}
}

func TestParseDuplicateLines(t *testing.T) {
	t.Parallel()
	doc := readFile(t, data+"yum-katello/zoo/updateinfo.xml")
	// Append the first advisory again before </updates>.
	first := doc[bytes.Index(doc, []byte("<update ")) : bytes.Index(doc, []byte("</update>"))+len("</update>")]
	end := bytes.LastIndex(doc, []byte("</updates>"))
	dup := append(append(append([]byte{}, doc[:end]...), first...), "\n</updates>\n"...)
	line := bytes.Count(dup[:end], []byte("\n")) + 1

	_, err := parseAll(dup, "updateinfo.xml")
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrDuplicate) {
		t.Fatalf("error %v, want a duplicate *Error", err)
	}
	if e.ID != "KATELLO-RHEA-2010:0001" || e.FirstLine != 3 || e.Line != line {
		t.Errorf("duplicate %q at line %d, first at %d; want KATELLO-RHEA-2010:0001 at %d, first at 3",
			e.ID, e.Line, e.FirstLine, line)
	}
}

func TestParseTooLarge(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 2000)
	tests := []struct{ name, doc, msg string }{
		{"text", "<updates><update><id>A</id>\n<description>" + big + "</description></update></updates>",
			`f.xml: line 2: update "A": text longer than 1000 bytes`},
		{"split text", "<updates><update><id>A</id>\n<description>" + big[:900] + "<![CDATA[" + big[:900] +
			"]]></description></update></updates>", `f.xml: line 2: update "A": text longer than 1000 bytes`},
		{"attribute", "<updates><update><id>A</id>\n<reference href=\"" + big + "\"/></update></updates>", ""},
		{"reference attribute", "<updates><update><id>A</id><references>\n<reference href=\"" + big +
			"\"/></references></update></updates>", `f.xml: line 2: update "A": attribute href longer than 1000 bytes`},
		{"run", "<updates><update><id>A</id><description>" + strings.Repeat(big, 100) + "</description></update></updates>",
			`f.xml: line 1: update "A": text longer than 1000 bytes`},
	}
	for _, tt := range tests {
		err := parse(strings.NewReader(tt.doc), "f.xml", 1000, func(*Update) error { return nil })
		if tt.msg == "" {
			if err != nil {
				t.Errorf("%s: %v, want no error (unknown elements are skipped)", tt.name, err)
			}
			continue
		}
		if !errors.Is(err, ErrTooLarge) || err.Error() != tt.msg {
			t.Errorf("%s: error %v, want %s", tt.name, err, tt.msg)
		}
	}
}

func TestParseCallbackError(t *testing.T) {
	t.Parallel()
	stop := errors.New("stop")
	n := 0
	err := Parse(bytes.NewReader(readFile(t, data+goodFiles[0])), "u.xml", func(*Update) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if err != stop || n != 2 {
		t.Errorf("Parse returned %v after %d updates, want the callback's error after 2", err, n)
	}
}

func TestParseReaderError(t *testing.T) {
	t.Parallel()
	broken := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("<updates><update><id>A</id>\n"), errReader{broken})
	err := Parse(r, "u.xml", func(*Update) error { return nil })
	var e *Error
	if !errors.Is(err, broken) || !errors.As(err, &e) || e.File != "u.xml" {
		t.Errorf("error %v, want an *Error wrapping the reader's", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestParseLatin1(t *testing.T) {
	t.Parallel()
	doc := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<updates><update><id>A</id><title>caf\xe9</title></update></updates>"
	us, err := parseAll([]byte(doc), "l.xml")
	if err != nil || len(us) != 1 || us[0].Title != "café" {
		t.Fatalf("got %v, %v; want one update titled café", us, err)
	}
}

func TestParseLenient(t *testing.T) {
	t.Parallel()
	doc := `<updates>
  <!-- comment -->
  <unknown><update><id>ignored</id></update></unknown>
  <update><id>A</id>
    <reboot_suggested>False</reboot_suggested>
    <issued date=""/>
    <message type="x">not kept</message>
    <description>keep <b>bold</b> text</description>
    <pkglist><collection><package name="p"><sum>abc</sum><extra/></package></collection></pkglist>
  </update>
</updates>
<!-- trailing comment -->
`
	us, err := parseAll([]byte(doc), "l.xml")
	if err != nil {
		t.Fatal(err)
	}
	want := []*Update{{ID: "A", RebootSuggested: true, Description: "keep bold text", References: []Reference{},
		Pkglist: []Collection{{Packages: []Package{{Name: "p", Epoch: "0", Sum: "abc"}}}}}}
	if diff := cmp.Diff(want, us); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// BenchmarkParse reads a document of 8000 advisories (the zoo's, renamed), about 10 MB.
func BenchmarkParse(b *testing.B) {
	zoo := readFile(b, data+goodFiles[0])
	body := zoo[bytes.Index(zoo, []byte("<update ")):bytes.LastIndex(zoo, []byte("</updates>"))]
	var doc bytes.Buffer
	doc.WriteString(Header)
	for i := range 1000 {
		doc.Write(bytes.ReplaceAll(body, []byte("<id>"), fmt.Appendf(nil, "<id>%d-", i)))
	}
	doc.WriteString(Footer)
	b.SetBytes(int64(doc.Len()))
	for b.Loop() {
		n := 0
		if err := Parse(bytes.NewReader(doc.Bytes()), "big.xml", func(*Update) error { n++; return nil }); err != nil || n != 8000 {
			b.Fatal(n, err)
		}
	}
}
