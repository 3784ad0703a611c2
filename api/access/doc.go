// Package access decides who may do what, as Pulp's role-based access control does:
// access policies (lists of statements in drf-access-policy's form) evaluated for a
// subject and a viewset action with condition functions the caller supplies (Allowed,
// policy.go; condition expressions, expr.go), and the defaults a Pulp release ships:
// each viewset's policy, the built-in roles and every model's permissions (Defaults).
//
// The package is pure: it reads no database and knows no request. The api package
// authenticates, finds the policy of the operation a request is for, supplies the
// conditions (which read roles from meta) and narrows lists.
//
// pulp/core.json and pulp/certguard.json (and each content type's access.json) are
// data written by scripts/pulp-access.py from pulpcore 3.105.25 and pulp-rpm 3.35.6
// (GPL-2.0-or-later): the default policies, locked roles and model permissions those
// releases declare, kept so that a client reading pith's access policies and roles sees
// what it would see on Pulp.
package access
