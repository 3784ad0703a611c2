package task

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"pith/meta"
)

// App is a registered process: a worker, an API app or a content app.
type App struct {
	ID            int64
	PulpID        string
	Name          string
	Type          string
	Created       int64
	LastHeartbeat int64
	CurrentTask   *string
}

// RegisterApp records a process by name and type, returning its key.
func RegisterApp(ctx context.Context, db *meta.DB, name, appType string) (int64, error) {
	now := meta.Now()
	var id int64
	err := db.QueryRow(ctx, `INSERT INTO workers (pulp_id, name, app_type, created, last_heartbeat) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET last_heartbeat = excluded.last_heartbeat RETURNING id`,
		meta.NewID(), name, appType, now, now).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("register %s %s: %w", appType, name, err)
	}
	return id, nil
}

// Heartbeat renews an app's registration.
func Heartbeat(ctx context.Context, db *meta.DB, id int64) error {
	_, err := db.Exec(ctx, `UPDATE workers SET last_heartbeat = ? WHERE id = ?`, meta.Now(), id)
	return err
}

const appCols = `w.id, w.pulp_id, w.name, w.app_type, w.created, w.last_heartbeat,
	(SELECT t.pulp_id FROM tasks t WHERE t.worker_id = w.id AND t.state IN ('running', 'canceling') ORDER BY t.id LIMIT 1)`

func scanApp(r interface{ Scan(...any) error }) (App, error) {
	var a App
	err := r.Scan(&a.ID, &a.PulpID, &a.Name, &a.Type, &a.Created, &a.LastHeartbeat, &a.CurrentTask)
	return a, err
}

// Apps lists registered processes of a type seen since the given time (µs), by name.
func Apps(ctx context.Context, db meta.Querier, appType string, since int64, l meta.List) ([]App, int64, error) {
	l.And("w.app_type = ?", appType)
	l.And("w.last_heartbeat >= ?", since)
	return meta.Page(ctx, db, appCols, "workers w", "w.name", l, func(r *sql.Rows) (App, error) { return scanApp(r) })
}

// AppByPulpID finds a registered process.
func AppByPulpID(ctx context.Context, db meta.Querier, id string) (App, error) {
	a, err := scanApp(db.QueryRow(ctx, "SELECT "+appCols+" FROM workers w WHERE w.pulp_id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return a, fmt.Errorf("worker %s: %w", id, meta.ErrNotFound)
	}
	return a, err
}
