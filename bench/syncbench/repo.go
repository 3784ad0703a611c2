package syncbench

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"pith/bench"
	"pith/bench/rpmgen"
	"pith/content/rpm/repodata"
)

// sizeSigma is the spread of the log-normal payload sizes: with σ = 1 the median is
// 0.6 × the mean, one package in ten is above 2 × the mean and the largest of 10,000 is
// around 25 × the mean — the long tail of a distribution repository (a few kernels,
// firmware and office suites among thousands of small libraries).
const sizeSigma = 1.0

// repo is the generated upstream repository.
type repo struct {
	Packages  int     `json:"packages"`
	MeanSize  int64   `json:"mean_size"`
	Sizes     []int64 `json:"sizes"`      // .rpm file sizes in primary order
	MetaBytes int64   `json:"meta_bytes"` // repomd.xml and the compressed metadata files
}

// TotalBytes is the sum of the .rpm file sizes.
func (r *repo) TotalBytes() int64 {
	var s int64
	for _, n := range r.Sizes {
		s += n
	}
	return s
}

// payloadSizes draws n payload sizes with the given mean from a log-normal distribution
// (deterministic seed), clamped to [1 KiB, 40 × mean].
func payloadSizes(n int, mean int64) []int64 {
	r := rand.New(rand.NewPCG(7, uint64(n)))
	mu := math.Log(float64(mean)) - sizeSigma*sizeSigma/2
	out := make([]int64, n)
	for i := range out {
		v := math.Exp(mu + sizeSigma*r.NormFloat64())
		out[i] = min(max(int64(v), 1024), 40*mean)
	}
	return out
}

// markerName is the file recording what a directory holds, so a second run over the
// same directory and parameters reuses the repository instead of writing it again.
const markerName = "syncbench.json"

// generate writes, under dir, n .rpm packages shaped like bench.YumPackages with
// log-normal payload sizes of the given mean, and a repodata/ whose primary carries each
// file's real sha256, size and location, as an immediate sync verifies them. A
// directory already holding the same repository is reused.
func generate(dir string, n int, mean int64) (*repo, error) {
	if b, err := os.ReadFile(filepath.Join(dir, markerName)); err == nil {
		var old repo
		if json.Unmarshal(b, &old) == nil && old.Packages == n && old.MeanSize == mean && len(old.Sizes) == n {
			return &old, nil
		}
	}
	for _, sub := range []string{"Packages", "repodata", markerName} {
		if err := os.RemoveAll(filepath.Join(dir, sub)); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "repodata"), 0o755); err != nil {
		return nil, err
	}
	gen := bench.YumPackages(n)
	pkgs := make([]*repodata.Package, n)
	for i := range pkgs {
		pkgs[i] = gen(i)
	}
	payload := payloadSizes(n, mean)
	written, err := writeRPMs(dir, pkgs, payload)
	if err != nil {
		return nil, err
	}
	r := &repo{Packages: n, MeanSize: mean, Sizes: make([]int64, n)}
	for i, p := range pkgs {
		p.ChecksumType, p.PkgID, p.SizePackage = "sha256", written[i].SHA256, written[i].Size
		r.Sizes[i] = written[i].Size
	}
	if r.MetaBytes, err = writeMetadata(dir, pkgs); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(r)
	if err := os.WriteFile(filepath.Join(dir, markerName), b, 0o644); err != nil {
		return nil, err
	}
	return r, nil
}

// writeRPMs writes pkgs[i] with payload[i] bytes of payload to dir/<LocationHref>, in
// parallel, and returns the sha256 and size of each file.
func writeRPMs(dir string, pkgs []*repodata.Package, payload []int64) ([]rpmgen.Written, error) {
	out := make([]rpmgen.Written, len(pkgs))
	errs := make([]error, len(pkgs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Go(func() {
			for i := range next {
				out[i], errs[i] = writeRPM(dir, pkgs[i], payload[i])
			}
		})
	}
	for i := range pkgs {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, errors.Join(errs...)
}

func writeRPM(dir string, p *repodata.Package, payload int64) (rpmgen.Written, error) {
	path := filepath.Join(dir, filepath.FromSlash(p.LocationHref))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return rpmgen.Written{}, err
	}
	f, err := os.Create(path)
	if err != nil {
		return rpmgen.Written{}, err
	}
	h := sha256.New()
	n, err := rpmgen.Write(io.MultiWriter(f, h), p, payload)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return rpmgen.Written{}, fmt.Errorf("%s: %w", path, err)
	}
	return rpmgen.Written{Path: path, SHA256: hex.EncodeToString(h.Sum(nil)), Size: n}, nil
}

// writeMetadata writes the repodata of pkgs with bench.WriteRepodata and returns the
// bytes of repodata/ it wrote.
func writeMetadata(dir string, pkgs []*repodata.Package) (int64, error) {
	err := bench.WriteRepodata(dir, len(pkgs), func() func(int) *repodata.Package {
		return func(i int) *repodata.Package { return pkgs[i] }
	})
	if err != nil {
		return 0, err
	}
	entries, err := os.ReadDir(filepath.Join(dir, "repodata"))
	if err != nil {
		return 0, err
	}
	var total int64
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			total += fi.Size()
		}
	}
	return total, nil
}
