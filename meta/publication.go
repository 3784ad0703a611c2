package meta

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
)

// Publication is a servable, immutable view of a repository version: a set of files by
// relative path.
type Publication struct {
	ID            int64
	PulpID        string
	Type          string
	RepositoryID  int64
	RepoPulpID    string
	RepoType      string
	VersionNumber int64
	// Checkpoint publications are served by checkpoint distributions of the repository,
	// at <base_path>/<Created, to the second>/.
	Checkpoint bool
	Attrs      json.RawMessage
	Created    int64
	Updated    int64
}

const pubCols = "p.id, p.pulp_id, p.type, p.repository_id, r.pulp_id, r.type, p.version_number, p.checkpoint, p.attrs, p.created, p.updated"
const pubFrom = "publications p JOIN repositories r ON r.id = p.repository_id"

func scanPub(r interface{ Scan(...any) error }) (Publication, error) {
	var p Publication
	var attrs string
	err := r.Scan(&p.ID, &p.PulpID, &p.Type, &p.RepositoryID, &p.RepoPulpID, &p.RepoType, &p.VersionNumber, &p.Checkpoint, &attrs, &p.Created, &p.Updated)
	p.Attrs = json.RawMessage(attrs)
	return p, err
}

// PublishedFile is one file of a publication: a unit's file or a generated one.
type PublishedFile struct {
	RelativePath      string
	ContentArtifactID *int64
	ArtifactID        *int64
}

// CreatePublication inserts a publication with its files.
func CreatePublication(ctx context.Context, tx *Tx, p Publication, files []PublishedFile) (Publication, error) {
	now := Now()
	if p.PulpID == "" {
		p.PulpID = NewID()
	}
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO publications (pulp_id, type, repository_id, version_number, checkpoint, attrs, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		p.PulpID, p.Type, p.RepositoryID, p.VersionNumber, p.Checkpoint, rawText(p.Attrs), now, now).Scan(&id)
	if err != nil {
		return Publication{}, fmt.Errorf("insert publication: %w", err)
	}
	if p.Checkpoint {
		var attrs string
		if err := tx.QueryRow(ctx, `SELECT attrs FROM repositories WHERE id = ?`, p.RepositoryID).Scan(&attrs); err != nil {
			return Publication{}, fmt.Errorf("publication's repository %d: %w", p.RepositoryID, err)
		}
		if err := retainCheckpoints(ctx, tx, p.RepositoryID, RetainCheckpointsOf(json.RawMessage(attrs))); err != nil {
			return Publication{}, err
		}
	}
	seen := make(map[string]struct{}, len(files))
	for _, f := range files {
		if _, ok := seen[f.RelativePath]; ok {
			return Publication{}, fmt.Errorf("publication lists %q twice: %w", f.RelativePath, ErrConflict)
		}
		seen[f.RelativePath] = struct{}{}
	}
	// Rows go in batches: one statement per file cost a quarter of publishing 20,000
	// packages.
	const batch = 200
	for len(files) > 0 {
		n := min(batch, len(files))
		q := `INSERT INTO published_files (publication_id, relative_path, content_artifact_id, artifact_id) VALUES ` +
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?), ", n), ", ")
		args := make([]any, 0, 4*n)
		for _, f := range files[:n] {
			args = append(args, id, f.RelativePath, f.ContentArtifactID, f.ArtifactID)
		}
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return Publication{}, fmt.Errorf("insert the files of publication %s: %w", p.PulpID, err)
		}
		files = files[n:]
	}
	return PublicationByID(ctx, tx, id)
}

// PublicationByID finds a publication by key.
func PublicationByID(ctx context.Context, q Querier, id int64) (Publication, error) {
	p, err := scanPub(q.QueryRow(ctx, "SELECT "+pubCols+" FROM "+pubFrom+" WHERE p.id = ?", id))
	return p, noRows(err, "publication", fmt.Sprint(id))
}

// PublicationByPulpID finds a publication by its href UUID.
func PublicationByPulpID(ctx context.Context, q Querier, id string) (Publication, error) {
	p, err := scanPub(q.QueryRow(ctx, "SELECT "+pubCols+" FROM "+pubFrom+" WHERE p.pulp_id = ?", id))
	return p, noRows(err, "publication", id)
}

// ListPublications selects a page of publications (aliases p and r).
func ListPublications(ctx context.Context, q Querier, l List) ([]Publication, int64, error) {
	return Page(ctx, q, pubCols, pubFrom, "p.id DESC", l, func(r *sql.Rows) (Publication, error) { return scanPub(r) })
}

