package meta

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Version is an immutable repository version.
type Version struct {
	ID           int64
	PulpID       string
	RepositoryID int64
	RepoPulpID   string
	RepoType     string
	Number       int64
	Base         *VersionRef // the version this one was made from, when one was named
	Summary      Summary
	Created      int64
	Updated      int64
}

// Summary counts units per type that a version added, removed and holds.
type Summary struct {
	Added   map[string]int64 `json:"added"`
	Removed map[string]int64 `json:"removed"`
	Present map[string]int64 `json:"present"`
}

// InVersion is the SQL condition that the membership row alias ("rc"; "" for the bare
// repository_content table) is in the version whose number is the SQL expression n: a
// unit is in version N when version_added <= N < version_removed. With n "?" the
// caller passes the number twice.
func InVersion(alias, n string) string {
	if alias != "" {
		alias += "."
	}
	return alias + "version_added <= " + n + " AND (" + alias + "version_removed IS NULL OR " + alias + "version_removed > " + n + ")"
}

// VersionRef names a version of any repository.
type VersionRef struct {
	RepoPulpID string
	RepoType   string
	Number     int64
}

const versionCols = `v.id, v.pulp_id, v.repository_id, r.pulp_id, r.type, v.number, bv.number, br.pulp_id, br.type, v.summary, v.created, v.updated`
const versionFrom = `repository_versions v JOIN repositories r ON r.id = v.repository_id
	LEFT JOIN repository_versions bv ON bv.id = v.base_version_id LEFT JOIN repositories br ON br.id = bv.repository_id`

func scanVersion(r interface{ Scan(...any) error }) (Version, error) {
	var v Version
	var summary string
	var baseNumber sql.NullInt64
	var baseRepo, baseType sql.NullString
	err := r.Scan(&v.ID, &v.PulpID, &v.RepositoryID, &v.RepoPulpID, &v.RepoType, &v.Number, &baseNumber, &baseRepo, &baseType, &summary, &v.Created, &v.Updated)
	if baseNumber.Valid {
		v.Base = &VersionRef{RepoPulpID: baseRepo.String, RepoType: baseType.String, Number: baseNumber.Int64}
	}
	_ = json.Unmarshal([]byte(summary), &v.Summary)
	return v, err
}

// VersionByNumber finds version n of a repository.
func VersionByNumber(ctx context.Context, q Querier, repoID, n int64) (Version, error) {
	v, err := scanVersion(q.QueryRow(ctx, "SELECT "+versionCols+" FROM "+versionFrom+" WHERE v.repository_id = ? AND v.number = ?", repoID, n))
	return v, noRows(err, "repository version", fmt.Sprint(n))
}

// VersionByID finds a version by key.
func VersionByID(ctx context.Context, q Querier, id int64) (Version, error) {
	v, err := scanVersion(q.QueryRow(ctx, "SELECT "+versionCols+" FROM "+versionFrom+" WHERE v.id = ?", id))
	return v, noRows(err, "repository version", fmt.Sprint(id))
}

// ListVersions selects a page of versions (aliases v and r).
func ListVersions(ctx context.Context, q Querier, l List) ([]Version, int64, error) {
	return Page(ctx, q, versionCols, versionFrom, "v.number DESC", l, func(rs *sql.Rows) (Version, error) { return scanVersion(rs) })
}

// Change describes a new version: units to add and remove, relative to the latest
// version or to version Base when set (of repository BaseRepository when that is not 0,
// else of the repository itself).
type Change struct {
	Base           *int64
	BaseRepository int64
	RemoveAll      bool
	Remove         []int64
	Add            []int64
	// Finalize, when set, runs once the change is applied, before the version is written,
	// if the change removed units: it may remove more units from the versions being made
	// (what depends on those removed: a content type's rule), with RemoveUnits. next maps
	// each repository to the number of its version being made, removed counts by
	// repository the units of each type the change removed. It reports whether it removed
	// anything.
	Finalize func(ctx context.Context, tx *Tx, next map[int64]int64, removed map[int64]map[string]int64) (bool, error)
}

// RemoveUnits removes units from version n of a repository while it is being made (a
// Change's Finalize).
func RemoveUnits(ctx context.Context, tx *Tx, repoID, n int64, ids []int64) error {
	return removeUnits(ctx, tx, repoID, n, ids)
}

