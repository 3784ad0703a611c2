// Package rest is the toolkit of the Pulp-style REST API that the api package and every
// content type write their operations with: the operation table and the kinds a type
// declares (repositories, remotes, publications, distributions, units) with their
// request and response shapes, list filters that make both the SQL and the OpenAPI
// parameters, strict body decoding, errors that become statuses in one place
// (WriteError), rendering, and the handler environment (Env) with the lookups and the
// task dispatch that handlers share.
//
// Invariants:
//   - JSON responses carry exactly "Content-Type: application/json".
//   - Bad input is a 400 that names the field, returned before anything is stored or
//     queued; unknown fields are refused by name.
//   - Bodies are bounded before they cost memory: MaxBody bytes of fields (files
//     stream), MaxFields fields.
//   - List filters are bounded before they become SQL (MaxFilterTerms, MaxFilterValues,
//     MaxQDepth, meta.MaxPattern), so no request reaches a database's limits.
//   - A 500 carries no error text (SQL, paths): the log has it, under the request's
//     Correlation-ID, which the answer gives.
//   - A filter is declared once: its parameters in the document and its SQL come from
//     the same Filter.
package rest
