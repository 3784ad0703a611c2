package meta

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// SigningService is a key that signs metadata (Pulp's SigningService). Pith holds the
// private key itself (a setting); the row publishes the public half.
type SigningService struct {
	ID          int64
	PulpID      string
	Name        string
	PublicKey   string
	Fingerprint string
	Script      string // how it signs, for display (Pulp shows its script's path)
	Created     int64
	Updated     int64
}

const signingCols = "s.id, s.pulp_id, s.name, s.public_key, s.fingerprint, s.script, s.created, s.updated"

func scanSigning(r interface{ Scan(...any) error }) (SigningService, error) {
	var s SigningService
	err := r.Scan(&s.ID, &s.PulpID, &s.Name, &s.PublicKey, &s.Fingerprint, &s.Script, &s.Created, &s.Updated)
	return s, err
}

// PutSigningService creates the named service or updates its key.
func PutSigningService(ctx context.Context, q Querier, s SigningService) (SigningService, error) {
	now := Now()
	_, err := q.Exec(ctx, `INSERT INTO signing_services (pulp_id, name, public_key, fingerprint, script, created, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET public_key = excluded.public_key, fingerprint = excluded.fingerprint,
			script = excluded.script, updated = excluded.updated
		WHERE signing_services.fingerprint <> excluded.fingerprint OR signing_services.script <> excluded.script`,
		NewID(), s.Name, s.PublicKey, s.Fingerprint, s.Script, now, now)
	if err != nil {
		return s, fmt.Errorf("signing service %q: %w", s.Name, err)
	}
	return scanSigning(q.QueryRow(ctx, "SELECT "+signingCols+" FROM signing_services s WHERE s.name = ?", s.Name))
}

// ListSigningServices selects a page of signing services (alias s).
func ListSigningServices(ctx context.Context, q Querier, l List) ([]SigningService, int64, error) {
	return Page(ctx, q, signingCols, "signing_services s", "s.name", l, func(r *sql.Rows) (SigningService, error) { return scanSigning(r) })
}

// SigningServiceByPulpID finds a signing service.
func SigningServiceByPulpID(ctx context.Context, q Querier, id string) (SigningService, error) {
	s, err := scanSigning(q.QueryRow(ctx, "SELECT "+signingCols+" FROM signing_services s WHERE s.pulp_id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return s, fmt.Errorf("signing service %s: %w", id, ErrNotFound)
	}
	return s, err
}
