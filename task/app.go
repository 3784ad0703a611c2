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

// RegisterApp records a starting process by name and type and returns its row. Every
// start gets a row of its own, so the tasks of one process are never taken for another's:
// an older row of the same name (a process that ended, whose pid this one reuses, or one
// on another host of the same name) is renamed "<name>#<id>" first.
func RegisterApp(ctx context.Context, db *meta.DB, name, appType string) (App, error) {
	now := meta.Now()
	a := App{PulpID: meta.NewID(), Name: name, Type: appType, Created: now, LastHeartbeat: now}
	err := db.Tx(ctx, func(tx *meta.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE workers SET name = name || '#' || id WHERE name = ?`, name); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `INSERT INTO workers (pulp_id, name, app_type, created, last_heartbeat) VALUES (?, ?, ?, ?, ?) RETURNING id`,
			a.PulpID, name, appType, now, now).Scan(&a.ID)
	})
	if err != nil {
		return App{}, fmt.Errorf("register %s %s: %w", appType, name, err)
	}
	return a, nil
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
