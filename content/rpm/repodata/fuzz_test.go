package repodata

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// addMetadataSeeds adds the decompressed files of kind of a few repositories.
func addMetadataSeeds(f *testing.F, kind string) {
	for _, dir := range []string{"yum-katello/zoo", "rpm-edge-cases/repo_02", "rpm-edge-cases/repo_koji_02",
		"rpm-edge-cases/repo_with_duplicate_packages"} {
		files, _ := filepath.Glob(filepath.Join(data, dir, "repodata", "*"+kind+".xml.gz"))
		for _, p := range files {
			raw, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			zr, err := gzip.NewReader(bytes.NewReader(raw))
			if err != nil {
				continue
			}
			if b, err := io.ReadAll(zr); err == nil {
				f.Add(b)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(data, "rpm-edge-cases/modified_repo_files", "*"+kind+".xml"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 8<<10 {
			f.Add(b)
		}
	}
}

// FuzzPrimary reads arbitrary bytes as primary.xml. Whatever reads without error must
// survive writing all three documents and reading them back unchanged.
func FuzzPrimary(f *testing.F) {
	addMetadataSeeds(f, "primary")
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewReader(bytes.NewReader(in), "primary.xml", Primary)
		var pkgs []*Package
		for {
			p, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				if _, ok := err.(*Error); !ok {
					t.Fatalf("error %T %v is not an *Error", err, err)
				}
				return
			}
			pkgs = append(pkgs, p)
		}
		pri, fil, oth := writeDocs(t, pkgs)
		again, err := collect(Source{"primary.xml", bytes.NewReader(pri)},
			Source{"filelists.xml", bytes.NewReader(fil)}, Source{"other.xml", bytes.NewReader(oth)})
		if err != nil {
			t.Fatalf("reading what we wrote: %v\n%s", err, pri)
		}
		for _, p := range pkgs {
			if strings.HasPrefix(p.LocationBase, "/") { // written as a file: URL, as createrepo_c does
				p.LocationBase = "file://" + p.LocationBase
			}
		}
		if !reflect.DeepEqual(pkgs, again) {
			t.Fatalf("round trip (-read +written and read):\n%s", cmp.Diff(pkgs, again))
		}
	})
}

// FuzzFilelistsOther is FuzzPrimary for filelists.xml and other.xml.
func FuzzFilelistsOther(f *testing.F) {
	addMetadataSeeds(f, "filelists")
	addMetadataSeeds(f, "other")
	f.Fuzz(func(t *testing.T, in []byte) {
		kind := Filelists
		if bytes.Contains(in, []byte("otherdata")) {
			kind = Other
		}
		r := NewReader(bytes.NewReader(in), "x.xml", kind)
		var pkgs []*Package
		for {
			p, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return
			}
			pkgs = append(pkgs, p)
		}
		var doc bytes.Buffer
		w := NewDocumentWriter(&doc, kind, len(pkgs))
		for _, p := range pkgs {
			w.WritePackage(p)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r = NewReader(&doc, "again.xml", kind)
		for i := 0; ; i++ {
			p, err := r.Next()
			if err == io.EOF {
				if i != len(pkgs) {
					t.Fatalf("%d packages read back, %d written", i, len(pkgs))
				}
				return
			}
			if err != nil {
				t.Fatalf("reading what we wrote: %v\n%s", err, doc.Bytes())
			}
			// A package without <version> reads with an empty epoch and is written "0".
			if pkgs[i].Epoch == "" {
				pkgs[i].Epoch = "0"
			}
			if !reflect.DeepEqual(pkgs[i], p) {
				t.Fatalf("round trip (-read +written and read):\n%s", cmp.Diff(pkgs[i], p))
			}
		}
	})
}

// FuzzRepomd reads arbitrary bytes as repomd.xml; what reads must survive Bytes.
func FuzzRepomd(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(data, "*/*/repodata/repomd.xml"))
	files = append(files, modified("missing_type-repomd.xml"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ParseRepomd(bytes.NewReader(in), "repomd.xml")
		if err != nil {
			return
		}
		out := m.Bytes()
		again, err := ParseRepomd(bytes.NewReader(out), "again")
		if err != nil {
			t.Fatalf("reading what we wrote: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(m, again) {
			t.Fatalf("round trip (-read +written and read):\n%s", cmp.Diff(m, again))
		}
		if !bytes.Equal(out, again.Bytes()) {
			t.Fatal("Bytes is not stable")
		}
	})
}
