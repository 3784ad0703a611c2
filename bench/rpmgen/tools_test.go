package rpmgen

import (
	"bytes"
	stdcmp "cmp"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"pith/content/rpm/repodata"
)

// toolPackages are the three packages the tool tests write: one without an epoch, one
// with, and one without files or dependencies.
func toolPackages() []*repodata.Package {
	empty := &repodata.Package{Name: "zempty", Version: "1", Release: "1", Arch: "noarch",
		Summary: "Nothing", SourceRPM: "zempty-1-1.src.rpm", TimeBuild: 1700000000,
		LocationHref: "zempty-1-1.noarch.rpm",
		Provides:     []repodata.Dep{{Name: "zempty", Flags: "EQ", Epoch: "0", Version: "1", Release: "1"}}}
	return []*repodata.Package{samplePackage("alpha", "0"), samplePackage("beta", "2"), empty}
}

// writeToolPackages writes toolPackages into a temporary directory.
func writeToolPackages(t *testing.T) (string, []*repodata.Package, []Written) {
	t.Helper()
	pkgs := toolPackages()
	dir := t.TempDir()
	ws, err := WriteDir(dir, func(i int) *repodata.Package { return pkgs[i] }, len(pkgs), 30000, 2)
	if err != nil {
		t.Fatal(err)
	}
	return dir, pkgs, ws
}

func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not on PATH", name)
	}
}

// run runs a command and returns its standard output; a failure or anything on
// standard error fails the test, since rpm reports problems there.
func run(t *testing.T, stdin []byte, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	if s := stderr.String(); s != "" && name != "cpio" && name != "createrepo_c" {
		t.Errorf("%s %s complained:\n%s", name, strings.Join(args, " "), s)
	}
	return stdout.String()
}

func lines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// rpmNEVRA is the NEVRA as rpm's %{NEVRA} prints it: without an epoch when the header
// has none.
func rpmNEVRA(p *repodata.Package) string {
	e := ""
	if p.Epoch != "" && p.Epoch != "0" {
		e = p.Epoch + ":"
	}
	return p.Name + "-" + e + p.Version + "-" + p.Release + "." + p.Arch
}

var rpmOps = map[string]string{"LT": "<", "LE": "<=", "EQ": "=", "GE": ">=", "GT": ">"}

// rpmRequires is what rpm -q --requires prints for p: its requires, then the rpmlib()
// requirements Write adds.
func rpmRequires(p *repodata.Package) []string {
	var out []string
	rich := false
	for _, d := range p.Requires {
		rich = rich || strings.HasPrefix(d.Name, "(")
		s := d.Name
		if d.Flags != "" {
			s += " " + rpmOps[d.Flags] + " " + depEVR(d)
		}
		out = append(out, s)
	}
	for _, d := range rpmlibRequires {
		out = append(out, d.name+" <= "+d.version)
	}
	if rich {
		out = append(out, richRequire.name+" <= "+richRequire.version)
	}
	return out
}

func paths(files []repodata.File, keep func(repodata.File) bool) []string {
	var out []string
	for _, f := range files {
		if keep(f) {
			out = append(out, f.Path)
		}
	}
	return out
}

// TestRPMQuery checks what rpm makes of the packages: NEVRA, requires, digests, files.
func TestRPMQuery(t *testing.T) {
	needTool(t, "rpm")
	_, pkgs, ws := writeToolPackages(t)
	for i, p := range pkgs {
		path := ws[i].Path
		t.Run(p.Name, func(t *testing.T) {
			if got := run(t, nil, "rpm", "-qp", "--nosignature", "--qf", `%{NEVRA}\n`, path); got != rpmNEVRA(p)+"\n" {
				t.Errorf("NEVRA %q, want %q", got, rpmNEVRA(p))
			}
			got := lines(run(t, nil, "rpm", "-qp", "--nosignature", "--requires", path))
			if d := cmp.Diff(rpmRequires(p), got); d != "" {
				t.Errorf("requires (-want +rpm):\n%s", d)
			}
			if got := run(t, nil, "rpm", "-K", "--nosignature", path); got != path+": digests OK\n" {
				t.Errorf("rpm -K: %q", got)
			}
			want := paths(p.Files, func(repodata.File) bool { return true })
			if len(want) == 0 {
				want = []string{"(contains no files)"}
			}
			if got := lines(run(t, nil, "rpm", "-qlp", "--nosignature", path)); !slices.Equal(got, want) {
				t.Errorf("rpm -qlp: %q, want %q", got, want)
			}
		})
	}
}

