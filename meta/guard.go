package meta

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// ContentGuard decides who may fetch a distribution's files: its type ("core.rbac",
// "core.header", "certguard.rhsm", …), its settings by type in attrs, and, for a
// composite guard, the guards it asks (Members, by pulp_id, in order).
type ContentGuard struct {
	ID          int64
	PulpID      string
	Type        string
	Name        string
	Description *string
	Attrs       json.RawMessage
	Members     []string
	Created     int64
	Updated     int64
}

const guardCols = "cg.id, cg.pulp_id, cg.type, cg.name, cg.description, cg.attrs, cg.created, cg.updated"

func scanGuard(r interface{ Scan(...any) error }) (ContentGuard, error) {
	var g ContentGuard
	var desc sql.NullString
	var attrs string
	err := r.Scan(&g.ID, &g.PulpID, &g.Type, &g.Name, &desc, &attrs, &g.Created, &g.Updated)
	if desc.Valid {
		g.Description = &desc.String
	}
	g.Attrs = json.RawMessage(attrs)
	return g, err
}

// ListGuards selects a page of content guards (alias cg) with their members.
func ListGuards(ctx context.Context, q Querier, l List) ([]ContentGuard, int64, error) {
	gs, n, err := Page(ctx, q, guardCols, "content_guards cg", "cg.name", l, func(r *sql.Rows) (ContentGuard, error) { return scanGuard(r) })
	if err != nil {
		return nil, 0, err
	}
	return gs, n, guardMembers(ctx, q, gs)
}

// guardMembers fills the members of the composite guards among gs.
func guardMembers(ctx context.Context, q Querier, gs []ContentGuard) error {
	idx := map[int64]int{}
	var ids []int64
	for i, g := range gs {
		if g.Type == "core.composite" {
			idx[g.ID] = i
			ids = append(ids, g.ID)
			gs[i].Members = []string{}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	in, args := inList(ids)
	return scanRows(ctx, q, `SELECT m.composite_id, g.pulp_id FROM composite_guard_members m JOIN content_guards g ON g.id = m.guard_id
		WHERE m.composite_id IN `+in+` ORDER BY m.composite_id, m.position`, args, func(r *sql.Rows) error {
		var id int64
		var member string
		if err := r.Scan(&id, &member); err != nil {
			return err
		}
		gs[idx[id]].Members = append(gs[idx[id]].Members, member)
		return nil
	})
}

// GuardByPulpID finds a content guard by its href UUID.
func GuardByPulpID(ctx context.Context, q Querier, id string) (ContentGuard, error) {
	g, err := scanGuard(q.QueryRow(ctx, "SELECT "+guardCols+" FROM content_guards cg WHERE cg.pulp_id = ?", id))
	if err != nil {
		return g, noRows(err, "content guard", id)
	}
	gs := []ContentGuard{g}
	return gs[0], guardMembers(ctx, q, gs)
}

// CreateGuard inserts a content guard; a taken name is ErrConflict.
func CreateGuard(ctx context.Context, tx *Tx, g ContentGuard) (ContentGuard, error) {
	now := Now()
	if g.PulpID == "" {
		g.PulpID = NewID()
	}
	err := tx.QueryRow(ctx, `INSERT INTO content_guards (pulp_id, type, name, description, attrs, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		g.PulpID, g.Type, g.Name, g.Description, rawText(g.Attrs), now, now).Scan(&g.ID)
	if IsUniqueViolation(err) {
		return g, fmt.Errorf("content guard %q: %w", g.Name, ErrConflict)
	}
	if err != nil {
		return g, fmt.Errorf("insert content guard %q: %w", g.Name, err)
	}
	if err := setMembers(ctx, tx, g); err != nil {
		return g, err
	}
	return GuardByPulpID(ctx, tx, g.PulpID)
}

// UpdateGuard writes a content guard's name, description, settings and members.
func UpdateGuard(ctx context.Context, tx *Tx, g ContentGuard) error {
	_, err := tx.Exec(ctx, `UPDATE content_guards SET name = ?, description = ?, attrs = ?, updated = ? WHERE id = ?`,
		g.Name, g.Description, rawText(g.Attrs), Now(), g.ID)
	if IsUniqueViolation(err) {
		return fmt.Errorf("content guard %q: %w", g.Name, ErrConflict)
	}
	if err != nil {
		return err
	}
	return setMembers(ctx, tx, g)
}

func setMembers(ctx context.Context, tx *Tx, g ContentGuard) error {
	if g.Type != "core.composite" {
		return nil
	}
	if _, err := tx.Exec(ctx, `DELETE FROM composite_guard_members WHERE composite_id = ?`, g.ID); err != nil {
		return err
	}
	for i, m := range g.Members {
		res, err := tx.Exec(ctx, `INSERT INTO composite_guard_members (composite_id, guard_id, position)
			SELECT ?, id, ? FROM content_guards WHERE pulp_id = ?`, g.ID, i, m)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("content guard", m)
		}
	}
	return nil
}

// DeleteGuard deletes a content guard: the distributions it guarded are no longer
// guarded (Pulp's SET_NULL), composites no longer ask it, and roles held on it go.
func DeleteGuard(ctx context.Context, tx *Tx, g ContentGuard) error {
	if _, err := tx.Exec(ctx, `UPDATE distributions SET content_guard = NULL, updated = ? WHERE content_guard = ?`, Now(), g.PulpID); err != nil {
		return err
	}
	if err := ForgetGrants(ctx, tx, "content_guards", "id = ?", g.ID); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DELETE FROM content_guards WHERE id = ?`, g.ID)
	return err
}
