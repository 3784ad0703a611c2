package inmem_test

import (
	"testing"

	"pith/blob"
	"pith/blob/driver/inmem"
	"pith/blob/drivertest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	drivertest.Run(t, func(t *testing.T) blob.Driver { return inmem.New() })
}
