package repodata

import (
	"bytes"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"math/rand"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
)

// benchRepo is a generated repository of 20,000 packages shaped like a distribution's:
// about 10 provides and 10 requires, 50 files and 10 changelog entries each.
var benchRepo = sync.OnceValue(func() (r struct {
	pri, fil, oth       []byte
	priGz, filGz, othGz []byte
	packages, openSize  int
}) {
	pkgs := genPackages(20000)
	var docs [3]bytes.Buffer
	var gz [3]bytes.Buffer
	for i, kind := range []Kind{Primary, Filelists, Other} {
		cw, _ := NewCompressWriter(&gz[i], Gzip, "sha256")
		w := NewDocumentWriter(io.MultiWriter(&docs[i], cw), kind, len(pkgs))
		for _, p := range pkgs {
			w.WritePackage(p)
		}
		w.Close()
		cw.Close()
	}
	r.pri, r.fil, r.oth = docs[0].Bytes(), docs[1].Bytes(), docs[2].Bytes()
	r.priGz, r.filGz, r.othGz = gz[0].Bytes(), gz[1].Bytes(), gz[2].Bytes()
	r.packages = len(pkgs)
	r.openSize = len(r.pri) + len(r.fil) + len(r.oth)
	return r
})

func genPackages(n int) []*Package {
	rng := rand.New(rand.NewSource(1))
	pkgs := make([]*Package, n)
	for i := range pkgs {
		pkgs[i] = genPackage(rng, i)
	}
	return pkgs
}

// genPackage returns the i-th package of a generated repository; rng fixes the content.
func genPackage(rng *rand.Rand, i int) *Package {
	word := func() string {
		const letters = "abcdefghijklmnopqrstuvwxyz"
		b := make([]byte, 3+rng.Intn(8))
		for i := range b {
			b[i] = letters[rng.Intn(len(letters))]
		}
		return string(b)
	}
	sentence := func(words int) string {
		s := make([]string, words)
		for i := range s {
			s[i] = word()
		}
		return strings.Join(s, " ")
	}
	name := fmt.Sprintf("%s-%d", word(), i)
	sum := make([]byte, 32)
	rng.Read(sum)
	p := &Package{
		Name: name, Epoch: "0", Version: fmt.Sprintf("%d.%d.%d", rng.Intn(10), rng.Intn(30), rng.Intn(100)),
		Release: fmt.Sprintf("%d.fc40", 1+rng.Intn(9)), Arch: []string{"x86_64", "noarch", "i686"}[rng.Intn(3)],
		PkgID: hex.EncodeToString(sum), ChecksumType: "sha256",
		Summary: sentence(6), Description: sentence(40) + "\n\n" + sentence(20),
		URL: "https://example.org/" + name, Packager: "Fedora Project", License: "MIT AND GPL-2.0-or-later",
		Vendor: "Fedora Project", Group: "Unspecified", BuildHost: "buildhw-x86-07.iad2.fedoraproject.org",
		SourceRPM: name + "-1.0-1.fc40.src.rpm", TimeFile: 1700000000 + int64(i), TimeBuild: 1690000000,
		SizePackage: 100000, SizeInstalled: 400000, SizeArchive: 410000,
		LocationHref: "Packages/" + name[:1] + "/" + name + "-1.0-1.fc40.x86_64.rpm",
		HeaderStart:  4504, HeaderEnd: 20000,
	}
	for j := 0; j < 10; j++ {
		p.Provides = append(p.Provides, Dep{Name: fmt.Sprintf("lib%s.so.%d()(64bit)", word(), j)})
		d := Dep{Name: "lib" + word() + ".so.6()(64bit)"}
		switch j % 4 {
		case 1:
			d = Dep{Name: word(), Flags: "GE", Epoch: "0", Version: "1.2.3", Release: "4.fc40"}
		case 2:
			d = Dep{Name: "(" + word() + " if " + word() + ")"}
		case 3:
			d.Pre = true
		}
		p.Requires = append(p.Requires, d)
	}
	p.Recommends = []Dep{{Name: word()}}
	for j := 0; j < 50; j++ {
		dir := []string{"/usr/share/doc/", "/usr/lib64/", "/usr/share/locale/de/LC_MESSAGES/", "/usr/bin/", "/etc/"}[j%5]
		f := File{Path: dir + name + "/" + word()}
		if j%10 == 0 {
			f.Type = "dir"
		}
		p.Files = append(p.Files, f)
	}
	for j := 0; j < 10; j++ {
		p.Changelogs = append(p.Changelogs, Changelog{
			Author: "Jane Packager <jane@example.org> - 1." + fmt.Sprint(j), Date: 1600000000 + int64(j)*86400,
			Text: "- " + sentence(12) + "\n- " + sentence(8),
		})
	}
	return p
}

