package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"pith/meta"
	"pith/task"
)

// The task names of pith's own maintenance tasks (Pulp has no counterpart).
const uploadCleanupTask = "pith.app.tasks.upload.cleanup"

// SetSchedules records the maintenance schedules the configuration asks for (orphan
// cleanup, task purge, upload cleanup); the maintenance leader dispatches them. A
// setting of 0 removes its schedule.
func (s *Server) SetSchedules(ctx context.Context) error {
	c := s.cfg
	every := func(protection time.Duration) time.Duration {
		if protection <= 0 {
			return 0
		}
		return min(protection, time.Hour)
	}
	sets := []struct {
		name, task string
		args       any
		interval   time.Duration
	}{
		{"orphan cleanup", "pulpcore.app.tasks.orphan.orphan_cleanup",
			OrphanArgs{ProtectionMins: int64(c.OrphanProtection / time.Minute)}, c.OrphanCleanupInterval},
		{"task purge", "pulpcore.app.tasks.purge.purge",
			purgeArgs{OlderThanMins: int64(c.TaskProtection / time.Minute), States: []string{task.Completed, task.Failed, task.Canceled, task.Skipped}},
			every(c.TaskProtection)},
		{"upload cleanup", uploadCleanupTask, cleanupArgs{OlderThanMins: int64(c.UploadProtection / time.Minute)}, every(c.UploadProtection)},
	}
	for _, x := range sets {
		if err := task.SetSchedule(ctx, s.db, x.name, x.task, x.args, x.interval); err != nil {
			return err
		}
	}
	return nil
}

type cleanupArgs struct {
	OlderThanMins int64 `json:"older_than_minutes"`
}

// runUploadCleanup deletes uploads whose last chunk came longer ago than the upload
// protection time, with their stored chunks.
func (s *Server) runUploadCleanup(ctx context.Context, r *task.Run) error {
	var a cleanupArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	l := meta.List{}
	l.And("u.updated < ?", time.Now().Add(-time.Duration(a.OlderThanMins)*time.Minute).UnixMicro())
	us, _, err := meta.ListUploads(ctx, s.db, l)
	if err != nil {
		return err
	}
	p := r.Progress("clean-up.uploads", "Clean up abandoned uploads", int64(len(us)))
	for _, u := range us {
		if err := s.deleteUpload(ctx, u); err != nil {
			return err
		}
		p.Add(1)
	}
	p.Finish(nil)
	return nil
}

func scheduleListSpec() listSpec {
	fs := []filter{
		{name: "name", col: "s.name", lookups: []string{"exact", "contains"}},
		{name: "task_name", col: "s.task_name", lookups: []string{"exact", "contains"}},
	}
	fs = append(fs, identityFilters("s.pulp_id")...)
	return listSpec{filters: fs, ordering: ordering("s", map[string]string{"pulp_id": "pulp_id", "pulp_created": "created",
		"pulp_last_updated": "updated", "name": "name", "task_name": "task_name", "next_dispatch": "next_dispatch"})}
}

func renderSchedule(sc task.Schedule) taskScheduleResponse {
	next := ts(sc.NextDispatch)
	out := taskScheduleResponse{PulpHref: scheduleHref(sc.PulpID), Prn: prn("core.taskschedule", sc.PulpID), PulpCreated: ts(sc.Created),
		PulpLastUpdated: ts(sc.Updated), Name: sc.Name, TaskName: sc.TaskName, NextDispatch: &next}
	d := durationString(sc.Interval)
	out.DispatchInterval = &d
	if sc.LastTask != nil {
		h := taskHref(*sc.LastTask)
		out.LastTask = &h
	}
	return out
}

// durationString writes a duration the way Django serializes a DurationField:
// "[D ]HH:MM:SS[.ffffff]".
func durationString(d time.Duration) string {
	us := d.Microseconds()
	days, us := us/86_400_000_000, us%86_400_000_000
	h, us := us/3_600_000_000, us%3_600_000_000
	m, us := us/60_000_000, us%60_000_000
	sec, us := us/1_000_000, us%1_000_000
	out := fmt.Sprintf("%02d:%02d:%02d", h, m, sec)
	if days > 0 {
		out = fmt.Sprintf("%d %s", days, out)
	}
	if us > 0 {
		out += fmt.Sprintf(".%06d", us)
	}
	return out
}

func (s *Server) scheduleList(w http.ResponseWriter, r *http.Request) error {
	q, err := parseList(r, s.db.Dialect(), scheduleListSpec())
	if err != nil {
		return err
	}
	ss, total, err := task.Schedules(r.Context(), s.db, q.list)
	if err != nil {
		return err
	}
	items := make([]any, len(ss))
	for i, sc := range ss {
		items[i] = renderSchedule(sc)
	}
	return writePage(w, r, q, total, items)
}

func (s *Server) scheduleRead(w http.ResponseWriter, r *http.Request) error {
	sc, err := task.ScheduleByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusOK, renderSchedule(sc))
}
