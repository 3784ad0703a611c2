package updateinfo

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// writeAll writes us as a document.
func writeAll(t testing.TB, us []*Update) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, u := range us {
		if err := w.Write(u); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, file := range goodFiles {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			us, err := parseAll(readFile(t, data+file), file)
			if err != nil {
				t.Fatal(err)
			}
			out := writeAll(t, us)
			again, err := parseAll(out, "written.xml")
			if err != nil {
				t.Fatalf("reading the written document: %v\n%s", err, out)
			}
			if diff := cmp.Diff(us, again); diff != "" {
				t.Errorf("parse, write, parse changed the updates (-first +second):\n%s", diff)
			}
			if out2 := writeAll(t, again); !bytes.Equal(out, out2) {
				t.Errorf("writing the same updates twice gave different bytes")
			}
		})
	}
}

// TestGolden pins the written layout: the zoo advisories as createrepo_c lays them out.
func TestGolden(t *testing.T) {
	t.Parallel()
	us, err := parseAll(readFile(t, data+goodFiles[0]), "updateinfo.xml")
	if err != nil {
		t.Fatal(err)
	}
	got := writeAll(t, us)
	golden := filepath.Join("testdata", "zoo.golden.xml")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("written document differs from %s (-want +got):\n%s", golden, diff)
	}
}

func TestRoundTripAwkwardValues(t *testing.T) {
	t.Parallel()
	u := &Update{
		ID:          " RHSA-1 <&> ",
		Title:       "tab\there, \"quotes\" and 'apostrophes'",
		Description: "line one\r\nline two\rline three\n\n  indented ]]> end",
		FromStr:     "a\tb\nc\rd \"e\" <f> &g;",
		IssuedDate:  "2014-09-24T00:00:00Z",
		UpdatedDate: "1415215980",
		Summary:     "snowman ☃ and emoji 😀",
		References:  []Reference{{}, {Href: "h&ref", Title: "t\"itle"}},
		Pkglist: []Collection{
			{},
			{Module: &Module{}},
			{ShortName: "s", Packages: []Package{{Name: "n", SumType: "sha256"}, {Name: "m", Sum: "x"}}},
		},
	}
	frag, err := MarshalUpdate(u)
	if err != nil {
		t.Fatal(err)
	}
	us, err := parseAll([]byte(Header+string(frag)+Footer), "w.xml")
	if err != nil {
		t.Fatalf("%v\n%s", err, frag)
	}
	// Parse gives empty lists and epoch "0" where the Update had nothing.
	u.References = append([]Reference{}, u.References...)
	u.Pkglist[0].Packages = []Package{}
	u.Pkglist[1].Packages = []Package{}
	u.Pkglist[2].Packages[0].Epoch = "0"
	u.Pkglist[2].Packages[1].Epoch = "0"
	if diff := cmp.Diff([]*Update{u}, us); diff != "" {
		t.Errorf("(-want +got):\n%s\n%s", diff, frag)
	}
}

func TestMarshalInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		u    Update
		msg  string
	}{
		{"no id", Update{}, "no id"},
		{"blank id", Update{ID: " \n"}, "no id"},
		{"package without name", Update{ID: "A", Pkglist: []Collection{{Packages: []Package{{Version: "1"}}}}},
			"pkglist package without name"},
		{"bad date", Update{ID: "A", IssuedDate: "soon"}, `issued date "soon" is not a date`},
		{"control character", Update{ID: "A", Title: "a\x00b"}, "character U+0000 is not allowed in XML"},
		{"invalid utf-8", Update{ID: "A", References: []Reference{{Title: "\xff"}}}, "invalid UTF-8 at byte 0"},
		{"noncharacter", Update{ID: "A", Rights: "\uFFFE"}, "character U+FFFE is not allowed in XML"},
	}
	for _, tt := range tests {
		_, err := MarshalUpdate(&tt.u)
		if !errors.Is(err, ErrInvalid) || !strings.HasSuffix(err.Error(), tt.msg) {
			t.Errorf("%s: error %v, want ErrInvalid ending %q", tt.name, err, tt.msg)
		}
	}
}

