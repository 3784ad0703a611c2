package meta

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// UpstreamPulp is a Pulp (or a pith) a replica copies distributions from. Its settings
// by Pulp's field names are in Attrs; its secrets (username, password, client_key:
// secretNames) are plaintext there and sealed in the database, as a remote's are.
type UpstreamPulp struct {
	ID      int64
	PulpID  string
	Name    string
	BaseURL string
	Attrs   json.RawMessage
	// LastReplication is when the last successful replication started (µs); nil for
	// never.
	LastReplication *int64
	Created         int64
	Updated         int64
}

const upstreamCols = "u.id, u.pulp_id, u.name, u.base_url, u.attrs, u.last_replication, u.created, u.updated"

func scanUpstream(q Querier, r interface{ Scan(...any) error }) (UpstreamPulp, error) {
	var x UpstreamPulp
	var attrs string
	var last sql.NullInt64
	if err := r.Scan(&x.ID, &x.PulpID, &x.Name, &x.BaseURL, &attrs, &last, &x.Created, &x.Updated); err != nil {
		return x, err
	}
	if last.Valid {
		x.LastReplication = &last.Int64
	}
	var err error
	if x.Attrs, err = OpenSecrets(q, json.RawMessage(attrs)); err != nil {
		return x, fmt.Errorf("upstream pulp %q: %w", x.Name, err)
	}
	return x, nil
}

// CreateUpstream inserts an upstream Pulp; a taken name is ErrConflict.
func CreateUpstream(ctx context.Context, q Querier, x UpstreamPulp) (UpstreamPulp, error) {
	now := Now()
	if x.PulpID == "" {
		x.PulpID = NewID()
	}
	attrs, err := SealSecrets(q, x.Attrs)
	if err != nil {
		return UpstreamPulp{}, fmt.Errorf("upstream pulp %q: %w", x.Name, err)
	}
	var id int64
	err = q.QueryRow(ctx, `INSERT INTO upstream_pulps (pulp_id, name, base_url, attrs, created, updated) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
		x.PulpID, x.Name, x.BaseURL, rawText(attrs), now, now).Scan(&id)
	if IsUniqueViolation(err) {
		return UpstreamPulp{}, fmt.Errorf("upstream pulp named %q: %w", x.Name, ErrConflict)
	}
	if err != nil {
		return UpstreamPulp{}, fmt.Errorf("insert upstream pulp %q: %w", x.Name, err)
	}
	x, err = scanUpstream(q, q.QueryRow(ctx, "SELECT "+upstreamCols+" FROM upstream_pulps u WHERE u.id = ?", id))
	return x, noRows(err, "upstream pulp", fmt.Sprint(id))
}

// UpstreamByPulpID finds an upstream Pulp by its href UUID.
func UpstreamByPulpID(ctx context.Context, q Querier, id string) (UpstreamPulp, error) {
	x, err := scanUpstream(q, q.QueryRow(ctx, "SELECT "+upstreamCols+" FROM upstream_pulps u WHERE u.pulp_id = ?", id))
	return x, noRows(err, "upstream pulp", id)
}

// ListUpstreams selects a page of upstream Pulps (alias u), newest first by default.
func ListUpstreams(ctx context.Context, q Querier, l List) ([]UpstreamPulp, int64, error) {
	return Page(ctx, q, upstreamCols, "upstream_pulps u", "u.created DESC, u.id DESC", l, func(r *sql.Rows) (UpstreamPulp, error) { return scanUpstream(q, r) })
}

// UpdateUpstream writes an upstream Pulp's name, base URL and settings.
func UpdateUpstream(ctx context.Context, q Querier, x UpstreamPulp) error {
	attrs, err := SealSecrets(q, x.Attrs)
	if err != nil {
		return fmt.Errorf("upstream pulp %q: %w", x.Name, err)
	}
	_, err = q.Exec(ctx, `UPDATE upstream_pulps SET name = ?, base_url = ?, attrs = ?, updated = ? WHERE id = ?`,
		x.Name, x.BaseURL, rawText(attrs), Now(), x.ID)
	if IsUniqueViolation(err) {
		return fmt.Errorf("upstream pulp named %q: %w", x.Name, ErrConflict)
	}
	return err
}

// SetLastReplication records when an upstream Pulp's last successful replication
// started; pulp_last_updated stays, as in Pulp.
func SetLastReplication(ctx context.Context, q Querier, id int64, at int64) error {
	_, err := q.Exec(ctx, `UPDATE upstream_pulps SET last_replication = ? WHERE id = ?`, at, id)
	return err
}

// DeleteUpstream deletes an upstream Pulp and the roles held on it. What its
// replications made stays, as in Pulp.
func DeleteUpstream(ctx context.Context, q Querier, id int64) error {
	if err := ForgetGrants(ctx, q, "upstream_pulps", "id = ?", id); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `DELETE FROM upstream_pulps WHERE id = ?`, id)
	return err
}
