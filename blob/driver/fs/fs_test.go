package fs_test

import (
	"testing"

	"pith/blob"
	"pith/blob/driver/fs"
	"pith/blob/drivertest"
)

func newDriver(t testing.TB) *fs.Driver {
	d, err := fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestConformance(t *testing.T) {
	drivertest.Run(t, func(t *testing.T) blob.Driver { return newDriver(t) })
}

func BenchmarkPut10MiB(b *testing.B) { drivertest.Bench(b, newDriver(b), 10<<20) }
