package treeinfo

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pith/internal/testfiles"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// data is the third-party test data (testdata/README.md).
var data = testfiles.Path() + "/"

// fixtures are the .treeinfo files the golden tests read: the real ones in the test
// data and the hand-written ones in testdata (each shaped after a real tree).
func fixtures(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, pattern := range []string{data + "yum-katello/*/.treeinfo", data + "rpm-edge-cases/*/.treeinfo",
		data + "rpm-edge-cases/*/treeinfo", "testdata/*.treeinfo"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < 6 {
		t.Fatalf("only %d fixtures: %v", len(out), out)
	}
	return out
}

func parseFile(t testing.TB, path string) *DistributionTree {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tree, err := Parse(f, filepath.Base(path))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tree
}

func write(t testing.TB, tree *DistributionTree) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, tree, nil); err != nil {
		t.Fatalf("write: %v", err)
	}
	return buf.Bytes()
}

// view is what a golden file records: the API rendering, the fields it hides, and
// what sync would fetch.
type view struct {
	API          *DistributionTree `json:"api"`
	Platforms    []string          `json:"platforms"`
	MainVariant  string            `json:"main_variant"`
	Repositories [][4]string       `json:"repositories"` // uid, local, remote, parent
	Files        []Ref             `json:"files"`
}

func viewOf(tree *DistributionTree) view {
	v := view{API: tree, Platforms: tree.Platforms, MainVariant: tree.MainVariant, Files: tree.Files()}
	for _, x := range tree.Variants {
		v.Repositories = append(v.Repositories, [4]string{x.UID, x.Repository, x.RemoteRepository, x.Parent})
	}
	for _, x := range tree.Addons {
		v.Repositories = append(v.Repositories, [4]string{x.UID, x.Repository, x.RemoteRepository, x.Parent})
	}
	return v
}

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-golden +got):\n%s", path, diff)
	}
}

// goldenName names a fixture's golden files: zoo/.treeinfo -> zoo.
func goldenName(path string) string {
	if strings.HasPrefix(path, "testdata/") {
		return strings.TrimSuffix(filepath.Base(path), ".treeinfo")
	}
	return filepath.Base(filepath.Dir(path))
}

func TestGolden(t *testing.T) {
	t.Parallel()
	for _, path := range fixtures(t) {
		t.Run(goldenName(path), func(t *testing.T) {
			tree := parseFile(t, path)
			js, err := json.MarshalIndent(viewOf(tree), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, goldenName(path)+".json", append(js, '\n'))
			written := write(t, tree)
			golden(t, goldenName(path)+".written", written)
			checkRoundTrip(t, tree, written)
		})
	}
}

// checkRoundTrip: parsing what Write wrote gives the tree back, remote repository
// paths aside (they become the local ones), and writing that again gives the same
// bytes.
func checkRoundTrip(t testing.TB, tree *DistributionTree, written []byte) {
	t.Helper()
	again, err := Parse(bytes.NewReader(written), "written")
	if err != nil {
		t.Fatalf("written treeinfo does not parse: %v\n%s", err, written)
	}
	want := normalized(tree)
	if diff := cmp.Diff(want, again); diff != "" {
		t.Fatalf("parse(write(t)) differs (-want +got):\n%s\n%s", diff, written)
	}
	if twice := write(t, again); !bytes.Equal(twice, written) {
		t.Fatalf("write is not stable:\n%s\n----\n%s", written, twice)
	}
}

// normalized is tree as Write describes it: repositories at their local paths and
// the main variant the one [general] names.
func normalized(tree *DistributionTree) *DistributionTree {
	n := *tree
	n.HeaderVersion = HeaderVersion
	n.Variants = slices.Clone(tree.Variants)
	n.Addons = slices.Clone(tree.Addons)
	var top []string
	for i := range n.Variants {
		n.Variants[i].RemoteRepository = n.Variants[i].Repository
		if n.Variants[i].Parent == "" {
			top = append(top, n.Variants[i].UID)
		}
	}
	for i := range n.Addons {
		n.Addons[i].RemoteRepository = n.Addons[i].Repository
	}
	n.MainVariant = ""
	if m := tree.mainVariant(top); m != nil {
		n.MainVariant = m.UID
	}
	return &n
}

