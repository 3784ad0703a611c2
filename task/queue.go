package task

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"pith/meta"
)

// Func is the work of a task. It returns nil on success; an error fails the task with
// the error's text as description.
type Func func(ctx context.Context, r *Run) error

// Spec describes a task to dispatch.
type Spec struct {
	Name       string
	Args       any
	Exclusive  []string // resources locked exclusively (e.g. a repository href)
	Shared     []string // resources locked shared (e.g. a remote href read by a sync)
	GroupID    *int64
	ParentID   *int64
	LoggingCID string
	// CreatedBy is the user who dispatched the task (nil for pith itself).
	CreatedBy *int64
	// Profile names the profilers the dispatching request asked for (X-Task-Diagnostics).
	Profile []string
}

// Hooks let the layer above act on tasks users dispatch: the API gives the dispatcher
// the roles its access policies name on the task and on what the task creates.
type Hooks struct {
	// Dispatched runs in the transaction that stores a task with a creator.
	Dispatched func(ctx context.Context, tx *meta.Tx, t Task) error
	// Created runs when a task with a creator records a resource it created (an href).
	Created func(ctx context.Context, t Task, href string) error
	// Profile stores a file a profiler made of a task's run under a name
	// ("memory_profile"), before the task's end is recorded. Without it no profiler runs.
	Profile func(ctx context.Context, t Task, name string, data []byte) error
}

// Options tune a Queue.
type Options struct {
	Workers int           // concurrent tasks in this process
	Lease   time.Duration // how long a claim lives without a heartbeat (default 30s)
	Poll    time.Duration // fallback poll for tasks dispatched by other processes (default 1s)
	Name    string        // worker name (default pid@host)
	Logger  *slog.Logger
	AppType string // "worker" (default)
	// Diagnostics are the profilers this process runs for a task that asks for them
	// (the task-diagnostics setting); see Profilers.
	Diagnostics []string
}

// Queue dispatches tasks and, when started, runs them.
type Queue struct {
	db    *meta.DB
	funcs map[string]Func
	opt   Options
	wake  chan struct{}

	mu       sync.Mutex
	running  map[string]context.CancelFunc // by task pulp_id, the ID cancels name
	held     map[int64]bool                // tasks claimed and not yet finished, by key
	waiters  map[int64]chan struct{}
	workerID int64
	worker   string // the worker row's pulp_id
	hooks    Hooks

	stalled atomic.Int32 // final writes waiting for the store to take writes again
}

// SetHooks installs the hooks; call it before dispatching or starting workers.
func (q *Queue) SetHooks(h Hooks) { q.hooks = h }

// New creates a queue over db running the given functions by name.
func New(db *meta.DB, funcs map[string]Func, opt Options) *Queue {
	if opt.Workers <= 0 {
		opt.Workers = 2
	}
	if opt.Lease <= 0 {
		opt.Lease = 30 * time.Second
	}
	if opt.Poll <= 0 {
		opt.Poll = time.Second
	}
	if opt.Name == "" {
		host, _ := os.Hostname()
		opt.Name = fmt.Sprintf("%d@%s", os.Getpid(), host)
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.AppType == "" {
		opt.AppType = "worker"
	}
	return &Queue{db: db, funcs: funcs, opt: opt, wake: make(chan struct{}, 1), running: map[string]context.CancelFunc{},
		held: map[int64]bool{}, waiters: map[int64]chan struct{}{}}
}

// Dispatch stores a new waiting task and wakes a worker.
func (q *Queue) Dispatch(ctx context.Context, s Spec) (Task, error) {
	var t Task
	err := q.db.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		if t, err = DispatchTx(ctx, tx, s); err != nil || t.CreatedBy == nil || q.hooks.Dispatched == nil {
			return err
		}
		return q.hooks.Dispatched(ctx, tx, t)
	})
	if err != nil {
		return Task{}, err
	}
	q.Wake()
	q.db.Notify(ctx, wakeChannel, "")
	return t, nil
}

// The PostgreSQL channels workers of several processes listen on.
const (
	wakeChannel   = "pith_tasks"
	cancelChannel = "pith_cancel"
)

