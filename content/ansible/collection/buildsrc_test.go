package collection

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The golden outputs in testdata/build/golden are ansible-galaxy's own (gen.py beside
// them says how they were made); these tests build the same trees and compare.

type srcSpec struct {
	Body *string `json:"body"`
	Exec bool    `json:"exec"`
	Link *string `json:"link"`
	Dir  bool    `json:"dir"`
}

func (s *srcSpec) UnmarshalJSON(b []byte) error {
	var body string
	if json.Unmarshal(b, &body) == nil {
		s.Body = &body
		return nil
	}
	type plain srcSpec
	return json.Unmarshal(b, (*plain)(s))
}

type buildCase struct {
	Name  string             `json:"name"`
	Error string             `json:"error"`
	Files map[string]srcSpec `json:"files"`
}

// layOut writes a source tree into a new directory and returns it.
func layOut(t testing.TB, files map[string]srcSpec) string {
	t.Helper()
	root := t.TempDir()
	for name, s := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case s.Dir:
			err = os.MkdirAll(p, 0o755)
		case s.Link != nil:
			err = os.Symlink(*s.Link, p)
		default:
			mode := os.FileMode(0o644)
			if s.Exec {
				mode = 0o755
			}
			if err = os.WriteFile(p, []byte(*s.Body), mode); err == nil {
				err = os.Chmod(p, mode)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func buildDir(t testing.TB, dir string, opt BuildOptions) ([]byte, *Built, error) {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var out bytes.Buffer
	b, err := Build(root.FS(), &out, opt)
	return out.Bytes(), b, err
}

// memberLines lists a tarball's members as gen.py does.
func memberLines(t testing.TB, tgz []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var b strings.Builder
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		mt := "mtime"
		if h.ModTime.Unix() == 0 {
			mt = "mtime0"
		}
		fmt.Fprintf(&b, "%s\t%c\t0o%o\t%d\t%d\t%s\t%s\t%s\t%d\t%s\n", strings.TrimSuffix(h.Name, "/"), h.Typeflag,
			h.Mode, h.Uid, h.Gid, h.Uname, h.Gname, h.Linkname, h.Size, mt)
	}
	return b.String()
}

func TestBuildMatchesAnsibleGalaxy(t *testing.T) {
	var cases []buildCase
	if err := json.Unmarshal(readFile(t, "build/cases.json"), &cases); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]error{"ErrInvalid": ErrInvalid, "ErrMissing": ErrMissing, "ErrFormat": ErrFormat}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			golden := filepath.Join("testdata", "build", "golden", tc.Name)
			dir := layOut(t, tc.Files)
			tgz, b, err := buildDir(t, dir, BuildOptions{Root: dir})
			if tc.Error != "" {
				if _, e := os.Stat(filepath.Join(golden, "error.txt")); e != nil {
					t.Fatalf("ansible-galaxy built the case: %v", e)
				}
				var be *Error
				if !errors.As(err, &be) || !errors.Is(err, kinds[tc.Error]) {
					t.Fatalf("Build: %v, want an *Error of kind %s", err, tc.Error)
				}
				return
			}
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			for _, f := range []struct {
				name string
				got  []byte
			}{{ManifestName, b.Manifest}, {FilesJSONName, b.Files}} {
				want, err := os.ReadFile(filepath.Join(golden, f.name))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(f.got, want) {
					t.Errorf("%s differs from ansible-galaxy's (-want +got):\n%s", f.name, cmp.Diff(string(want), string(f.got)))
				}
			}
			want, err := os.ReadFile(filepath.Join(golden, "members.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), memberLines(t, tgz)); diff != "" {
				t.Errorf("tar members differ from ansible-galaxy's (-want +got):\n%s", diff)
			}
			warned, err := os.ReadFile(filepath.Join(golden, "warnings.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(warned), "\n"); n != len(b.Warnings) {
				t.Errorf("warnings %q, ansible-galaxy gave %d:\n%s", b.Warnings, n, warned)
			}
			if b.Size != int64(len(tgz)) || b.Filename.String() != filepath.Base(b.Filename.String()) {
				t.Errorf("Built %+v for %d bytes", b, len(tgz))
			}
			v, err := Read(bytes.NewReader(tgz), Options{Expect: b.Filename})
			if err != nil {
				t.Fatalf("Read of the built artifact: %v", err)
			}
			if v.SHA256 != b.SHA256 || !bytes.Equal(v.Manifest, b.Manifest) {
				t.Errorf("Read gave sha256 %s, manifest %s", v.SHA256, v.Manifest)
			}
		})
	}
}

