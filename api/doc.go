// Package api is the Pulp-compatible REST API under /pulp/api/v3/ and its OpenAPI
// document, generated from the same route table that serves requests.
//
// Invariants:
//   - JSON responses carry exactly "Content-Type: application/json" and the request's
//     Correlation-ID (header name with that casing).
//   - Errors map to HTTP statuses here and only here; bad input is a 400 that names the
//     field and changes nothing.
//   - Long mutations are tasks: the response is 202 with exactly {"task": href}.
//   - Hrefs are host-less paths ending in "/"; UUIDs appear only in hrefs.
package api
