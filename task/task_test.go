package task_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"pith/internal/testpg"
	"pith/meta"
	"pith/task"
)

func TestMain(m *testing.M) { testpg.Main(m) }

func forEachDB(t *testing.T, fn func(t *testing.T, db *meta.DB)) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			fn(t, openDB(t, engine))
		})
	}
}

// openDB opens a migrated database of an engine (sqlite or postgres) for a test.
func openDB(t *testing.T, engine string) *meta.DB {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "pith.db")
	if engine == "postgres" {
		dsn = testpg.URL(t)
	}
	ctx := context.Background()
	db, err := meta.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return db
}

// waitState polls a task until it reaches a state (or fails the test after a while; the
// bound is generous and only guards against hangs).
func waitState(t *testing.T, db *meta.DB, id, state string) task.Task {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		tk, err := task.Get(context.Background(), db, id)
		if err != nil {
			t.Fatal(err)
		}
		if tk.State == state {
			return tk
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s (%s) is %s, want %s; error %s", id, tk.Name, tk.State, state, tk.Error)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestResourceLocksAreFIFO(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var mu sync.Mutex
		var order []string
		running := map[string]bool{}
		overlap := false
		release := make(chan struct{})
		funcs := map[string]task.Func{
			"work": func(ctx context.Context, r *task.Run) error {
				var a struct{ Name string }
				r.Args(&a)
				res := "repo"
				if a.Name == "other" {
					res = "remote"
				}
				mu.Lock()
				order = append(order, a.Name)
				if running[res] {
					overlap = true
				}
				running[res] = true
				mu.Unlock()
				if a.Name == "first" {
					<-release
				}
				mu.Lock()
				delete(running, res)
				mu.Unlock()
				return nil
			},
		}
		q := task.New(db, funcs, task.Options{Workers: 3, Poll: 50 * time.Millisecond})
		var ids []string
		for _, n := range []string{"first", "second", "third"} {
			tk, err := q.Dispatch(ctx, task.Spec{Name: "work", Args: map[string]string{"Name": n}, Exclusive: []string{"/repo/1/"}})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, tk.PulpID)
		}
		// A task on another resource runs while the first holds the repository.
		other, _ := q.Dispatch(ctx, task.Spec{Name: "work", Args: map[string]string{"Name": "other"}, Shared: []string{"/remote/1/"}})
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		waitState(t, db, other.PulpID, task.Completed)
		if tk := waitState(t, db, ids[1], task.Waiting); tk.Started != nil {
			t.Fatal("second task started while the first held the lock")
		}
		close(release)
		for _, id := range ids {
			waitState(t, db, id, task.Completed)
		}
		mu.Lock()
		defer mu.Unlock()
		if overlap {
			t.Error("two tasks on the same resource ran at once")
		}
		var repoOrder []string
		for _, n := range order {
			if n != "other" {
				repoOrder = append(repoOrder, n)
			}
		}
		if len(repoOrder) != 3 || repoOrder[0] != "first" || repoOrder[1] != "second" || repoOrder[2] != "third" {
			t.Errorf("order on the resource = %v, want first, second, third", repoOrder)
		}
	})
}

func TestCancelAndFailure(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		started := make(chan struct{}, 1)
		funcs := map[string]task.Func{
			"block": func(ctx context.Context, r *task.Run) error {
				p := r.Progress("block", "Blocking", 10)
				p.Add(3)
				started <- struct{}{}
				<-ctx.Done()
				return ctx.Err()
			},
			"fail": func(ctx context.Context, r *task.Run) error { return errors.New("file x.iso: sha256 mismatch") },
			"ok": func(ctx context.Context, r *task.Run) error {
				r.Created("/pulp/api/v3/things/1/")
				return r.SetResult(map[string]int{"n": 1})
			},
		}
		q := task.New(db, funcs, task.Options{Workers: 1, Poll: 50 * time.Millisecond})
		blocker, _ := q.Dispatch(ctx, task.Spec{Name: "block", Exclusive: []string{"/r/"}})
		waiting, _ := q.Dispatch(ctx, task.Spec{Name: "ok", Exclusive: []string{"/r/"}})
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		<-started
		if tk, err := q.Cancel(ctx, waiting.PulpID); err != nil || tk.State != task.Canceled {
			t.Fatalf("cancel waiting: %v %v", tk.State, err)
		}
		if _, err := q.Cancel(ctx, blocker.PulpID); err != nil {
			t.Fatal(err)
		}
		tk := waitState(t, db, blocker.PulpID, task.Canceled)
		if len(tk.Progress) != 1 || tk.Progress[0].Done != 3 {
			t.Errorf("progress = %+v", tk.Progress)
		}
		if _, err := q.Cancel(ctx, blocker.PulpID); !errors.Is(err, meta.ErrConflict) {
			t.Errorf("cancel of a finished task: %v, want ErrConflict", err)
		}
		f, _ := q.Dispatch(ctx, task.Spec{Name: "fail"})
		tk = waitState(t, db, f.PulpID, task.Failed)
		if string(tk.Error) == "" || !contains(string(tk.Error), "x.iso: sha256 mismatch") {
			t.Errorf("error = %s", tk.Error)
		}
		okT, _ := q.Dispatch(ctx, task.Spec{Name: "ok", Exclusive: []string{"/r/"}})
		tk = waitState(t, db, okT.PulpID, task.Completed)
		if len(tk.CreatedResources) != 1 || string(tk.Result) != `{"n":1}` {
			t.Errorf("created %v result %s", tk.CreatedResources, tk.Result)
		}
		n, err := task.Purge(ctx, db, meta.Now()+1, []string{task.Completed, task.Failed, task.Canceled})
		if err != nil || n != 4 {
			t.Errorf("purge removed %d tasks (%v), want 4", n, err)
		}
	})
}

