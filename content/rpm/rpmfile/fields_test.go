package rpmfile

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"pith/content/rpm/repodata"
)

// Rules the real rpms in testdata/ do not exercise, on headers made for the purpose.

func TestFieldsSynthetic(t *testing.T) {
	t.Parallel()
	type fields struct {
		Epoch, Arch, SourceRPM, Summary, Name string
		SizeInstalled, SizeArchive            int64
	}
	cases := []struct {
		name string
		sig  []tent
		hdr  []tent
		lead bool
		want fields
	}{
		{name: "defaults", sig: sigMinimal(), hdr: minimal(),
			want: fields{"0", "x86_64", "test-1.0-1.src.rpm", "summary", "test", 42, 99}},
		{name: "epoch and 64-bit sizes", sig: sigMinimal(tI64(sigLongArchiveSize, 6<<32)),
			hdr:  minimal(tI32(tagEpoch, 7), tI64(tagLongSize, 5<<32)),
			want: fields{"7", "x86_64", "test-1.0-1.src.rpm", "summary", "test", 5 << 32, 6 << 32}},
		{name: "main header archive size first", sig: sigMinimal(),
			hdr:  minimal(tI32(tagArchiveSize, 55)),
			want: fields{"0", "x86_64", "test-1.0-1.src.rpm", "summary", "test", 42, 55}},
		{name: "rpm v6 payloadsizealt", sig: sigMinimal(),
			hdr:  minimal(tI64(tagPayloadSizeAlt, 777), tI32(tagRPMFormat, 6)),
			want: fields{"0", "x86_64", "test-1.0-1.src.rpm", "summary", "test", 42, 777}},
		{name: "sourcepackage tag", sig: sigMinimal(),
			hdr:  []tent{tStr(tagName, "s"), tStr(tagArch, "x86_64"), tI32(tagSourcePackage, 1)},
			want: fields{"0", "src", "", "", "s", 0, 99}},
		{name: "source by heuristic", sig: sigMinimal(),
			hdr: []tent{tStr(tagName, "s"), tStr(tagArch, "noarch"), tI16(tagFileModes, 0o100644), tI32(tagFileFlags, 0),
				tI32(tagDirIndexes, 0), tStrs(tagBasenames, "s.spec"), tStrs(tagDirnames, "")},
			want: fields{"0", "src", "", "", "s", 0, 99}},
		{name: "source by lead", sig: sigMinimal(), lead: true,
			hdr:  []tent{tStr(tagName, "s"), tStr(tagArch, "noarch")},
			want: fields{"0", "src", "", "", "s", 0, 99}},
		{name: "binary without sourcerpm", sig: sigMinimal(),
			hdr:  []tent{tStr(tagName, "b"), tStr(tagArch, "noarch")},
			want: fields{"0", "noarch", "(none)", "", "b", 0, 99}},
		{name: "i18n summary and latin-1 name", sig: sigMinimal(),
			hdr:  []tent{tStr(tagName, "b\xe1l\x01\xa9"), tI18N(tagSummary, "C summary", "de Zusammenfassung"), tStr(tagArch, "noarch"), tStr(tagSourceRPM, "x")},
			want: fields{"0", "noarch", "x", "C summary", "bál", 0, 99}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := rpmBytes(c.sig, c.hdr)
			if c.lead {
				b[7] = 1
			}
			p := readBytes(t, b).Package
			got := fields{p.Epoch, p.Arch, p.SourceRPM, p.Summary, p.Name, p.SizeInstalled, p.SizeArchive}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Error(d)
			}
		})
	}
}

func TestFilesSynthetic(t *testing.T) {
	t.Parallel()
	want := []repodata.File{{Type: "dir", Path: "/etc/foo"}, {Path: "/etc/foo/a.conf"}, {Type: "ghost", Path: "/var/log/foo.log"}, {Path: "rel"}}
	modes := tI16(tagFileModes, 0o040755, 0o100644, 0o100644, 0o100644)
	flags := tI32(tagFileFlags, 0, 1, 64, 0)
	// Old packages list whole paths; new ones split them; a directory index out of range
	// gives the bare basename, as in createrepo_c.
	old := minimal(modes, flags, tStrs(tagOldFilenames, "/etc/foo", "/etc/foo/a.conf", "/var/log/foo.log", "rel"))
	split := minimal(modes, flags, tI32(tagDirIndexes, 0, 1, 2, 9),
		tStrs(tagBasenames, "foo", "a.conf", "foo.log", "rel"), tStrs(tagDirnames, "/etc/", "/etc/foo/", "/var/log/"))
	for name, hdr := range map[string][]tent{"oldfilenames": old, "dirnames": split} {
		p := readBytes(t, rpmBytes(sigMinimal(), hdr)).Package
		if d := cmp.Diff(want, p.Files); d != "" {
			t.Errorf("%s: %s", name, d)
		}
	}
}