// DeletePublication deletes a publication and its file list.
func DeletePublication(ctx context.Context, q Querier, id int64) error {
	if err := ForgetGrants(ctx, q, "publications", "id = ?", id); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `DELETE FROM publications WHERE id = ?`, id)
	return err
}

// PublishedPaths lists the relative paths of a publication under prefix (for directory
// listings), in order.
func PublishedPaths(ctx context.Context, q Querier, pubID int64, prefix string) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT relative_path FROM published_files WHERE publication_id = ? AND substr(relative_path, 1, ?) = ? ORDER BY relative_path`,
		pubID, len(prefix), prefix)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// PublishedFileRef resolves one path of a publication to what to send: the published
// file, its unit file and its artifact in one query (the content app's uncached path);
// a unit file without an artifact yet (on demand) adds a query for its remote sources.
func PublishedFileRef(ctx context.Context, q Querier, pubID int64, path string) (FileRef, error) {
	var caID, contentID, unitCreated *int64
	var a struct { // the artifact's columns, null when the file has none yet
		id, size, created, updated *int64
		pulpID, sha256             *string
	}
	f := FileRef{RelativePath: path}
	var art Artifact
	err := q.QueryRow(ctx, `SELECT pf.content_artifact_id, ca.content_id, c.created, `+artifactCols+`
		FROM published_files pf
		LEFT JOIN content_artifacts ca ON ca.id = pf.content_artifact_id
		LEFT JOIN contents c ON c.id = ca.content_id
		LEFT JOIN artifacts a ON a.id = COALESCE(pf.artifact_id, ca.artifact_id)
		WHERE pf.publication_id = ? AND pf.relative_path = ?`, pubID, path).
		Scan(&caID, &contentID, &unitCreated, &a.id, &a.pulpID, &a.size, &art.MD5, &art.SHA1, &art.SHA224, &a.sha256, &art.SHA384, &art.SHA512, &a.created, &a.updated)
	if err != nil {
		return FileRef{}, noRows(err, "published file", path)
	}
	if a.id != nil {
		art.ID, art.PulpID, art.Size, art.SHA256, art.Created, art.Updated = *a.id, *a.pulpID, *a.size, *a.sha256, *a.created, *a.updated
		f.Artifact = &art
		f.Created = art.Created
	}
	if caID == nil {
		if f.Artifact == nil {
			return FileRef{}, fmt.Errorf("published file %s of publication %d has neither a unit file nor an artifact", path, pubID)
		}
		return f, nil
	}
	if contentID == nil || unitCreated == nil {
		return FileRef{}, noRows(sql.ErrNoRows, "published file", path)
	}
	f.ContentArtifactID, f.ContentID, f.Created = *caID, *contentID, *unitCreated
	if f.Artifact == nil {
		f.Remote, err = RemoteSources(ctx, q, f.ContentArtifactID)
	}
	return f, err
}

// VersionFileRef resolves a path within a repository version (no publication) to the
// unit file with that relative path.
func VersionFileRef(ctx context.Context, q Querier, repoID, n int64, path string) (FileRef, error) {
	var f FileRef
	var artifactID *int64
	err := q.QueryRow(ctx, `SELECT ca.id, ca.content_id, ca.artifact_id, c.created FROM content_artifacts ca JOIN contents c ON c.id = ca.content_id
		WHERE ca.relative_path = ? AND EXISTS (SELECT 1 FROM repository_content rc WHERE rc.content_id = ca.content_id AND rc.repository_id = ?
		AND `+InVersion("rc", "?")+`) LIMIT 1`, path, repoID, n, n).
		Scan(&f.ContentArtifactID, &f.ContentID, &artifactID, &f.Created)
	if err != nil {
		return FileRef{}, noRows(err, "file", path)
	}
	f.RelativePath = path
	return f, fillFileRef(ctx, q, &f, artifactID)
}

// VersionPaths lists the relative paths of the files in a version under prefix.
func VersionPaths(ctx context.Context, q Querier, repoID, n int64, prefix string) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT ca.relative_path FROM content_artifacts ca WHERE substr(ca.relative_path, 1, ?) = ? AND EXISTS (SELECT 1 FROM repository_content rc
		WHERE rc.content_id = ca.content_id AND rc.repository_id = ? AND `+InVersion("rc", "?")+`)
		ORDER BY ca.relative_path`, len(prefix), prefix, repoID, n, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
