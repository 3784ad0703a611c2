package meta

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Queries of export and import (Pulp's format; package content/port).

// versionsCond is the condition that membership row rc is in one of the versions.
func versionsCond(vs []VersionKey) (string, []any) {
	if len(vs) == 0 {
		return "1 = 0", nil
	}
	parts := make([]string, len(vs))
	var args []any
	for i, v := range vs {
		parts[i] = "(rc.repository_id = ? AND " + InVersion("rc", "?") + ")"
		args = append(args, v.RepositoryID, v.Number, v.Number)
	}
	return "(" + strings.Join(parts, " OR ") + ")", args
}

// VersionUnits is a page of a version's units of the given types (all when none), by
// id after after.
func VersionUnits(ctx context.Context, q Querier, v VersionKey, after int64, limit int, types ...string) ([]Content, error) {
	// Paged by the membership's content_id, which its index holds: by c.id, SQLite sorts
	// every remaining unit again for each page.
	where, args := versionPage(v, after)
	query := "SELECT " + contentCols + " FROM repository_content rc JOIN contents c ON c.id = rc.content_id WHERE " + where
	if len(types) > 0 {
		query += " AND c.type IN " + placeholders(len(types))
		for _, t := range types {
			args = append(args, t)
		}
	}
	var out []Content
	err := scanRows(ctx, q, query+" ORDER BY rc.content_id LIMIT ?", append(args, limit), func(r *sql.Rows) error {
		c, err := scanContent(r)
		out = append(out, c)
		return err
	})
	return out, err
}

// versionPage is the condition of a version's memberships after a unit id, which a
// page reads in the order of rc.content_id.
func versionPage(v VersionKey, after int64) (string, []any) {
	return "rc.repository_id = ? AND " + InVersion("rc", "?") + " AND rc.content_id > ?", []any{v.RepositoryID, v.Number, v.Number, after}
}

// VersionUnitIDs is VersionUnits' page of every type, the ids only.
func VersionUnitIDs(ctx context.Context, q Querier, v VersionKey, after int64, limit int) ([]int64, error) {
	var out []int64
	where, args := versionPage(v, after)
	err := scanRows(ctx, q, "SELECT rc.content_id FROM repository_content rc WHERE "+where+" ORDER BY rc.content_id LIMIT ?", append(args, limit),
		func(r *sql.Rows) error {
			var id int64
			err := r.Scan(&id)
			out = append(out, id)
			return err
		})
	return out, err
}

// UnstoredFile names a unit file of the versions that has no artifact (synced on
// demand and not fetched), or is "" when every file is stored.
func UnstoredFile(ctx context.Context, q Querier, vs []VersionKey) (string, error) {
	cond, args := versionsCond(vs)
	var path string
	err := q.QueryRow(ctx, `SELECT ca.relative_path FROM repository_content rc JOIN content_artifacts ca ON ca.content_id = rc.content_id
		WHERE `+cond+` AND ca.artifact_id IS NULL LIMIT 1`, args...).Scan(&path)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return path, err
}

// ExportArtifacts is a page, by id after after, of the artifacts of the units of
// versions that the units of base do not have (all of them for no base).
func ExportArtifacts(ctx context.Context, q Querier, versions, base []VersionKey, after int64, limit int) ([]Artifact, error) {
	cond, args := versionsCond(versions)
	query := `SELECT ` + artifactCols + ` FROM artifacts a WHERE a.id > ? AND a.id IN (SELECT ca.artifact_id FROM repository_content rc
		JOIN content_artifacts ca ON ca.content_id = rc.content_id WHERE ` + cond + `)`
	args = append([]any{after}, args...)
	if len(base) > 0 {
		bcond, bargs := versionsCond(base)
		query += ` AND a.id NOT IN (SELECT ca.artifact_id FROM repository_content rc JOIN content_artifacts ca ON ca.content_id = rc.content_id
			WHERE ca.artifact_id IS NOT NULL AND ` + bcond + `)`
		args = append(args, bargs...)
	}
	var out []Artifact
	err := scanRows(ctx, q, query+` ORDER BY a.id LIMIT ?`, append(args, limit), func(r *sql.Rows) error {
		a, err := scanArtifact(r)
		out = append(out, a)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("artifacts to export: %w", err)
	}
	return out, nil
}

// PortFile is one file of a unit as an export lists it (Pulp's ContentArtifact): the
// unit's pulp_id, the file's path and its artifact's sha256 ("" for none).
type PortFile struct {
	ContentPulpID string
	RelativePath  string
	SHA256        string
}

// PortFiles lists the files of units, by unit pulp_id and then path (Pulp's order).
func PortFiles(ctx context.Context, q Querier, contentIDs []int64) ([]PortFile, error) {
	var out []PortFile
	err := chunks(contentIDs, func(part []int64) error {
		in, args := inList(part)
		return scanRows(ctx, q, `SELECT c.pulp_id, ca.relative_path, a.sha256 FROM content_artifacts ca JOIN contents c ON c.id = ca.content_id
			LEFT JOIN artifacts a ON a.id = ca.artifact_id WHERE ca.content_id IN `+in+` ORDER BY c.pulp_id, ca.relative_path`, args,
			func(r *sql.Rows) error {
				var f PortFile
				var sum sql.NullString
				if err := r.Scan(&f.ContentPulpID, &f.RelativePath, &sum); err != nil {
					return err
				}
				f.SHA256 = sum.String
				out = append(out, f)
				return nil
			})
	})
	return out, err
}
