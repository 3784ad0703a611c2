package meta

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// ACS is an alternate content source: a remote and the sub-paths of its URL a sync may
// take artifacts from before its own remote. No paths means the remote's URL itself.
type ACS struct {
	ID            int64
	PulpID        string
	Type          string
	Name          string
	RemoteID      int64
	RemoteType    string // read only: the remote's type and pulp_id, for its href
	RemotePulpID  string
	Paths         []string
	LastRefreshed *int64
	Created       int64
	Updated       int64
}

const (
	acsCols = "a.id, a.pulp_id, a.type, a.name, a.remote_id, m.type, m.pulp_id, a.paths, a.last_refreshed, a.created, a.updated"
	acsFrom = "acs a JOIN remotes m ON m.id = a.remote_id"
)

func scanACS(r interface{ Scan(...any) error }) (ACS, error) {
	var x ACS
	var paths string
	if err := r.Scan(&x.ID, &x.PulpID, &x.Type, &x.Name, &x.RemoteID, &x.RemoteType, &x.RemotePulpID, &paths, &x.LastRefreshed, &x.Created, &x.Updated); err != nil {
		return x, err
	}
	if err := json.Unmarshal([]byte(paths), &x.Paths); err != nil {
		return x, fmt.Errorf("alternate content source %q: paths: %w", x.Name, err)
	}
	return x, nil
}

func pathsText(paths []string) string {
	if paths == nil {
		paths = []string{}
	}
	b, _ := json.Marshal(paths)
	return string(b)
}

// CreateACS inserts an alternate content source.
func CreateACS(ctx context.Context, q Querier, x ACS) (ACS, error) {
	now := Now()
	if x.PulpID == "" {
		x.PulpID = NewID()
	}
	var id int64
	err := q.QueryRow(ctx, `INSERT INTO acs (pulp_id, type, name, remote_id, paths, last_refreshed, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		x.PulpID, x.Type, x.Name, x.RemoteID, pathsText(x.Paths), x.LastRefreshed, now, now).Scan(&id)
	if IsUniqueViolation(err) {
		return ACS{}, fmt.Errorf("alternate content source named %q: %w", x.Name, ErrConflict)
	}
	if err != nil {
		return ACS{}, fmt.Errorf("insert alternate content source %q: %w", x.Name, err)
	}
	return ACSByID(ctx, q, id)
}

// ACSByID finds an alternate content source by key.
func ACSByID(ctx context.Context, q Querier, id int64) (ACS, error) {
	x, err := scanACS(q.QueryRow(ctx, "SELECT "+acsCols+" FROM "+acsFrom+" WHERE a.id = ?", id))
	return x, noRows(err, "alternate content source", fmt.Sprint(id))
}

// ACSByPulpID finds an alternate content source by its href UUID.
func ACSByPulpID(ctx context.Context, q Querier, id string) (ACS, error) {
	x, err := scanACS(q.QueryRow(ctx, "SELECT "+acsCols+" FROM "+acsFrom+" WHERE a.pulp_id = ?", id))
	return x, noRows(err, "alternate content source", id)
}

// ListACS selects a page of alternate content sources (alias a).
func ListACS(ctx context.Context, q Querier, l List) ([]ACS, int64, error) {
	return Page(ctx, q, acsCols, acsFrom, "a.name", l, func(r *sql.Rows) (ACS, error) { return scanACS(r) })
}

// UpdateACS writes an alternate content source's fields. What refreshes learned of
// paths it no longer has, or of all its paths when its remote changed, is forgotten.
func UpdateACS(ctx context.Context, q Querier, x ACS) error {
	cur, err := ACSByID(ctx, q, x.ID)
	if err != nil {
		return err
	}
	_, err = q.Exec(ctx, `UPDATE acs SET name = ?, remote_id = ?, paths = ?, last_refreshed = ?, updated = ? WHERE id = ?`,
		x.Name, x.RemoteID, pathsText(x.Paths), x.LastRefreshed, Now(), x.ID)
	if IsUniqueViolation(err) {
		return fmt.Errorf("alternate content source named %q: %w", x.Name, ErrConflict)
	}
	if err != nil {
		return err
	}
	if cur.RemoteID != x.RemoteID {
		_, err = q.Exec(ctx, `DELETE FROM acs_artifacts WHERE acs_id = ?`, x.ID)
		return err
	}
	for _, p := range cur.Paths {
		if !slices.Contains(x.Paths, p) {
			if _, err := q.Exec(ctx, `DELETE FROM acs_artifacts WHERE acs_id = ? AND path = ?`, x.ID, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// DeleteACS deletes an alternate content source and what its refreshes learned.
func DeleteACS(ctx context.Context, q Querier, id int64) error {
	if err := ForgetGrants(ctx, q, "acs", "id = ?", id); err != nil {
		return err
	}
	if _, err := q.Exec(ctx, `DELETE FROM acs_artifacts WHERE acs_id = ?`, id); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `DELETE FROM acs WHERE id = ?`, id)
	return err
}

// ACSFile is a file an alternate content source can give.
type ACSFile struct {
	SHA256 string
	Size   int64
	URL    string
}

// acsRows bounds the rows of one insert statement (4 arguments each).
const acsRows = 200

// SetACSFiles replaces what is known of one path of an alternate content source with
// files, and records when (last_refreshed).
func SetACSFiles(ctx context.Context, q Querier, acsID int64, path string, files []ACSFile) error {
	if _, err := q.Exec(ctx, `DELETE FROM acs_artifacts WHERE acs_id = ? AND path = ?`, acsID, path); err != nil {
		return fmt.Errorf("forget the files of alternate content source path %q: %w", path, err)
	}
	seen := make(map[string]bool, len(files))
	var b strings.Builder
	var args []any
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		_, err := q.Exec(ctx, `INSERT INTO acs_artifacts (acs_id, path, sha256, size, url) VALUES `+b.String(), args...)
		b.Reset()
		args = args[:0]
		return err
	}
	for _, f := range files {
		if seen[f.SHA256] {
			continue // one URL per checksum is enough
		}
		seen[f.SHA256] = true
		if len(args) > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?)")
		args = append(args, acsID, path, f.SHA256, f.Size, f.URL)
		if len(args) == 5*acsRows {
			if err := flush(); err != nil {
				return fmt.Errorf("record the files of alternate content source path %q: %w", path, err)
			}
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("record the files of alternate content source path %q: %w", path, err)
	}
	_, err := q.Exec(ctx, `UPDATE acs SET last_refreshed = ? WHERE id = ?`, Now(), acsID)
	return err
}

// ACSSource is where an alternate content source gives a file.
type ACSSource struct {
	ACSName  string
	RemoteID int64
	URL      string
	Size     int64
}

// AnyACS reports whether any alternate content source has files, so that a sync skips
// the lookups when none does.
func AnyACS(ctx context.Context, q Querier) (bool, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM acs_artifacts LIMIT 1) x`).Scan(&n)
	return n > 0, err
}

