// Package api is the Pulp-compatible REST API under /pulp/api/v3/ and its OpenAPI
// document, generated from the same operations that serve requests: the core's own
// (status, tasks, artifacts, uploads, orphans, the generic lists) and, for every kind the
// content types declare on the table (content.Type.Declare), the generic operations of
// that kind (list, create, read, update, delete, labels, versions, modify), beside the
// types' own operations. Nothing here names a content type.
//
// Invariants:
//   - JSON responses carry exactly "Content-Type: application/json" and the request's
//     Correlation-ID (header name with that casing).
//   - Errors map to HTTP statuses in one place (rest.WriteError); bad input is a 400 that
//     names the field and changes nothing.
//   - Long mutations are tasks: the response is 202 with exactly {"task": href}.
//   - Hrefs are host-less paths ending in "/"; UUIDs appear only in hrefs.
package api
