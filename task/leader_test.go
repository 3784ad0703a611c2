package task_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"pith/meta"
	"pith/task"
)

// One holder at a time; the others take over only when its lease runs out or it resigns.
func TestElect(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		const ttl = 1_000_000
		now := meta.Now()
		elect := func(holder string, at int64) bool {
			t.Helper()
			ok, err := task.Elect(ctx, db, "maintenance", holder, at, ttl)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if !elect("a", now) {
			t.Fatal("a did not get a free role")
		}
		if elect("b", now+1) {
			t.Fatal("b took the role while a's lease runs")
		}
		if !elect("a", now+2) {
			t.Fatal("a could not renew")
		}
		if elect("b", now+2+ttl) {
			t.Fatal("b took the role at the instant a's lease ends")
		}
		if !elect("b", now+3+ttl) {
			t.Fatal("b did not take the role after a's lease ran out")
		}
		if elect("a", now+4+ttl) {
			t.Fatal("a took the role back from b")
		}
		if err := task.Resign(ctx, db, "maintenance", "b"); err != nil {
			t.Fatal(err)
		}
		if h, _ := task.Leader(ctx, db, "maintenance", now+5+ttl); h != "" {
			t.Fatalf("leader after resign = %q", h)
		}
		if !elect("a", now+5+ttl) {
			t.Fatal("a did not take the role after b resigned")
		}
	})
}

// Several queues over one database: exactly one leads the maintenance loop, and when it
// stops another takes over and still expires dead workers' tasks.
func TestMaintenanceLeaderFailover(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		opt := task.Options{Workers: 1, Poll: 20 * time.Millisecond, Lease: 300 * time.Millisecond}
		var cancels []context.CancelFunc
		for i := 0; i < 3; i++ {
			qctx, cancel := context.WithCancel(ctx)
			defer cancel()
			cancels = append(cancels, cancel)
			o := opt
			o.Name = "w" + string(rune('0'+i))
			if err := task.New(db, nil, o).Start(qctx); err != nil {
				t.Fatal(err)
			}
		}
		leader := waitLeader(t, db, "")
		apps, _, err := task.Apps(ctx, db, "worker", 0, meta.List{})
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range apps {
			if leader == fmtID(a.ID) {
				cancels[i]() // stop the leader's process; it resigns
			}
		}
		next := waitLeader(t, db, leader)
		if next == leader {
			t.Fatal("leadership did not move")
		}
		// The new leader expires a dead worker's task (made running in the transaction
		// that dispatches it, so no live worker claims it first).
		var tk task.Task
		err = db.Tx(ctx, func(tx *meta.Tx) error {
			var err error
			if tk, err = task.DispatchTx(ctx, tx, task.Spec{Name: "orphaned"}); err != nil {
				return err
			}
			_, err = tx.Exec(ctx, `UPDATE tasks SET state = 'running', started = ?, lease_until = ? WHERE pulp_id = ?`, meta.Now(), meta.Now()-1, tk.PulpID)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		waitState(t, db, tk.PulpID, task.Failed)
	})
}

func fmtID(id int64) string { return strconv.FormatInt(id, 10) }

// waitLeader waits until some holder other than not leads the maintenance role.
func waitLeader(t *testing.T, db *meta.DB, not string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		h, err := task.Leader(context.Background(), db, "maintenance", meta.Now())
		if err != nil {
			t.Fatal(err)
		}
		if h != "" && h != not {
			return h
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no maintenance leader")
	return ""
}

// A due schedule dispatches its task once, and again only after that task finished and
// another interval passed.
func TestSchedules(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		if err := task.SetSchedule(ctx, db, "purge", "tasks.purge", map[string]int{"older_than_minutes": 60}, time.Hour); err != nil {
			t.Fatal(err)
		}
		// Setting it again unchanged keeps its next dispatch time.
		ss, _, err := task.Schedules(ctx, db, meta.List{})
		if err != nil || len(ss) != 1 {
			t.Fatalf("schedules = %v, %v", ss, err)
		}
		first := ss[0]
		if err := task.SetSchedule(ctx, db, "purge", "tasks.purge", map[string]int{"older_than_minutes": 60}, time.Hour); err != nil {
			t.Fatal(err)
		}
		if s, _ := task.ScheduleByPulpID(ctx, db, first.PulpID); s.NextDispatch != first.NextDispatch || s.Interval != time.Hour {
			t.Fatalf("re-set schedule moved: %+v -> %+v", first, s)
		}
		if n, _ := task.DispatchDue(ctx, db, meta.Now()); n != 0 {
			t.Fatalf("dispatched %d before due", n)
		}
		due := first.NextDispatch
		n, err := task.DispatchDue(ctx, db, due)
		if err != nil || n != 1 {
			t.Fatalf("dispatched %d, %v at due time", n, err)
		}
		s, _ := task.ScheduleByPulpID(ctx, db, first.PulpID)
		if s.LastTask == nil || s.NextDispatch != due+time.Hour.Microseconds() {
			t.Fatalf("after dispatch: %+v", s)
		}
		tk, err := task.Get(ctx, db, *s.LastTask)
		if err != nil || tk.Name != "tasks.purge" || string(tk.Args) != `{"older_than_minutes":60}` {
			t.Fatalf("dispatched task %+v, %v", tk, err)
		}
		// Still waiting: the next interval does not stack a second task.
		if n, _ := task.DispatchDue(ctx, db, s.NextDispatch); n != 0 {
			t.Fatalf("dispatched %d while the last task is unfinished", n)
		}
		var ran atomic.Int32
		qctx, cancel := context.WithCancel(ctx)
		defer cancel()
		q := task.New(db, map[string]task.Func{"tasks.purge": func(context.Context, *task.Run) error { ran.Add(1); return nil }},
			task.Options{Workers: 1, Poll: 20 * time.Millisecond})
		if err := q.Start(qctx); err != nil {
			t.Fatal(err)
		}
		waitState(t, db, tk.PulpID, task.Completed)
		if n, _ := task.DispatchDue(ctx, db, s.NextDispatch); n != 1 {
			t.Fatalf("dispatched %d after the last task finished", n)
		}
		// Interval 0 removes the schedule.
		if err := task.SetSchedule(ctx, db, "purge", "", nil, 0); err != nil {
			t.Fatal(err)
		}
		if ss, _, _ := task.Schedules(ctx, db, meta.List{}); len(ss) != 0 {
			t.Fatalf("schedules after removal = %v", ss)
		}
	})
}