// TestFlatMemory streams a generated 20,000-package repository through ReadPackages,
// never holding it whole, and checks that the live heap stays small all along.
func TestFlatMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 180 MB of XML")
	}
	const n = 20000
	var src [3]Source
	for i, kind := range []Kind{Primary, Filelists, Other} {
		pr, pw := io.Pipe()
		src[i] = Source{kind.String() + ".xml", pr}
		go func() {
			rng := rand.New(rand.NewSource(1))
			w := NewDocumentWriter(pw, kind, n)
			for j := range n {
				if err := w.WritePackage(genPackage(rng, j)); err != nil {
					pw.CloseWithError(err)
					return
				}
			}
			pw.CloseWithError(w.Close())
		}()
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var peak uint64
	count := 0
	err := ReadPackages(src[0], src[1], src[2], func(p *Package) error {
		if count++; count%1000 == 0 {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
		}
		return nil
	})
	if err != nil || count != n {
		t.Fatalf("%d packages, %v", count, err)
	}
	t.Logf("peak live heap %.1f MiB over %d packages", float64(peak)/(1<<20), n)
	if peak > 32<<20 {
		t.Errorf("live heap reached %d MiB: memory is not flat", peak>>20)
	}
}

// BenchmarkReadPackages merges the three uncompressed documents: the parse alone.
func BenchmarkReadPackages(b *testing.B) {
	r := benchRepo()
	b.SetBytes(int64(r.openSize))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := ReadPackages(Source{"primary.xml", bytes.NewReader(r.pri)}, Source{"filelists.xml", bytes.NewReader(r.fil)},
			Source{"other.xml", bytes.NewReader(r.oth)}, func(*Package) error { n++; return nil })
		if err != nil || n != r.packages {
			b.Fatal(n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(r.packages), "µs/pkg")
}

// BenchmarkReadPackagesGzip is a sync's work: gunzip and merge.
func BenchmarkReadPackagesGzip(b *testing.B) {
	r := benchRepo()
	b.SetBytes(int64(r.openSize))
	b.ReportAllocs()
	for b.Loop() {
		var src [3]Source
		for i, z := range [][]byte{r.priGz, r.filGz, r.othGz} {
			rc, err := Decompress(bytes.NewReader(z), "x.xml.gz")
			if err != nil {
				b.Fatal(err)
			}
			defer rc.Close()
			src[i] = Source{"x.xml.gz", rc}
		}
		n := 0
		if err := ReadPackages(src[0], src[1], src[2], func(*Package) error { n++; return nil }); err != nil || n != r.packages {
			b.Fatal(n, err)
		}
	}
}

// BenchmarkScanPrimary is the tokenizer alone on primary.xml; BenchmarkStdlibPrimary is
// encoding/xml's RawToken on the same input, for comparison.
func BenchmarkScanPrimary(b *testing.B) {
	r := benchRepo()
	b.SetBytes(int64(len(r.pri)))
	b.ReportAllocs()
	for b.Loop() {
		s := newScanner(bytes.NewReader(r.pri), "primary.xml")
		for {
			k, err := s.next()
			if err != nil {
				b.Fatal(err)
			}
			if k == tokEOF {
				break
			}
		}
	}
}

func BenchmarkStdlibPrimary(b *testing.B) {
	r := benchRepo()
	b.SetBytes(int64(len(r.pri)))
	b.ReportAllocs()
	for b.Loop() {
		d := xml.NewDecoder(bytes.NewReader(r.pri))
		for {
			_, err := d.RawToken()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkWrite is a publish's work: render, gzip and checksum the three documents.
func BenchmarkWrite(b *testing.B) {
	pkgs := genPackages(2000)
	b.ReportAllocs()
	var size int64
	for b.Loop() {
		size = 0
		for _, kind := range []Kind{Primary, Filelists, Other} {
			cw, _ := NewCompressWriter(io.Discard, Gzip, "sha256")
			w := NewDocumentWriter(cw, kind, len(pkgs))
			for _, p := range pkgs {
				w.WritePackage(p)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			cw.Close()
			size += cw.Sums().OpenSize
		}
	}
	b.SetBytes(size)
}