// NewVersion writes a new version of a repository from the latest one and the change, in
// the caller's transaction. It returns created=false and the latest version when the
// change alters nothing (no empty versions are made). The caller usually holds the
// repository's exclusive task lock; the repository's row is locked for the transaction
// besides (the sub-repositories of a distribution tree are shared by the repositories
// that hold it), so version numbers cannot race.
func NewVersion(ctx context.Context, tx *Tx, repoID int64, ch Change) (Version, bool, error) {
	var next int64
	if err := tx.QueryRow(ctx, `UPDATE repositories SET next_version = next_version WHERE id = ? RETURNING next_version`, repoID).Scan(&next); err != nil {
		return Version{}, false, noRows(err, "repository", fmt.Sprint(repoID))
	}
	n := next
	var baseID *int64
	if ch.Base != nil {
		baseRepo := repoID
		if ch.BaseRepository != 0 {
			baseRepo = ch.BaseRepository
		}
		bv, err := VersionByNumber(ctx, tx, baseRepo, *ch.Base)
		if err != nil {
			return Version{}, false, fmt.Errorf("base version: %w", err)
		}
		baseID = &bv.ID
		// Units present now but not in the base go; units in the base but not now come back.
		if _, err := tx.Exec(ctx, `UPDATE repository_content SET version_removed = ? WHERE repository_id = ? AND version_removed IS NULL
			AND content_id NOT IN (SELECT content_id FROM repository_content WHERE repository_id = ? AND `+InVersion("", "?")+`)`,
			n, repoID, baseRepo, *ch.Base, *ch.Base); err != nil {
			return Version{}, false, err
		}
		rows, err := tx.Query(ctx, `SELECT content_id FROM repository_content WHERE repository_id = ? AND `+InVersion("", "?"), baseRepo, *ch.Base, *ch.Base)
		if err != nil {
			return Version{}, false, err
		}
		var ids []int64
		for rows.Next() {
			var id int64
			rows.Scan(&id)
			ids = append(ids, id)
		}
		rows.Close()
		if err := addUnits(ctx, tx, repoID, n, ids, false); err != nil {
			return Version{}, false, err
		}
	}
	if ch.RemoveAll {
		if _, err := tx.Exec(ctx, `DELETE FROM repository_content WHERE repository_id = ? AND version_added = ?`, repoID, n); err != nil {
			return Version{}, false, err
		}
		if _, err := tx.Exec(ctx, `UPDATE repository_content SET version_removed = ? WHERE repository_id = ? AND version_removed IS NULL`, n, repoID); err != nil {
			return Version{}, false, err
		}
	}
	if err := removeUnits(ctx, tx, repoID, n, ch.Remove); err != nil {
		return Version{}, false, err
	}
	if err := addUnits(ctx, tx, repoID, n, ch.Add, true); err != nil {
		return Version{}, false, err
	}
	added, err := countByType(ctx, tx, repoID, "rc.version_added = ?", n)
	if err != nil {
		return Version{}, false, err
	}
	removed, err := countByType(ctx, tx, repoID, "rc.version_removed = ?", n)
	if err != nil {
		return Version{}, false, err
	}
	if ch.Finalize != nil && len(removed) > 0 {
		more, err := ch.Finalize(ctx, tx, map[int64]int64{repoID: n}, map[int64]map[string]int64{repoID: removed})
		if err != nil {
			return Version{}, false, err
		}
		if more {
			if removed, err = countByType(ctx, tx, repoID, "rc.version_removed = ?", n); err != nil {
				return Version{}, false, err
			}
		}
	}
	if len(added) == 0 && len(removed) == 0 {
		var latest int64
		if err := tx.QueryRow(ctx, `SELECT max(number) FROM repository_versions WHERE repository_id = ?`, repoID).Scan(&latest); err != nil {
			return Version{}, false, err
		}
		v, err := VersionByNumber(ctx, tx, repoID, latest)
		return v, false, err
	}
	present, err := presentAfter(ctx, tx, repoID, n, added, removed)
	if err != nil {
		return Version{}, false, err
	}
	b, err := json.Marshal(Summary{Added: added, Removed: removed, Present: present})
	if err != nil {
		return Version{}, false, err
	}
	summary := string(b)
	now := Now()
	var id int64
	if err := tx.QueryRow(ctx, `INSERT INTO repository_versions (pulp_id, repository_id, number, base_version_id, summary, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		NewID(), repoID, n, baseID, summary, now, now).Scan(&id); err != nil {
		return Version{}, false, fmt.Errorf("insert version %d: %w", n, err)
	}
	if _, err := tx.Exec(ctx, `UPDATE repositories SET next_version = ?, updated = ? WHERE id = ?`, n+1, now, repoID); err != nil {
		return Version{}, false, err
	}
	v, err := VersionByID(ctx, tx, id)
	return v, true, err
}

const chunk = 500

func chunks(ids []int64, fn func([]int64) error) error {
	for len(ids) > 0 {
		k := min(chunk, len(ids))
		if err := fn(ids[:k]); err != nil {
			return err
		}
		ids = ids[k:]
	}
	return nil
}

func removeUnits(ctx context.Context, tx *Tx, repoID, n int64, ids []int64) error {
	return chunks(ids, func(part []int64) error {
		in, args := inList(part)
		// A unit added by this very version is simply dropped.
		if _, err := tx.Exec(ctx, `DELETE FROM repository_content WHERE repository_id = ? AND version_added = ? AND content_id IN `+in, append([]any{repoID, n}, args...)...); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE repository_content SET version_removed = ? WHERE repository_id = ? AND version_removed IS NULL AND content_id IN `+in,
			append([]any{n, repoID}, args...)...)
		return err
	})
}

