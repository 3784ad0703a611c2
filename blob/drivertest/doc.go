// Package drivertest is the one conformance suite every blob driver passes. A driver joins
// from its own test file in a few lines:
//
//	func TestConformance(t *testing.T) {
//		drivertest.Run(t, func(t *testing.T) blob.Driver { return mydriver.New(...) })
//	}
//
// Run checks the Driver contract directly (atomic commit, cancel, dedup, walk, delete,
// not-found and invalid-digest errors) and the Store over it (digests, verification,
// concurrent writers, large and empty blobs), parts (blob.Stager) and that a sweep
// (blob.Sweeper) takes nothing live. A driver that leaves temporaries when its process
// dies also calls RunSweep with a way to leave one. Each subtest gets its own driver and
// runs in parallel, so newDriver must return independent stores.
package drivertest
