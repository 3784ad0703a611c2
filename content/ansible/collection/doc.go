// Package collection reads an Ansible collection artifact (namespace-name-version.tar.gz,
// as `ansible-galaxy collection build` writes it) and checks it as galaxy-importer (the
// import Pulp's pulp_ansible runs) does, producing the metadata pulp_ansible stores for a
// CollectionVersion: the manifest's fields, contents, docs_blob, requires_ansible, the
// MANIFEST.json and FILES.json documents, and the artifact's sha256 and size.
//
// Invariants:
//   - One pass over an io.Reader; nothing is extracted to disk. Every regular file is
//     hashed as it streams; only the files the metadata needs are kept (MANIFEST.json,
//     FILES.json, README.md, docs/*.md, meta/runtime.yml, meta/extensions.yml, role
//     READMEs and metadata), each within its bound; plugin sources are read only for
//     their DOCUMENTATION, EXAMPLES and RETURN strings and then dropped.
//   - Every input has a bound (Limits): compressed and uncompressed bytes, the ratio
//     between them past a floor (a gzip bomb fails within that floor), entries, path
//     length and depth, the size of each file kept and of all of them together; YAML
//     alias expansion is bounded by the size of its text.
//   - No path leaves the collection: absolute names, "..", links (symbolic or hard)
//     whose target is absolute or resolves outside, device files and FIFOs are refused;
//     paths named by MANIFEST.json or FILES.json are resolved only inside the tarball's
//     own tree, never on a file system.
//   - Every error is an *Error naming the collection (once MANIFEST.json was read), the
//     file in the tarball and the problem, and unwrapping to one Err* kind; bad input
//     never panics. ErrRead alone means the reader failed rather than the artifact.
//
// Build makes such an artifact from a collection's source tree (an fs.FS holding
// galaxy.yml), as `ansible-galaxy collection build` (ansible-core 2.19) makes it:
// galaxy.yml normalized as ansible-galaxy normalizes it and checked as the import
// checks MANIFEST.json; the files chosen by build_ignore's fnmatch patterns or by
// "manifest" directives (distlib's Manifest), matched as Python matches them; MANIFEST.json
// and FILES.json byte for byte as ansible-galaxy writes them; tar members with its
// names, order, modes, owners and times; gzip as tarfile writes it. Build reads
// nothing outside the tree (links leading out are skipped), bounds what it looks at
// and writes by the same Limits, and bounds the work of matching patterns.
//
// Where it departs from galaxy-importer and ansible-galaxy: see the README beside this
// file.
package collection
