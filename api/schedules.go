package api

import (
	"fmt"
	"net/http"
	"time"

	"pith/api/href"
	"pith/api/rest"
	"pith/task"
)

func scheduleListSpec() rest.ListSpec {
	fs := []rest.Filter{
		{Name: "name", Col: "s.name", Lookups: []string{"exact", "contains"}},
		{Name: "task_name", Col: "s.task_name", Lookups: []string{"exact", "contains"}},
	}
	fs = append(fs, rest.IdentityFilters("s.pulp_id")...)
	return rest.ListSpec{Filters: fs, Ordering: rest.Ordering("s", map[string]string{"pulp_id": "pulp_id", "pulp_created": "created",
		"pulp_last_updated": "updated", "name": "name", "task_name": "task_name", "next_dispatch": "next_dispatch"})}
}

func renderSchedule(sc task.Schedule) taskScheduleResponse {
	next := rest.Time(sc.NextDispatch)
	out := taskScheduleResponse{PulpHref: href.Schedule(sc.PulpID), Prn: href.PRN("core.taskschedule", sc.PulpID), PulpCreated: rest.Time(sc.Created),
		PulpLastUpdated: rest.Time(sc.Updated), Name: sc.Name, TaskName: sc.TaskName, NextDispatch: &next}
	d := durationString(sc.Interval)
	out.DispatchInterval = &d
	if sc.LastTask != nil {
		h := href.Task(*sc.LastTask)
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

func (s *Server) scheduleList() rest.HandlerFunc {
	return lister(s, scheduleListSpec(), s.scope(scoping{viewset: "task-schedules", id: "s.pulp_id"}, nil), task.Schedules, each(func(sc task.Schedule) any { return renderSchedule(sc) }))
}

func (s *Server) scheduleRead(w http.ResponseWriter, r *http.Request) error {
	sc, err := task.ScheduleByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, renderSchedule(sc))
}
