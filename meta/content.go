package meta

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// Content is a typed unit ("file.file", "rpm.package", ...). NaturalKey identifies it
// among units of its type; RepoKey is what may appear only once per repository version
// (a newer unit with the same RepoKey replaces the older one).
type Content struct {
	ID           int64
	PulpID       string
	Type         string
	NaturalKey   string
	RepoKey      string
	RelativePath string
	Digest       string
	Attrs        json.RawMessage
	Labels       Labels
	Created      int64
	Updated      int64
}

const contentCols = "c.id, c.pulp_id, c.type, c.natural_key, c.repo_key, c.relative_path, c.digest, c.attrs, c.labels, c.created, c.updated"

func scanContent(r interface{ Scan(...any) error }) (Content, error) {
	var c Content
	var attrs, labels string
	err := r.Scan(&c.ID, &c.PulpID, &c.Type, &c.NaturalKey, &c.RepoKey, &c.RelativePath, &c.Digest, &attrs, &labels, &c.Created, &c.Updated)
	c.Attrs = json.RawMessage(attrs)
	c.Labels = parseLabels(labels)
	return c, err
}

// ContentFile is one file of a unit: its path in the unit and the artifact, or nil when
// the unit was synced on demand and the file has not been fetched yet.
type ContentFile struct {
	RelativePath string
	ArtifactID   *int64
	// Remote source for on-demand files.
	RemoteID *int64
	URL      string
	Size     *int64
	SHA256   string
}

// PutContent creates a unit with its files, or returns the existing unit with the same
// type and natural key (filling in artifacts that the existing unit lacked). created
// reports a new unit.
func PutContent(ctx context.Context, q Querier, c Content, files []ContentFile) (Content, bool, error) {
	now := Now()
	if c.PulpID == "" {
		c.PulpID = NewID()
	}
	res, err := q.Exec(ctx, `INSERT INTO contents (pulp_id, type, natural_key, repo_key, relative_path, digest, attrs, labels, created, updated, timestamp_of_interest)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (type, natural_key) DO NOTHING`,
		c.PulpID, c.Type, c.NaturalKey, c.RepoKey, c.RelativePath, c.Digest, rawText(c.Attrs), c.Labels.text(), now, now, now)
	if err != nil {
		return Content{}, false, fmt.Errorf("insert %s content %s: %w", c.Type, c.NaturalKey, err)
	}
	n, _ := res.RowsAffected()
	got, err := ContentByKey(ctx, q, c.Type, c.NaturalKey)
	if err != nil {
		return Content{}, false, fmt.Errorf("read %s content %s: %w", c.Type, c.NaturalKey, err)
	}
	if n == 0 {
		q.Exec(ctx, `UPDATE contents SET timestamp_of_interest = ? WHERE id = ?`, now, got.ID)
	}
	for _, f := range files {
		if _, err := q.Exec(ctx, `INSERT INTO content_artifacts (content_id, relative_path, artifact_id) VALUES (?, ?, ?)
			ON CONFLICT (content_id, relative_path) DO NOTHING`, got.ID, f.RelativePath, f.ArtifactID); err != nil {
			return Content{}, false, fmt.Errorf("insert file %s of %s: %w", f.RelativePath, c.NaturalKey, err)
		}
		if f.ArtifactID != nil {
			if _, err := q.Exec(ctx, `UPDATE content_artifacts SET artifact_id = ? WHERE content_id = ? AND relative_path = ? AND artifact_id IS NULL`,
				*f.ArtifactID, got.ID, f.RelativePath); err != nil {
				return Content{}, false, err
			}
		}
		if f.RemoteID != nil {
			_, err := q.Exec(ctx, `INSERT INTO remote_artifacts (content_artifact_id, remote_id, url, size, sha256)
				SELECT id, ?, ?, ?, ? FROM content_artifacts WHERE content_id = ? AND relative_path = ?
				ON CONFLICT (content_artifact_id, remote_id) DO UPDATE SET url = excluded.url, size = excluded.size, sha256 = excluded.sha256`,
				*f.RemoteID, f.URL, f.Size, optional(f.SHA256), got.ID, f.RelativePath)
			if err != nil {
				return Content{}, false, fmt.Errorf("insert remote source of %s: %w", f.RelativePath, err)
			}
		}
	}
	return got, n > 0, nil
}

// ContentByKey finds a unit by its type and natural key.
func ContentByKey(ctx context.Context, q Querier, typ, key string) (Content, error) {
	c, err := scanContent(q.QueryRow(ctx, "SELECT "+contentCols+" FROM contents c WHERE c.type = ? AND c.natural_key = ?", typ, key))
	return c, noRows(err, typ, key)
}

