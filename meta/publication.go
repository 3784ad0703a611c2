package meta

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// Publication is a servable, immutable view of a repository version: a set of files by
// relative path.
type Publication struct {
	ID            int64
	PulpID        string
	Type          string
	RepositoryID  int64
	RepoPulpID    string
	VersionNumber int64
	Attrs         json.RawMessage
	Created       int64
	Updated       int64
}

const pubCols = "p.id, p.pulp_id, p.type, p.repository_id, r.pulp_id, p.version_number, p.attrs, p.created, p.updated"
const pubFrom = "publications p JOIN repositories r ON r.id = p.repository_id"

func scanPub(r interface{ Scan(...any) error }) (Publication, error) {
	var p Publication
	var attrs string
	err := r.Scan(&p.ID, &p.PulpID, &p.Type, &p.RepositoryID, &p.RepoPulpID, &p.VersionNumber, &attrs, &p.Created, &p.Updated)
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
	err := tx.QueryRow(ctx, `INSERT INTO publications (pulp_id, type, repository_id, version_number, attrs, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		p.PulpID, p.Type, p.RepositoryID, p.VersionNumber, rawText(p.Attrs), now, now).Scan(&id)
	if err != nil {
		return Publication{}, fmt.Errorf("insert publication: %w", err)
	}
	for _, f := range files {
		if _, err := tx.Exec(ctx, `INSERT INTO published_files (publication_id, relative_path, content_artifact_id, artifact_id) VALUES (?, ?, ?, ?)`,
			id, f.RelativePath, f.ContentArtifactID, f.ArtifactID); err != nil {
			if IsUniqueViolation(err) {
				return Publication{}, fmt.Errorf("publication lists %q twice: %w", f.RelativePath, ErrConflict)
			}
			return Publication{}, fmt.Errorf("insert published file %q: %w", f.RelativePath, err)
		}
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

// PublishedFileRef resolves one path of a publication to what to send.
func PublishedFileRef(ctx context.Context, q Querier, pubID int64, path string) (FileRef, error) {
	var caID, aid *int64
	err := q.QueryRow(ctx, `SELECT content_artifact_id, artifact_id FROM published_files WHERE publication_id = ? AND relative_path = ?`, pubID, path).Scan(&caID, &aid)
	if err != nil {
		return FileRef{}, noRows(err, "published file", path)
	}
	f := FileRef{RelativePath: path}
	if caID == nil {
		a, err := ArtifactByID(ctx, q, *aid)
		if err != nil {
			return FileRef{}, err
		}
		f.Artifact = &a
		f.Created = a.Created
		return f, nil
	}
	var artifactID *int64
	if err := q.QueryRow(ctx, `SELECT ca.id, ca.content_id, ca.artifact_id, c.created FROM content_artifacts ca JOIN contents c ON c.id = ca.content_id WHERE ca.id = ?`, *caID).
		Scan(&f.ContentArtifactID, &f.ContentID, &artifactID, &f.Created); err != nil {
		return FileRef{}, noRows(err, "published file", path)
	}
	return f, fillFileRef(ctx, q, &f, artifactID)
}

// VersionFileRef resolves a path within a repository version (no publication) to the
// unit file with that relative path.
func VersionFileRef(ctx context.Context, q Querier, repoID, n int64, path string) (FileRef, error) {
	var f FileRef
	var artifactID *int64
	err := q.QueryRow(ctx, `SELECT ca.id, ca.content_id, ca.artifact_id, c.created FROM content_artifacts ca JOIN contents c ON c.id = ca.content_id
		WHERE ca.relative_path = ? AND EXISTS (SELECT 1 FROM repository_content rc WHERE rc.content_id = ca.content_id AND rc.repository_id = ?
		AND rc.version_added <= ? AND (rc.version_removed IS NULL OR rc.version_removed > ?)) LIMIT 1`, path, repoID, n, n).
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
		WHERE rc.content_id = ca.content_id AND rc.repository_id = ? AND rc.version_added <= ? AND (rc.version_removed IS NULL OR rc.version_removed > ?))
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
