// Package meta is the metadata store: repositories, versions, content units, artifacts,
// remotes, publications, distributions, uploads, users and the task tables, over
// database/sql on SQLite (the embedded default) or PostgreSQL.
//
// Invariants:
//   - One query set: SQL is written once with ? placeholders; the dialect rewrites
//     placeholders and the few constructs that differ (see dialect.go).
//   - Integer keys inside; a resource's UUID (pulp_id) appears only in hrefs.
//   - Repository versions are immutable. Membership is stored as change ranges
//     (content, version_added, version_removed): a new version writes rows in proportion
//     to its change, and "what is in version N" is one indexed range query.
//   - A metadata row that points at a blob is written only after the blob is committed.
//   - Times are stored as microseconds since the Unix epoch, UTC.
//   - Secrets (secretNames, in remote attrs and task arguments) are stored only sealed
//     with the keys given by SetKeys and read back in plaintext; a SQLite file is owner-only.
package meta
