// Package repodata reads and writes yum repository metadata: repomd.xml and the
// primary, filelists and other files, compressed or not.
//
// Reading streams: ReadPackages merges the three files into one Package per rpm while
// holding one package at a time when the files agree in order (createrepo_c's output),
// and Reader reads a single file. Writing is per package (PrimaryFragment, ...) so a
// publish streams packages from storage into a DocumentWriter, through a CompressWriter
// that yields the sizes and checksums repomd.xml records.
//
// Invariants:
//   - Input is untrusted: the XML must be well-formed UTF-8, only the predefined
//     entities and character references are expanded, no text node or tag may exceed
//     64 MiB and no package more than 10 million entries. Every failure is an *Error
//     naming the file, the line and the package, wrapping ErrSyntax, ErrInvalid,
//     ErrMismatch, ErrTooLarge, ErrZchunk or the read error.
//   - Unknown elements are skipped whole, as createrepo_c and libsolv do.
//   - Writers emit what createrepo_c emits for the same Package, byte for byte, and strip
//     what XML 1.0 cannot carry; output depends on the input alone.
//   - Parsing what the writers wrote gives back an equal Package.
package repodata