// ContentByPulpID finds a unit by its href UUID.
func ContentByPulpID(ctx context.Context, q Querier, id string) (Content, error) {
	c, err := scanContent(q.QueryRow(ctx, "SELECT "+contentCols+" FROM contents c WHERE c.pulp_id = ?", id))
	return c, noRows(err, "content", id)
}

// ContentIDsByPulpID maps href UUIDs to keys, failing on the first unknown one.
func ContentIDsByPulpID(ctx context.Context, q Querier, ids []string) ([]int64, error) {
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		var k int64
		if err := q.QueryRow(ctx, "SELECT id FROM contents WHERE pulp_id = ?", id).Scan(&k); err != nil {
			return nil, noRows(err, "content", id)
		}
		out = append(out, k)
	}
	return out, nil
}

// ListContent selects a page of units (alias c).
func ListContent(ctx context.Context, q Querier, l List) ([]Content, int64, error) {
	return Page(ctx, q, contentCols, "contents c", "c.id", l, func(r *sql.Rows) (Content, error) { return scanContent(r) })
}

// UpdateContentLabels replaces a unit's labels.
func UpdateContentLabels(ctx context.Context, q Querier, id int64, l Labels) error {
	_, err := q.Exec(ctx, `UPDATE contents SET labels = ?, updated = ? WHERE id = ?`, l.text(), Now(), id)
	return err
}

// FileRef is what the content app needs to send one file of a unit.
type FileRef struct {
	ContentArtifactID int64
	ContentID         int64
	RelativePath      string
	Artifact          *Artifact
	Remote            []RemoteSource
	Created           int64
}

// RemoteSource is where an on-demand file can be fetched from.
type RemoteSource struct {
	RemoteID int64
	URL      string
	Size     *int64
	SHA256   *string
}

