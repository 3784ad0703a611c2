package meta

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"pith/blob"
)

// Artifact is a stored file: a blob plus its digests.
type Artifact struct {
	ID      int64
	PulpID  string
	Size    int64
	MD5     *string
	SHA1    *string
	SHA224  *string
	SHA256  string
	SHA384  *string
	SHA512  *string
	Created int64
	Updated int64
}

const artifactCols = "a.id, a.pulp_id, a.size, a.md5, a.sha1, a.sha224, a.sha256, a.sha384, a.sha512, a.created, a.updated"

// scanArtifact scans artifactCols, and then the row's further columns into more.
func scanArtifact(r interface{ Scan(...any) error }, more ...any) (Artifact, error) {
	var a Artifact
	err := r.Scan(append([]any{&a.ID, &a.PulpID, &a.Size, &a.MD5, &a.SHA1, &a.SHA224, &a.SHA256, &a.SHA384, &a.SHA512, &a.Created, &a.Updated}, more...)...)
	return a, err
}

// ArtifactOf is the row of a committed blob: its size and the digests the store
// recorded (the others stay NULL, as Pulp leaves forbidden checksums empty).
func ArtifactOf(d blob.Digests) Artifact {
	return Artifact{Size: d.Size, MD5: optional(d.MD5), SHA1: optional(d.SHA1), SHA224: optional(d.SHA224), SHA256: d.SHA256,
		SHA384: optional(d.SHA384), SHA512: optional(d.SHA512)}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// PutArtifact records a committed blob, returning the existing row when one with the
// same sha256 exists (identical content is stored once). created reports a new row.
func PutArtifact(ctx context.Context, q Querier, a Artifact) (Artifact, bool, error) {
	now := Now()
	if a.PulpID == "" {
		a.PulpID = NewID()
	}
	res, err := q.Exec(ctx, `INSERT INTO artifacts (pulp_id, size, md5, sha1, sha224, sha256, sha384, sha512, created, updated, timestamp_of_interest)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING`,
		a.PulpID, a.Size, a.MD5, a.SHA1, a.SHA224, a.SHA256, a.SHA384, a.SHA512, now, now, now)
	if err != nil {
		return Artifact{}, false, fmt.Errorf("insert artifact %s: %w", a.SHA256, err)
	}
	n, _ := res.RowsAffected()
	got, err := ArtifactBySHA256(ctx, q, a.SHA256)
	if err != nil {
		return Artifact{}, false, err
	}
	if n == 0 {
		// Protect the existing artifact from orphan cleanup: someone is using it again.
		q.Exec(ctx, `UPDATE artifacts SET timestamp_of_interest = ? WHERE id = ?`, now, got.ID)
	}
	return got, n > 0, nil
}

// ArtifactBySHA256 finds an artifact by digest.
func ArtifactBySHA256(ctx context.Context, q Querier, sha256 string) (Artifact, error) {
	a, err := scanArtifact(q.QueryRow(ctx, "SELECT "+artifactCols+" FROM artifacts a WHERE a.sha256 = ?", sha256))
	return a, noRows(err, "artifact with sha256", sha256)
}

// ArtifactIDsBySHA256 maps the sha256 digests that have an artifact to its key; one
// query per 500 digests.
func ArtifactIDsBySHA256(ctx context.Context, q Querier, digests []string) (map[string]int64, error) {
	out := make(map[string]int64, len(digests))
	for part := range slices.Chunk(digests, chunk) {
		args := make([]any, len(part))
		for i, d := range part {
			args[i] = d
		}
		err := scanRows(ctx, q, "SELECT sha256, id FROM artifacts WHERE sha256 IN "+Placeholders(len(part)), args, func(r *sql.Rows) error {
			var d string
			var id int64
			err := r.Scan(&d, &id)
			out[d] = id
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ArtifactByPulpID finds an artifact by its href UUID.
func ArtifactByPulpID(ctx context.Context, q Querier, id string) (Artifact, error) {
	a, err := scanArtifact(q.QueryRow(ctx, "SELECT "+artifactCols+" FROM artifacts a WHERE a.pulp_id = ?", id))
	return a, noRows(err, "artifact", id)
}

// ArtifactByID finds an artifact by key.
func ArtifactByID(ctx context.Context, q Querier, id int64) (Artifact, error) {
	a, err := scanArtifact(q.QueryRow(ctx, "SELECT "+artifactCols+" FROM artifacts a WHERE a.id = ?", id))
	return a, noRows(err, "artifact", fmt.Sprint(id))
}

// ListArtifacts selects a page of artifacts (alias a).
func ListArtifacts(ctx context.Context, q Querier, l List) ([]Artifact, int64, error) {
	return Page(ctx, q, artifactCols, "artifacts a", "a.id", l, func(r *sql.Rows) (Artifact, error) { return scanArtifact(r) })
}

// ErrInUse means a row is still referenced and cannot be deleted.
var ErrInUse = fmt.Errorf("in use")

// DeleteArtifact deletes an artifact row that no content, publication or task profile
// references. The caller deletes the blob afterwards (a row never points at a missing
// blob).
func DeleteArtifact(ctx context.Context, q Querier, id int64) error {
	res, err := q.Exec(ctx, `DELETE FROM artifacts WHERE id = ? AND `+Unreferenced("artifacts.id"), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return nil
	}
	var exists bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM artifacts WHERE id = ?)`, id).Scan(&exists); err != nil || !exists {
		return err
	}
	return fmt.Errorf("artifact is referenced by content units, publications or task profiles: %w", ErrInUse)
}

// Unreferenced is the condition that the artifact whose key is col ("a.id") is
// referenced by nothing: no unit's file, no published file, no task's profile. Every
// query that finds or deletes unreferenced artifacts uses it, so that a table that comes
// to reference artifacts is named once, here.
func Unreferenced(col string) string {
	return `NOT EXISTS (SELECT 1 FROM content_artifacts ca WHERE ca.artifact_id = ` + col + `)
		AND NOT EXISTS (SELECT 1 FROM published_files pf WHERE pf.artifact_id = ` + col + `)
		AND NOT EXISTS (SELECT 1 FROM task_profile_artifacts tp WHERE tp.artifact_id = ` + col + `)`
}