// addUnits adds units not already present. With replace, present units that share a
// repo key with an added unit are removed (a newer unit replaces an older one).
func addUnits(ctx context.Context, tx *Tx, repoID, n int64, ids []int64, replace bool) error {
	return chunks(ids, func(part []int64) error {
		in, args := inList(part)
		if replace {
			// The units that share a repo key with an added one, found from the added ones:
			// a statement driven by the membership rows filtered every present row of the
			// repository against the whole list (PostgreSQL chose that while its statistics
			// still saw an empty table, 0.3-0.6 s per 500 units of a 20,000-package sync).
			var others []int64
			err := scanRows(ctx, tx, `SELECT o.id FROM contents a JOIN contents o ON o.type = a.type AND o.repo_key = a.repo_key
				WHERE a.id IN `+in+` AND o.id <> a.id`, args, func(r *sql.Rows) error {
				var id int64
				err := r.Scan(&id)
				if !slices.Contains(part, id) {
					others = append(others, id)
				}
				return err
			})
			if err != nil {
				return err
			}
			err = chunks(others, func(others []int64) error {
				list, ids := inList(others)
				_, err := tx.Exec(ctx, `UPDATE repository_content SET version_removed = ? WHERE repository_id = ? AND version_removed IS NULL AND content_id IN `+list,
					append([]any{n, repoID}, ids...)...)
				return err
			})
			if err != nil {
				return err
			}
		}
		// Un-remove units this version had removed.
		if _, err := tx.Exec(ctx, `UPDATE repository_content SET version_removed = NULL WHERE repository_id = ? AND version_removed = ? AND content_id IN `+in,
			append([]any{repoID, n}, args...)...); err != nil {
			return err
		}
		// Those not present, each looked up in the membership index. The ids are a VALUES
		// list crossed with the membership (CROSS JOIN: SQLite keeps the list outside):
		// with "content_id IN (…)" or a NOT EXISTS, PostgreSQL compared every present row
		// of the repository with the whole list while its statistics still saw an empty
		// table (0.3 s per 500 units late in a 20,000-package sync), and SQLite did so
		// with the list joined the other way round. Its text carries the ids, so it is not
		// kept prepared.
		present := map[int64]bool{}
		err := scanRows(ctx, unkept{tx}, `WITH v (id) AS (VALUES `+idValues(part)+`) SELECT rc.content_id FROM v CROSS JOIN repository_content rc
			WHERE rc.repository_id = ? AND rc.content_id = v.id AND rc.version_removed IS NULL`, []any{repoID}, func(r *sql.Rows) error {
			var id int64
			err := r.Scan(&id)
			present[id] = true
			return err
		})
		if err != nil || len(present) == len(part) {
			return err
		}
		var absent []int64
		for _, id := range part {
			if !present[id] {
				absent = append(absent, id)
			}
		}
		if len(absent) == 0 {
			return nil // every id was present (some given twice)
		}
		in, args = inList(absent)
		_, err = tx.Exec(ctx, `INSERT INTO repository_content (repository_id, content_id, version_added)
			SELECT ?, c.id, ? FROM contents c WHERE c.id IN `+in+` ON CONFLICT DO NOTHING`, append([]any{repoID, n}, args...)...)
		return err
	})
}

