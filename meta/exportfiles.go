package meta

import (
	"context"
	"database/sql"
)

// ExportFile is one file a filesystem export writes: where, and the blob it holds (nil
// for a unit file not downloaded yet). Unit is false for a file a publication generated
// (metadata), which an incremental export writes again.
type ExportFile struct {
	RelativePath string
	SHA256       *string
	Unit         bool
}

// PublishedFiles lists every file of a publication, its metadata included, by relative
// path, resolved as the content app resolves them (PublishedFileRef).
func PublishedFiles(ctx context.Context, q Querier, pubID int64) ([]ExportFile, error) {
	return exportFiles(ctx, q, `SELECT pf.relative_path, a.sha256, pf.content_artifact_id IS NOT NULL FROM published_files pf
		LEFT JOIN content_artifacts ca ON ca.id = pf.content_artifact_id
		LEFT JOIN artifacts a ON a.id = COALESCE(pf.artifact_id, ca.artifact_id)
		WHERE pf.publication_id = ? ORDER BY pf.relative_path`, pubID)
}

// VersionFiles lists the unit files of a repository version by relative path, as the
// content app serves a version (VersionFileRef).
func VersionFiles(ctx context.Context, q Querier, repoID, n int64) ([]ExportFile, error) {
	return exportFiles(ctx, q, `SELECT ca.relative_path, a.sha256, 1 = 1 FROM content_artifacts ca LEFT JOIN artifacts a ON a.id = ca.artifact_id
		WHERE EXISTS (SELECT 1 FROM repository_content rc WHERE rc.content_id = ca.content_id AND rc.repository_id = ? AND `+InVersion("rc", "?")+`)
		ORDER BY ca.relative_path`, repoID, n, n)
}

func exportFiles(ctx context.Context, q Querier, query string, args ...any) ([]ExportFile, error) {
	var out []ExportFile
	err := scanRows(ctx, q, query, args, func(r *sql.Rows) error {
		var f ExportFile
		if err := r.Scan(&f.RelativePath, &f.SHA256, &f.Unit); err != nil {
			return err
		}
		out = append(out, f)
		return nil
	})
	return out, err
}
