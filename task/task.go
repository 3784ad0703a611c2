package task

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"pith/meta"
)

// States of a task, as Pulp names them.
const (
	Waiting   = "waiting"
	Running   = "running"
	Canceling = "canceling"
	Completed = "completed"
	Failed    = "failed"
	Canceled  = "canceled"
	Skipped   = "skipped"
)

// Final reports whether a state is terminal.
func Final(state string) bool {
	return state == Completed || state == Failed || state == Canceled || state == Skipped
}

// Task is a task row.
type Task struct {
	ID               int64
	PulpID           string
	Name             string
	State            string
	LoggingCID       string
	Args             json.RawMessage
	Reserved         []string // resources, shared ones prefixed "shared:"
	WorkerID         *int64
	WorkerPulpID     *string
	GroupID          *int64
	GroupPulpID      *string
	ParentID         *int64
	ParentPulpID     *string
	Created          int64
	Updated          int64
	Unblocked        *int64
	Started          *int64
	Finished         *int64
	Error            json.RawMessage
	Result           json.RawMessage
	Progress         []ProgressReport
	CreatedResources []string
	CreatedBy        *int64 // the user who dispatched it
	// Children are the pulp_ids of the tasks it dispatched, oldest first; filled by
	// WithChildren only.
	Children []string
	// ProfileOptions are the profilers its dispatching request asked for
	// (X-Task-Diagnostics); those the process enables run with it.
	ProfileOptions []string
}

// ProgressReport is one progress line of a task.
type ProgressReport struct {
	Message string  `json:"message"`
	Code    string  `json:"code"`
	State   string  `json:"state"`
	Total   *int64  `json:"total"`
	Done    int64   `json:"done"`
	Suffix  *string `json:"suffix"`
}

const cols = `t.id, t.pulp_id, t.name, t.state, t.logging_cid, t.args, t.reserved, t.worker_id,
	(SELECT w.pulp_id FROM workers w WHERE w.id = t.worker_id), t.task_group_id,
	(SELECT g.pulp_id FROM task_groups g WHERE g.id = t.task_group_id), t.parent_task_id,
	(SELECT p.pulp_id FROM tasks p WHERE p.id = t.parent_task_id),
	t.created, t.updated, t.unblocked, t.started, t.finished, t.error, t.result, t.progress, t.created_resources, t.created_by, t.profile_options`

func scan(r interface{ Scan(...any) error }) (Task, error) {
	var t Task
	var args, reserved, progress, created string
	var errText, result, profile sql.NullString
	err := r.Scan(&t.ID, &t.PulpID, &t.Name, &t.State, &t.LoggingCID, &args, &reserved, &t.WorkerID, &t.WorkerPulpID,
		&t.GroupID, &t.GroupPulpID, &t.ParentID, &t.ParentPulpID, &t.Created, &t.Updated, &t.Unblocked, &t.Started, &t.Finished,
		&errText, &result, &progress, &created, &t.CreatedBy, &profile)
	if err != nil {
		return t, err
	}
	t.Args = json.RawMessage(args)
	json.Unmarshal([]byte(reserved), &t.Reserved)
	json.Unmarshal([]byte(progress), &t.Progress)
	json.Unmarshal([]byte(created), &t.CreatedResources)
	if errText.Valid {
		t.Error = json.RawMessage(errText.String)
	}
	if result.Valid {
		t.Result = json.RawMessage(result.String)
	}
	if profile.Valid {
		json.Unmarshal([]byte(profile.String), &t.ProfileOptions)
	}
	return t, nil
}

// Get finds a task by its href UUID.
func Get(ctx context.Context, q meta.Querier, pulpID string) (Task, error) {
	t, err := scan(q.QueryRow(ctx, "SELECT "+cols+" FROM tasks t WHERE t.pulp_id = ?", pulpID))
	if err == sql.ErrNoRows {
		return t, fmt.Errorf("task %s: %w", pulpID, meta.ErrNotFound)
	}
	return t, err
}

// GetByID finds a task by key.
func GetByID(ctx context.Context, q meta.Querier, id int64) (Task, error) {
	t, err := scan(q.QueryRow(ctx, "SELECT "+cols+" FROM tasks t WHERE t.id = ?", id))
	if err == sql.ErrNoRows {
		return t, fmt.Errorf("task %d: %w", id, meta.ErrNotFound)
	}
	return t, err
}

// List selects a page of tasks (alias t), newest first by default.
func List(ctx context.Context, q meta.Querier, l meta.List) ([]Task, int64, error) {
	return meta.Page(ctx, q, cols, "tasks t", "t.id DESC", l, func(r *sql.Rows) (Task, error) { return scan(r) })
}

// WithChildren fills in the Children of tasks, in one query.
func WithChildren(ctx context.Context, q meta.Querier, tasks []Task) error {
	if len(tasks) == 0 {
		return nil
	}
	at := make(map[int64]*Task, len(tasks))
	args := make([]any, len(tasks))
	for i := range tasks {
		at[tasks[i].ID], args[i] = &tasks[i], tasks[i].ID
	}
	rows, err := q.Query(ctx, `SELECT parent_task_id, pulp_id FROM tasks WHERE parent_task_id IN `+meta.Placeholders(len(tasks))+` ORDER BY id`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var parent int64
		var child string
		if err := rows.Scan(&parent, &child); err != nil {
			return err
		}
		t := at[parent]
		t.Children = append(t.Children, child)
	}
	return rows.Err()
}