func dep(name, flags, e, v, r string) repodata.Dep {
	return repodata.Dep{Name: name, Flags: flags, Epoch: e, Version: v, Release: r}
}

func TestDepsSynthetic(t *testing.T) {
	t.Parallel()
	const (
		eq  = senseEqual
		ge  = senseGreater | senseEqual
		lib = 1 << 24
	)
	hdr := minimal(
		tI16(tagFileModes, 0o100755, 0o100644), tI32(tagFileFlags, 0, 0), tI32(tagDirIndexes, 0, 1),
		tStrs(tagBasenames, "tool", "data"), tStrs(tagDirnames, "/usr/bin/", "/usr/share/test/"),
		tStrs(tagProvideName, "test", "cap", "bad"),
		tI32(tagProvideFlags, eq, 0, eq),
		tStrs(tagProvideVersion, "1.0-1", "", "x:1"),
		tStrs(tagRequireName, "rpmlib(PayloadIsXz)", "/usr/bin/tool", "/usr/share/test/data", "cap", "cap",
			"dup", "dup", "dup", "libc.so.6(GLIBC_2.3)", "libc.so.6(GLIBC_2.14)(64bit)", "libc.so.6()(64bit)",
			"sh", "post", "opt", "bad", "(a if b)"),
		tI32(tagRequireFlags, eq|lib, 0, 0, 0, ge,
			ge, ge, ge|sensePreReq, 0, 0, 0,
			senseScriptPre, senseScriptPost|senseGreater, senseMissingOK, eq, 0),
		tStrs(tagRequireVersion, "5.2-1", "", "", "", "2",
			"1:2.0-3", "1:2.0-3", "1:2.0-3", "", "", "",
			"", "0.5", "", "a:1", ""),
		tStrs(tagRecommendName, "rec"), tI32(tagRecommendFlags, 0), tStrs(tagRecommendVersion, ""),
		tStrs(tagOldSuggestName, "weak", "strong"), tStrs(tagOldSuggestVer, "", "1"), tI32(tagOldSuggestFlags, 0, senseStrong|eq),
		tStrs(tagOldEnhanceName, "eweak", "estrong"), tStrs(tagOldEnhanceVer, "", ""), tI32(tagOldEnhanceFlags, 0, senseStrong),
	)
	p := readBytes(t, rpmBytes(sigMinimal(), hdr)).Package
	want := repodata.Package{
		Provides: []repodata.Dep{dep("test", "EQ", "0", "1.0", "1"), dep("cap", "", "", "", "")},
		Requires: []repodata.Dep{
			dep("/usr/share/test/data", "", "", "", ""), // not a primary file: kept
			dep("cap", "GE", "0", "2", ""),              // provided without version only
			dep("dup", "GE", "1", "2.0", "3"),
			{Name: "dup", Flags: "GE", Epoch: "1", Version: "2.0", Release: "3", Pre: true},
			{Name: "sh", Pre: true},
			{Name: "post", Flags: "GT", Epoch: "0", Version: "0.5", Pre: true},
			dep("(a if b)", "", "", "", ""),
			dep("libc.so.6(GLIBC_2.14)(64bit)", "", "", "", ""), // the highest, last
		},
		Recommends:  []repodata.Dep{dep("opt", "", "", "", ""), dep("rec", "", "", "", ""), dep("strong", "EQ", "0", "1", "")},
		Suggests:    []repodata.Dep{dep("weak", "", "", "", "")},
		Supplements: []repodata.Dep{dep("estrong", "", "", "", "")},
		Enhances:    []repodata.Dep{dep("eweak", "", "", "", "")},
	}
	got := repodata.Package{Provides: p.Provides, Requires: p.Requires, Recommends: p.Recommends,
		Suggests: p.Suggests, Supplements: p.Supplements, Enhances: p.Enhances, Conflicts: p.Conflicts, Obsoletes: p.Obsoletes}
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
		t.Error(d)
	}
}

func TestChangelogSynthetic(t *testing.T) {
	t.Parallel()
	hdr := minimal(
		tI32(tagChangelogTime, 100, 100, 100, 50),
		tStrs(tagChangelogName, "C <c@x> - 3  ", "B - 2", " ", "A\xe9 - 1"),
		tStrs(tagChangelogText, "- three", "- two", "- one", "- zero"),
	)
	p := readBytes(t, rpmBytes(sigMinimal(), hdr)).Package
	want := []repodata.Changelog{
		{Author: "C <c@x> - 3", Date: 102, Text: "- three"},
		{Author: "B - 2", Date: 101, Text: "- two"},
		{Author: " ", Date: 100, Text: "- one"},
		{Author: "Aé - 1", Date: 50, Text: "- zero"},
	}
	if d := cmp.Diff(want, p.Changelogs); d != "" {
		t.Error(d)
	}
}

