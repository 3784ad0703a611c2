// Package port reads and writes Pulp's export format: a tar (or chunks of one, named
// with their crc32 checksums by a table of contents) of artifact blobs and JSON
// resource files. It knows the container, not the content: content.Port says how a
// type's units become rows, and the export and import tasks (package api) put the two
// together. docs/research/pulp-export-import.md describes the format as Pulp writes it.
//
// Writing streams: the tar goes straight into its chunk files, hashed as it is
// written; only each resource file is spooled (its size must precede it in the tar).
// Reading seeks: the chunks are read as one file, the tar's headers are indexed once,
// and each member is read in place when it is needed, so nothing is extracted.
package port