// ContentFiles lists the files of units, keyed by content ID.
func ContentFiles(ctx context.Context, q Querier, contentID int64) ([]FileRef, error) {
	rows, err := q.Query(ctx, `SELECT ca.id, ca.content_id, ca.relative_path, ca.artifact_id FROM content_artifacts ca WHERE ca.content_id = ? ORDER BY ca.relative_path`, contentID)
	if err != nil {
		return nil, err
	}
	var out []FileRef
	var aids []*int64
	for rows.Next() {
		var f FileRef
		var aid *int64
		if err := rows.Scan(&f.ContentArtifactID, &f.ContentID, &f.RelativePath, &aid); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, f)
		aids = append(aids, aid)
	}
	rows.Close()
	for i := range out {
		if err := fillFileRef(ctx, q, &out[i], aids[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func fillFileRef(ctx context.Context, q Querier, f *FileRef, artifactID *int64) error {
	if artifactID != nil {
		a, err := ArtifactByID(ctx, q, *artifactID)
		if err != nil {
			return err
		}
		f.Artifact = &a
		return nil
	}
	var err error
	f.Remote, err = RemoteSources(ctx, q, f.ContentArtifactID)
	return err
}

// RemoteSources lists where a unit file can be fetched from, first source first.
func RemoteSources(ctx context.Context, q Querier, contentArtifactID int64) ([]RemoteSource, error) {
	rows, err := q.Query(ctx, `SELECT remote_id, url, size, sha256 FROM remote_artifacts WHERE content_artifact_id = ? ORDER BY id`, contentArtifactID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RemoteSource
	for rows.Next() {
		var s RemoteSource
		if err := rows.Scan(&s.RemoteID, &s.URL, &s.Size, &s.SHA256); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// SetContentArtifact records that an on-demand file has been fetched and stored.
func SetContentArtifact(ctx context.Context, q Querier, contentArtifactID, artifactID int64) error {
	_, err := q.Exec(ctx, `UPDATE content_artifacts SET artifact_id = ? WHERE id = ? AND artifact_id IS NULL`, artifactID, contentArtifactID)
	return err
}

// DeleteOrphans deletes units in no repository version and artifacts that nothing
// references, both untouched since before protectedSince (µs). It returns the digests
// of deleted artifacts so the caller can delete their blobs after commit. Restricting
// to contentIDs (when non-nil) limits which units are considered.
func DeleteOrphans(ctx context.Context, q Querier, protectedSince int64, contentIDs []int64) (units int64, digests []string, err error) {
	cond := `NOT EXISTS (SELECT 1 FROM repository_content rc WHERE rc.content_id = contents.id) AND contents.timestamp_of_interest < ?`
	args := []any{protectedSince}
	if contentIDs != nil {
		if len(contentIDs) == 0 {
			cond += " AND 1 = 0"
		} else {
			in, a := inList(contentIDs)
			cond += " AND contents.id IN " + in
			args = append(args, a...)
		}
	}
	// A unit's sub-repositories (a distribution tree's variants) go with it, and their
	// units become orphans with it.
	subs, err := q.Query(ctx, `SELECT r.id FROM repositories r JOIN contents ON contents.id = r.sub_of WHERE `+cond, args...)
	if err != nil {
		return 0, nil, fmt.Errorf("find sub-repositories of orphans: %w", err)
	}
	var repos []int64
	for subs.Next() {
		var id int64
		if err := subs.Scan(&id); err != nil {
			subs.Close()
			return 0, nil, err
		}
		repos = append(repos, id)
	}
	subs.Close()
	for _, id := range repos {
		if err := DeleteRepository(ctx, q, id); err != nil {
			return 0, nil, err
		}
	}
	res, err := q.Exec(ctx, `DELETE FROM contents WHERE `+cond, args...)
	if err != nil {
		return 0, nil, fmt.Errorf("delete orphan content: %w", err)
	}
	units, _ = res.RowsAffected()
	rows, err := q.Query(ctx, `SELECT id, sha256 FROM artifacts a WHERE timestamp_of_interest < ?
		AND NOT EXISTS (SELECT 1 FROM content_artifacts ca WHERE ca.artifact_id = a.id)
		AND NOT EXISTS (SELECT 1 FROM published_files pf WHERE pf.artifact_id = a.id)`, protectedSince)
	if err != nil {
		return units, nil, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		var d string
		if err := rows.Scan(&id, &d); err != nil {
			rows.Close()
			return units, nil, err
		}
		ids = append(ids, id)
		digests = append(digests, d)
	}
	rows.Close()
	for _, id := range ids {
		if _, err := q.Exec(ctx, `DELETE FROM artifacts WHERE id = ?`, id); err != nil {
			return units, nil, err
		}
	}
	return units, digests, nil
}

func inList(ids []int64) (string, []any) {
	b := make([]byte, 0, 2*len(ids)+2)
	b = append(b, '(')
	args := make([]any, len(ids))
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '?')
		args[i] = id
	}
	b = append(b, ')')
	return string(b), args
}

// ArtifactsOf returns the artifact of each unit's first file (by relative path), for
// units whose file has been stored; one query for a page of units.
func ArtifactsOf(ctx context.Context, q Querier, contentIDs []int64) (map[int64]Artifact, error) {
	out := map[int64]Artifact{}
	err := chunks(contentIDs, func(part []int64) error {
		in, args := inList(part)
		rows, err := q.Query(ctx, `SELECT ca.content_id, `+artifactCols+` FROM content_artifacts ca JOIN artifacts a ON a.id = ca.artifact_id
			WHERE ca.content_id IN `+in+` ORDER BY ca.relative_path`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var cid int64
			var a Artifact
			if err := rows.Scan(&cid, &a.ID, &a.PulpID, &a.Size, &a.MD5, &a.SHA1, &a.SHA224, &a.SHA256, &a.SHA384, &a.SHA512, &a.Created, &a.Updated); err != nil {
				return err
			}
			if _, ok := out[cid]; !ok {
				out[cid] = a
			}
		}
		return rows.Err()
	})
	return out, err
}

// AttachArtifact records the artifact of a unit's file that had none (a download
// finished).
func AttachArtifact(ctx context.Context, q Querier, contentID int64, relativePath string, artifactID int64) error {
	_, err := q.Exec(ctx, `UPDATE content_artifacts SET artifact_id = ? WHERE content_id = ? AND relative_path = ? AND artifact_id IS NULL`,
		artifactID, contentID, relativePath)
	return err
}

// ContentArtifactRef is one file of a unit: its relative path and its artifact's pulp
// ID, nil while the file is not stored (on demand).
type ContentArtifactRef struct {
	RelativePath   string
	ArtifactPulpID *string
}

// ContentArtifactsOf lists the files of units, by unit, in relative-path order.
func ContentArtifactsOf(ctx context.Context, q Querier, contentIDs []int64) (map[int64][]ContentArtifactRef, error) {
	out := map[int64][]ContentArtifactRef{}
	err := chunks(contentIDs, func(part []int64) error {
		in, args := inList(part)
		rows, err := q.Query(ctx, `SELECT ca.content_id, ca.relative_path, a.pulp_id FROM content_artifacts ca
			LEFT JOIN artifacts a ON a.id = ca.artifact_id WHERE ca.content_id IN `+in+` ORDER BY ca.content_id, ca.relative_path`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var cid int64
			var ref ContentArtifactRef
			if err := rows.Scan(&cid, &ref.RelativePath, &ref.ArtifactPulpID); err != nil {
				return err
			}
			out[cid] = append(out[cid], ref)
		}
		return rows.Err()
	})
	return out, err
}