type globCase struct {
	Pattern  string   `json:"pattern"`
	Names    []string `json:"names"`
	Fnmatch  []bool   `json:"fnmatch"`
	Anchored []bool   `json:"anchored"`
	Prefix   []bool   `json:"prefix"`
	Prefixed []bool   `json:"prefixed"`
	Global   []bool   `json:"global"`
	FnErr    string   `json:"fnmatch_error"`
}

// TestPatternsMatchPython: build_ignore and manifest patterns match what Python's
// fnmatch and distlib match (testdata/build/globs.json, made by gen.py).
func TestPatternsMatchPython(t *testing.T) {
	var cases []globCase
	if err := json.Unmarshal(readFile(t, "build/globs.json"), &cases); err != nil {
		t.Fatal(err)
	}
	prefix := "a*"
	for _, c := range cases {
		check := func(kind string, want []bool, match func(string, *budget) bool) {
			for i, n := range c.Names {
				if got := match(n, &budget{1 << 40}); got != want[i] {
					t.Errorf("%s %q on %q: %v, Python says %v", kind, c.Pattern, n, got, want[i])
				}
			}
		}
		f, err := newFnmatcher(c.Pattern)
		if (err != nil) != (c.FnErr != "") {
			t.Errorf("fnmatch %q: error %v, Python's %q", c.Pattern, err, c.FnErr)
		} else if err == nil {
			check("fnmatch", c.Fnmatch, f.match)
		}
		for _, k := range []struct {
			kind   string
			want   []bool
			pat    string
			anchor bool
			prefix *string
		}{
			{"anchored", c.Anchored, c.Pattern, true, nil},
			{"prefix", c.Prefix, c.Pattern, false, &prefix},
			{"prefixed", c.Prefixed, "", false, &c.Pattern},
			{"global", c.Global, c.Pattern, false, nil},
		} {
			m, err := newDistlibMatcher(k.pat, k.anchor, k.prefix, "/")
			if err != nil {
				t.Errorf("%s %q: %v", k.kind, c.Pattern, err)
				continue
			}
			check(k.kind, k.want, m.match)
		}
	}
}

// TestBuildTimes: MANIFEST.json and FILES.json take the build's time, whole seconds;
// files their own mtime; links none.
func TestBuildTimes(t *testing.T) {
	dir := layOut(t, map[string]srcSpec{
		GalaxyYML:          {Body: ptr("namespace: acme\nname: t\nversion: 1.0.0\nreadme: README.md\nauthors: [me]\nlicense: [MIT]\nrepository: https://example.com/r\n")},
		"README.md":        {Body: ptr("r\n")},
		"meta/runtime.yml": {Body: ptr("requires_ansible: '>=2.14'\n")},
		"l.md":             {Link: ptr("README.md")},
	})
	mt := time.Date(2021, 5, 6, 7, 8, 9, 500_000_000, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "README.md"), mt, mt); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2024, 1, 2, 3, 4, 5, 900_000_000, time.UTC)
	tgz, _, err := buildDir(t, dir, BuildOptions{Time: now})
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "acme-t-1.0.0.tar" || !zr.ModTime.Equal(now.Truncate(time.Second)) || zr.OS != 255 {
		t.Errorf("gzip header %+v", zr.Header)
	}
	tr := tar.NewReader(zr)
	want := map[string]time.Time{ManifestName: now.Truncate(time.Second), FilesJSONName: now.Truncate(time.Second), "README.md": mt, "l.md": time.Unix(0, 0)}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if w, ok := want[h.Name]; ok && !h.ModTime.Equal(w) {
			t.Errorf("%s: mtime %v, want %v", h.Name, h.ModTime, w)
		}
	}
	if len(tgz) < 10 || (mustGunzipLen(t, tgz))%tarRecord != 0 {
		t.Errorf("the tar is not padded to a whole record")
	}
}

func mustGunzipLen(t testing.TB, tgz []byte) int {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, zr)
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

func ptr[T any](v T) *T { return &v }

const testGalaxy = "namespace: acme\nname: t\nversion: 1.0.0\nreadme: README.md\nauthors: [me]\nlicense: [MIT]\nrepository: https://example.com/r\n"

func baseSrc(extra map[string]srcSpec) map[string]srcSpec {
	files := map[string]srcSpec{
		GalaxyYML:          {Body: ptr(testGalaxy)},
		"README.md":        {Body: ptr("# t\n")},
		"meta/runtime.yml": {Body: ptr("requires_ansible: '>=2.14'\n")},
	}
	for k, v := range extra {
		files[k] = v
	}
	return files
}

