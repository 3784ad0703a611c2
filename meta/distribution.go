package meta

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
)

// Distribution serves a repository's latest version or a publication under a base path.
type Distribution struct {
	ID            int64
	PulpID        string
	Type          string
	Name          string
	BasePath      string
	RepositoryID  *int64
	RepoPulpID    *string
	RepoType      *string
	PublicationID *int64
	PubPulpID     *string
	PubType       *string
	// VersionID is the repository version it serves (nil: a repository's latest, a
	// publication or nothing); VersionRepo is that version's repository.
	VersionID     *int64
	VersionRepo   *string // pulp_id
	VersionType   *string
	VersionNumber *int64
	ContentGuard  *string // the guard's pulp_id
	GuardType     *string // and its type ("core.rbac")
	Hidden        bool
	// Checkpoint distributions serve the checkpoint publications of their repository,
	// each under its timestamp, rather than what the repository serves now.
	Checkpoint bool
	Attrs      json.RawMessage
	Labels     Labels
	Created    int64
	Updated    int64
}

const distCols = `d.id, d.pulp_id, d.type, d.name, d.base_path, d.repository_id,
	(SELECT r.pulp_id FROM repositories r WHERE r.id = d.repository_id), (SELECT r.type FROM repositories r WHERE r.id = d.repository_id),
	d.publication_id, (SELECT p.pulp_id FROM publications p WHERE p.id = d.publication_id), (SELECT p.type FROM publications p WHERE p.id = d.publication_id),
	d.repository_version_id, (SELECT r.pulp_id FROM repository_versions v JOIN repositories r ON r.id = v.repository_id WHERE v.id = d.repository_version_id),
	(SELECT r.type FROM repository_versions v JOIN repositories r ON r.id = v.repository_id WHERE v.id = d.repository_version_id),
	(SELECT v.number FROM repository_versions v WHERE v.id = d.repository_version_id),
	d.content_guard, (SELECT g.type FROM content_guards g WHERE g.pulp_id = d.content_guard), d.hidden, d.checkpoint, d.attrs, d.labels, d.created, d.updated`

func scanDist(r interface{ Scan(...any) error }) (Distribution, error) {
	var x Distribution
	var attrs, labels string
	err := r.Scan(&x.ID, &x.PulpID, &x.Type, &x.Name, &x.BasePath, &x.RepositoryID, &x.RepoPulpID, &x.RepoType,
		&x.PublicationID, &x.PubPulpID, &x.PubType, &x.VersionID, &x.VersionRepo, &x.VersionType, &x.VersionNumber, &x.ContentGuard, &x.GuardType, &x.Hidden, &x.Checkpoint, &attrs, &labels, &x.Created, &x.Updated)
	x.Attrs = json.RawMessage(attrs)
	x.Labels = parseLabels(labels)
	return x, err
}

// checkBasePath refuses a base path that nests inside another distribution's or contains
// one (Pulp's rule: a request path must resolve to exactly one distribution).
func checkBasePath(ctx context.Context, q Querier, id int64, basePath string) error {
	rows, err := q.Query(ctx, `SELECT base_path FROM distributions WHERE id <> ?`, id)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var other string
		if err := rows.Scan(&other); err != nil {
			return err
		}
		if other == basePath {
			return fmt.Errorf("base_path %q is already used by another distribution: %w", basePath, ErrConflict)
		}
		if strings.HasPrefix(basePath, other+"/") || strings.HasPrefix(other, basePath+"/") {
			return fmt.Errorf("base_path %q overlaps existing base_path %q: %w", basePath, other, ErrConflict)
		}
	}
	return rows.Err()
}

