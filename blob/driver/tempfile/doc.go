// Package tempfile holds the temporary files of the blob drivers that write through the
// local filesystem (fs: the blob directory; s3: its spool in $TMPDIR), so that a sweep
// can remove the ones a crashed writer left and never one a live writer still writes.
//
// A writer holds its file locked (flock) until it has renamed it into place or removed
// it; the kernel drops the lock when the writer's process dies, however it dies. A file
// is named with a tag of its host only once its writer holds the lock. Sweep removes a
// file only when it can take the lock itself and:
//   - the name carries this host's tag (its writer locked it, and is gone), or
//   - nobody has written to it for StaleAfter (files of other hosts, whose locks a shared
//     directory may not carry; files of older versions, which took no lock; files whose
//     writer could not lock them).
//
// Files this process made are never swept by it, whatever its locks say (on NFS, flock
// is a POSIX lock, which a process never conflicts with itself).
package tempfile
