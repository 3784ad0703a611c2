package modulemd

import (
	"bytes"
	"compress/gzip"
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

// readData returns a data file's content, decompressed by its extension.
func readData(t testing.TB, rel string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(data, rel))
	if err != nil {
		t.Fatal(err)
	}
	var r io.Reader = bytes.NewReader(raw)
	switch {
	case strings.HasSuffix(rel, ".gz"):
		if r, err = gzip.NewReader(r); err != nil {
			t.Fatal(err)
		}
	case strings.HasSuffix(rel, ".xz"):
		if r, err = xz.NewReader(r); err != nil {
			t.Fatal(err)
		}
	default:
		return raw
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// glob returns the data files matching pattern, relative to data; none is a failure.
func glob(t testing.TB, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(data, pattern))
	if err != nil || len(m) == 0 {
		t.Fatalf("no data file matches %s (%v)", pattern, err)
	}
	for i := range m {
		m[i] = strings.TrimPrefix(m[i], filepath.Clean(data)+"/")
	}
	return m
}

func parseBytes(t testing.TB, name string, b []byte) *File {
	t.Helper()
	f, err := Parse(bytes.NewReader(b), name)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return f
}

// realFiles are every modules.yaml in the test data, with the documents each holds.
var realFiles = []struct {
	pattern                      string
	modules, defaults, obsoletes int
}{
	{"yum-katello/zoo/modules.yaml", 6, 3, 0},
	{"yum-katello/zoo/repodata/*-modules.yaml.gz", 6, 3, 0},
	{"yum-katello/zoo2/modules.yaml", 6, 3, 0},
	{"yum-katello/zoo2/repodata/*-modules.yaml.gz", 6, 3, 0},
	{"rpm-edge-cases/repo_with_additional_metadata/repodata/*-modules.yaml.gz", 64, 17, 0},
	{"rpm-edge-cases/repo_03/repodata/*-modules.yaml.xz", 1, 1, 0},
}

func TestRealFiles(t *testing.T) {
	t.Parallel()
	for _, rf := range realFiles {
		for _, name := range glob(t, rf.pattern) {
			t.Run(name, func(t *testing.T) {
				raw := readData(t, name)
				f := parseBytes(t, name, raw)
				if len(f.Modules) != rf.modules || len(f.Defaults) != rf.defaults || len(f.Obsoletes) != rf.obsoletes || len(f.Skipped) != 0 {
					t.Fatalf("got %d modules, %d defaults, %d obsoletes, %d skipped; want %d, %d, %d, 0",
						len(f.Modules), len(f.Defaults), len(f.Obsoletes), len(f.Skipped), rf.modules, rf.defaults, rf.obsoletes)
				}
				// Every snippet is a verbatim slice of the file between its markers.
				for _, s := range snippets(f) {
					body := strings.TrimSuffix(strings.TrimPrefix(s, "---\n"), "\n...")
					if !bytes.Contains(raw, []byte("---\n"+body+"\n...")) {
						t.Errorf("snippet is not verbatim in the file:\n%s", s)
					}
				}
				// The files are written the way libmodulemd writes them, and so is ours:
				// in file order, the written file is the original.
				want := string(raw)
				if !strings.HasSuffix(want, "\n") {
					want += "\n"
				}
				if diff := cmp.Diff(want, writeSnippets(t, inFileOrder(t, raw))); diff != "" {
					t.Errorf("written file differs from the original (-want +got):\n%s", diff)
				}
				written := writeSnippets(t, snippets(f))
				if diff := cmp.Diff(f, parseBytes(t, "written", []byte(written))); diff != "" {
					t.Errorf("parse(write(parse)) differs (-first +second):\n%s", diff)
				}
			})
		}
	}
}

// snippets returns a File's snippets in the order Pulp publishes them.
func snippets(f *File) []string {
	var out []string
	for _, m := range f.Modules {
		out = append(out, m.Snippet)
	}
	for _, d := range f.Defaults {
		out = append(out, d.Snippet)
	}
	for _, o := range f.Obsoletes {
		out = append(out, o.Snippet)
	}
	return out
}

// inFileOrder returns the snippets of a file's documents in file order.
func inFileOrder(t testing.TB, raw []byte) []string {
	t.Helper()
	d := NewDecoder(bytes.NewReader(raw), "modules.yaml")
	var out []string
	for {
		doc, err := d.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case doc.Module != nil:
			out = append(out, doc.Module.Snippet)
		case doc.Defaults != nil:
			out = append(out, doc.Defaults.Snippet)
		case doc.Obsolete != nil:
			out = append(out, doc.Obsolete.Snippet)
		}
	}
}

