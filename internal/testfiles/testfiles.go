// Package testfiles finds the repository's top-level testdata folder, the third-party
// files the tests read (see testdata/README.md), from any package's tests. (A package
// named testdata would be ignored by the go tool, hence the name.)
package testfiles

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// dir is the testdata folder: two levels above this source file, or, when the binary
// was built with -trimpath, the first one found above the working directory (a test
// runs in its package's directory).
var dir = func() string {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		return filepath.Join(filepath.Dir(file), "..", "..", "testdata")
	}
	wd, err := os.Getwd()
	if err != nil {
		return "testdata"
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "testdata")
		}
		if filepath.Dir(d) == d {
			return "testdata"
		}
	}
}()

// Path returns the path of elem under the testdata folder: Path("yum-katello", "zoo").
func Path(elem ...string) string {
	return filepath.Join(append([]string{dir}, elem...)...)
}

// ReadFile reads a file under the testdata folder; when only its gzipped copy
// (name + ".gz") is there, it returns that copy decompressed.
func ReadFile(elem ...string) ([]byte, error) {
	path := Path(elem...)
	b, err := os.ReadFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return b, err
	}
	gz, gzErr := os.ReadFile(path + ".gz")
	if gzErr != nil {
		return nil, err
	}
	r, gzErr := gzip.NewReader(bytes.NewReader(gz))
	if gzErr != nil {
		return nil, gzErr
	}
	return io.ReadAll(r)
}
