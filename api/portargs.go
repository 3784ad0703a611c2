package api

import "encoding/json"

// The tasks of exports and imports, by Pulp's names. The API checks a request and
// dispatches one; the task makes the export or import row (the first resource it
// creates, as pulp-cli reads it) and does the work.
const (
	pulpExportTask    = "pulpcore.app.tasks.export.pulp_export"
	fsPublicationTask = "pulpcore.app.tasks.export.fs_publication_export"
	fsVersionTask     = "pulpcore.app.tasks.export.fs_repo_version_export"
	pulpImportTask    = "pulpcore.app.tasks.importer.pulp_import"
	importRepoTask    = "pulpcore.app.tasks.importer.import_repository_version"
)

// pulpExportArgs are a pulp export's arguments, checked by the API.
type pulpExportArgs struct {
	Exporter string `json:"exporter"` // pulp_id
	// Versions are the versions to export, one per repository of the exporter ("pulp_id
	// of the repository/number"); StartVersions the bases of an incremental export in
	// the same form, none for a full one or one from the last export.
	Versions      []string `json:"versions"`
	StartVersions []string `json:"start_versions,omitempty"`
	Full          bool     `json:"full"`
	// ChunkSize splits the tar in files of this many bytes; 0 = one file.
	ChunkSize int64 `json:"chunk_size,omitempty"`
	// Meta is copied into the table of contents.
	Meta json.RawMessage `json:"meta,omitempty"`
	// Params is the request body as sent, shown as the export's params.
	Params json.RawMessage `json:"params"`
}

// fsExportArgs are a filesystem export's arguments, checked by the API.
type fsExportArgs struct {
	Exporter string `json:"exporter"` // pulp_id
	// Publication (pulp_id) or Version ("pulp_id of the repository/number"), one of the
	// two; StartVersion the version whose files are not written again, or "".
	Publication  string `json:"publication,omitempty"`
	Version      string `json:"repository_version,omitempty"`
	StartVersion string `json:"start_repository_version,omitempty"`
	// Params is what the export shows as its params (Pulp: pks, not hrefs).
	Params json.RawMessage `json:"params"`
}

// pulpImportArgs are a pulp import's arguments, checked by the API: Path is the
// tar's real path, or the table of contents' when TOC.
type pulpImportArgs struct {
	Importer           string `json:"importer"` // pulp_id
	Path               string `json:"path"`
	TOC                bool   `json:"toc,omitempty"`
	CreateRepositories bool   `json:"create_repositories,omitempty"`
}

// importRepoArgs are the arguments of the task that imports one repository's version of
// an export (Pulp's import_repository_version), dispatched by the pulp import once the
// export's artifacts are stored.
type importRepoArgs struct {
	Importer   string   `json:"importer"`   // pulp_id
	Paths      []string `json:"paths"`      // the tar, or its chunks in order
	Source     string   `json:"source"`     // the export's name of the repository
	Repository string   `json:"repository"` // the destination's pulp_id
}