// CreateDistribution inserts a distribution.
func CreateDistribution(ctx context.Context, q Querier, x Distribution) (Distribution, error) {
	if err := checkBasePath(ctx, q, 0, x.BasePath); err != nil {
		return Distribution{}, err
	}
	now := Now()
	if x.PulpID == "" {
		x.PulpID = NewID()
	}
	var id int64
	err := q.QueryRow(ctx, `INSERT INTO distributions (pulp_id, type, name, base_path, repository_id, publication_id, repository_version_id, content_guard, hidden, checkpoint, attrs, labels, created, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		x.PulpID, x.Type, x.Name, x.BasePath, x.RepositoryID, x.PublicationID, x.VersionID, x.ContentGuard, x.Hidden, x.Checkpoint, rawText(x.Attrs), x.Labels.text(), now, now).Scan(&id)
	if err != nil {
		if IsUniqueViolation(err) {
			return Distribution{}, fmt.Errorf("distribution named %q: %w", x.Name, ErrConflict)
		}
		return Distribution{}, fmt.Errorf("insert distribution %q: %w", x.Name, err)
	}
	return DistributionByID(ctx, q, id)
}

// DistributionByID finds a distribution by key.
func DistributionByID(ctx context.Context, q Querier, id int64) (Distribution, error) {
	x, err := scanDist(q.QueryRow(ctx, "SELECT "+distCols+" FROM distributions d WHERE d.id = ?", id))
	return x, noRows(err, "distribution", fmt.Sprint(id))
}

// DistributionByPulpID finds a distribution by its href UUID.
func DistributionByPulpID(ctx context.Context, q Querier, id string) (Distribution, error) {
	x, err := scanDist(q.QueryRow(ctx, "SELECT "+distCols+" FROM distributions d WHERE d.pulp_id = ?", id))
	return x, noRows(err, "distribution", id)
}

// ListDistributions selects a page of distributions (alias d).
func ListDistributions(ctx context.Context, q Querier, l List) ([]Distribution, int64, error) {
	return Page(ctx, q, distCols, "distributions d", "d.name", l, func(r *sql.Rows) (Distribution, error) { return scanDist(r) })
}

// UpdateDistribution writes a distribution's fields. When the publication changes, the
// superseded one stays servable until graceUntil (µs) so clients mid-update don't 404.
func UpdateDistribution(ctx context.Context, q Querier, x Distribution, graceUntil int64) error {
	if err := checkBasePath(ctx, q, x.ID, x.BasePath); err != nil {
		return err
	}
	old, err := DistributionByID(ctx, q, x.ID)
	if err != nil {
		return err
	}
	if old.PublicationID != nil && (x.PublicationID == nil || *x.PublicationID != *old.PublicationID) {
		if _, err := q.Exec(ctx, `INSERT INTO distribution_history (distribution_id, publication_id, expires) VALUES (?, ?, ?)
			ON CONFLICT (distribution_id, publication_id) DO UPDATE SET expires = excluded.expires`, x.ID, *old.PublicationID, graceUntil); err != nil {
			return err
		}
	}
	_, err = q.Exec(ctx, `UPDATE distributions SET name = ?, base_path = ?, repository_id = ?, publication_id = ?, repository_version_id = ?, content_guard = ?, hidden = ?, checkpoint = ?, attrs = ?, labels = ?, updated = ? WHERE id = ?`,
		x.Name, x.BasePath, x.RepositoryID, x.PublicationID, x.VersionID, x.ContentGuard, x.Hidden, x.Checkpoint, rawText(x.Attrs), x.Labels.text(), Now(), x.ID)
	if IsUniqueViolation(err) {
		return fmt.Errorf("distribution named %q: %w", x.Name, ErrConflict)
	}
	return err
}

// DeleteDistribution deletes a distribution.
func DeleteDistribution(ctx context.Context, q Querier, id int64) error {
	if err := ForgetGrants(ctx, q, "distributions", "id = ?", id); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `DELETE FROM distributions WHERE id = ?`, id)
	return err
}

// SupersededPublications lists publications a distribution served before and that are
// still within their grace period at now, newest first.
func SupersededPublications(ctx context.Context, q Querier, distID, now int64) ([]int64, error) {
	rows, err := q.Query(ctx, `SELECT publication_id FROM distribution_history WHERE distribution_id = ? AND expires > ? ORDER BY publication_id DESC`, distID, now)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// LatestPublication finds the newest publication of a repository's latest version, for
// distributions that point at a repository.
func LatestPublication(ctx context.Context, q Querier, repoID int64) (*Publication, error) {
	p, err := scanPub(q.QueryRow(ctx, "SELECT "+pubCols+" FROM "+pubFrom+` WHERE p.repository_id = ?
		AND p.version_number = (SELECT max(number) FROM repository_versions WHERE repository_id = ?) ORDER BY p.id DESC LIMIT 1`, repoID, repoID))
	if err == sql.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// Serving is what a distribution serves right now: a publication, or a repository
// version, or nothing. Both are immutable, so what a path resolves to under a Serving
// never changes; the pulp IDs (never reused) make it a safe cache key across processes.
type Serving struct {
	PubID      int64 // 0: not a publication
	PubPulpID  string
	RepoID     int64 // with Number: a repository version
	RepoPulpID string
	Number     int64
	// Reclaimed is when reclaim_space last dropped files of the repository served (µs):
	// the one change to what a path resolves to that a publication or a version does not
	// name.
	Reclaimed int64
}

// DistributionServing returns what every distribution serves, by distribution ID, in
// one query: its publication; or, for one that follows a repository or names one of its
// versions, the newest publication of that version, else the version itself. A
// checkpoint distribution serves nothing under its base path itself (each checkpoint is
// served under its timestamp: CheckpointPublications); its Serving names only when its
// repository was reclaimed.
func DistributionServing(ctx context.Context, q Querier) (map[int64]Serving, error) {
	rows, err := q.Query(ctx, `SELECT x.id, x.checkpoint, x.pub_id, (SELECT p.pulp_id FROM publications p WHERE p.id = x.pub_id),
			x.repo_id, (SELECT r.pulp_id FROM repositories r WHERE r.id = x.repo_id), x.number,
			(SELECT r.reclaimed FROM repositories r WHERE r.id = COALESCE((SELECT p.repository_id FROM publications p WHERE p.id = x.pub_id), x.repo_id))
		FROM (SELECT y.id, y.checkpoint, y.repo_id, y.number,
				COALESCE(y.publication_id, (SELECT p.id FROM publications p WHERE p.repository_id = y.repo_id
					AND p.version_number = y.number ORDER BY p.id DESC LIMIT 1)) AS pub_id
			FROM (SELECT d.id, d.checkpoint, d.publication_id, COALESCE(fv.repository_id, d.repository_id) AS repo_id, COALESCE(fv.number, l.number) AS number
				FROM distributions d
				LEFT JOIN repository_versions fv ON fv.id = d.repository_version_id
				LEFT JOIN (SELECT repository_id, max(number) AS number FROM repository_versions GROUP BY repository_id) l
					ON l.repository_id = d.repository_id) y) x`)
	if err != nil {
		return nil, fmt.Errorf("what distributions serve: %w", err)
	}
	defer rows.Close()
	out := map[int64]Serving{}
	for rows.Next() {
		var id int64
		var checkpoint bool
		var pub, repo, number, reclaimed sql.NullInt64
		var pubPulp, repoPulp sql.NullString
		if err := rows.Scan(&id, &checkpoint, &pub, &pubPulp, &repo, &repoPulp, &number, &reclaimed); err != nil {
			return nil, err
		}
		s := Serving{Reclaimed: reclaimed.Int64}
		if checkpoint {
			out[id] = s
			continue
		}
		if pub.Valid {
			s.PubID, s.PubPulpID = pub.Int64, pubPulp.String
		} else if repo.Valid {
			s.RepoID, s.RepoPulpID, s.Number = repo.Int64, repoPulp.String, number.Int64
		}
		out[id] = s
	}
	return out, rows.Err()
}

// Checkpoint is a checkpoint publication as a checkpoint distribution serves it.
type Checkpoint struct {
	PubID     int64
	PubPulpID string
	Created   int64 // µs
}

// CheckpointPublications lists the checkpoint publications of every repository that a
// checkpoint distribution serves, by repository ID, oldest first.
func CheckpointPublications(ctx context.Context, q Querier) (map[int64][]Checkpoint, error) {
	rows, err := q.Query(ctx, `SELECT p.repository_id, p.id, p.pulp_id, p.created FROM publications p
		WHERE p.checkpoint AND p.repository_id IN (SELECT d.repository_id FROM distributions d WHERE d.checkpoint)
		ORDER BY p.repository_id, p.created, p.id`)
	if err != nil {
		return nil, fmt.Errorf("checkpoint publications: %w", err)
	}
	defer rows.Close()
	out := map[int64][]Checkpoint{}
	for rows.Next() {
		var repo int64
		var c Checkpoint
		if err := rows.Scan(&repo, &c.PubID, &c.PubPulpID, &c.Created); err != nil {
			return nil, err
		}
		out[repo] = append(out[repo], c)
	}
	return out, rows.Err()
}