func TestWriter(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.String() != Header+Footer {
		t.Errorf("empty document %q, want %q", buf.String(), Header+Footer)
	}
	if err := w.Write(&Update{ID: "A"}); err == nil {
		t.Error("Write after Close succeeded")
	}

	w = NewWriter(&buf)
	if err := w.Write(&Update{ID: "A"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&Update{ID: "A", Title: "other"}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("second update A: %v, want ErrDuplicate", err)
	}
	if err := w.Write(&Update{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("update without id: %v, want ErrInvalid", err)
	}
}

func TestSum(t *testing.T) {
	t.Parallel()
	us, err := parseAll(readFile(t, data+goodFiles[0]), "updateinfo.xml")
	if err != nil {
		t.Fatal(err)
	}
	base := us[1]
	if base.Sum() != base.Sum() {
		t.Fatal("Sum is not deterministic")
	}
	again, _ := parseAll(readFile(t, data+goodFiles[0]), "updateinfo.xml")
	if again[1].Sum() != base.Sum() {
		t.Error("equal updates have different sums")
	}
	sums := map[string]string{base.Sum(): "base"}
	mutations := map[string]func(u *Update){
		"title":             func(u *Update) { u.Title += "!" },
		"shift boundary":    func(u *Update) { u.Title, u.Summary = u.Title+"U", strings.TrimPrefix(u.Summary, "U") },
		"reboot":            func(u *Update) { u.RebootSuggested = true },
		"updated date":      func(u *Update) { u.UpdatedDate = "2010-11-10 00:00:01" },
		"reference order":   func(u *Update) { u.References[0], u.References[1] = u.References[1], u.References[0] },
		"reference dropped": func(u *Update) { u.References = u.References[:3] },
		"package sum type":  func(u *Update) { u.Pkglist[0].Packages[0].SumType = "sha512" },
		"package relogin":   func(u *Update) { u.Pkglist[0].Packages[4].ReloginSuggested = true },
		"module added":      func(u *Update) { u.Pkglist[0].Module = &Module{} },
		"module version":    func(u *Update) { u.Pkglist[0].Module = &Module{Version: 1} },
		"empty collection":  func(u *Update) { u.Pkglist = append(u.Pkglist, Collection{}) },
	}
	for name, mutate := range mutations {
		u, _ := parseAll(readFile(t, data+goodFiles[0]), "updateinfo.xml")
		mutate(u[1])
		s := u[1].Sum()
		if prev, ok := sums[s]; ok {
			t.Errorf("%s: same sum as %s", name, prev)
		}
		sums[s] = name
	}
}

func TestParseDate(t *testing.T) {
	t.Parallel()
	good := map[string]string{
		"1415215980":                "2014-11-05T19:33:00Z",
		"0":                         "1970-01-01T00:00:00Z",
		"2014-09-24":                "2014-09-24T00:00:00Z",
		"2014-09-24 00:00:00":       "2014-09-24T00:00:00Z",
		"2018-07-20 06:00:01 UTC":   "2018-07-20T06:00:01Z",
		"2018-07-20 06:00:01 GMT":   "2018-07-20T06:00:01Z",
		"2014-09-24T10:11:12Z":      "2014-09-24T10:11:12Z",
		"2014-09-24T10:11:12":       "2014-09-24T10:11:12Z",
		"2014-09-24T10:11:12.5Z":    "2014-09-24T10:11:12.5Z",
		"2014-09-24T10:11:12+02:00": "2014-09-24T10:11:12+02:00",
		"2014-09-24 10:11:12 -0500": "2014-09-24T10:11:12-05:00",
		"2016-02-29 23:59:59":       "2016-02-29T23:59:59Z",
	}
	for in, want := range good {
		got, err := ParseDate(in)
		if err != nil || got.Format("2006-01-02T15:04:05.999999999Z07:00") != want {
			t.Errorf("ParseDate(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "15mangled2", "2014-9-24", "2014-02-30", "2015-02-29", "2014-09-24 24:00:00",
		"2014-09-24 10:11", "2014-09-24 10:11:12 CEST", "2014-09-24T10:11:12.Z", "-1415215980",
		"99999999999999999999", "2014/09/24", "2014-09-24 10:11:12+2", "24.09.2014"} {
		if got, err := ParseDate(in); err == nil {
			t.Errorf("ParseDate(%q) = %v, want an error", in, got)
		}
	}
}
