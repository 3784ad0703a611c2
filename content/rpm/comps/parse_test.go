package comps

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"encoding/json"
	"errors"
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

// readFile returns a test file's bytes, decompressed when its name says .gz, .xz or .bz2.
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
	case ".bz2":
		r = bzip2.NewReader(bytes.NewReader(b))
	default:
		return b
	}
	if b, err = io.ReadAll(r); err != nil {
		t.Fatal(err)
	}
	return b
}

// goodFiles are the comps documents the tests read: the real ones under testdata/
// and testdata/tricky.xml.
var goodFiles = []string{
	data + "rpm-edge-cases/other_metadata/comps-f19.xml",
	data + "rpm-edge-cases/other_metadata/c941e2c77a27cdca324c0e0bc3190e134fddddb36a03fb5517e55d156b955205-comps-f19.xml.xz",
	data + "rpm-edge-cases/other_metadata/71d988ca33b31a18b0d775478d6f59b40583c794ae76393284850ee97bfba4dc-comps-f19.xml.gz",
	data + "rpm-edge-cases/other_metadata/0402e012013246e7e2f2f638c8a6046efdfd71ae1cbeff9c391d9c1ae5d7d431-comps-f19.xml.bz2",
	data + "rpm-edge-cases/comps_files/comps_00.xml",
	data + "yum-katello/zoo/comps.xml",
	data + "yum-katello/zoo/repodata/38212dcd79c8eb181c408d0366ed93daf03211eb46900e278b8b79f0c1ffca7e-comps.xml",
	data + "yum-katello/zoo/repodata/9dfc28fcc62c4bcccf18adf51f601529183146e65079f4e8d9fac748b6fc475f-comps.xml",
	data + "yum-katello/zoo/repodata/3c99740c1f78a5f550639983dc9e0a8f3c4147fc6f3a4d3e45dde87cddb0d8c4-comps.xml.gz",
	data + "yum-katello/zoo/repodata/3c99740c1f78a5f550639983dc9e0a8f3c4147fc6f3a4d3e45dde87cddb0d8c5-comps.xml.gz",
	data + "yum-katello/zoo2/comps.xml",
	data + "yum-katello/zoo2/repodata/06661e2a9839cf0beebcf409410ca4f93c09081f4e772fd0d03e1faf62705a11-comps.xml",
	data + "yum-katello/zoo2/repodata/8e6674143899a8f80ac94ab54048f8d3f0660887d23abff554149a185eaa4619-comps.xml.gz",
	"testdata/tricky.xml",
}

