// Package fs is the filesystem blob driver.
//
// Committed blobs live at root/artifact/<sha[0:2]>/<sha[2:]>, Pulp's layout, and
// temporaries in root/tmp on the same filesystem. A commit is fsync of the file, rename
// into place and fsync of the directory, so a blob is visible under its digest only once it
// is complete and durable. Open returns *os.File so net/http can use sendfile. A crash
// leaves at most temporaries behind, which SweepTemp removes (a live writer holds a lock
// on its temporary until it is renamed or removed; see package tempfile); Walk never
// sees them.
package fs