// TestRPM2CPIO extracts each payload with rpm2cpio, lists it with cpio -it when cpio is
// installed, and checks every regular file's content against the digest rpm reports.
func TestRPM2CPIO(t *testing.T) {
	needTool(t, "rpm")
	needTool(t, "rpm2cpio")
	_, pkgs, ws := writeToolPackages(t)
	for i, p := range pkgs {
		path := ws[i].Path
		t.Run(p.Name, func(t *testing.T) {
			archive := []byte(run(t, nil, "rpm2cpio", path))
			entries := parseCPIO(t, archive)
			var names []string
			for _, e := range entries {
				names = append(names, e.name)
			}
			want := paths(p.Files, func(f repodata.File) bool { return f.Type != "ghost" })
			for i := range want {
				want[i] = "." + want[i]
			}
			if !slices.Equal(names, want) {
				t.Errorf("archive holds %q, want %q", names, want)
			}
			if _, err := exec.LookPath("cpio"); err == nil {
				if got := lines(run(t, archive, "cpio", "-it", "--quiet")); !slices.Equal(got, want) {
					t.Errorf("cpio -it lists %q, want %q", got, want)
				}
			} else {
				t.Log("cpio is not on PATH; the archive was only parsed here")
			}
			digests := lines(run(t, nil, "rpm", "-qp", "--nosignature", "--qf", `[%{FILENAMES} %{FILEDIGESTS} %{FILESIZES}\n]`, path))
			byName := map[string]archiveMember{}
			for _, e := range entries {
				byName[e.name[1:]] = e
			}
			for _, l := range digests {
				f := strings.Split(l, " ")
				if len(f) != 3 || f[1] == "" {
					continue // no files, or a directory or ghost, which have no digest
				}
				e, ok := byName[f[0]]
				if !ok {
					t.Errorf("rpm lists %q, not in the archive", l)
					continue
				}
				sum := sha256.Sum256(e.data)
				if hex.EncodeToString(sum[:]) != f[1] || strconv.Itoa(len(e.data)) != f[2] {
					t.Errorf("%s: archive has %d bytes with sha256 %x, header says %s bytes, %s", f[0], len(e.data), sum, f[2], f[1])
				}
			}
		})
	}
}

// archiveMember is one member of a newc archive.
type archiveMember struct {
	name string
	mode uint64
	data []byte
}

// parseCPIO reads a newc archive up to its trailer.
func parseCPIO(t *testing.T, b []byte) []archiveMember {
	t.Helper()
	var out []archiveMember
	off := 0
	field := func(i int) uint64 {
		v, err := strconv.ParseUint(string(b[off+6+8*i:off+14+8*i]), 16, 32)
		if err != nil {
			t.Fatalf("cpio header at %d: %v", off, err)
		}
		return v
	}
	for {
		if off+110 > len(b) || string(b[off:off+6]) != "070701" {
			t.Fatalf("no newc header at %d", off)
		}
		mode, size, namesize := field(1), int(field(6)), int(field(11))
		name := string(b[off+110 : off+110+namesize-1])
		off = align(off+110+namesize, 4)
		if name == "TRAILER!!!" {
			return out
		}
		out = append(out, archiveMember{name: name, mode: mode, data: b[off : off+size]})
		off = align(off+size, 4)
	}
}

