package task

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"pith/meta"
)

// Schedule is a recurring task (Pulp's TaskSchedule): the maintenance leader
// dispatches it every Interval, once the task it dispatched last has finished.
type Schedule struct {
	ID           int64
	PulpID       string
	Name         string
	TaskName     string
	Args         json.RawMessage
	Interval     time.Duration
	NextDispatch int64 // µs
	LastTask     *string
	Created      int64
	Updated      int64
}

// SetSchedule creates or updates the named schedule; an interval of 0 removes it. A
// schedule whose interval changes is next due one new interval from now.
func SetSchedule(ctx context.Context, db *meta.DB, name, taskName string, args any, interval time.Duration) error {
	if interval <= 0 {
		if err := meta.ForgetGrants(ctx, db, "task_schedules", "name = ?", name); err != nil {
			return err
		}
		_, err := db.Exec(ctx, `DELETE FROM task_schedules WHERE name = ?`, name)
		return err
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("schedule %s: encode arguments: %w", name, err)
	}
	now := meta.Now()
	_, err = db.Exec(ctx, `INSERT INTO task_schedules (pulp_id, name, task_name, args, dispatch_interval, next_dispatch, created, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET task_name = excluded.task_name, args = excluded.args,
			dispatch_interval = excluded.dispatch_interval, updated = excluded.updated,
			next_dispatch = CASE WHEN task_schedules.dispatch_interval = excluded.dispatch_interval
				THEN task_schedules.next_dispatch ELSE excluded.next_dispatch END
		WHERE task_schedules.task_name <> excluded.task_name OR task_schedules.args <> excluded.args
			OR task_schedules.dispatch_interval <> excluded.dispatch_interval`,
		meta.NewID(), name, taskName, string(raw), interval.Microseconds(), now+interval.Microseconds(), now, now)
	if err != nil {
		return fmt.Errorf("schedule %s: %w", name, err)
	}
	return nil
}

// DispatchDue dispatches every schedule that is due and whose last task has finished,
// and moves it on by its interval. It returns how many tasks it dispatched. Only the
// maintenance leader calls it, so a schedule is never dispatched twice.
func DispatchDue(ctx context.Context, db *meta.DB, now int64) (int, error) {
	n := 0
	err := db.Tx(ctx, func(tx *meta.Tx) error {
		rows, err := tx.Query(ctx, `SELECT s.id, s.name, s.task_name, s.args, s.dispatch_interval FROM task_schedules s
			WHERE s.next_dispatch <= ? AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = s.last_task_id
				AND t.state NOT IN ('completed', 'failed', 'canceled', 'skipped'))`, now)
		if err != nil {
			return err
		}
		type due struct {
			id             int64
			name, taskName string
			args           string
			interval       int64
		}
		var ds []due
		for rows.Next() {
			var d due
			if err := rows.Scan(&d.id, &d.name, &d.taskName, &d.args, &d.interval); err != nil {
				rows.Close()
				return err
			}
			ds = append(ds, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, d := range ds {
			t, err := DispatchTx(ctx, tx, Spec{Name: d.taskName, Args: json.RawMessage(d.args)})
			if err != nil {
				return fmt.Errorf("schedule %s: %w", d.name, err)
			}
			if _, err := tx.Exec(ctx, `UPDATE task_schedules SET last_task_id = ?, next_dispatch = ?, updated = ? WHERE id = ?`,
				t.ID, now+d.interval, now, d.id); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

const scheduleCols = `s.id, s.pulp_id, s.name, s.task_name, s.args, s.dispatch_interval, s.next_dispatch,
	(SELECT t.pulp_id FROM tasks t WHERE t.id = s.last_task_id), s.created, s.updated`

func scanSchedule(r interface{ Scan(...any) error }) (Schedule, error) {
	var s Schedule
	var args string
	var interval int64
	err := r.Scan(&s.ID, &s.PulpID, &s.Name, &s.TaskName, &args, &interval, &s.NextDispatch, &s.LastTask, &s.Created, &s.Updated)
	s.Args = json.RawMessage(args)
	s.Interval = time.Duration(interval) * time.Microsecond
	return s, err
}

// Schedules lists schedules by name.
func Schedules(ctx context.Context, db meta.Querier, l meta.List) ([]Schedule, int64, error) {
	return meta.Page(ctx, db, scheduleCols, "task_schedules s", "s.name", l, func(r *sql.Rows) (Schedule, error) { return scanSchedule(r) })
}

// ScheduleByPulpID finds a schedule.
func ScheduleByPulpID(ctx context.Context, db meta.Querier, id string) (Schedule, error) {
	s, err := scanSchedule(db.QueryRow(ctx, "SELECT "+scheduleCols+" FROM task_schedules s WHERE s.pulp_id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return s, fmt.Errorf("task schedule %s: %w", id, meta.ErrNotFound)
	}
	return s, err
}
