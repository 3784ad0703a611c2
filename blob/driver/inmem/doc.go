// Package inmem is an in-memory blob driver for unit tests: a map guarded by a mutex.
// Temporaries are private buffers until Commit, so nothing is visible before it; committed
// byte slices are never modified, so readers share them without copying.
package inmem
