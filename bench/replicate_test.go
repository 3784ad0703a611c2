package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// Each upstream repository of the replication study has its own repodata and reaches
// the shared package files through its Packages link: the package a replica must serve
// is there, with the checksum the study checks it against.
func TestWriteReplicaRepos(t *testing.T) {
	dir := t.TempDir()
	src, err := writeReplicaRepos(dir, "rep", 3, 5, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(src) != 3 {
		t.Fatalf("%d sources, want 3", len(src))
	}
	seen := map[string]bool{}
	for _, s := range src {
		if _, err := os.Stat(filepath.Join(dir, s.name, "repodata", "repomd.xml")); err != nil {
			t.Error(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, s.name, filepath.FromSlash(s.pkgPath)))
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != s.pkgSum {
			t.Errorf("%s: %s has another checksum than recorded", s.name, s.pkgPath)
		}
		if seen[s.name] || seen[s.pkgPath] {
			t.Errorf("%s, %s: not distinct", s.name, s.pkgPath)
		}
		seen[s.name], seen[s.pkgPath] = true, true
	}
}

// forEach stops starting calls after the first error and returns it.
func TestForEachStops(t *testing.T) {
	boom := errors.New("boom")
	var calls atomic.Int64
	err := forEach(context.Background(), 1000, 2, func(i int) error {
		calls.Add(1)
		if i == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want boom", err)
	}
	if n := calls.Load(); n >= 1000 {
		t.Errorf("%d calls after an error at the fourth", n)
	}
}