// bumpDatesDirect is createrepo_c's loop as written, quadratic in a run of equal times.
func bumpDatesDirect(dates []int64) {
	var last int64
	for k := range dates {
		t := dates[k]
		if t == last {
			tmp := t
			for p := k - 1; p >= 0 && dates[p] == tmp; p-- {
				dates[p]++
				tmp++
			}
		} else {
			last = t
		}
	}
}

func TestBumpDatesMatchesCreaterepo(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		n := rng.IntN(12)
		dates := make([]int64, n)
		cl := make([]repodata.Changelog, n)
		for i := range dates {
			dates[i] = int64(rng.IntN(5))
			cl[i].Date = dates[i]
		}
		orig := append([]int64{}, dates...)
		bumpDatesDirect(dates)
		bumpDates(cl)
		for i := range dates {
			if cl[i].Date != dates[i] {
				t.Fatalf("times %v: got %v, createrepo_c gives %v", orig, cl, dates)
			}
		}
	}
}

func TestSplitEVR(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in      string
		e, v, r string
		ok      bool
	}{
		{"", "", "", "", true},
		{"1.0", "0", "1.0", "", true},
		{"1.0-1", "0", "1.0", "1", true},
		{"2:1.0-1.fc40", "2", "1.0", "1.fc40", true},
		{"1.0-1-2", "0", "1.0", "1-2", true},
		{":1.0", "0", "1.0", "", true},
		{"1:", "1", "", "", true},
		{"1.0-", "0", "1.0", "", true},
		{"a:1.0", "", "", "", false},
		{"1.0-1:2", "", "", "", false},
		{" 3:1", " 3", "1", "", true},
	} {
		e, v, r, ok := splitEVR(c.in)
		if e != c.e || v != c.v || r != c.r || ok != c.ok {
			t.Errorf("splitEVR(%q) = %q %q %q %v, want %q %q %q %v", c.in, e, v, r, ok, c.e, c.v, c.r, c.ok)
		}
	}
}

func TestVercmp(t *testing.T) {
	t.Parallel()
	// From rpm's tests/rpmvercmp.at.
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"1.0", "1.0", 0}, {"1.0", "2.0", -1}, {"2.0", "1.0", 1}, {"2.0.1", "2.0.1", 0},
		{"2.0", "2.0.1", -1}, {"2.0.1a", "2.0.1", 1}, {"5.5p1", "5.5p2", -1}, {"5.5p10", "5.5p1", 1},
		{"10xyz", "10.1xyz", -1}, {"xyz10", "xyz10.1", -1}, {"xyz.4", "8", -1}, {"8", "xyz.4", 1},
		{"1.0aa", "1.0a", 1}, {"a", "b", -1}, {"6.0.rc1", "6.0", 1}, {"1.0~rc1", "1.0", -1},
		{"1.0~rc1", "1.0~rc2", -1}, {"1.0~rc1~git123", "1.0~rc1", -1}, {"1.0^", "1.0", 1},
		{"1.0^git1", "1.0^git2", -1}, {"1.0^git1~pre", "1.0^git1", -1}, {"1.0~rc1^git1", "1.0~rc1", 1},
		{"001", "1", 0}, {"1.0", "1_0", 0}, {"2_0", "2.0", 0},
	} {
		if got := Vercmp(c.a, c.b); got != c.want {
			t.Errorf("vercmp(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestCompareLibc(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"libc.so.6", "libc.so.6(GLIBC_2.3)", 2},
		{"libc.so.6(GLIBC_2.14)(64bit)", "libc.so.6(GLIBC_2.3)(64bit)", 1},
		{"libc.so.6()(64bit)", "libc.so.6(GLIBC_2.3)(64bit)", 2},
		{"libc.so.6(GLIBC_2.4)", "libc.so.6(GLIBC_2.4)", 0},
		{"libc.so.6(", "libc.so.6(", 0},
		{"libc.so.6(x", "libc.so.6(y", -1},
	} {
		if got := compareLibc(c.a, c.b); got != c.want {
			t.Errorf("compareLibc(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain":                 "plain",
		"tab\tnl\ncr\r":         "tab\tnl\ncr\r",
		"ok \x01 in utf-8":      "ok \x01 in utf-8", // valid UTF-8 is kept as is
		"Tom\xe1s \x01":         "Tomás ",
		"\xa9 cp1252 \x93x\x94": " cp1252 x",
		"Ml\xe8och":             "Mlèoch",
		"\xff":                  "ÿ",
	} {
		if got := text(in); got != want {
			t.Errorf("text(%q) = %q, want %q", in, got, want)
		}
	}
}
