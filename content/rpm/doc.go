// Package rpm is the rpm content type: it syncs yum repositories into content units
// (packages, advisories, package groups and the rest) and publishes repository
// versions as yum repositories that dnf reads.
//
// Invariants:
//   - Sync streams the metadata: primary, filelists and other are read together, a
//     package at a time, and written in batches, so memory does not grow with the
//     repository. Every metadata file is checked against repomd.xml before it is used.
//   - With policy immediate, a batch's package files start downloading as soon as its
//     transaction commits, while later batches are still parsed and stored; a failure
//     on either side cancels the other, and the sync reports the first cause.
//   - A package's yum metadata is kept at import as the fragments createrepo_c writes
//     (table rpm_fragments); publishing concatenates them and never re-reads packages.
//   - A sync that fails leaves no repository version; units it stored before failing are
//     orphans for orphan cleanup.
//   - A distribution tree's variants and addons in other directories are repositories
//     of their own that belong to the tree unit (meta.SubRepository), not to the
//     repository that synced it: every publication of a version holding the tree
//     publishes their latest versions under the variants' ids, and they go with the
//     tree at orphan cleanup.
package rpm
