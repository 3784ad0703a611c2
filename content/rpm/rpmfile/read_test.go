package rpmfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"pith/content/rpm/repodata"
	"pith/internal/testfiles"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from what Read returns")

var (
	dataDir = testfiles.Path()
	zooDir  = dataDir + "/yum-katello/zoo"
	edgeDir = dataDir + "/rpm-edge-cases/packages"
)

// rpmFiles lists every real rpm the tests read.
func rpmFiles(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{zooDir, edgeDir} {
		m, err := filepath.Glob(dir + "/*.rpm")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) != 32 {
		t.Fatalf("found %d rpms under %s, want 32 (20 zoo + 12 edge cases)", len(out), dataDir)
	}
	return out
}

func readFile(t testing.TB, path string) *Header {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := Read(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return h
}

// TestGolden keeps the whole result for every rpm, to review changes with -update.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, path := range rpmFiles(t) {
		h := readFile(t, path)
		got, err := json.MarshalIndent(h, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		golden := filepath.Join("testdata", "golden", filepath.Base(path)+".json")
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(string(want), string(got)); d != "" {
			t.Errorf("%s differs from %s (-want +got):\n%s", path, golden, d)
		}
	}
}

// rpmQuery is one testdata/rpm/*.txt file: what rpm -qp printed, by section.
type rpmQuery map[string]string

func loadQuery(t *testing.T, rpmPath string) rpmQuery {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "rpm", filepath.Base(rpmPath)+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	q := rpmQuery{}
	var name string
	var body []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(line, "@@") && line != "@@-" {
			if name != "" {
				q[name] = strings.Join(body, "\n")
			}
			name, body = line[2:], nil
			continue
		}
		body = append(body, line)
	}
	return q
}

// value is a single-valued section; rpm prints "(none)" for an absent tag.
func (q rpmQuery) value(name string) string {
	v := strings.TrimSuffix(q[name], "\n")
	if v == "(none)" {
		return ""
	}
	return v
}

func (q rpmQuery) lines(name string) [][]string {
	var out [][]string
	for l := range strings.SplitSeq(q[name], "\n") {
		if l != "" {
			out = append(out, strings.Split(l, "\t"))
		}
	}
	return out
}

func (q rpmQuery) deps(t *testing.T, name string) []repodata.Dep {
	var out []repodata.Dep
	for _, f := range q.lines(name) {
		flags, err := strconv.ParseUint(f[1], 10, 32)
		if err != nil {
			t.Fatal(err)
		}
		e, v, r, _ := splitEVR(f[2])
		out = append(out, repodata.Dep{Name: text(f[0]), Flags: flagString(flags), Epoch: e, Version: v, Release: r})
	}
	return out
}

var keyIDRe = regexp.MustCompile(`Key ID ([0-9a-f]{16})`)