// Delete deletes a finished task.
func Delete(ctx context.Context, db *meta.DB, pulpID string) error {
	t, err := Get(ctx, db, pulpID)
	if err != nil {
		return err
	}
	if !Final(t.State) {
		return fmt.Errorf("task %s is %s; only finished tasks can be deleted: %w", pulpID, t.State, meta.ErrInUse)
	}
	if err := meta.ForgetGrants(ctx, db, "tasks", "id = ?", t.ID); err != nil {
		return err
	}
	_, err = db.Exec(ctx, `DELETE FROM tasks WHERE id = ?`, t.ID)
	return err
}

// Purge deletes finished tasks in the given states that finished before the time (µs).
func Purge(ctx context.Context, db *meta.DB, finishedBefore int64, states []string) (int64, error) {
	var total int64
	for _, s := range states {
		if !Final(s) {
			return 0, fmt.Errorf("state %q is not a final state", s)
		}
		if err := meta.ForgetGrants(ctx, db, "tasks", "state = ? AND finished < ?", s, finishedBefore); err != nil {
			return total, err
		}
		res, err := db.Exec(ctx, `DELETE FROM tasks WHERE state = ? AND finished < ?`, s, finishedBefore)
		if err != nil {
			return total, fmt.Errorf("purge %s tasks: %w", s, err)
		}
		n, _ := res.RowsAffected()
		total += n
	}
	return total, nil
}

// Group is a task group with the counts of its tasks by state.
type Group struct {
	ID          int64
	PulpID      string
	Description string
	Created     int64
	Counts      map[string]int64
	Tasks       []Task
}

// CreateGroup inserts a task group.
func CreateGroup(ctx context.Context, q meta.Querier, description string) (Group, error) {
	g := Group{PulpID: meta.NewID(), Description: description, Created: meta.Now()}
	err := q.QueryRow(ctx, `INSERT INTO task_groups (pulp_id, description, created) VALUES (?, ?, ?) RETURNING id`, g.PulpID, g.Description, g.Created).Scan(&g.ID)
	return g, err
}

// GetGroup finds a task group with its tasks.
func GetGroup(ctx context.Context, q meta.Querier, pulpID string) (Group, error) {
	var g Group
	err := q.QueryRow(ctx, `SELECT id, pulp_id, description, created FROM task_groups WHERE pulp_id = ?`, pulpID).Scan(&g.ID, &g.PulpID, &g.Description, &g.Created)
	if err == sql.ErrNoRows {
		return g, fmt.Errorf("task group %s: %w", pulpID, meta.ErrNotFound)
	}
	if err != nil {
		return g, err
	}
	return g, fillGroup(ctx, q, &g)
}

// fillGroup reads a group's tasks and counts their states. It reads only what a group
// shows of each task (Pulp's minimal task): a client polls the
// group while its tasks run, and their arguments, reservations and created resources
// (500 repositories each for a bulk_modify batch) are not decoded for that.
func fillGroup(ctx context.Context, q meta.Querier, g *Group) error {
	rows, err := q.Query(ctx, `SELECT t.id, t.pulp_id, t.name, t.state, t.worker_id, (SELECT w.pulp_id FROM workers w WHERE w.id = t.worker_id),
		t.created, t.updated, t.unblocked, t.started, t.finished FROM tasks t WHERE t.task_group_id = ? ORDER BY t.id`, g.ID)
	if err != nil {
		return fmt.Errorf("tasks of group %s: %w", g.PulpID, err)
	}
	defer rows.Close()
	g.Tasks = nil
	g.Counts = map[string]int64{}
	for rows.Next() {
		t := Task{GroupID: &g.ID, GroupPulpID: &g.PulpID}
		if err := rows.Scan(&t.ID, &t.PulpID, &t.Name, &t.State, &t.WorkerID, &t.WorkerPulpID, &t.Created, &t.Updated, &t.Unblocked, &t.Started, &t.Finished); err != nil {
			return fmt.Errorf("tasks of group %s: %w", g.PulpID, err)
		}
		g.Tasks = append(g.Tasks, t)
		g.Counts[t.State]++
	}
	return rows.Err()
}

// ListGroups selects a page of task groups (alias g).
func ListGroups(ctx context.Context, q meta.Querier, l meta.List) ([]Group, int64, error) {
	out, total, err := meta.Page(ctx, q, "g.id, g.pulp_id, g.description, g.created", "task_groups g", "g.id DESC", l, func(r *sql.Rows) (Group, error) {
		var g Group
		return g, r.Scan(&g.ID, &g.PulpID, &g.Description, &g.Created)
	})
	if err != nil {
		return nil, 0, err
	}
	for i := range out {
		if err := fillGroup(ctx, q, &out[i]); err != nil {
			return nil, 0, err
		}
	}
	return out, total, nil
}
