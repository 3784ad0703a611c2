// Package gitsource fetches one ref of a git repository into a temporary directory, for
// the git remotes of pulp_ansible (the collection at the tree's root is built from it:
// content/ansible) and pulp_file (every file of the tree becomes file content:
// content/file).
//
// It runs the git binary rather than a Go implementation. git is the reference
// implementation of every transport and protocol (v2, shallow fetches of any commit,
// HTTP/2, proxies, client certificates through libcurl), it is on every machine pith
// builds and tests on, and it checks out the way pulp_ansible's checkout does (line
// endings and other attributes), which the artifact's checksums depend on (or, with
// Options.Raw, the blobs as stored, as pulp_file reads them). go-git (v5)
// would add about a dozen modules and 100k lines for less: partial shallow-fetch
// support, no protocol v2 for fetches by commit, a history of path-traversal fixes in
// its checkout. The price is a process per step and a bound on memory that git keeps
// by itself (core.bigFileThreshold) rather than one this package enforces.
//
// Invariants:
//   - git runs with no system, global or repository configuration but what this package
//     sets (passed in the environment, never on the command line, so that passwords are
//     not in the process list): no hooks, no filters or other configured drivers, no
//     submodules, no credential helpers or prompts but its own, only the https, http
//     and git transports (file:// and local paths only when the caller allows them).
//   - Every step is bounded: the whole fetch and checkout by a deadline (the process
//     group is killed), the objects received by size (watched while they arrive), the
//     tree by entries, bytes, path length and depth before anything is checked out.
//   - The work tree holds only the repository's files (the git directory is beside it,
//     not in it); links in it are left as links for the caller, which must never follow
//     them out of the tree.
//   - Every error is an *Error naming the URL (credentials redacted) and the ref, with
//     one Err* kind; a ref the remote does not have is ErrRefNotFound.
package gitsource