func writeSnippets(t testing.TB, snippets []string) string {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, s := range snippets {
		if err := w.WriteSnippet(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestZooExactly(t *testing.T) {
	t.Parallel()
	f := parseBytes(t, "modules.yaml", readData(t, "yum-katello/zoo/modules.yaml"))
	wantFirst := Modulemd{
		Name: "kangaroo", Stream: "0", Version: 20180730223407, Context: "deadbeef", Arch: "noarch",
		Artifacts:    []string{"kangaroo-0:0.3-1.noarch"},
		Dependencies: []Dependency{},
		Profiles:     map[string][]string{"default": {"kangaroo"}},
		Description:  "A module for the kangaroo 0.3 package",
		Snippet: `---
document: modulemd
version: 2
data:
  name: kangaroo
  stream: 0
  version: 20180730223407
  context: deadbeef
  arch: noarch
  summary: Kangaroo 0.3 module
  description: >-
    A module for the kangaroo 0.3 package
  license:
    module:
      - MIT
  profiles:
    default:
      rpms:
        - kangaroo
  artifacts:
    rpms:
      - kangaroo-0:0.3-1.noarch
...`,
	}
	if diff := cmp.Diff(wantFirst, f.Modules[0]); diff != "" {
		t.Errorf("first module (-want +got):\n%s", diff)
	}
	walrus := f.Modules[5]
	if walrus.Stream != "0.71" || walrus.Context != "c0ffee42" || walrus.Arch != "x86_64" ||
		!cmp.Equal(walrus.Profiles, map[string][]string{"default": {"walrus"}, "flipper": {"walrus"}}) {
		t.Errorf("walrus 0.71 = %+v", walrus)
	}
	wantDefaults := ModulemdDefaults{
		Module: "walrus", Stream: "0.71",
		Profiles: map[string][]string{"5.21": {"default"}, "0.71": {"flipper"}},
		Snippet: `---
document: modulemd-defaults
version: 1
data:
  module: walrus
  stream: 0.71
  profiles:
    5.21: [default]
    0.71: [flipper]
...`,
	}
	if diff := cmp.Diff(wantDefaults, f.Defaults[0]); diff != "" {
		t.Errorf("walrus defaults (-want +got):\n%s", diff)
	}
	// Pulp's digest is the SHA-256 of exactly this text.
	if got := f.Defaults[0].Digest(); got != digest(wantDefaults.Snippet) || len(got) != 64 {
		t.Errorf("digest = %s", got)
	}
}

func TestEdgeCaseModules(t *testing.T) {
	t.Parallel()
	name := glob(t, "rpm-edge-cases/repo_with_additional_metadata/repodata/*-modules.yaml.gz")[0]
	f := parseBytes(t, name, readData(t, name))
	first := f.Modules[0]
	first.Snippet = ""
	want := Modulemd{
		Name: "testmodule", Stream: "master", Version: 3020190115184641, Context: "a5b0195c", Arch: "x86_64",
		Artifacts: []string{"dwm-0:6.1-8.module_f30+2696+4b2456b0.x86_64", "dwm-user-0:6.1-8.module_f30+2696+4b2456b0.x86_64",
			"perl-List-Compare-0:0.53-11.module_f30+2696+4b2456b0.noarch"},
		Dependencies: []Dependency{{BuildRequires: map[string][]string{"platform": {"f30"}}, Requires: map[string][]string{"platform": {"f30"}}}},
		Profiles:     map[string][]string{"default": {"tangerine"}},
		Description:  "This module demonstrates how to write simple modulemd files And can be used for testing the build and release pipeline.",
	}
	if diff := cmp.Diff(want, first, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Artifacts" }, cmp.Ignore())); diff != "" {
		t.Errorf("first module (-want +got):\n%s", diff)
	}
	if !cmp.Equal(first.Artifacts[:3], want.Artifacts) {
		t.Errorf("artifacts start %q", first.Artifacts[:3])
	}
	// Streams that look like numbers keep their text.
	streams := map[string]string{}
	for _, d := range f.Defaults {
		streams[d.Module] = d.Stream
	}
	if streams["scala"] != "2.10" || streams["stratis"] != "1" || streams["nodejs"] != "" {
		t.Errorf("default streams: scala %q stratis %q nodejs %q", streams["scala"], streams["stratis"], streams["nodejs"])
	}
	for _, d := range f.Defaults {
		if d.Module == "reviewboard" && !cmp.Equal(d.Profiles, map[string][]string{"2.5": {"default"}, "3.0": {"default"}}) {
			t.Errorf("reviewboard profiles = %v", d.Profiles)
		}
	}
}
