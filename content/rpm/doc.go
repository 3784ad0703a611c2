// Package rpm is the rpm content type: it syncs yum repositories into content units
// (packages, advisories, package groups and the rest) and publishes repository
// versions as yum repositories that dnf reads.
//
// Invariants:
//   - Sync streams the metadata: primary, filelists and other are read together, a
//     package at a time, and written in batches, so memory does not grow with the
//     repository. Every metadata file is checked against repomd.xml before it is used.
//   - A package's yum metadata is kept at import as the fragments createrepo_c writes
//     (table rpm_fragments); publishing concatenates them and never re-reads packages.
//   - A sync that fails leaves no repository version; units it stored before failing are
//     orphans for orphan cleanup.
package rpm