// countByType counts a repository's membership rows matching cond per unit type.
func countByType(ctx context.Context, q Querier, repoID int64, cond string, args ...any) (map[string]int64, error) {
	rows, err := q.Query(ctx, `SELECT c.type, count(*) FROM repository_content rc JOIN contents c ON c.id = rc.content_id
		WHERE rc.repository_id = ? AND `+cond+` GROUP BY c.type`, append([]any{repoID}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("summarize repository %d: %w", repoID, err)
	}
	defer rows.Close()
	m := map[string]int64{}
	for rows.Next() {
		var t string
		var k int64
		if err := rows.Scan(&t, &k); err != nil {
			return nil, err
		}
		m[t] = k
	}
	return m, rows.Err()
}

// presentAfter is what version n holds per type: the latest version's present counts
// plus what n added minus what it removed. Counting the repository's whole content
// instead costs O(repository size) per version, which dominates promotions into many
// large repositories. Without a stored summary (version 0, or rows written before
// summaries existed) it counts.
func presentAfter(ctx context.Context, tx *Tx, repoID, n int64, added, removed map[string]int64) (map[string]int64, error) {
	var prev string
	err := tx.QueryRow(ctx, `SELECT summary FROM repository_versions WHERE repository_id = ? AND number < ? ORDER BY number DESC LIMIT 1`, repoID, n).Scan(&prev)
	if err != nil && err != sql.ErrNoRows {
		return nil, err
	}
	var s Summary
	if err != nil || json.Unmarshal([]byte(prev), &s) != nil || s.Present == nil {
		return countByType(ctx, tx, repoID, presentCond, n, n)
	}
	present := make(map[string]int64, len(s.Present))
	for t, k := range s.Present {
		present[t] = k
	}
	for t, k := range added {
		present[t] += k
	}
	for t, k := range removed {
		present[t] -= k
	}
	for t, k := range present {
		if k <= 0 {
			// A full count has no entry for a type the version does not hold.
			delete(present, t)
		}
	}
	return present, nil
}

// presentCond selects the rows present in version n (bound twice).
var presentCond = InVersion("rc", "?")

// summarize counts version n's summary in full.
func summarize(ctx context.Context, q Querier, repoID, n int64) (string, error) {
	var s Summary
	var err error
	if s.Present, err = countByType(ctx, q, repoID, presentCond, n, n); err != nil {
		return "", err
	}
	if s.Added, err = countByType(ctx, q, repoID, "rc.version_added = ?", n); err != nil {
		return "", err
	}
	if s.Removed, err = countByType(ctx, q, repoID, "rc.version_removed = ?", n); err != nil {
		return "", err
	}
	b, err := json.Marshal(s)
	return string(b), err
}

// DeleteVersion deletes a version, folding its changes into the next existing version
// so that every other version keeps exactly its content. A repository's only version
// stays: a repository always has one.
func DeleteVersion(ctx context.Context, tx *Tx, v Version) error {
	repo, n := v.RepositoryID, v.Number
	var count int64
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM repository_versions WHERE repository_id = ?`, repo).Scan(&count); err != nil {
		return err
	}
	if count <= 1 {
		return fmt.Errorf("version %d is the repository's only version: %w", n, ErrInUse)
	}
	var next sql.NullInt64
	if err := tx.QueryRow(ctx, `SELECT min(number) FROM repository_versions WHERE repository_id = ? AND number > ?`, repo, n).Scan(&next); err != nil {
		return err
	}
	if !next.Valid {
		// The latest version: undo its changes.
		if _, err := tx.Exec(ctx, `DELETE FROM repository_content WHERE repository_id = ? AND version_added = ?`, repo, n); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE repository_content SET version_removed = NULL WHERE repository_id = ? AND version_removed = ?`, repo, n); err != nil {
			return err
		}
	} else {
		m := next.Int64
		// Added in n and removed by m: never visible in a surviving version.
		if _, err := tx.Exec(ctx, `DELETE FROM repository_content WHERE repository_id = ? AND version_added = ? AND version_removed = ?`, repo, n, m); err != nil {
			return err
		}
		// Removed in n and re-added in m: one range that ends where the re-added one ends.
		if _, err := tx.Exec(ctx, `UPDATE repository_content SET version_removed = (SELECT r2.version_removed FROM repository_content r2
			WHERE r2.repository_id = repository_content.repository_id AND r2.content_id = repository_content.content_id AND r2.version_added = ?)
			WHERE repository_id = ? AND version_removed = ? AND content_id IN (SELECT content_id FROM repository_content WHERE repository_id = ? AND version_added = ?)`,
			m, repo, n, repo, m); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM repository_content WHERE repository_id = ? AND version_added = ?
			AND content_id IN (SELECT content_id FROM repository_content WHERE repository_id = ? AND version_added < ? AND (version_removed IS NULL OR version_removed > ?))`,
			repo, m, repo, m, m); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE repository_content SET version_added = ? WHERE repository_id = ? AND version_added = ?`, m, repo, n); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE repository_content SET version_removed = ? WHERE repository_id = ? AND version_removed = ?`, m, repo, n); err != nil {
			return err
		}
		summary, err := summarize(ctx, tx, repo, m)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE repository_versions SET summary = ?, updated = ? WHERE repository_id = ? AND number = ?`, summary, Now(), repo, m); err != nil {
			return err
		}
	}
	_, err := tx.Exec(ctx, `DELETE FROM publications WHERE repository_id = ? AND version_number = ?`, repo, n)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `DELETE FROM repository_versions WHERE id = ?`, v.ID)
	return err
}

