// Package openapi generates the OpenAPI 3.0.1 document pith serves at
// /pulp/api/v3/docs/api.json from pith's own route table, and diffs it against a
// reference Pulp document.
//
// The API package declares every route as an Operation; component schemas are
// reflected from Go structs into a Registry; Document renders both into JSON.
// Invariants: the output bytes are deterministic for the same input; every
// response has a description, every media type a schema, every path parameter
// is required and named in its path; parameters come out in the reference's
// order (headers, then path and query by name, then fields and exclude_fields);
// anonymous operations carry no security key at all, like pulpcore's status and
// docs. The parameter helpers reproduce the reference's shapes (names, schema
// types and formats, explode/style, descriptions), so that Diff against the
// reference comes out empty.
package openapi