// TestBuildNeverLeavesTheTree: a link to a file outside is skipped with a warning
// (ansible-galaxy would ship the outside file's bytes), however it climbs out.
func TestBuildNeverLeavesTheTree(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := layOut(t, baseSrc(map[string]srcSpec{
		"abs":          {Link: &outside},
		"docs/up":      {Link: ptr("../../secret")},
		"docs/via":     {Link: ptr("up")},
		"docs/back.md": {Link: ptr("../docs/../../x/../README.md")},
	}))
	tgz, b, err := buildDir(t, dir, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(tgz, []byte("secret")) || len(b.Warnings) != 4 {
		t.Errorf("warnings %q", b.Warnings)
	}
	if m := memberLines(t, tgz); strings.Contains(m, "abs") || strings.Contains(m, "docs/up") || strings.Contains(m, "docs/via") || strings.Contains(m, "docs/back.md") {
		t.Errorf("members:\n%s", m)
	}
}

// withGalaxy is baseSrc with galaxy.yml replaced by y.
func withGalaxy(y string) map[string]srcSpec {
	return baseSrc(map[string]srcSpec{GalaxyYML: {Body: &y}})
}

// emptyFiles is baseSrc with n empty files named by name(i).
func emptyFiles(n int, name func(i int) string) map[string]srcSpec {
	extra := map[string]srcSpec{}
	for i := range n {
		extra[name(i)] = srcSpec{Body: ptr("")}
	}
	return baseSrc(extra)
}

func TestBuildRefuses(t *testing.T) {
	lim := Limits{Entries: 20, Uncompressed: 1 << 10, Depth: 4, PathLen: 40, Manifest: 1 << 10}
	long := strings.Repeat("x", 41)
	cases := []struct {
		name  string
		files map[string]srcSpec
		kind  error
		want  string
	}{
		{"no galaxy.yml", map[string]srcSpec{"README.md": {Body: ptr("r")}}, ErrMissing, "does not exist"},
		{"galaxy.yml too big", withGalaxy(testGalaxy + "# " + strings.Repeat("x", 1<<10)), ErrLimit, "larger than"},
		{"galaxy.yml a directory", map[string]srcSpec{"galaxy.yml/x": {Body: ptr("")}}, ErrMissing, "not a file"},
		{"galaxy.yml outside", map[string]srcSpec{GalaxyYML: {Link: ptr("/etc/hostname")}}, ErrMissing, "symbolic link"},
		{"bad YAML", withGalaxy("a: ["), ErrFormat, "failed to parse"},
		{"empty version", withGalaxy(strings.Replace(testGalaxy, "1.0.0", "''", 1)), ErrInvalid, "'version' is empty"},
		{"version not a string", withGalaxy(strings.Replace(testGalaxy, "1.0.0", "1.0", 1)), ErrInvalid, "'version' must be a string"},
		{"bad version", withGalaxy(strings.Replace(testGalaxy, "1.0.0", "v1", 1)), ErrInvalid, "semantic version"},
		{"bad name", withGalaxy(strings.Replace(testGalaxy, "name: t", "name: T-1", 1)), ErrInvalid, "'name' has invalid format"},
		{"tag not a string", withGalaxy(testGalaxy + "tags: [1]\n"), ErrInvalid, "'tags' must be a list of strings"},
		{"bad tag", withGalaxy(testGalaxy + "tags: [Bad]\n"), ErrInvalid, "'tag' has invalid format"},
		{"dependencies a list", withGalaxy(testGalaxy + "dependencies: [a.b]\n"), ErrInvalid, "must be a dictionary"},
		{"bad range", baseSrc(map[string]srcSpec{GalaxyYML: {Body: ptr(testGalaxy + "dependencies: {a.b: '>> 1'}\n")}}), ErrInvalid, "dependency version spec range invalid"},
		{"self dependency", baseSrc(map[string]srcSpec{GalaxyYML: {Body: ptr(testGalaxy + "dependencies: {acme.t: '*'}\n")}}), ErrInvalid, "self dependency"},
		{"bad license", withGalaxy(strings.Replace(testGalaxy, "[MIT]", "[Nope]", 1)), ErrInvalid, "SPDX"},
		{"no license", withGalaxy(strings.Replace(testGalaxy, "license: [MIT]\n", "", 1)), ErrInvalid, "'license' or 'license_file'"},
		{"no repository", withGalaxy(strings.Replace(testGalaxy, "repository: https://example.com/r\n", "", 1)), ErrInvalid, "'repository' is required"},
		{"manifest a list", withGalaxy(testGalaxy + "manifest: [x]\n"), ErrInvalid, "must be a mapping"},
		{"manifest unknown key", baseSrc(map[string]srcSpec{GalaxyYML: {Body: ptr(testGalaxy + "manifest: {nope: 1}\n")}}), ErrInvalid, "unexpected keyword argument 'nope'"},
		{"directives a string", baseSrc(map[string]srcSpec{GalaxyYML: {Body: ptr(testGalaxy + "manifest: {directives: include x}\n")}}), ErrInvalid, "must be a list, got: str"},
		{"omit not a boolean", baseSrc(map[string]srcSpec{GalaxyYML: {Body: ptr(testGalaxy + "manifest: {omit_default_directives: 1}\n")}}), ErrInvalid, "expected to be a boolean, got: int"},
		{"unknown action", baseSrc(map[string]srcSpec{GalaxyYML: {Body: ptr(testGalaxy + "manifest: {directives: [frobnicate x y]}\n")}}), ErrInvalid, "unknown action 'frobnicate'"},
		{"MANIFEST.json selected", baseSrc(map[string]srcSpec{GalaxyYML: {Body: ptr(testGalaxy + "manifest: {directives: ['include *'], omit_default_directives: true}\n")}, "MANIFEST.json": {Body: ptr("{}")}}), ErrInvalid, "writes itself"},
		{"too many entries", emptyFiles(17, func(i int) string { return fmt.Sprintf("many/%d", i) }), ErrLimit, "more than 20 entries"},
		{"ignored entries count too", emptyFiles(17, func(i int) string { return fmt.Sprintf("%d.pyc", i) }), ErrLimit, "more than 20 entries"},
		{"too big", baseSrc(map[string]srcSpec{"big": {Body: ptr(strings.Repeat("x", 1<<10))}}), ErrLimit, "exceed 1024 bytes"},
		{"too deep", baseSrc(map[string]srcSpec{"a/b/c/d/e": {Body: ptr("")}}), ErrLimit, "deeper than 4"},
		{"too deep, manifest", baseSrc(map[string]srcSpec{GalaxyYML: {Body: ptr(testGalaxy + "manifest:\n")}, "a/b/c/d/e/f": {Body: ptr("")}}), ErrLimit, "deeper than 4"},
		{"path too long", baseSrc(map[string]srcSpec{long: {Body: ptr("")}}), ErrLimit, "longer than 40"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := buildDir(t, layOut(t, tc.files), BuildOptions{Limits: lim})
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Build: %v, want a %v naming %q", err, tc.kind, tc.want)
			}
		})
	}
}

