package comps

import (
	"bytes"
	"cmp"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func write(t testing.TB, c *Comps) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, c); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// canonical is what Write then Parse should give back for c: units sorted by id and
// unknown package types read as default.
func canonical(c *Comps) *Comps {
	out := *c
	out.Groups = slices.Clone(c.Groups)
	for i := range out.Groups {
		g := &out.Groups[i]
		pkgs := make([]Package, 0, len(g.Packages))
		for _, p := range g.Packages {
			if p.Type == TypeUnknown {
				p.Type = TypeDefault
			}
			if !slices.Contains(pkgs, p) {
				pkgs = append(pkgs, p)
			}
		}
		g.Packages = pkgs
		g.Digest = g.Sum()
	}
	slices.SortStableFunc(out.Groups, func(a, b Group) int { return cmp.Compare(a.ID, b.ID) })
	out.Categories = slices.Clone(c.Categories)
	slices.SortStableFunc(out.Categories, func(a, b Category) int { return cmp.Compare(a.ID, b.ID) })
	out.Environments = slices.Clone(c.Environments)
	slices.SortStableFunc(out.Environments, func(a, b Environment) int { return cmp.Compare(a.ID, b.ID) })
	return &out
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, file := range goodFiles {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			c := parseFile(t, file)
			out := write(t, c)
			again, err := Parse(bytes.NewReader(out), "written.xml")
			if err != nil {
				t.Fatalf("reading the written document: %v\n%s", err, out)
			}
			if diff := gocmp.Diff(canonical(c), again); diff != "" {
				t.Errorf("parse, write, parse changed the units (-first +second):\n%s", diff)
			}
			if out2 := write(t, again); !bytes.Equal(out, out2) {
				t.Errorf("writing the same units twice gave different bytes")
			}
		})
	}
}

// TestGolden pins the written layout. comps-f19's golden file is byte for byte what
// libcomps writes with Pulp's options, less the blacklist and whiteout Pulp drops.
func TestGolden(t *testing.T) {
	t.Parallel()
	for file, golden := range map[string]string{
		goodFiles[0]:          "testdata/comps-f19.golden.xml",
		"testdata/tricky.xml": "testdata/tricky.golden.xml",
	} {
		got := write(t, parseFile(t, file))
		if *update {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("written document differs from %s (-want +got):\n%s", golden, diff)
		}
	}
}

func TestWriteSorts(t *testing.T) {
	t.Parallel()
	c := &Comps{
		Groups:       []Group{{ID: "b"}, {ID: "a"}},
		Environments: []Environment{{ID: "z"}, {ID: "y"}},
	}
	out := string(write(t, c))
	if strings.Index(out, "<id>a</id>") > strings.Index(out, "<id>b</id>") ||
		strings.Index(out, "<id>y</id>") > strings.Index(out, "<id>z</id>") {
		t.Errorf("units not sorted by id:\n%s", out)
	}
	if c.Groups[0].ID != "b" {
		t.Error("Write reordered the caller's slice")
	}
}

func TestWriteInvalid(t *testing.T) {
	t.Parallel()
	big := 1 << 40
	tests := []struct {
		name string
		c    Comps
		kind error
		msg  string
	}{
		{"group without id", Comps{Groups: []Group{{Name: "x"}}}, ErrInvalid, "group without id"},
		{"blank environment id", Comps{Environments: []Environment{{ID: " "}}}, ErrInvalid, "environment without id"},
		{"duplicate group", Comps{Groups: []Group{{ID: "a"}, {ID: "a"}}}, ErrDuplicate, `group "a"`},
		{"packagereq without name", Comps{Groups: []Group{{ID: "a", Packages: []Package{{}}}}}, ErrInvalid,
			"packagereq without name"},
		{"groupid without name", Comps{Categories: []Category{{ID: "c", GroupIDs: []GroupID{{}}}}}, ErrInvalid,
			"groupid without name"},
		{"match without name", Comps{Langpacks: &Langpacks{Matches: map[string]string{"": "x"}}}, ErrInvalid,
			"match without name"},
		{"display_order out of range", Comps{Groups: []Group{{ID: "a", DisplayOrder: &big}}}, ErrInvalid, "out of range"},
		{"control character", Comps{Groups: []Group{{ID: "a", NameByLang: map[string]string{"x\x00": ""}}}}, ErrInvalid,
			"U+0000"},
	}
	for _, tt := range tests {
		err := Write(&bytes.Buffer{}, &tt.c)
		if !errors.Is(err, tt.kind) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: %v, want %v containing %q", tt.name, err, tt.kind, tt.msg)
		}
	}
}