func TestZoo(t *testing.T) {
	t.Parallel()
	tree := parseFile(t, data+"yum-katello/zoo/.treeinfo")
	want := &DistributionTree{
		HeaderVersion: "1.2", ReleaseName: "Test Family", ReleaseShort: "", ReleaseVersion: "16",
		Arch: "x86_64", BuildTimestamp: 1323112153.09,
		Addons: []Addon{},
		Checksums: []Checksum{
			{Path: "empty.iso", Checksum: "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
			{Path: "images/test1.img", Checksum: "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
			{Path: "images/test2.img", Checksum: "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		},
		Images: []Image{},
		Variants: []Variant{{VariantID: "TestVariant", UID: "TestVariant", Name: "TestVariant", Type: "variant",
			Packages: "Packages", Repository: ".", RemoteRepository: "."}},
		Platforms:   []string{"x86_64"},
		MainVariant: "TestVariant",
	}
	if diff := cmp.Diff(want, tree); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var paths []string
	for _, r := range tree.Files() {
		paths = append(paths, string(r.Kind)+" "+r.Path)
	}
	wantPaths := []string{"checksum empty.iso", "checksum images/test1.img", "checksum images/test2.img", "repository ."}
	if !cmp.Equal(paths, wantPaths) {
		t.Errorf("files = %q", paths)
	}
	// Every file the zoo tree names is in the test data, as sync would find it.
	for _, r := range tree.Files() {
		if _, err := os.Stat(filepath.Join(data, "yum-katello/zoo", r.Path)); err != nil {
			t.Errorf("%s: %v", r, err)
		}
	}
}

func TestFiles(t *testing.T) {
	t.Parallel()
	tree := parseFile(t, "testdata/kickstart-1.2.treeinfo")
	var got []string
	for _, r := range tree.Files() {
		got = append(got, r.String()+" -> "+r.Local+" "+r.Checksum)
	}
	want := []string{
		"[images-x86_64] boot.iso = images/boot.iso -> images/boot.iso sha256:6d5a4bd2ee3e1bbd8f0d5ddd3f6e6b3b0d8ee0c8f3ab60dde1a1e3c0d5b6a7c8",
		"[images-x86_64] initrd = images/pxeboot/initrd.img -> images/pxeboot/initrd.img sha256:5647f05ec18958947d32874eeb788fa396a05d0bab7c1b71f112ceb7e9b31eee",
		"[images-x86_64] kernel = images/pxeboot/vmlinuz -> images/pxeboot/vmlinuz sha256:91052b444e73f3eebdb93d1fb1506597e96c92d8de9c1e3c3f36b07a57d0a18f",
		"[images-x86_64] upgrade = images/pxeboot/upgrade.img -> images/pxeboot/upgrade.img sha256:30e14955ebf1352266dc2ff8067e68104607e750abb9d3b36582b8af909fcb58",
		"[stage2] mainimage = LiveOS/squashfs.img -> LiveOS/squashfs.img sha256:30e14955ebf1352266dc2ff8067e68104607e750abb9d3b36582b8af909fcb58",
		"[checksums] EULA -> EULA md5:0123456789abcdef0123456789abcdef",
		"[variant-Land] repository = variants/land -> Land ",
		"[variant-Sea] repository = . -> . sha256:0f8e3d2a5e1f5c3b8e9d7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d",
		"[addon-Sea-Dolphin] repository = addons/dolphin -> Dolphin sha256:b6ac17b542fc6188eafadb932d9635209e1498c1ee22ba2490f531fdbd4c49a3",
		"[addon-Sea-Whale] repository = addons/whale -> Whale sha256:54260288eda2bd151c71358c5f2c472654d54420dbf3f2c1aafcb933a42a3074",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// A sibling repository is fetched from outside the tree but stored inside it.
	rhel := parseFile(t, "testdata/rhel8-baseos.treeinfo")
	for _, r := range rhel.Files() {
		if r.Kind == KindRepository && r.Section == "variant-AppStream" &&
			(r.Path != "../../../AppStream/x86_64/os" || r.Local != "AppStream") {
			t.Errorf("AppStream: %+v", r)
		}
	}
}

func TestWriteRewrite(t *testing.T) {
	t.Parallel()
	tree := parseFile(t, "testdata/kickstart-1.2.treeinfo")
	var seen []string
	var buf bytes.Buffer
	err := Write(&buf, tree, func(r Ref) string {
		seen = append(seen, string(r.Kind)+":"+r.Section+":"+r.Key)
		if r.Kind == KindRepository || r.Kind == KindPackages {
			return "sub/" + r.Local
		}
		return r.Local
	})
	if err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, line := range []string{"[variant-Land]\n", "packages = sub/Land/Packages\n", "repository = sub/Land\n",
		"[addon-Sea-Whale]\n", "repository = sub/Whale\n", "packagedir = sub/Packages\n", "kernel = images/pxeboot/vmlinuz\n"} {
		if !strings.Contains(out, line) {
			t.Errorf("missing %q in\n%s", line, out)
		}
	}
	if len(seen) < 20 {
		t.Errorf("rewrite called for %v", seen)
	}
	// Paths that would break the file are refused.
	for _, bad := range []string{"a\nb", " lead", "x\x00"} {
		err := Write(&bytes.Buffer{}, tree, func(r Ref) string { return bad })
		if err == nil || !strings.Contains(err.Error(), "cannot be written") {
			t.Errorf("rewrite to %q: %v", bad, err)
		}
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	tree := parseFile(t, "testdata/layered-1.1.treeinfo")
	js, err := json.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	keys := []string{"addons", "arch", "base_product_name", "base_product_short", "base_product_version", "build_timestamp",
		"checksums", "discnum", "header_version", "images", "instimage", "mainimage", "release_is_layered", "release_name",
		"release_short", "release_version", "totaldiscs", "variants"}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("no %q in %s", k, js)
		}
	}
	if len(m) != len(keys) {
		t.Errorf("%d keys, want %d: %s", len(m), len(keys), js)
	}
	v := m["variants"].([]any)[0].(map[string]any)
	for _, k := range []string{"variant_id", "uid", "name", "type", "packages", "source_packages", "source_repository",
		"debug_packages", "debug_repository", "identity"} {
		if _, ok := v[k]; !ok || len(v) != 10 {
			t.Errorf("variant %v lacks %q or has extra keys", v, k)
		}
	}
	a := m["addons"].([]any)[0].(map[string]any)
	if len(a) != 5 || a["addon_id"] != "HighAvailability" || a["packages"] != "HighAvailability/Packages" {
		t.Errorf("addon %v", a)
	}
}

// Whitespace around keys and values is what Python's configparser strips (every
// unicode space, as str.strip()), so whatever Parse keeps, Write can write back: a
// value led by a vertical tab failed to write (found by FuzzTreeinfo).
func TestWhitespaceAsPython(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/layered-1.1.treeinfo")
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Replace(string(b), "arch = ppc64le", "arch\f=\v\u00a0ppc64le\v", 1)
	tree, err := Parse(strings.NewReader(in), ".treeinfo")
	if err != nil {
		t.Fatal(err)
	}
	if tree.Arch != "ppc64le" {
		t.Errorf("arch %q, want ppc64le", tree.Arch)
	}
	if err := Write(&bytes.Buffer{}, tree, nil); err != nil {
		t.Fatalf("a parsed tree does not write: %v", err)
	}
}
