package meta

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Queries of export and import (Pulp's format; package content/port).

// versionsCond is the condition that membership row alias is in one of the versions.
func versionsCond(alias string, vs []VersionKey) (string, []any) {
	if len(vs) == 0 {
		return "1 = 0", nil
	}
	parts := make([]string, len(vs))
	var args []any
	for i, v := range vs {
		parts[i] = "(" + alias + ".repository_id = ? AND " + InVersion(alias, "?") + ")"
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
		query += " AND c.type IN " + Placeholders(len(types))
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
	cond, args := versionsCond("rc", vs)
	var path string
	err := q.QueryRow(ctx, `SELECT ca.relative_path FROM repository_content rc JOIN content_artifacts ca ON ca.content_id = rc.content_id
		WHERE `+cond+` AND ca.artifact_id IS NULL LIMIT 1`, args...).Scan(&path)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return path, err
}

// ExportCursor is where a page of ExportArtifacts ended: the index of the version in
// its list, and the unit and file path last read in it. The zero cursor is the start;
// Version at the list's length is the end.
type ExportCursor struct {
	Version int
	Content int64
	Path    string
}

// ExportArtifacts is the page after at of the artifacts of the units of versions, each
// artifact once, that the units of base do not have (all of them for no base). A page
// reads one version's files in the order of its membership index and keeps an
// artifact at its first holder in that order (an earlier version of the list, an
// earlier unit, an earlier path of the unit): one seek of the artifact's holders per
// file, so an export reads its artifacts in one pass, and holds no set of them. It
// returns the cursor of the next page; a page shorter than limit, even empty, is not
// the end until the cursor's Version reaches len(versions).
func ExportArtifacts(ctx context.Context, q Querier, versions, base []VersionKey, at ExportCursor, limit int) ([]Artifact, ExportCursor, error) {
	if at.Version >= len(versions) {
		return nil, at, nil
	}
	query, args := exportArtifactsQuery(versions, base, at, limit)
	var out []Artifact
	next := at
	err := scanRows(ctx, q, query, args, func(r *sql.Rows) error {
		a, err := scanArtifact(r, &next.Content, &next.Path)
		out = append(out, a)
		return err
	})
	if err != nil {
		return nil, at, fmt.Errorf("artifacts to export: %w", err)
	}
	if len(out) < limit {
		next = ExportCursor{Version: at.Version + 1}
	}
	return out, next, nil
}

// exportArtifactsQuery is ExportArtifacts' query of the page after at.
func exportArtifactsQuery(versions, base []VersionKey, at ExportCursor, limit int) (string, []any) {
	v := versions[at.Version]
	// An earlier holder of the file's artifact: a file of this version's units before
	// this one, or any file of a unit of the versions before this one in the list or of
	// the base versions. Each is sought from the artifact's files (content_artifacts by
	// artifact_id, usually the file itself), and its unit's membership by primary key.
	member := func(alias string, vs []VersionKey) (string, []any) {
		cond, args := versionsCond(alias, vs)
		return "EXISTS (SELECT 1 FROM repository_content " + alias + " WHERE " + alias + ".content_id = ca2.content_id AND " + cond + ")", args
	}
	earlier, args := member("rc2", versions[at.Version:at.Version+1])
	earlier = "((ca2.content_id < rc.content_id OR (ca2.content_id = rc.content_id AND ca2.relative_path < ca.relative_path)) AND " + earlier + ")"
	if others := append(append([]VersionKey{}, versions[:at.Version]...), base...); len(others) > 0 {
		cond, more := member("rc3", others)
		earlier += " OR " + cond
		args = append(args, more...)
	}
	query := `SELECT ` + artifactCols + `, rc.content_id, ca.relative_path FROM repository_content rc
		JOIN content_artifacts ca ON ca.content_id = rc.content_id JOIN artifacts a ON a.id = ca.artifact_id
		WHERE rc.repository_id = ? AND ` + InVersion("rc", "?") + ` AND rc.content_id >= ? AND (rc.content_id > ? OR ca.relative_path > ?)
		AND NOT EXISTS (SELECT 1 FROM content_artifacts ca2 WHERE ca2.artifact_id = ca.artifact_id AND (` + earlier + `))
		ORDER BY rc.content_id, ca.relative_path LIMIT ?`
	args = append([]any{v.RepositoryID, v.Number, v.Number, at.Content, at.Content, at.Path}, args...)
	return query, append(args, limit)
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
