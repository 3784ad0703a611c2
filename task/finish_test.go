package task_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"pith/meta"
	"pith/task"
)

// refuse makes the database refuse the updates of tasks matching cond (SQL on NEW) as a
// full disk would, until the returned function is called.
func refuse(t *testing.T, db *meta.DB, cond string) (allow func()) {
	t.Helper()
	ctx := context.Background()
	stmts := []string{`CREATE TRIGGER refuse BEFORE UPDATE ON tasks WHEN ` + cond + ` BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`}
	drop := `DROP TRIGGER refuse`
	if db.Dialect() == meta.Postgres {
		stmts = []string{
			`CREATE OR REPLACE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
				RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100'; END $$`,
			`CREATE TRIGGER refuse BEFORE UPDATE ON tasks FOR EACH ROW WHEN (` + cond + `) EXECUTE FUNCTION refuse()`,
		}
		drop = `DROP TRIGGER refuse ON tasks`
	}
	for _, s := range stmts {
		if _, err := db.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	var once sync.Once
	allow = func() {
		once.Do(func() {
			if _, err := db.Exec(ctx, drop); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Cleanup(allow)
	return allow
}

// logs is a logger whose output a test reads while the queue writes it.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// wait waits until the log holds n lines containing s.
func (l *logs) wait(t *testing.T, s string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		l.mu.Lock()
		got := strings.Count(l.buf.String(), s)
		l.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log never held %d lines with %q", n, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A task whose end cannot be written (the disk filled while it ran) stays this worker's:
// its end is written again until it lands, its lapsed lease does not make it "gone
// missing", and the worker claims nothing else; once the store takes writes again, the
// task ends with its own error and the next task runs.
func TestFinishRetriedUntilWritten(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var allow func()
		funcs := map[string]task.Func{
			"sync": func(ctx context.Context, r *task.Run) error {
				// Every write of a task but a claim, as with a full disk; claims stay
				// possible, so that only the worker itself keeps from claiming.
				allow = refuse(t, db, `NOT (OLD.state = 'waiting' AND NEW.state = 'running')`)
				return errors.New("the filesystem blob storage is full")
			},
			"next": func(ctx context.Context, r *task.Run) error { return nil },
		}
		l := &logs{}
		q := task.New(db, funcs, task.Options{Workers: 2, Poll: 20 * time.Millisecond, Lease: 300 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(l, nil))})
		first, _ := q.Dispatch(ctx, task.Spec{Name: "sync", Exclusive: []string{"/repo/1/"}})
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		l.wait(t, "cannot record the end of a task", 3) // past the lease
		next, _ := q.Dispatch(ctx, task.Spec{Name: "next", Exclusive: []string{"/repo/2/"}})
		l.wait(t, "cannot record the end of a task", 5)
		if tk, _ := task.Get(ctx, db, next.PulpID); tk.State != task.Waiting {
			t.Fatalf("a task was claimed while the end of another could not be written: %s", tk.State)
		}
		if tk, _ := task.Get(ctx, db, first.PulpID); tk.State != task.Running {
			t.Fatalf("the task whose end cannot be written: %s %s; want running", tk.State, tk.Error)
		}
		allow()
		got := waitState(t, db, first.PulpID, task.Failed)
		if !contains(string(got.Error), "the filesystem blob storage is full") {
			t.Errorf("error = %s, want the task's own", got.Error)
		}
		done := waitState(t, db, next.PulpID, task.Completed)
		if *done.Started < *got.Finished {
			t.Errorf("the next task started before the end of the first was written")
		}
	})
}

// A task whose outcome can never be written while other writes land is recorded as
// failed, saying so, rather than running for good.
func TestUnwritableOutcomeFails(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		refuse(t, db, `NEW.result IS NOT NULL`)
		q := task.New(db, map[string]task.Func{"ok": func(ctx context.Context, r *task.Run) error { return r.SetResult(1) }},
			task.Options{Workers: 1, Poll: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs{}, nil))})
		tk, _ := q.Dispatch(ctx, task.Spec{Name: "ok", Exclusive: []string{"/repo/"}})
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		got := waitState(t, db, tk.PulpID, task.Failed)
		if !contains(string(got.Error), "the task ended (completed) but its outcome could not be recorded") {
			t.Errorf("error = %s", got.Error)
		}
	})
}

// The heartbeat renews the leases of the tasks this process runs, and no others: a task
// left running under this worker that nothing here will end is failed when its lease
// runs out.
func TestHeartbeatRenewsHeldTasksOnly(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		q := task.New(db, nil, task.Options{Workers: 1, Poll: 20 * time.Millisecond, Lease: 300 * time.Millisecond})
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		err := db.Tx(ctx, func(tx *meta.Tx) error {
			tk, err := task.DispatchTx(ctx, tx, task.Spec{Name: "forgotten"})
			if err != nil {
				return err
			}
			_, err = tx.Exec(ctx, `UPDATE tasks SET state = 'running', started = ?, lease_until = ?,
				worker_id = (SELECT id FROM workers WHERE pulp_id = ?) WHERE id = ?`, meta.Now(), meta.Now()+200_000, q.Worker(), tk.ID)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		var id string
		db.QueryRow(ctx, `SELECT pulp_id FROM tasks WHERE name = 'forgotten'`).Scan(&id)
		got := waitState(t, db, id, task.Failed)
		if !contains(string(got.Error), "worker has gone missing") {
			t.Errorf("error = %s", got.Error)
		}
	})
}
