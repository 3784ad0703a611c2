package task

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"pith/meta"
)

// maintenanceRole names the leadership the maintenance loop runs under.
const maintenanceRole = "maintenance"

// Elect takes or renews the named leadership for holder until now+ttl (µs). It returns
// true while holder leads. One statement: a process takes the role when nobody holds it
// or the holder's lease ran out, so a vanished leader is replaced within ttl, and two
// processes can never both get true for overlapping leases.
func Elect(ctx context.Context, db *meta.DB, role, holder string, now, ttl int64) (bool, error) {
	var got string
	err := db.QueryRow(ctx, `INSERT INTO leaders (name, holder, until) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until
		WHERE leaders.holder = excluded.holder OR leaders.until < ?
		RETURNING holder`, role, holder, now+ttl, now).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("elect %s leader: %w", role, err)
	}
	return got == holder, nil
}

// Resign gives up the named leadership if holder has it, so another process takes over
// at once instead of after the lease.
func Resign(ctx context.Context, db *meta.DB, role, holder string) error {
	_, err := db.Exec(ctx, `DELETE FROM leaders WHERE name = ? AND holder = ?`, role, holder)
	return err
}

// Leader returns the current holder of the named leadership, or "" when the lease ran out.
func Leader(ctx context.Context, db meta.Querier, role string, now int64) (string, error) {
	var holder string
	err := db.QueryRow(ctx, `SELECT holder FROM leaders WHERE name = ? AND until >= ?`, role, now).Scan(&holder)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return holder, err
}

// maintain runs the maintenance loop: every tick each worker process tries to lead;
// the leader alone fails tasks whose lease expired and dispatches due schedules.
func (q *Queue) maintain(ctx context.Context) {
	holder := fmt.Sprint(q.workerID)
	tick := time.NewTicker(q.opt.Lease / 3)
	defer tick.Stop()
	leading := false
	for {
		now := meta.Now()
		ok, err := Elect(ctx, q.db, maintenanceRole, holder, now, q.opt.Lease.Microseconds())
		if err != nil && ctx.Err() == nil {
			q.opt.Logger.Error("leader election failed", "err", err)
		}
		if ok != leading {
			leading = ok
			q.opt.Logger.Info("maintenance leadership", "leading", ok, "worker", q.opt.Name)
		}
		if ok {
			q.maintenance(ctx, now)
		}
		select {
		case <-ctx.Done():
			if leading {
				Resign(context.WithoutCancel(ctx), q.db, maintenanceRole, holder)
			}
			return
		case <-tick.C:
		}
	}
}

func (q *Queue) maintenance(ctx context.Context, now int64) {
	if n, err := q.expireLeases(ctx, now); err != nil && ctx.Err() == nil {
		q.opt.Logger.Error("lease expiry failed", "err", err)
	} else if n > 0 {
		q.opt.Logger.Warn("failed tasks whose worker went missing", "count", n)
		q.Wake()
	}
	if n, err := DispatchDue(ctx, q.db, now); err != nil && ctx.Err() == nil {
		q.opt.Logger.Error("scheduled dispatch failed", "err", err)
	} else if n > 0 {
		q.Wake()
		q.db.Notify(ctx, wakeChannel, "")
	}
}
