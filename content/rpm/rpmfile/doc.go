// Package rpmfile reads the headers of an .rpm file and turns them into a repodata.Package,
// the way createrepo_c (1.x) fills its package from a header, plus the key IDs of the
// package's OpenPGP signatures.
//
// Invariants:
//   - Read consumes the lead, the signature header with its padding and the main header,
//     and never a byte of the payload: the caller may go on reading the payload from the
//     same reader.
//   - Memory is bounded by the header sizes, which are capped as rpm caps them (signature
//     header: 32 index entries, 64 MiB of data; main header: 65535 entries, 256 MiB), and
//     past 256 KiB buffers grow only as bytes actually arrive, so a size field that lies
//     costs no more than that.
//   - Every count, offset and string is bounds-checked before use, with rpm's own checks
//     (hdrblobVerifyRegion, hdrblobVerifyInfo): corrupt or hostile input yields an *Error
//     naming the header, the byte offset and the tag, never a panic.
//   - Text that is not valid UTF-8 is converted as createrepo_c converts it (read as
//     latin-1, control characters dropped), so every string in the result is valid UTF-8.
//
// Where it departs from createrepo_c: files are listed even without file digests, an rpm
// v6 package's archive size comes from payloadsizealt, and changelogs come newest first
// (header order; other.xml lists them oldest first).
package rpmfile