// TestBuildOddFiles: what Build refuses unless build_ignore leaves it out: a FIFO
// (ansible-galaxy would hash it forever), a name that is not UTF-8 (an fs.FS cannot
// name it; Read would refuse it).
func TestBuildOddFiles(t *testing.T) {
	for _, tc := range []struct {
		name, ignore string
		kind         error
		make         func(p string) error
	}{
		{"pipe", "pipe", ErrUnsafe, func(p string) error { return syscallMkfifo(p) }},
		{"caf\xe9", "caf*", ErrFormat, func(p string) error { return os.WriteFile(p, nil, 0o644) }},
	} {
		t.Run(tc.ignore, func(t *testing.T) {
			dir := layOut(t, baseSrc(nil))
			if err := tc.make(filepath.Join(dir, tc.name)); err != nil {
				t.Skip(err)
			}
			if _, _, err := buildDir(t, dir, BuildOptions{}); !errors.Is(err, tc.kind) {
				t.Fatalf("Build: %v, want %v", err, tc.kind)
			}
			galaxy := []byte(testGalaxy + "build_ignore: ['" + tc.ignore + "']\n")
			if err := os.WriteFile(filepath.Join(dir, GalaxyYML), galaxy, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := buildDir(t, dir, BuildOptions{}); err != nil {
				t.Fatalf("Build with %s ignored: %v", tc.name, err)
			}
		})
	}
}

// TestBuildPatternBudget: patterns that would take long against long paths stop at
// the step budget.
func TestBuildPatternBudget(t *testing.T) {
	extra := map[string]srcSpec{}
	for i := range 200 {
		extra[fmt.Sprintf("d/%s%03d", strings.Repeat("a", 200), i)] = srcSpec{Body: ptr("")}
	}
	manifest := "manifest:\n  directives:\n"
	for range 50 {
		manifest += "    - global-include *" + strings.Repeat("a", 99) + "b*\n"
	}
	extra[GalaxyYML] = srcSpec{Body: ptr(testGalaxy + manifest)}
	_, _, err := buildDir(t, layOut(t, baseSrc(extra)), BuildOptions{})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "steps") {
		t.Fatalf("Build: %v", err)
	}
}
