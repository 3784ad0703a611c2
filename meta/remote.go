package meta

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// Remote is where a repository syncs from; type-specific settings live in Attrs. Its
// secrets (password, client_key, …: secretNames) are plaintext in Attrs and sealed in
// the database.
type Remote struct {
	ID      int64
	PulpID  string
	Type    string
	Name    string
	URL     string
	Policy  string
	Attrs   json.RawMessage
	Labels  Labels
	Created int64
	Updated int64
}

const remoteCols = "m.id, m.pulp_id, m.type, m.name, m.url, m.policy, m.attrs, m.labels, m.created, m.updated"

func scanRemote(q Querier, r interface{ Scan(...any) error }) (Remote, error) {
	var x Remote
	var attrs, labels string
	if err := r.Scan(&x.ID, &x.PulpID, &x.Type, &x.Name, &x.URL, &x.Policy, &attrs, &labels, &x.Created, &x.Updated); err != nil {
		return x, err
	}
	x.Labels = parseLabels(labels)
	var err error
	if x.Attrs, err = OpenSecrets(q, json.RawMessage(attrs)); err != nil {
		return x, fmt.Errorf("remote %q: %w", x.Name, err)
	}
	return x, nil
}

// CreateRemote inserts a remote.
func CreateRemote(ctx context.Context, q Querier, x Remote) (Remote, error) {
	now := Now()
	if x.PulpID == "" {
		x.PulpID = NewID()
	}
	attrs, err := SealSecrets(q, x.Attrs)
	if err != nil {
		return Remote{}, fmt.Errorf("remote %q: %w", x.Name, err)
	}
	var id int64
	err = q.QueryRow(ctx, `INSERT INTO remotes (pulp_id, type, name, url, policy, attrs, labels, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		x.PulpID, x.Type, x.Name, x.URL, x.Policy, rawText(attrs), x.Labels.text(), now, now).Scan(&id)
	if err != nil {
		if IsUniqueViolation(err) {
			return Remote{}, fmt.Errorf("remote named %q: %w", x.Name, ErrConflict)
		}
		return Remote{}, fmt.Errorf("insert remote %q: %w", x.Name, err)
	}
	return RemoteByID(ctx, q, id)
}

// RemoteByID finds a remote by key.
func RemoteByID(ctx context.Context, q Querier, id int64) (Remote, error) {
	x, err := scanRemote(q, q.QueryRow(ctx, "SELECT "+remoteCols+" FROM remotes m WHERE m.id = ?", id))
	return x, noRows(err, "remote", fmt.Sprint(id))
}

// RemoteByPulpID finds a remote by its href UUID.
func RemoteByPulpID(ctx context.Context, q Querier, id string) (Remote, error) {
	x, err := scanRemote(q, q.QueryRow(ctx, "SELECT "+remoteCols+" FROM remotes m WHERE m.pulp_id = ?", id))
	return x, noRows(err, "remote", id)
}

// ListRemotes selects a page of remotes (alias m).
func ListRemotes(ctx context.Context, q Querier, l List) ([]Remote, int64, error) {
	return Page(ctx, q, remoteCols, "remotes m", "m.name", l, func(r *sql.Rows) (Remote, error) { return scanRemote(q, r) })
}

// UpdateRemote writes a remote's fields.
func UpdateRemote(ctx context.Context, q Querier, x Remote) error {
	attrs, err := SealSecrets(q, x.Attrs)
	if err != nil {
		return fmt.Errorf("remote %q: %w", x.Name, err)
	}
	_, err = q.Exec(ctx, `UPDATE remotes SET name = ?, url = ?, policy = ?, attrs = ?, labels = ?, updated = ? WHERE id = ?`,
		x.Name, x.URL, x.Policy, rawText(attrs), x.Labels.text(), Now(), x.ID)
	if IsUniqueViolation(err) {
		return fmt.Errorf("remote named %q: %w", x.Name, ErrConflict)
	}
	return err
}

// DeleteRemote deletes a remote; repositories that used it by default lose the link, and
// on-demand files lose it as a source. The remote of an alternate content source is
// refused (ErrInUse).
func DeleteRemote(ctx context.Context, q Querier, id int64) error {
	if acs, err := ACSOfRemote(ctx, q, id); err != nil {
		return err
	} else if acs != "" {
		return fmt.Errorf("the remote is the remote of alternate content source %q: %w", acs, ErrInUse)
	}
	if err := ForgetGrants(ctx, q, "remotes", "id = ?", id); err != nil {
		return err
	}
	if _, err := q.Exec(ctx, `UPDATE repositories SET remote_id = NULL WHERE remote_id = ?`, id); err != nil {
		return err
	}
	if _, err := q.Exec(ctx, `DELETE FROM remote_artifacts WHERE remote_id = ?`, id); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `DELETE FROM remotes WHERE id = ?`, id)
	return err
}
