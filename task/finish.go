package task

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"pith/meta"
	"pith/secret"
)

// outcome is what the final write of a task records.
type outcome struct {
	state    string
	errJSON  string // "" when the task succeeded
	result   json.RawMessage
	progress *string // the progress reports (JSON); nil leaves them as saved
	created  *string // the created resources (JSON); nil leaves them as saved
}

// maxDescription bounds the error text a task records.
const maxDescription = 64 << 10

// Backoff of the final write of a task while it cannot be written.
const (
	firstRetry = 100 * time.Millisecond
	maxRetry   = 5 * time.Second
	// refusals is how many times the outcome may fail to be written while a plain
	// write of the same task succeeds before a plain failure is recorded instead.
	refusals = 5
)

func (q *Queue) run(parent context.Context, t Task) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	q.mu.Lock()
	q.running[t.PulpID] = cancel
	q.held[t.ID] = true
	q.mu.Unlock()
	stop := context.AfterFunc(parent, cancel)
	defer func() {
		stop()
		cancel()
		q.mu.Lock()
		delete(q.running, t.PulpID)
		delete(q.held, t.ID)
		q.mu.Unlock()
	}()
	r := &Run{Task: t, DB: q.db, q: q, ctx: context.WithoutCancel(ctx)}
	fn := q.profiled(t, q.funcs[t.Name])
	var err error
	if fn == nil {
		err = fmt.Errorf("no task function named %q in this process", t.Name)
	} else {
		err = safely(ctx, fn, r)
	}
	progress, created := r.snapshot()
	o := outcome{state: Completed, result: r.result, progress: &progress, created: &created}
	if err != nil {
		o.state = Failed
		if ctx.Err() != nil {
			o.state = Canceled
			if parent.Err() != nil {
				o.state = Failed
				err = fmt.Errorf("worker shut down while the task ran: %w", err)
			}
		}
		// An error may quote a URL with credentials (a remote's, an upstream redirect's).
		desc := secret.Redact(err.Error())
		o.errJSON = errorJSON(desc)
		q.opt.Logger.Info("task ended", "task", t.PulpID, "name", t.Name, "state", o.state, "err", desc)
	}
	q.settle(parent, t, o)
}

func safely(ctx context.Context, fn Func, r *Run) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("task panicked: %v", p)
		}
	}()
	return fn(ctx, r)
}

// errorJSON is Pulp's error object for a description, cut to maxDescription bytes.
func errorJSON(desc string) string {
	if len(desc) > maxDescription {
		cut := maxDescription
		for cut > 0 && !utf8.RuneStart(desc[cut]) {
			cut--
		}
		desc = desc[:cut] + "…"
	}
	b, _ := json.Marshal(map[string]string{"description": desc, "traceback": ""})
	return string(b)
}

// settle writes a task's outcome, retrying until the write lands. While it does not (the
// store is full or gone), this process holds the task: it renews its lease when it can,
// never expires it itself, and claims no other work, as whatever keeps this write from
// landing would keep a new task's from landing too. Only the end of the process gives up, and then the lease (or this
// worker's next start) ends the task. Should the outcome fail again and again while a
// plain write of the same task lands, the outcome itself is what cannot be written: a
// failure saying so is recorded instead, so no task stays running for good.
func (q *Queue) settle(parent context.Context, t Task, o outcome) {
	ctx := context.WithoutCancel(parent)
	err := q.finish(ctx, t.ID, o)
	if err == nil {
		return
	}
	q.stalled.Add(1)
	defer func() {
		q.stalled.Add(-1)
		q.Wake()
	}()
	delay, refused := firstRetry, 0
	for attempt := 2; ; attempt++ {
		q.opt.Logger.Error("cannot record the end of a task; this worker takes no new task until it can",
			"task", t.PulpID, "name", t.Name, "state", o.state, "attempt", attempt-1, "retry_in", delay, "err", err)
		select {
		case <-parent.Done():
			q.opt.Logger.Error("gave up recording the end of a task: the process ends; its lease or this worker's next start ends it",
				"task", t.PulpID, "name", t.Name)
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, maxRetry)
		if err = q.finish(ctx, t.ID, o); err == nil {
			q.opt.Logger.Info("recorded the end of a task", "task", t.PulpID, "name", t.Name, "state", o.state, "attempts", attempt)
			return
		}
		if _, perr := q.db.Exec(ctx, `UPDATE tasks SET updated = ? WHERE id = ?`, meta.Now(), t.ID); perr != nil {
			refused = 0 // nothing can be written: wait for the store
			continue
		}
		if refused++; refused == refusals {
			o = outcome{state: Failed, errJSON: errorJSON(fmt.Sprintf("the task ended (%s) but its outcome could not be recorded: %v", o.state, err))}
		}
	}
}

// finish records a task's outcome and frees its locks, unless the task was ended
// meanwhile by another (its lease ran out): that outcome stands.
func (q *Queue) finish(ctx context.Context, id int64, o outcome) error {
	var errVal, resVal any
	if o.errJSON != "" {
		errVal = o.errJSON
	}
	if o.result != nil {
		resVal = string(o.result)
	}
	now := meta.Now()
	err := q.db.Tx(ctx, func(tx *meta.Tx) error {
		// A cancel request that arrived while the task was completing still wins only if
		// the function saw it; otherwise the real outcome is recorded.
		if _, err := tx.Exec(ctx, `UPDATE tasks SET state = ?, finished = ?, updated = ?, error = ?, result = ?,
			progress = COALESCE(?, progress), created_resources = COALESCE(?, created_resources), lease_until = NULL
			WHERE id = ? AND state IN ('running', 'canceling')`,
			o.state, now, now, errVal, resVal, o.progress, o.created, id); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM task_locks WHERE task_id = ?`, id)
		return err
	})
	if err != nil {
		return err
	}
	q.mu.Lock()
	if ch, ok := q.waiters[id]; ok {
		close(ch)
		delete(q.waiters, id)
	}
	q.mu.Unlock()
	q.Wake()
	return nil
}
