// Package blob is the content-addressed blob store.
//
// Blobs are named by their lower-case hex sha256. A write streams through every allowed
// hasher into a temporary object of a Driver and is committed under its sha256 only when
// it is complete, matches what the caller expected, and is durable. Invariants:
//
//   - nothing half-written, mismatched or cancelled is ever visible under a digest;
//   - identical content is stored once (a commit of an existing digest discards the temporary);
//   - every digest that crosses the API is checked to be 64 lower-case hex digits before a
//     driver sees it, so a digest can never name a path outside the store;
//   - errors from a driver are wrapped in *DriverError naming the driver, operation and
//     digest; a missing blob always matches errors.Is(err, ErrNotFound).
//
// Drivers are small (Driver, Temp); optional capabilities (Redirector, Pather, Stager,
// Sweeper) are found by type assertion. Package drivertest holds the one conformance suite every driver passes.
package blob