// A task whose worker died (its lease ran out) is failed and its locks are freed, so the
// next task on the same resource runs.
func TestLeaseExpiry(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		dead := task.New(db, nil, task.Options{})
		tk, _ := dead.Dispatch(ctx, task.Spec{Name: "sync", Exclusive: []string{"/repo/"}})
		// Simulate a worker that claimed the task and vanished.
		if _, err := db.Exec(ctx, `UPDATE tasks SET state = 'running', started = ?, lease_until = ? WHERE pulp_id = ?`, meta.Now(), meta.Now()-1, tk.PulpID); err != nil {
			t.Fatal(err)
		}
		ran := make(chan struct{}, 1)
		q := task.New(db, map[string]task.Func{"next": func(ctx context.Context, r *task.Run) error { ran <- struct{}{}; return nil }},
			task.Options{Workers: 1, Poll: 20 * time.Millisecond, Lease: 300 * time.Millisecond})
		next, _ := q.Dispatch(ctx, task.Spec{Name: "next", Exclusive: []string{"/repo/"}})
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		got := waitState(t, db, tk.PulpID, task.Failed)
		if !contains(string(got.Error), "worker has gone missing") {
			t.Errorf("error = %s", got.Error)
		}
		waitState(t, db, next.PulpID, task.Completed)
	})
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// A failing task's error, its progress messages and the log line about it never show
// the credentials of a URL they quote.
func TestURLCredentialsRedacted(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		const u = "https://alice:hunter2@example.com/repo/"
		funcs := map[string]task.Func{"fail": func(ctx context.Context, r *task.Run) error {
			r.Progress("sync.skipped", "Skipping: no repository at "+u, 0).Finish(nil)
			return fmt.Errorf("GET %srepodata/repomd.xml: 404 Not Found", u)
		}}
		logged := &syncBuffer{}
		log := slog.New(slog.NewTextHandler(logged, nil))
		q := task.New(db, funcs, task.Options{Workers: 1, Poll: 20 * time.Millisecond, Logger: log})
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		f, _ := q.Dispatch(ctx, task.Spec{Name: "fail"})
		tk := waitState(t, db, f.PulpID, task.Failed)
		b, _ := json.Marshal(tk)
		if strings.Contains(string(b), "hunter2") || !strings.Contains(string(tk.Error), "alice:xxxxx@example.com") {
			t.Errorf("task shows the password: %s", b)
		}
		// The line is written before the task's state.
		if out := logged.String(); strings.Contains(out, "hunter2") || !strings.Contains(out, "alice:xxxxx@") {
			t.Errorf("log shows the password:\n%s", out)
		}
	})
}

// syncBuffer is a log destination that workers write and the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The tasks a worker left running when its process ended are failed at once when its
// successor says it restarted, their locks freed; other workers' tasks stay.
func TestRestarted(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		old, err := task.RegisterApp(ctx, db, "1@host", "worker")
		if err != nil {
			t.Fatal(err)
		}
		// A process that reuses the name gets a row of its own.
		other, err := task.RegisterApp(ctx, db, "1@host", "worker")
		if err != nil || other.ID == old.ID {
			t.Fatalf("second registration: %+v, %v; want a row of its own", other, err)
		}
		q := task.New(db, nil, task.Options{})
		claim := func(worker int64, state string) task.Task {
			t.Helper()
			tk, err := q.Dispatch(ctx, task.Spec{Name: "sync", Exclusive: []string{fmt.Sprintf("/repo/%d/", worker)}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(ctx, `UPDATE tasks SET state = ?, worker_id = ?, started = ?, lease_until = ? WHERE id = ?`,
				state, worker, meta.Now(), meta.Now()+time.Hour.Microseconds(), tk.ID); err != nil {
				t.Fatal(err)
			}
			return tk
		}
		running, canceling, others := claim(old.ID, task.Running), claim(old.ID, task.Canceling), claim(other.ID, task.Running)
		if n, err := task.Restarted(ctx, db, old.PulpID); n != 2 || err != nil {
			t.Fatalf("restarted ended %d tasks, %v; want 2", n, err)
		}
		if tk, _ := task.Get(ctx, db, running.PulpID); tk.State != task.Failed || !contains(string(tk.Error), "the worker running the task restarted") {
			t.Errorf("running task: %s %s", tk.State, tk.Error)
		}
		if tk, _ := task.Get(ctx, db, canceling.PulpID); tk.State != task.Canceled {
			t.Errorf("canceling task: %s", tk.State)
		}
		if tk, _ := task.Get(ctx, db, others.PulpID); tk.State != task.Running {
			t.Errorf("the other worker's task: %s", tk.State)
		}
		var locks int
		db.QueryRow(ctx, `SELECT count(*) FROM task_locks`).Scan(&locks)
		if locks != 1 {
			t.Errorf("%d locks left, want the other worker's task's", locks)
		}
	})
}
