// Package testpg gives each test a fresh, empty PostgreSQL database.
//
// The databases live in the cluster named by PITH_TEST_POSTGRES (scripts/test starts one
// throwaway cluster for the whole run). Without it, the first URL call in a test binary
// starts a throwaway cluster of its own with scripts/pg; Main, called from TestMain, stops
// it when the tests end, and scripts/pg stops it anyway if the binary dies. StartTLS starts
// a cluster of one test's own that takes only TLS connections with client certificates.
//
// Invariants: a database is never shared between two URL calls and is dropped when its
// test ends; a system cluster is never touched; a test that asks for PostgreSQL when none
// can be had fails, it never skips.
package testpg
