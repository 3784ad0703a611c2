package collection

// Limits bound what Read accepts; every one is checked while the tarball streams, so
// hostile input costs at most these amounts.
type Limits struct {
	Compressed   int64 // bytes of the .tar.gz
	Uncompressed int64 // bytes of the tar stream inside it
	// Ratio caps uncompressed/compressed bytes once RatioFloor uncompressed bytes were
	// read, so a decompression bomb fails within RatioFloor bytes of output (real
	// collections stay under 20:1).
	Ratio      int64
	RatioFloor int64
	Entries    int   // tar entries (files, directories, links)
	PathLen    int   // bytes of one entry's path
	Depth      int   // components of one entry's path
	Manifest   int64 // MANIFEST.json and the other metadata files read whole (meta/*.yml, role meta)
	FilesJSON  int64 // FILES.json
	DocFile    int64 // a README.md or docs/*.md; galaxy-importer's DOCFILE_MAX_SIZE
	Source     int64 // a plugin source read for its DOCUMENTATION; larger ones are hashed, not parsed
	Kept       int64 // everything kept in memory for the metadata (texts, parsed docs) together
}

// DefaultLimits are generous for real collections (community.general 5.7.0: 2.2 MB,
// 18 MB of tar, 3,360 entries) and small enough to keep one import far under 100 MiB.
func DefaultLimits() Limits {
	return Limits{
		Compressed:   256 << 20,
		Uncompressed: 1 << 30,
		Ratio:        100,
		RatioFloor:   16 << 20,
		Entries:      50000,
		PathLen:      1024,
		Depth:        32,
		Manifest:     1 << 20,
		FilesJSON:    32 << 20,
		DocFile:      512 << 10,
		Source:       4 << 20,
		Kept:         64 << 20,
	}
}
