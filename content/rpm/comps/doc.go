// Package comps reads and writes a yum repository's comps.xml (repomd type "group"): the
// package groups, categories, environments and langpacks Pulp keeps as PackageGroup,
// PackageCategory, PackageEnvironment and PackageLangpacks. Field and JSON names follow
// Pulp's API responses, so the API renders these types as they are.
//
// Invariants:
//   - Parse reads what libcomps reads, the way it reads it: a missing type is mandatory,
//     an unknown one is TypeUnknown; booleans are "true" or "false" exactly, anything else
//     leaves the default (default false, uservisible true, biarchonly false);
//     display_order is the leading integer; xml:lang names and descriptions go to the
//     *_by_lang maps; a group's exact duplicate packagereqs are kept once, as Pulp keeps
//     them; langpacks matches are one map, a later match replacing an earlier one.
//     Text is trimmed of surrounding XML white space. Blacklist, whiteout, langonly and
//     arch attributes are skipped, as Pulp skips them.
//   - Every unit carries Digest, computed as Pulp computes it (sha256 of the sorted str()
//     of its field values), so units dedupe as Pulp's do and the API shows the same
//     digest for typical files. Sum recomputes it.
//   - Every problem is an *Error naming the file, the line and the unit; a unit without
//     an id, a packagereq or groupid without a name, a match without a name, two units of
//     one kind with one id and a value longer than 64 MiB are errors. Nothing panics.
//   - Write is deterministic: units sorted by id, maps by key, the layout libcomps writes
//     for Pulp (with its DOCTYPE). Parse of its output gives back equal units, except that
//     TypeUnknown is written as "default", as libcomps writes it.
package comps
