package rpmfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReadZoo reads the headers of the zoo repository's 20 packages from memory.
func BenchmarkReadZoo(b *testing.B) {
	paths, err := filepath.Glob(zooDir + "/*.rpm")
	if err != nil || len(paths) != 20 {
		b.Fatalf("zoo rpms: %v %v", paths, err)
	}
	var files [][]byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, data)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, data := range files {
			if _, err := Read(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(files))/b.Elapsed().Seconds(), "headers/s")
}
