// Package file is the "file" content type: plain files listed in a PULP_MANIFEST
// ("relative_path,sha256,size" per line). It syncs from a remote manifest (immediate,
// on_demand or streamed), publishes a version with a generated manifest, and serves
// through the content app like every type.
//
// Invariants: a sync reads and checks the whole manifest before it downloads anything;
// every download is verified (size and sha256) while it streams; metadata rows for a
// sync are written in one transaction at the end, so a failed sync leaves no new
// version and no new rows.
package file
