// Package e2e drives the built pith binary with the real clients Pulp users have: the
// `pulp` CLI (pulp-cli 0.41.1) and curl-like HTTP downloads, against every database
// pith supports. It needs PITH_BIN (the binary; built from ./cmd/pith when unset) and
// PITH_PULP_CLI (the pulp executable); scripts/test provides both, and
// PITH_ANSIBLE_GALAXY (ansible-core's ansible-galaxy, for the tests that run it, which skip
// without it except under CI; see ansible_test.go). The tests of interoperation with
// upstream Pulp run against the one PITH_PULP_PEER names (with PITH_PULP_PEER_USER and
// PITH_PULP_PEER_PASSWORD) and skip without it; see pulppeer_test.go.
package e2e
