package rpm

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pith/content/rpm/repodata"
	"pith/meta"
)

func TestParseRichDep(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"(foo if bar)", "if[foo bar]"},
		{"(foo >= 1.2-3 or bar)", "or[foo GE 1.2-3 bar]"},
		{"(a and b and c)", "and[a b c]"},
		{"(a if b else c)", "if[a b c]"},
		{"(a unless (b or c))", "unless[a or[b c]]"},
		{"((a with b) without c)", "without[with[a b] c]"},
		{"(python3 = 2:3.9-1 with python3-libs)", "with[python3 EQ 2:3.9-1 python3-libs]"},
	} {
		d, err := parseRichDep(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got := richString(d); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{"foo", "(foo", "(foo bar)", "(foo and)", "(and foo)", "(foo >= )", "(a) b", "(a or b and c)"} {
		if _, err := parseRichDep(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: got %v, want an error naming it", bad, err)
		}
	}
}

func richString(d *richDep) string {
	if d.op == "" {
		s := d.leaf.Name
		if d.leaf.Flags != "" {
			evr := d.leaf.Version
			if d.leaf.Epoch != "" {
				evr = d.leaf.Epoch + ":" + evr
			}
			if d.leaf.Release != "" {
				evr += "-" + d.leaf.Release
			}
			s += " " + d.leaf.Flags + " " + evr
		}
		return s
	}
	var parts []string
	for _, a := range d.args {
		parts = append(parts, richString(a))
	}
	return d.op + "[" + strings.Join(parts, " ") + "]"
}

func TestRangesOverlap(t *testing.T) {
	dep := func(flags, evr string) repodata.Dep {
		e, v, r := splitEVR(evr)
		return repodata.Dep{Name: "x", Flags: flags, Epoch: e, Version: v, Release: r}
	}
	for _, tc := range []struct {
		prov, req repodata.Dep
		want      bool
	}{
		{dep("", ""), dep("GE", "2.0"), true},
		{dep("EQ", "2.0-1"), dep("", ""), true},
		{dep("EQ", "2.0-1"), dep("GE", "2.0"), true},
		{dep("EQ", "1.9-1"), dep("GE", "2.0"), false},
		{dep("EQ", "2.0-1"), dep("LT", "2.0"), false},
		{dep("EQ", "2.0-1"), dep("EQ", "2.0"), true}, // no release on one side: not compared
		{dep("EQ", "2.0-1"), dep("EQ", "2.0-2"), false},
		{dep("EQ", "1:1.0-1"), dep("GE", "2.0"), true}, // the epoch wins
		{dep("GE", "3.0"), dep("LE", "2.0"), false},
		{dep("GE", "1.0"), dep("LE", "2.0"), true},
		{dep("LT", "1.0"), dep("GT", "0.5"), true},
	} {
		if got := rangesOverlap(tc.prov, tc.req); got != tc.want {
			t.Errorf("provide %s satisfies require %s: got %v, want %v", depString(tc.prov), depString(tc.req), got, tc.want)
		}
	}
}

// solveEnv stores packages of its own making in repositories.
type solveEnv struct {
	t   *testing.T
	ctx context.Context
	db  *meta.DB
}

func newSolveEnv(t *testing.T) *solveEnv {
	ctx := context.Background()
	db, err := meta.Open(ctx, filepath.Join(t.TempDir(), "pith.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return &solveEnv{t: t, ctx: ctx, db: db}
}

// pkg is a package "name-version.arch" with requires, provides and files given as
// "requires:a,b" "provides:c" "recommends:d" "files:/p,/q".
func pkg(nva string, fields ...string) *repodata.Package {
	i, j := strings.LastIndexByte(nva, '-'), strings.LastIndexByte(nva, '.')
	p := &repodata.Package{Name: nva[:i], Epoch: "0", Version: nva[i+1 : j], Release: "1", Arch: nva[j+1:], ChecksumType: "sha256",
		PkgID: fmt.Sprintf("%x", sha256.Sum256([]byte(nva))), LocationHref: nva + ".rpm"}
	for _, f := range fields {
		kind, list, _ := strings.Cut(f, ":")
		for _, item := range strings.Split(list, ",") {
			d := repodata.Dep{Name: item}
			if name, evr, ok := strings.Cut(item, " >= "); ok {
				d.Name, d.Flags = name, "GE"
				d.Epoch, d.Version, d.Release = splitEVR(evr)
			}
			switch kind {
			case "requires":
				p.Requires = append(p.Requires, d)
			case "provides":
				p.Provides = append(p.Provides, d)
			case "recommends":
				p.Recommends = append(p.Recommends, d)
			case "files":
				p.Files = append(p.Files, repodata.File{Path: item})
			}
		}
	}
	return p
}

// version makes a repository whose version 1 holds pkgs, and returns it with the ids.
func (e *solveEnv) version(name string, pkgs ...*repodata.Package) (meta.Repository, map[string]int64) {
	repo, err := meta.CreateRepository(e.ctx, e.db, meta.Repository{Type: RepoType, Name: name})
	if err != nil {
		e.t.Fatal(err)
	}
	ids := map[string]int64{}
	err = e.db.Tx(e.ctx, func(tx *meta.Tx) error {
		var ch meta.Change
		for _, p := range pkgs {
			row, err := newPackageRow(p)
			if err != nil {
				return err
			}
			units, _, err := storePackages(e.ctx, tx, []packageRow{row}, nil, "", false)
			if err != nil {
				return err
			}
			ids[p.Name+"-"+p.Version+"."+p.Arch] = units[0].ID
			ch.Add = append(ch.Add, units[0].ID)
		}
		_, _, err := meta.NewVersion(e.ctx, tx, repo.ID, ch)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return repo, ids
}

func names(ids map[string]int64, got []int64) []string {
	var out []string
	for n, id := range ids {
		if slices.Contains(got, id) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// Copying a package with dependency solving brings what it needs from the source:
// library sonames, files, versioned and rich requirements, weak dependencies; it
// prefers the destination's packages, the package's architecture and the newest version.
func TestCopyPlanSolves(t *testing.T) {
	e := newSolveEnv(t)
	src, ids := e.version("src",
		pkg("app-1.0.x86_64", "requires:libfoo.so.1()(64bit),/usr/bin/tool,libbar >= 2.0,(web if httpd),(plugin-a or plugin-b),(gui if xorg),ghost-lib,rpmlib(PayloadIsZstd)",
			"recommends:extra,nothing-recommended"),
		pkg("libfoo-1.0.x86_64", "provides:libfoo.so.1()(64bit)"),
		pkg("libfoo-2.0.x86_64", "provides:libfoo.so.1()(64bit)"),
		pkg("libfoo-2.0.i686", "provides:libfoo.so.1()(64bit)"),
		pkg("tools-1.0.x86_64", "files:/usr/bin/tool,/usr/bin/other", "requires:libbar"),
		pkg("libbar-1.0.x86_64"),
		pkg("libbar-2.1.x86_64"),
		pkg("web-1.0.noarch"),
		pkg("plugin-b-1.0.noarch"),
		pkg("gui-1.0.x86_64"),
		pkg("extra-1.0.noarch"),
		pkg("unrelated-1.0.x86_64"),
		pkg("src-1.0.src", "requires:gcc"),
	)
	dest, destIDs := e.version("dest", pkg("httpd-2.4.x86_64"), pkg("libbar-1.0.x86_64"))
	plan := func(content ...string) ([]string, []string) {
		t.Helper()
		var sel []int64
		for _, c := range content {
			sel = append(sel, ids[c])
		}
		units, problems, err := CopyPlan(e.ctx, e.db, []CopyEntry{{Source: src.ID, SourceVersion: 1, Dest: dest.ID, DestVersion: 1, Content: sel}}, true)
		if err != nil {
			t.Fatal(err)
		}
		return names(ids, units[0]), problems
	}
	got, problems := plan("app-1.0.x86_64")
	want := []string{"app-1.0.x86_64", "extra-1.0.noarch", "libbar-2.1.x86_64", "libfoo-2.0.x86_64", "plugin-b-1.0.noarch", "tools-1.0.x86_64", "web-1.0.noarch"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("units (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"nothing provides ghost-lib needed by app-0:1.0-1.x86_64"}, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	// A source package comes alone.
	if got, _ := plan("src-1.0.src"); !slices.Equal(got, []string{"src-1.0.src"}) {
		t.Errorf("source package: %v", got)
	}
	// Without solving, only the selection.
	units, _, err := CopyPlan(e.ctx, e.db, []CopyEntry{{Source: src.ID, SourceVersion: 1, Dest: dest.ID, DestVersion: 1, Content: []int64{ids["app-1.0.x86_64"]}}}, false)
	if err != nil || len(units[0]) != 1 {
		t.Errorf("without solving: %v %v", units, err)
	}
	// What the destination has is not copied again: libbar 1.0 is there, tools is happy with it.
	if got, _ := plan("tools-1.0.x86_64"); !slices.Equal(got, []string{"tools-1.0.x86_64"}) {
		t.Errorf("tools: %v (destination has %v)", got, destIDs)
	}
}

// Entries solve together: what one entry's source provides is copied by that entry.
func TestCopyPlanAcrossEntries(t *testing.T) {
	e := newSolveEnv(t)
	appstream, ids := e.version("appstream", pkg("app-1.0.noarch", "requires:/bin/sh"))
	baseos, baseIDs := e.version("baseos", pkg("bash-5.1.x86_64", "files:/bin/sh,/bin/bash"))
	destA, _ := e.version("cv-appstream")
	destB, _ := e.version("cv-baseos")
	units, problems, err := CopyPlan(e.ctx, e.db, []CopyEntry{
		{Source: appstream.ID, SourceVersion: 1, Dest: destA.ID, DestVersion: 1, Content: []int64{ids["app-1.0.noarch"]}},
		{Source: baseos.ID, SourceVersion: 1, Dest: destB.ID, DestVersion: 1, Content: []int64{}},
	}, true)
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	if !slices.Equal(units[0], []int64{ids["app-1.0.noarch"]}) || !slices.Equal(units[1], []int64{baseIDs["bash-5.1.x86_64"]}) {
		t.Errorf("got %v", units)
	}
}