// DispatchTx stores a new waiting task in the caller's transaction; call Wake after
// commit.
func DispatchTx(ctx context.Context, tx *meta.Tx, s Spec) (Task, error) {
	if s.Name == "" {
		return Task{}, errors.New("dispatch: task has no name")
	}
	args, err := json.Marshal(s.Args)
	if err != nil {
		return Task{}, fmt.Errorf("dispatch %s: encode arguments: %w", s.Name, err)
	}
	if s.Args == nil {
		args = []byte("{}")
	}
	// A remote update's body may carry its password: stored sealed, like the remote.
	if args, err = meta.SealSecrets(tx, args); err != nil {
		return Task{}, fmt.Errorf("dispatch %s: %w", s.Name, err)
	}
	locks := map[string]bool{}
	for _, r := range s.Shared {
		locks[r] = false
	}
	for _, r := range s.Exclusive {
		locks[r] = true
	}
	var reserved []string
	for r, excl := range locks {
		if excl {
			reserved = append(reserved, r)
		} else {
			reserved = append(reserved, "shared:"+r)
		}
	}
	sort.Strings(reserved)
	rj, _ := json.Marshal(reserved)
	if reserved == nil {
		rj = []byte("[]")
	}
	var profile any
	if len(s.Profile) > 0 {
		pj, _ := json.Marshal(s.Profile)
		profile = string(pj)
	}
	now := meta.Now()
	var id int64
	if err := tx.QueryRow(ctx, `INSERT INTO tasks (pulp_id, name, state, logging_cid, args, reserved, task_group_id, parent_task_id, created_by, profile_options, created, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		meta.NewID(), s.Name, Waiting, s.LoggingCID, string(args), string(rj), s.GroupID, s.ParentID, s.CreatedBy, profile, now, now).Scan(&id); err != nil {
		return Task{}, fmt.Errorf("dispatch %s: %w", s.Name, err)
	}
	for r, excl := range locks {
		if _, err := tx.Exec(ctx, `INSERT INTO task_locks (task_id, resource, exclusive) VALUES (?, ?, ?)`, id, r, excl); err != nil {
			return Task{}, fmt.Errorf("dispatch %s: lock %s: %w", s.Name, r, err)
		}
	}
	return GetByID(ctx, tx, id)
}

// Worker is the pulp_id of this process's worker row, once started.
func (q *Queue) Worker() string { return q.worker }

// Wake tells this process's workers to look for work.
func (q *Queue) Wake() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// claimSQL picks the oldest waiting task that no earlier unfinished task conflicts with.
const claimSQL = `UPDATE tasks SET state = 'running', worker_id = ?, started = ?, unblocked = ?, lease_until = ?, updated = ?
	WHERE state = 'waiting' AND id = (SELECT t.id FROM tasks t WHERE t.state = 'waiting' AND NOT EXISTS (
		SELECT 1 FROM task_locks l JOIN task_locks o ON o.resource = l.resource AND o.task_id < l.task_id
		WHERE l.task_id = t.id AND (l.exclusive OR o.exclusive))
	ORDER BY t.id LIMIT 1%s)
	RETURNING id`

// claim takes one runnable task for this process, or returns ok=false.
func (q *Queue) claim(ctx context.Context) (Task, bool, error) {
	lock := ""
	if q.db.Dialect() == meta.Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	now := meta.Now()
	var id int64
	err := q.db.QueryRow(ctx, fmt.Sprintf(claimSQL, lock), q.workerID, now, now, now+q.opt.Lease.Microseconds(), now).Scan(&id)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return Task{}, false, nil
		}
		return Task{}, false, fmt.Errorf("claim task: %w", err)
	}
	t, err := GetByID(ctx, q.db, id)
	return t, err == nil, err
}

// Start registers this process as a worker and runs the workers, the heartbeat and the
// maintenance loop (led by one worker process at a time) until ctx ends. Running tasks are cancelled and failed on shutdown.
func (q *Queue) Start(ctx context.Context) error {
	app, err := RegisterApp(ctx, q.db, q.opt.Name, q.opt.AppType)
	if err != nil {
		return err
	}
	q.workerID, q.worker = app.ID, app.PulpID
	// Other processes dispatch and cancel too: their notifications wake this one.
	go q.db.Listen(ctx, q.opt.Logger, func(channel, payload string) {
		switch channel {
		case wakeChannel:
			q.Wake()
		case cancelChannel:
			q.cancelLocal(payload)
		}
	}, wakeChannel, cancelChannel)
	for i := 0; i < q.opt.Workers; i++ {
		go q.work(ctx)
	}
	go q.heartbeat(ctx)
	go q.maintain(ctx)
	return nil
}

func (q *Queue) work(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		// While the outcome of a task cannot be written, a new task could not be either.
		ok := false
		if q.stalled.Load() == 0 {
			var t Task
			var err error
			t, ok, err = q.claim(ctx)
			if err != nil && ctx.Err() == nil {
				q.opt.Logger.Error("task claim failed", "err", err)
			}
			if ok {
				q.run(ctx, t)
				// There may be more; pass the wake-up on to a sibling as well.
				q.Wake()
				continue
			}
		}
		timer.Reset(q.opt.Poll)
		select {
		case <-ctx.Done():
			return
		case <-q.wake:
		case <-timer.C:
		}
	}
}

// WaitBriefly waits up to max for a task this process runs to finish. The API uses it so
// that a short task is done by the time the client first reads it (the pulp CLI sleeps a
// second between reads otherwise). A task run elsewhere simply times out.
func (q *Queue) WaitBriefly(ctx context.Context, id int64, max time.Duration) {
	if q.workerID == 0 {
		return // no workers in this process (an API-only process)
	}
	q.mu.Lock()
	ch, ok := q.waiters[id]
	if !ok {
		ch = make(chan struct{})
		q.waiters[id] = ch
	}
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		if q.waiters[id] == ch {
			delete(q.waiters, id)
		}
		q.mu.Unlock()
	}()
	// It may have finished before the waiter existed.
	if tk, err := GetByID(ctx, q.db, id); err != nil || Final(tk.State) {
		return
	}
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
	}
}

// Cancel cancels a waiting or running task. It returns the task as it is after the
// request, or meta.ErrConflict if the task had already finished.
func (q *Queue) Cancel(ctx context.Context, pulpID string) (Task, error) {
	t, err := Get(ctx, q.db, pulpID)
	if err != nil {
		return t, err
	}
	switch t.State {
	case Waiting:
		now := meta.Now()
		err = q.db.Tx(ctx, func(tx *meta.Tx) error {
			res, err := tx.Exec(ctx, `UPDATE tasks SET state = 'canceled', finished = ?, updated = ? WHERE id = ? AND state = 'waiting'`, now, now, t.ID)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return errRaced
			}
			_, err = tx.Exec(ctx, `DELETE FROM task_locks WHERE task_id = ?`, t.ID)
			return err
		})
		if errors.Is(err, errRaced) {
			return q.Cancel(ctx, pulpID)
		}
		q.Wake()
	case Running:
		if _, err = q.db.Exec(ctx, `UPDATE tasks SET state = 'canceling', updated = ? WHERE id = ? AND state = 'running'`, meta.Now(), t.ID); err == nil {
			if !q.cancelLocal(t.PulpID) {
				// Running in another process: tell it.
				err = q.db.Notify(ctx, cancelChannel, t.PulpID)
			}
		}
	case Canceling:
	default:
		return t, fmt.Errorf("task %s is already %s: %w", pulpID, t.State, meta.ErrConflict)
	}
	if err != nil {
		return t, fmt.Errorf("cancel task %s: %w", pulpID, err)
	}
	return Get(ctx, q.db, pulpID)
}

var errRaced = errors.New("task changed state concurrently")

// cancelLocal cancels a task if this process runs it.
func (q *Queue) cancelLocal(pulpID string) bool {
	q.mu.Lock()
	cancel := q.running[pulpID]
	q.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return cancel != nil
}

// heartbeat renews the leases of this process's tasks and its app registration.
func (q *Queue) heartbeat(ctx context.Context) {
	tick := time.NewTicker(q.opt.Lease / 3)
	defer tick.Stop()
	for {
		q.beat(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// beat renews the leases of the tasks this process holds (running, or ended with their
// outcome not yet written), and no others: a task of this worker that no function and no
// final write of this process holds any more is left to its lease.
func (q *Queue) beat(ctx context.Context) {
	now := meta.Now()
	q.mu.Lock()
	args := []any{now + q.opt.Lease.Microseconds(), q.workerID}
	for id := range q.held {
		args = append(args, id)
	}
	q.mu.Unlock()
	if n := len(args) - 2; n > 0 {
		if _, err := q.db.Exec(ctx, `UPDATE tasks SET lease_until = ? WHERE worker_id = ? AND state IN ('running', 'canceling')
			AND id IN (?`+strings.Repeat(", ?", n-1)+`)`, args...); err != nil && ctx.Err() == nil {
			q.opt.Logger.Error("task lease renewal failed", "err", err)
		}
	}
	if _, err := q.db.Exec(ctx, `UPDATE workers SET last_heartbeat = ? WHERE id = ?`, now, q.workerID); err != nil && ctx.Err() == nil {
		q.opt.Logger.Error("worker heartbeat failed", "err", err)
	}
}

// The errors of tasks whose worker ended without finishing them.
const (
	missingFailed   = `{"description":"worker has gone missing: its lease expired while the task was running","traceback":""}`
	missingCanceled = `{"description":"canceled; the worker went missing before it stopped","traceback":""}`
	restartFailed   = `{"description":"the worker running the task restarted: its process ended before the task did","traceback":""}`
	restartCanceled = `{"description":"canceled; the worker restarted before it stopped","traceback":""}`
)

// ExpireLeases fails running tasks (and cancels canceling ones) whose lease ended before
// now, freeing their locks. It returns how many tasks it ended.
func ExpireLeases(ctx context.Context, db *meta.DB, now int64) (int64, error) {
	return endOrphans(ctx, db, now, `lease_until < ?`, []any{now}, missingFailed, missingCanceled)
}

// expireLeases is ExpireLeases but for the tasks this process holds: their worker is not
// missing, only unable to write (their leases lapse while the store takes no writes),
// and their outcome is written as soon as it can be.
func (q *Queue) expireLeases(ctx context.Context, now int64) (int64, error) {
	args := []any{now}
	q.mu.Lock()
	for id := range q.held {
		args = append(args, id)
	}
	q.mu.Unlock()
	where := `lease_until < ?`
	if len(args) > 1 {
		where += ` AND id NOT IN (?` + strings.Repeat(", ?", len(args)-2) + `)`
	}
	return endOrphans(ctx, q.db, now, where, args, missingFailed, missingCanceled)
}

// Restarted fails the running tasks (and cancels the canceling ones) of a worker whose
// process has ended and been replaced (cmd/pith knows it from the worker slot the new
// process took over), freeing their locks, without waiting for their leases. It returns
// how many tasks it ended.
func Restarted(ctx context.Context, db *meta.DB, worker string) (int64, error) {
	return endOrphans(ctx, db, meta.Now(), `worker_id IN (SELECT id FROM workers WHERE pulp_id = ?)`, []any{worker}, restartFailed, restartCanceled)
}

// endOrphans ends the running and canceling tasks that match where (bound to args) as
// failed or canceled with the given errors, and frees their locks.
func endOrphans(ctx context.Context, db *meta.DB, now int64, where string, args []any, failed, canceled string) (int64, error) {
	var n int64
	err := db.Tx(ctx, func(tx *meta.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, state FROM tasks WHERE state IN ('running', 'canceling') AND `+where, args...)
		if err != nil {
			return err
		}
		type row struct {
			id    int64
			state string
		}
		var dead []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.state); err != nil {
				rows.Close()
				return err
			}
			dead = append(dead, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range dead {
			state, msg := Failed, failed
			if r.state == Canceling {
				state, msg = Canceled, canceled
			}
			if _, err := tx.Exec(ctx, `UPDATE tasks SET state = ?, error = ?, finished = ?, updated = ?, lease_until = NULL WHERE id = ?`, state, msg, now, now, r.id); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM task_locks WHERE task_id = ?`, r.id); err != nil {
				return err
			}
		}
		n = int64(len(dead))
		return nil
	})
	return n, err
}
