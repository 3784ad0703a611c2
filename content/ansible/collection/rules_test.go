package collection

import (
	"errors"
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"1.0.0", true}, {"0.0.1", true}, {"10.20.30", true}, {"1.0.0-alpha.1", true}, {"1.0.0-0.3.7", true},
		{"1.0.0-x-y-z.--", true}, {"1.0.0+20130313144700", true}, {"1.0.0-beta+exp.sha.5114f85", true},
		{"1.0.0+001", true}, {"2147483647.0.0", true},
		{"1.0", false}, {"1", false}, {"01.0.0", false}, {"1.00.0", false}, {"1.0.0-01", false},
		{"1.0.0-", false}, {"1.0.0+", false}, {"1.0.0-a..b", false}, {"1.0.0-a_b", false}, {"v1.0.0", false},
		{"1.0.0 ", false}, {"1.0.0\n", false}, {"2147483648.0.0", false}, {"", false},
		{"1.0.0-" + strings.Repeat("a", 128), false},
	} {
		v, err := ParseVersion(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ParseVersion(%q) = %v, %v; want ok %v", tc.in, v, err, tc.ok)
		}
		if err == nil && v.String() != tc.in {
			t.Errorf("ParseVersion(%q).String() = %q", tc.in, v.String())
		}
	}
}

func TestSemVerCompare(t *testing.T) {
	t.Parallel()
	// SemVer 2.0.0's own example of precedence, lowest first.
	order := []string{"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
		"1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "2.0.0"}
	for i := range order {
		for j := range order {
			a, _ := ParseVersion(order[i])
			b, _ := ParseVersion(order[j])
			if got, want := a.Compare(b), sign(i-j); got != want {
				t.Errorf("%s vs %s: %d, want %d", order[i], order[j], got, want)
			}
		}
	}
	a, _ := ParseVersion("1.0.0+a")
	b, _ := ParseVersion("1.0.0+b")
	if a.Compare(b) != 0 {
		t.Error("build metadata must not order")
	}
}

// TestParseRange follows python-semanticversion's SimpleSpec, which galaxy-importer
// validates dependencies with.
func TestParseRange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"*", true}, {">=1.0.0", true}, {">=1.0.0,<2.0.0", true}, {"!=1.2.3", true}, {"==1.0.0", true},
		{"=1.0.0", true}, {"1.0.0", true}, {"^1.2", true}, {"~1.2.3", true}, {"~=2.2", true}, {">1", true},
		{"<=1.2", true}, {"==1.*", true}, {">=*", true}, {"==1.0.0+build.1", true}, {"!=1.0.0+", true},
		{"<1.2.3-", true}, {">=1.0.0-rc.1", true}, {"*.*.*", true}, {"1.x", false},
		{"", false}, {">= 1.0.0", false}, {">=1.0.0, <2.0.0", false}, {">=1.0.0,", false}, {"||", false},
		{"<*", false}, {"~*", false}, {"^*", false}, {"!=*", false}, {">=1.0-rc1", false}, {">=1.0.0+b", false},
		{"==1.0.0-01", false}, {"==1.0.0-a..b", false}, {"01.0.0", false}, {"latest", false},
		{">=1.0.0||<0.5.0", false}, {"1.0.0.0", false},
	} {
		r, err := ParseRange(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ParseRange(%q) = %v, %v; want ok %v", tc.in, r, err, tc.ok)
		}
		if err == nil && r.String() != tc.in {
			t.Errorf("ParseRange(%q).String() = %q", tc.in, r.String())
		}
	}
}

// TestValidRequiresAnsible follows packaging's SpecifierSet (PEP 440).
func TestValidRequiresAnsible(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{">=2.9.10", true}, {">=2.14.0,<2.17", true}, {">=2.9,", true}, {"> 2.9", true}, {"==2.*", true},
		{"~=2.15", true}, {">=2.16.0rc1", true}, {">=2.9.post1", true}, {"!=2.10.0.dev0", true},
		{"===foobar", true}, {"<2.16,>=2.14", true}, {" >=2.9 ", true}, {"==2.15.0+local.1", true},
		{"", false}, {"2.9", false}, {">=2.9.*", false}, {"~=2", false}, {">=latest", false},
		{"=>2.9", false}, {">=2.9;", false}, {">=2.9.0+local", false}, {strings.Repeat(">=2.9,", 50), false},
	} {
		if err := ValidRequiresAnsible(tc.in); (err == nil) != tc.ok {
			t.Errorf("ValidRequiresAnsible(%q) = %v; want ok %v", tc.in, err, tc.ok)
		}
	}
}

func TestValidName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"community", true}, {"ibm_zos_core", true}, {"a1", true}, {"a_", true}, {strings.Repeat("a", 64), true},
		{"", false}, {"Community", false}, {"1abc", false}, {"_abc", false}, {"a__b", false}, {"a-b", false},
		{"a.b", false}, {strings.Repeat("a", 65), false}, {"import", false}, {"class", false}, {"é", false},
	} {
		if err := ValidName(tc.in); (err == nil) != tc.ok {
			t.Errorf("ValidName(%q) = %v; want ok %v", tc.in, err, tc.ok)
		}
	}
}

func TestParseFilename(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Filename
		ok   bool
	}{
		{"community-general-5.7.0.tar.gz", Filename{"community", "general", "5.7.0"}, true},
		{"ibm-ibm_zos_core-1.3.6.tar.gz", Filename{"ibm", "ibm_zos_core", "1.3.6"}, true},
		{"a-b-1.0.0-rc.1+build.5.tar.gz", Filename{"a", "b", "1.0.0-rc.1+build.5"}, true},
		{"a-b-1.0.tar.gz", Filename{}, false},
		{"a-b-1.0.0.tgz", Filename{}, false},
		{"a-1.0.0.tar.gz", Filename{}, false},
		{"a-b-c-1.0.0.tar.gz", Filename{}, false},
		{"../a-b-1.0.0.tar.gz", Filename{}, false},
		{strings.Repeat("a", 65) + "-b-1.0.0.tar.gz", Filename{}, false},
	} {
		got, err := ParseFilename(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseFilename(%q) = %+v, %v", tc.in, got, err)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseFilename(%q) error kind %v", tc.in, err)
		}
		if err == nil && got.String() != tc.in {
			t.Errorf("String() = %q", got.String())
		}
	}
}

func TestValidTags(t *testing.T) {
	t.Parallel()
	if err := ValidTags([]string{"cloud", "linux", "a_b1"}); err != nil {
		t.Error(err)
	}
	for _, tags := range [][]string{{"Cloud"}, {"a-b"}, {"1a"}, {strings.Repeat("a", 65)}, make([]string, 21)} {
		if ValidTags(tags) == nil {
			t.Errorf("ValidTags(%q) accepted", tags)
		}
	}
}