// TestAgainstRPM compares every field with what rpm -qp reads from the same file
// (testdata/gen.sh); requires are compared unfiltered there, filtered in
// TestAgainstCreaterepo.
func TestAgainstRPM(t *testing.T) {
	t.Parallel()
	for _, path := range rpmFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			q := loadQuery(t, path)
			h := readFile(t, path)
			p := h.Package

			want := repodata.Package{
				Name: q.value("name"), Epoch: q.value("epoch"), Version: q.value("version"), Release: q.value("release"),
				Arch: q.value("arch"), Summary: text(q.value("summary")), Description: text(q.value("description")),
				URL: q.value("url"), License: q.value("license"), Vendor: q.value("vendor"), Group: q.value("group"),
				BuildHost: q.value("buildhost"), Packager: q.value("packager"), SourceRPM: q.value("sourcerpm"),
			}
			if want.Epoch == "" {
				want.Epoch = "0"
			}
			if q.value("sourcepackage") == "1" {
				want.Arch = "src"
			}
			want.TimeBuild, _ = strconv.ParseInt(q.value("buildtime"), 10, 64)
			want.SizeInstalled, _ = strconv.ParseInt(q.value("longsize"), 10, 64)
			want.SizeArchive, _ = strconv.ParseInt(q.value("longarchivesize"), 10, 64)
			got := p
			got.HeaderStart, got.HeaderEnd = 0, 0
			got.Provides, got.Requires, got.Conflicts, got.Obsoletes = nil, nil, nil, nil
			got.Suggests, got.Enhances, got.Recommends, got.Supplements = nil, nil, nil, nil
			got.Files, got.Changelogs = nil, nil
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("fields (-rpm +Read):\n%s", d)
			}

			for _, c := range []struct {
				name string
				got  []repodata.Dep
			}{
				{"provides", p.Provides}, {"conflicts", p.Conflicts}, {"obsoletes", p.Obsoletes},
				{"recommends", p.Recommends}, {"suggests", p.Suggests},
				{"supplements", p.Supplements}, {"enhances", p.Enhances},
			} {
				if d := cmp.Diff(q.deps(t, c.name), c.got); d != "" {
					t.Errorf("%s (-rpm +Read):\n%s", c.name, d)
				}
			}
			checkRequires(t, q, p)

			var wantFiles []repodata.File
			for _, f := range q.lines("files") {
				mode, _ := strconv.ParseUint(f[1], 10, 16)
				flags, _ := strconv.ParseUint(f[2], 10, 32)
				typ := ""
				if mode&0o170000 == 0o040000 {
					typ = "dir"
				} else if flags&64 != 0 {
					typ = "ghost"
				}
				wantFiles = append(wantFiles, repodata.File{Type: typ, Path: text(f[0])})
			}
			if d := cmp.Diff(wantFiles, p.Files); d != "" {
				t.Errorf("files (-rpm +Read):\n%s", d)
			}

			// Times are compared with createrepo's (which moves equal ones apart).
			var wantLog []repodata.Changelog
			for e := range strings.SplitSeq(strings.TrimSuffix(q["changelog"], "\n@@-"), "\n@@-\n") {
				if e == "" {
					continue
				}
				head, body, _ := strings.Cut(e, "\n")
				_, author, _ := strings.Cut(head, "\t")
				wantLog = append(wantLog, repodata.Changelog{Author: text(strings.TrimRight(author, " ")), Text: text(body)})
			}
			gotLog := make([]repodata.Changelog, len(p.Changelogs))
			for i, c := range p.Changelogs {
				gotLog[i] = repodata.Changelog{Author: c.Author, Text: c.Text}
			}
			if d := cmp.Diff(wantLog, gotLog, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("changelog (-rpm +Read):\n%s", d)
			}

			wantIDs := []string{}
			for _, m := range keyIDRe.FindAllStringSubmatch(q["signatures"], -1) {
				wantIDs = append(wantIDs, m[1])
			}
			if filepath.Base(path) == "empty-signed-v6-multiple-0-0.x86_64.rpm" {
				// rpm 4.18 does not read the OpenPGP tag; its second signature, as
				// gpg --list-packets shows it, is by the EdDSA key.
				wantIDs = append(wantIDs, "9b34bebb1f1d8f8a")
			}
			if d := cmp.Diff(uniq(wantIDs), h.KeyIDs, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("key IDs (-rpm +Read):\n%s", d)
			}
		})
	}
}

func uniq(s []string) []string {
	s = append([]string{}, s...)
	slices.Sort(s)
	return slices.Compact(s)
}

// checkRequires checks that Read's requires are rpm's, in rpm's order, less only those
// createrepo_c drops, each for a rule it has.
func checkRequires(t *testing.T, q rpmQuery, p repodata.Package) {
	t.Helper()
	files := map[string]bool{}
	for _, f := range q.lines("files") {
		files[f[0]] = true
	}
	provided := map[string]bool{}
	for _, f := range q.lines("provides") {
		fl, _ := strconv.ParseUint(f[1], 10, 32)
		provided[f[0]+flagString(fl)+f[2]] = true
	}
	got := p.Requires
	for _, f := range q.lines("requires") {
		fl, _ := strconv.ParseUint(f[1], 10, 32)
		if len(got) > 0 && got[0].Name == text(f[0]) && got[0].Flags == flagString(fl) && got[0].Pre == (fl&sensePre != 0) {
			got = got[1:]
			continue
		}
		switch {
		case strings.HasPrefix(f[0], "rpmlib("):
		case files[f[0]] && primaryFile(f[0]):
		case provided[f[0]+flagString(fl)+f[2]]:
		case strings.HasPrefix(f[0], "libc.so.6"):
		default:
			t.Errorf("requires %q (flags %s) is missing", f[0], f[1])
		}
	}
	if len(got) > 0 {
		t.Errorf("requires %v are not rpm's, or out of order", got)
	}
}

func TestReadPackage(t *testing.T) {
	t.Parallel()
	for _, path := range rpmFiles(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		h, err := ReadPackage(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		p := h.Package
		if p.PkgID != hex.EncodeToString(sum[:]) || p.ChecksumType != "sha256" || p.SizePackage != int64(len(b)) {
			t.Errorf("%s: pkgid %s %s size %d, want %x sha256 %d", path, p.PkgID, p.ChecksumType, p.SizePackage, sum, len(b))
		}
		// Read stops at the payload: the rest of the reader is exactly the payload.
		r := bytes.NewReader(b)
		h2, err := Read(r)
		if err != nil {
			t.Fatal(err)
		}
		if left := int64(r.Len()); left != int64(len(b))-h2.Package.HeaderEnd {
			t.Errorf("%s: Read left %d bytes, want %d", path, left, int64(len(b))-h2.Package.HeaderEnd)
		}
	}
}