func parseFile(t testing.TB, path string) *Comps {
	t.Helper()
	c, err := Parse(bytes.NewReader(readFile(t, path)), filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func intp(n int) *int { return &n }

// ignoreDigest leaves Digest out of comparisons of hand-written values.
var ignoreDigest = cmp.FilterPath(func(p cmp.Path) bool {
	sf, ok := p.Last().(cmp.StructField)
	return ok && sf.Name() == "Digest"
}, cmp.Ignore())

func TestParseF19(t *testing.T) {
	t.Parallel()
	want := &Comps{
		Groups: []Group{{
			ID: "3d-printing", Name: "3D Printing", Description: "3D printing software", UserVisible: true,
			Packages:   []Package{{Name: "blender", Type: TypeDefault}, {Name: "cura", Type: TypeDefault}},
			NameByLang: map[string]string{}, DescByLang: map[string]string{},
		}},
		Categories: []Category{{
			ID: "gnome-desktop-environment", Name: "GNOME Desktop",
			Description:  "GNOME is a highly intuitive and user friendly desktop environment.",
			DisplayOrder: intp(5),
			GroupIDs: []GroupID{{Name: "firefox"}, {Name: "gnome-desktop"}, {Name: "gnome-games"},
				{Name: "epiphany"}, {Name: "libreoffice"}},
			NameByLang: map[string]string{"cs": "Pracovní prostředí GNOME", "de": "GNOME-Desktop"},
			DescByLang: map[string]string{
				"cs": "GNOME je velmi intuitivní a uživatelsky přívětivé pracovní prostředí.",
				"de": "GNOME ist eine hoch-intuitive und benutzerfreundliche Benutzeroberfläche"},
		}},
		Environments: []Environment{{
			ID: "gnome-desktop-environment", Name: "GNOME Desktop",
			Description:  "GNOME is a highly intuitive and user friendly desktop environment.",
			DisplayOrder: intp(5),
			GroupIDs:     []GroupID{{Name: "base-x"}},
			OptionIDs:    []GroupID{{Name: "3d-printing"}},
			NameByLang:   map[string]string{"cs": "Pracovní prostředí GNOME", "de": "GNOME-Desktop"},
			DescByLang: map[string]string{
				"cs": "GNOME je velmi intuitivní a uživatelsky přívětivé pracovní prostředí.",
				"de": "GNOME ist eine hoch-intuitive und benutzerfreundliche Benutzeroberfläche"},
		}},
		Langpacks: &Langpacks{Matches: map[string]string{"LabPlot-doc": "LabPlot-doc-%s", "aspell": "aspell-%s"}},
	}
	for _, file := range goodFiles[:4] { // plain, xz, gz and bz2
		if diff := cmp.Diff(want, parseFile(t, file), ignoreDigest); diff != "" {
			t.Errorf("%s (-want +got):\n%s", filepath.Base(file), diff)
		}
	}
}

func TestParseZooAndEdgeCases(t *testing.T) {
	t.Parallel()
	zoo := parseFile(t, data+"yum-katello/zoo/comps.xml")
	if len(zoo.Groups) != 2 || len(zoo.Categories) != 1 || len(zoo.Environments) != 1 || zoo.Langpacks != nil {
		t.Errorf("zoo: %d groups, %d categories, %d environments, langpacks %v; want 2, 1, 1, none",
			len(zoo.Groups), len(zoo.Categories), len(zoo.Environments), zoo.Langpacks)
	}
	bird := Group{ID: "bird", Default: true, UserVisible: true, DisplayOrder: intp(1024), Name: "bird",
		Packages:   []Package{{Name: "duck", Type: TypeMandatory}, {Name: "penguin", Type: TypeMandatory}},
		NameByLang: map[string]string{}, DescByLang: map[string]string{}}
	if diff := cmp.Diff(bird, zoo.Groups[0], ignoreDigest); diff != "" {
		t.Errorf("zoo group bird (-want +got):\n%s", diff)
	}
	if n := len(zoo.Groups[1].Packages); n != 22 {
		t.Errorf("zoo group mammal has %d packages, want 22", n)
	}

	// zoo2 lists "penguin" twice in mammal with the same type: kept once, as Pulp does.
	zoo2 := parseFile(t, data+"yum-katello/zoo2/comps.xml")
	want := []Package{{Name: "elephant,giraffe,cheetah,lion,monkey,penguin,squirrel,walrus", Type: TypeMandatory},
		{Name: "penguin", Type: TypeMandatory}}
	if diff := cmp.Diff(want, zoo2.Groups[1].Packages); diff != "" {
		t.Errorf("zoo2 mammal packages (-want +got):\n%s", diff)
	}

	// comps_00 is an untranslated comps.xml.in: libcomps knows no <_name>, and
	// <uservisible>True</uservisible> is not "true", so the default (true) stays.
	c00 := parseFile(t, data+"rpm-edge-cases/comps_files/comps_00.xml")
	want00 := &Comps{
		Groups: []Group{{ID: "test-group", UserVisible: true, Packages: []Package{{Name: "Archer"}},
			NameByLang: map[string]string{}, DescByLang: map[string]string{}}},
		Categories: []Category{{ID: "test category", DisplayOrder: intp(99), GroupIDs: []GroupID{{Name: "test-group"}},
			NameByLang: map[string]string{}, DescByLang: map[string]string{}}},
		Environments: []Environment{},
	}
	if diff := cmp.Diff(want00, c00, ignoreDigest); diff != "" {
		t.Errorf("comps_00.xml (-want +got):\n%s", diff)
	}
}

func TestParseTricky(t *testing.T) {
	t.Parallel()
	c := parseFile(t, "testdata/tricky.xml")
	g := c.Groups[0]
	wantPkgs := []Package{
		{Name: "gimp-help-'fr'", Type: TypeConditional, Requires: "gimp"},
		{Name: "inkscape", Type: TypeOptional, BaseArchOnly: true},
		{Name: "mystery", Type: TypeUnknown},
		{Name: "implicit-mandatory", Type: TypeMandatory},
		{Name: `both"'quotes`, Type: TypeDefault, Requires: `x"y'z`},
	}
	if diff := cmp.Diff(wantPkgs, g.Packages); diff != "" {
		t.Errorf("packages (-want +got):\n%s", diff)
	}
	if !g.Default || g.UserVisible || !g.BiarchOnly || g.DisplayOrder == nil || *g.DisplayOrder != -7 {
		t.Errorf("flags: default %v uservisible %v biarchonly %v display_order %v; want true false true -7",
			g.Default, g.UserVisible, g.BiarchOnly, g.DisplayOrder)
	}
	if e := c.Environments[0]; e.DisplayOrder == nil || *e.DisplayOrder != 0 || e.Description != "" {
		t.Errorf("environment: display_order %v description %q; want 0 (sscanf of 0x10) and empty", e.DisplayOrder, e.Description)
	}
	if diff := cmp.Diff(map[string]string{"aa": "aa-%s", "zz": "zz-new-%s"}, c.Langpacks.Matches); diff != "" {
		t.Errorf("langpacks: the later match wins (-want +got):\n%s", diff)
	}
}

// TestPulpDigests checks Digest against what Pulp computes for the same files, as
// recorded by testdata/pulp_digests.py with libcomps.
func TestPulpDigests(t *testing.T) {
	t.Parallel()
	f, err := os.Open("testdata/pulp_digests.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parsed := map[string]*Comps{}
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 4 {
			t.Fatalf("bad line %q", sc.Text())
		}
		file, kind, id, want := fields[0], fields[1], fields[2], fields[3]
		if !strings.HasPrefix(file, "testdata/") {
			file = data + file
		}
		c := parsed[file]
		if c == nil {
			c = parseFile(t, file)
			parsed[file] = c
		}
		got := ""
		switch kind {
		case "group":
			for _, u := range c.Groups {
				if u.ID == id {
					got = u.Digest
				}
			}
		case "category":
			for _, u := range c.Categories {
				if u.ID == id {
					got = u.Digest
				}
			}
		case "environment":
			for _, u := range c.Environments {
				if u.ID == id {
					got = u.Digest
				}
			}
		case "langpacks":
			got = c.Langpacks.Digest
		}
		if got != want {
			t.Errorf("%s %s %q: digest %s, Pulp's %s", fields[0], kind, id, got, want)
		}
	}
	if n < 20 {
		t.Errorf("only %d digests checked", n)
	}
}

func TestPyRepr(t *testing.T) {
	t.Parallel()
	// Expected values are Python 3's repr().
	tests := map[string]string{
		"":             "''",
		"plain":        "'plain'",
		"it's":         `"it's"`,
		`say "hi"`:     `'say "hi"'`,
		`both ' and "`: `'both \' and "'`,
		`back\slash`:   `'back\\slash'`,
		"t\tn\nr\r":    `'t\tn\nr\r'`,
		"\x01\x7f":     `'\x01\x7f'`,
		"nb\u00a0sp":   `'nb\xa0sp'`,
		"soft\u00adhy": `'soft\xadhy'`,
		"é画😀":          "'é画😀'",
		"line\u2028":   `'line\u2028'`,
		"\U000e0001":   `'\U000e0001'`,
	}
	for in, want := range tests {
		if got := pyRepr(in); got != want {
			t.Errorf("pyRepr(%q) = %s, want %s", in, got, want)
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
	const head = "<?xml version=\"1.0\"?>\n<comps>\n"
	tests := []struct {
		name, doc string
		kind      error
		msg       string
	}{
		{"empty", "", ErrSyntax, "c.xml: line 1: no <comps> element"},
		{"wrong root", head[:22] + "<updates/>", ErrInvalid, "c.xml: line 2: root element is <updates>, not <comps>"},
		{"truncated", head + "<group>\n<id>g</id>\n<name>G", ErrSyntax, `c.xml: line 5: group "g": unexpected EOF`},
		{"mismatched tag", head + "<category><id>c</id>\n<name>x</nam></category></comps>", ErrSyntax,
			`c.xml: line 4: category "c": element <name> closed by </nam>`},
		{"bad entity", head + "<group><id>&bogus;</id></group></comps>", ErrSyntax,
			"c.xml: line 3: group: invalid character entity &bogus;"},
		{"group without id", head + "<group>\n<name>G</name>\n</group></comps>", ErrInvalid,
			"c.xml: line 3: group without id"},
		{"category without id", head + "\n<category><id>  </id></category></comps>", ErrInvalid,
			"c.xml: line 4: category without id"},
		{"environment without id", head + "<environment/></comps>", ErrInvalid,
			"c.xml: line 3: environment without id"},
		{"packagereq without name", head + "<group><id>bird</id><packagelist>\n<packagereq type=\"default\"> </packagereq>" +
			"</packagelist></group></comps>", ErrInvalid, `c.xml: line 4: group "bird": packagereq without name`},
		{"groupid without name", head + "<environment><id>e</id><optionlist>\n<groupid/></optionlist></environment></comps>",
			ErrInvalid, `c.xml: line 4: environment "e": groupid without name`},
		{"match without name", head + "<langpacks>\n<match install=\"x-%s\"/></langpacks></comps>", ErrInvalid,
			"c.xml: line 4: langpacks: match without name"},
		{"display_order overflow", head + "<group><id>g</id>\n<display_order>99999999999</display_order></group></comps>",
			ErrInvalid, `c.xml: line 4: group "g": display_order "99999999999" out of range`},
		{"duplicate group", head + "<group><id>g</id></group>\n<category><id>g</id></category>\n<group>\n<id>g</id></group></comps>",
			ErrDuplicate, `c.xml: line 5: group "g": duplicate group id, first at line 3`},
		{"element after root", head + "</comps>\n<comps/>", ErrSyntax, "c.xml: line 4: element <comps> after </comps>"},
		{"control character", head + "<group><id>a\x02</id></group></comps>", ErrSyntax,
			"c.xml: line 3: group: illegal character code U+0002"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(strings.NewReader(tt.doc), "c.xml")
			checkError(t, err, tt.kind, tt.msg)
		})
	}
}

func TestParseTooLarge(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 2000)
	tests := []struct{ name, doc, msg string }{
		{"text", "<comps><group><id>g</id>\n<description>" + big + "</description></group></comps>",
			`c.xml: line 2: group "g": text longer than 1000 bytes`},
		{"attribute", "<comps><langpacks>\n<match name=\"a\" install=\"" + big + "\"/></langpacks></comps>",
			`c.xml: line 2: langpacks: attribute install longer than 1000 bytes`},
		{"run", "<comps><group><id>g</id><name>" + strings.Repeat(big, 100) + "</name></group></comps>",
			`c.xml: line 1: group "g": text longer than 1000 bytes`},
	}
	for _, tt := range tests {
		_, err := parse(strings.NewReader(tt.doc), "c.xml", 1000)
		if !errors.Is(err, ErrTooLarge) || err.Error() != tt.msg {
			t.Errorf("%s: error %v, want %s", tt.name, err, tt.msg)
		}
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	c := parseFile(t, "testdata/tricky.xml")
	b, err := json.Marshal(c.Groups[0].Packages[:2])
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"name":"gimp-help-'fr'","type":2,"basearchonly":null,"requires":"gimp"},` +
		`{"name":"inkscape","type":1,"basearchonly":true,"requires":null}]`
	if string(b) != want {
		t.Errorf("packages JSON\n  %s\nwant\n  %s", b, want)
	}
	b, err = json.Marshal(c.Environments[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "name", "description", "display_order", "group_ids", "option_ids",
		"desc_by_lang", "name_by_lang", "digest"} {
		if _, ok := m[k]; !ok {
			t.Errorf("environment JSON has no %q: %s", k, b)
		}
	}
}