// The parts of createrepo_c's primary.xml the test compares.
type (
	xmlEntry struct {
		Name  string `xml:"name,attr"`
		Flags string `xml:"flags,attr"`
		Epoch string `xml:"epoch,attr"`
		Ver   string `xml:"ver,attr"`
		Rel   string `xml:"rel,attr"`
		Pre   string `xml:"pre,attr"`
	}
	xmlPackage struct {
		Name    string `xml:"name"`
		Arch    string `xml:"arch"`
		Version struct {
			Epoch string `xml:"epoch,attr"`
			Ver   string `xml:"ver,attr"`
			Rel   string `xml:"rel,attr"`
		} `xml:"version"`
		Checksum string `xml:"checksum"`
		Summary  string `xml:"summary"`
		Size     struct {
			Package   int64 `xml:"package,attr"`
			Installed int64 `xml:"installed,attr"`
		} `xml:"size"`
		Location struct {
			Href string `xml:"href,attr"`
		} `xml:"location"`
		Format struct {
			License     string     `xml:"license"`
			SourceRPM   string     `xml:"sourcerpm"`
			Provides    []xmlEntry `xml:"provides>entry"`
			Requires    []xmlEntry `xml:"requires>entry"`
			Conflicts   []xmlEntry `xml:"conflicts>entry"`
			Obsoletes   []xmlEntry `xml:"obsoletes>entry"`
			Suggests    []xmlEntry `xml:"suggests>entry"`
			Enhances    []xmlEntry `xml:"enhances>entry"`
			Recommends  []xmlEntry `xml:"recommends>entry"`
			Supplements []xmlEntry `xml:"supplements>entry"`
		} `xml:"format"`
	}
)

func toXML(deps []repodata.Dep) []xmlEntry {
	var out []xmlEntry
	for _, d := range deps {
		e := xmlEntry{Name: d.Name, Flags: d.Flags}
		if d.Flags != "" {
			e.Epoch, e.Ver, e.Rel = d.Epoch, d.Version, d.Release
		}
		if d.Pre {
			e.Pre = "1"
		}
		out = append(out, e)
	}
	return out
}

// TestCreaterepo runs createrepo_c on the packages and checks its primary.xml.
func TestCreaterepo(t *testing.T) {
	needTool(t, "createrepo_c")
	dir, pkgs, ws := writeToolPackages(t)
	run(t, nil, "createrepo_c", "--quiet", "--simple-md-filenames", "--general-compress-type=gz", dir)
	var primary struct {
		Packages []xmlPackage `xml:"package"`
	}
	b := gunzip(t, readFile(t, filepath.Join(dir, "repodata", "primary.xml.gz")))
	if err := xml.Unmarshal(b, &primary); err != nil {
		t.Fatal(err)
	}
	if len(primary.Packages) != len(pkgs) {
		t.Fatalf("primary lists %d packages, want %d", len(primary.Packages), len(pkgs))
	}
	slices.SortFunc(primary.Packages, func(a, b xmlPackage) int { return strings.Compare(a.Name, b.Name) })
	for i, p := range pkgs {
		got := primary.Packages[i]
		want := got
		want.Name, want.Arch, want.Summary = p.Name, p.Arch, p.Summary
		want.Version.Epoch, want.Version.Ver, want.Version.Rel = stdcmp.Or(p.Epoch, "0"), p.Version, p.Release
		want.Checksum, want.Size.Package = ws[i].SHA256, ws[i].Size
		want.Location.Href = p.LocationHref
		f := &want.Format
		f.License, f.SourceRPM = p.License, p.SourceRPM
		f.Provides, f.Requires, f.Conflicts, f.Obsoletes = toXML(p.Provides), toXML(p.Requires), toXML(p.Conflicts), toXML(p.Obsoletes)
		f.Suggests, f.Enhances, f.Recommends, f.Supplements = toXML(p.Suggests), toXML(p.Enhances), toXML(p.Recommends), toXML(p.Supplements)
		if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("%s in primary.xml (-want +createrepo_c):\n%s", p.Name, d)
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(fmt.Errorf("gunzip: %w", err))
	}
	return out
}
