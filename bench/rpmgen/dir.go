package rpmgen

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"pith/content/rpm/repodata"
)

// Written is one package file WriteDir wrote.
type Written struct {
	Path   string // the file's path: dir joined with the package's LocationHref
	SHA256 string // lower-case hex of the whole file
	Size   int64  // bytes
}

// job is one package to write, with its position in the output.
type job struct {
	i int
	p *repodata.Package
}

// WriteDir writes n packages to dir/<p.LocationHref>, creating directories, and returns,
// in order, the path, sha256 hex and size of each file. A package with no LocationHref
// goes to dir/<name>-<version>-<release>.<arch>.rpm.
//
// pkgs is called from a single goroutine, in order for i = 0..n-1, so it may use a
// shared random source; the packages are written by workers goroutines in parallel
// (at least one). The first error stops the work and is returned.
func WriteDir(dir string, pkgs func(i int) *repodata.Package, n int, payloadBytes int64, workers int) ([]Written, error) {
	workers = max(workers, 1)
	out := make([]Written, n)
	jobs := make(chan job, workers)
	stop := make(chan struct{})
	var (
		once  sync.Once
		first error
		wg    sync.WaitGroup
	)
	fail := func(err error) {
		once.Do(func() {
			first = err
			close(stop)
		})
	}
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				w, err := writeFile(dir, j.p, payloadBytes)
				if err != nil {
					fail(err)
					continue // drain, so the producer never blocks
				}
				out[j.i] = w
			}
		})
	}
produce:
	for i := range n {
		select {
		case jobs <- job{i, pkgs(i)}:
		case <-stop:
			break produce
		}
	}
	close(jobs)
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return out, nil
}

// writeFile writes one package below dir and hashes it on the way.
func writeFile(dir string, p *repodata.Package, payloadBytes int64) (Written, error) {
	href := p.LocationHref
	if href == "" {
		href = p.Name + "-" + p.Version + "-" + p.Release + "." + p.Arch + ".rpm"
	}
	if !filepath.IsLocal(filepath.FromSlash(href)) {
		return Written{}, fmt.Errorf("rpmgen: %s: location %q is not a relative path inside the directory", p.NEVRA(), href)
	}
	path := filepath.Join(dir, filepath.FromSlash(href))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return Written{}, fmt.Errorf("rpmgen: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return Written{}, fmt.Errorf("rpmgen: %w", err)
	}
	sum := sha256.New()
	size, err := Write(io.MultiWriter(f, sum), p, payloadBytes)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("rpmgen: %w", cerr)
	}
	if err != nil {
		return Written{}, errors.Join(err, os.Remove(path))
	}
	return Written{Path: path, SHA256: hex.EncodeToString(sum.Sum(nil)), Size: size}, nil
}