// ACSSources finds the alternate content sources of files by sha256 (every type's, as
// Pulp consults every ACS of its domain), in a stable order.
func ACSSources(ctx context.Context, q Querier, sha256s []string) (map[string][]ACSSource, error) {
	out := map[string][]ACSSource{}
	for len(sha256s) > 0 {
		part := sha256s[:min(len(sha256s), 500)]
		sha256s = sha256s[len(part):]
		args := make([]any, len(part))
		for i, s := range part {
			args[i] = s
		}
		err := scanRows(ctx, q, `SELECT f.sha256, a.name, a.remote_id, f.url, f.size FROM acs_artifacts f JOIN acs a ON a.id = f.acs_id
			WHERE f.sha256 IN (?`+strings.Repeat(", ?", len(part)-1)+`) ORDER BY a.name, f.path`, args, func(r *sql.Rows) error {
			var sum string
			var s ACSSource
			if err := r.Scan(&sum, &s.ACSName, &s.RemoteID, &s.URL, &s.Size); err != nil {
				return err
			}
			out[sum] = append(out[sum], s)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("look up alternate content sources: %w", err)
		}
	}
	return out, nil
}

// ACSOfRemote is the name of an alternate content source that uses a remote ("" for
// none): such a remote cannot be deleted (Pulp protects it too).
func ACSOfRemote(ctx context.Context, q Querier, remoteID int64) (string, error) {
	var name string
	err := q.QueryRow(ctx, `SELECT name FROM acs WHERE remote_id = ? ORDER BY name LIMIT 1`, remoteID).Scan(&name)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return name, err
}