// VersionContentIDs lists the units in version n, only those of the given types when
// types are given.
func VersionContentIDs(ctx context.Context, q Querier, repoID, n int64, types ...string) ([]int64, error) {
	query := `SELECT content_id FROM repository_content WHERE repository_id = ? AND ` + InVersion("", "?")
	args := []any{repoID, n, n}
	if len(types) > 0 {
		query += ` AND content_id IN (SELECT id FROM contents WHERE type IN (` + strings.TrimSuffix(strings.Repeat("?,", len(types)), ",") + `))`
		for _, t := range types {
			args = append(args, t)
		}
	}
	rows, err := q.Query(ctx, query+` ORDER BY content_id`, args...)
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

// ProtectedVersions are the numbers of a repository's versions that are served, which
// retention keeps: what distributions of the repository serve (its latest version, or
// that version's newest publication), the versions distributions name, the versions of
// publications distributions name, those of superseded publications still in their
// grace period (at now), and, while a checkpoint distribution of the repository exists,
// those of its checkpoint publications (as Pulp: without one, checkpoints are not
// served, and a checkpoint distribution alone does not protect the latest version).
func ProtectedVersions(ctx context.Context, q Querier, repoID, now int64) (map[int64]bool, error) {
	rows, err := q.Query(ctx, `SELECT max(v.number) FROM repository_versions v WHERE v.repository_id = ?
			AND EXISTS (SELECT 1 FROM distributions d WHERE d.repository_id = ? AND NOT d.checkpoint)
		UNION SELECT v.number FROM repository_versions v WHERE v.repository_id = ?
			AND v.id IN (SELECT d.repository_version_id FROM distributions d)
		UNION SELECT p.version_number FROM publications p WHERE p.repository_id = ?
			AND (p.id IN (SELECT d.publication_id FROM distributions d)
				OR p.id IN (SELECT h.publication_id FROM distribution_history h WHERE h.expires > ?)
				OR p.checkpoint AND EXISTS (SELECT 1 FROM distributions d WHERE d.repository_id = p.repository_id AND d.checkpoint))`,
		repoID, repoID, repoID, repoID, now)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var n sql.NullInt64
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		if n.Valid {
			out[n.Int64] = true
		}
	}
	return out, rows.Err()
}

// Overwrite is a unit that adding another would replace: a unit of the same type and
// repo key in a version.
type Overwrite struct {
	Type             string
	Incoming, Exists string // pulp IDs
}

// Overwrites lists the units of version n of a repository that adding the units add
// would replace (same type and repo key, another unit), leaving out the units in
// remove: what Pulp's overwrite=false refuses.
func Overwrites(ctx context.Context, q Querier, repoID, n int64, add, remove []int64) ([]Overwrite, error) {
	var out []Overwrite
	skip := map[int64]bool{}
	for _, id := range remove {
		skip[id] = true
	}
	err := chunks(add, func(part []int64) error {
		in, args := inList(part)
		rows, err := q.Query(ctx, `SELECT a.type, a.pulp_id, e.pulp_id, e.id FROM contents a
			JOIN contents e ON e.type = a.type AND e.repo_key = a.repo_key AND e.id <> a.id
			JOIN repository_content rc ON rc.content_id = e.id AND rc.repository_id = ? AND `+InVersion("rc", "?")+`
			WHERE a.id IN `+in+` ORDER BY a.id, e.id`, append([]any{repoID, n, n}, args...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var o Overwrite
			var id int64
			if err := rows.Scan(&o.Type, &o.Incoming, &o.Exists, &id); err != nil {
				return err
			}
			if !skip[id] {
				out = append(out, o)
			}
		}
		return rows.Err()
	})
	return out, err
}
