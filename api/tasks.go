package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"pith/api/href"
	"pith/api/rest"
	"pith/content"
	"pith/meta"
	"pith/task"
)

// resourceFilter matches tasks that locked a resource (an href; a PRN became one as the
// request was read) exclusively, shared or either; its __in form matches tasks that
// locked every one of the resources, as Pulp's.
func resourceFilter(name string, excl *bool) []rest.Filter {
	cond := func(n int) string {
		c := "EXISTS (SELECT 1 FROM task_locks tl WHERE tl.task_id = t.id AND tl.resource IN (" + strings.TrimSuffix(strings.Repeat("?,", n), ",") + ")"
		if excl != nil {
			if *excl {
				c += " AND tl.exclusive"
			} else {
				c += " AND NOT tl.exclusive"
			}
		}
		return c + ")"
	}
	// Finished tasks have freed their locks; match them through the record as well.
	one := func(l *meta.List, d meta.Dialect, v string) error {
		has := d.Contains("t.reserved", false)
		var rc string
		var ra []any
		switch {
		case excl == nil:
			rc, ra = has+" OR "+has, []any{`"` + v + `"`, `"shared:` + v + `"`}
		case *excl:
			rc, ra = has, []any{`"` + v + `"`}
		default:
			rc, ra = has, []any{`"shared:` + v + `"`}
		}
		l.And("("+cond(1)+" OR "+rc+")", append([]any{v}, ra...)...)
		return nil
	}
	in := func(l *meta.List, d meta.Dialect, v string) error {
		parts := rest.SplitComma([]string{v})
		if len(parts) == 0 {
			l.And("1 = 0")
			return nil
		}
		for _, p := range parts {
			one(l, d, p)
		}
		return nil
	}
	return []rest.Filter{
		{Name: name, Type: rest.Custom, Lookups: []string{"exact"}, Apply: one},
		{Name: name + "__in", Type: rest.Custom, Lookups: []string{"exact"}, Apply: in},
	}
}

func taskListSpec() rest.ListSpec {
	t, f := true, false
	fs := []rest.Filter{
		{Name: "child_tasks", Type: rest.Custom, Lookups: []string{"exact"}, Apply: func(l *meta.List, d meta.Dialect, v string) error {
			p, _ := href.Parse(v)
			l.And("t.id = (SELECT c.parent_task_id FROM tasks c WHERE c.pulp_id = ?)", p.ID)
			return nil
		}},
		{Name: "created_resources", Type: rest.Custom, UUID: true, Lookups: []string{"exact"}, Apply: func(l *meta.List, d meta.Dialect, v string) error {
			l.And(d.Contains("t.created_resources", false), `"`+v+`"`)
			return nil
		}},
		rest.TimeFilter("finished_at", "t.finished"),
		{Name: "logging_cid", Col: "t.logging_cid", Lookups: []string{"exact", "contains"}},
		{Name: "name", Col: "t.name", Lookups: []string{"exact", "contains", "in", "ne"}},
		rest.HrefFilter("parent_task", "(SELECT p.pulp_id FROM tasks p WHERE p.id = t.parent_task_id)", "tasks/"),
		rest.TimeFilter("pulp_created", "t.created"),
		rest.TimeFilter("started_at", "t.started"),
		{Name: "state", Col: "t.state", Lookups: []string{"exact", "in", "ne"}},
		rest.HrefFilter("task_group", "(SELECT g.pulp_id FROM task_groups g WHERE g.id = t.task_group_id)", "task-groups/"),
		rest.TimeFilter("unblocked_at", "t.unblocked"),
		rest.HrefFilter("worker", "(SELECT w.pulp_id FROM workers w WHERE w.id = t.worker_id)", "workers/"),
	}
	fs = append(fs, resourceFilter("exclusive_resources", &t)...)
	fs = append(fs, resourceFilter("shared_resources", &f)...)
	fs = append(fs, resourceFilter("reserved_resources", nil)...)
	fs = append(fs, rest.IdentityFilters("t.pulp_id")...)
	return rest.ListSpec{Filters: fs, Ordering: rest.Ordering("t", map[string]string{
		"pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated", "state": "state", "name": "name",
		"logging_cid": "logging_cid", "unblocked_at": "unblocked", "started_at": "started", "finished_at": "finished",
	})}
}

func (s *Server) renderTask(t task.Task) taskResponse {
	out := taskResponse{
		PulpHref: href.Task(t.PulpID), Prn: href.PRN("core.task", t.PulpID),
		PulpCreated: rest.Time(t.Created), PulpLastUpdated: rest.Time(t.Updated),
		State: t.State, Name: t.Name, LoggingCID: t.LoggingCID,
		UnblockedAt: rest.TimePtr(t.Unblocked), StartedAt: rest.TimePtr(t.Started), FinishedAt: rest.TimePtr(t.Finished),
		Error: t.Error, ChildTasks: make([]string, len(t.Children)), ProgressReports: []progressReport{},
		CreatedResources: t.CreatedResources, ReservedResourcesRecord: t.Reserved, Result: t.Result,
	}
	for i, c := range t.Children {
		out.ChildTasks[i] = href.Task(c)
	}
	if t.CreatedBy != nil {
		u := userHref(*t.CreatedBy)
		out.CreatedBy = &u
	}
	if out.Error == nil {
		out.Error = json.RawMessage("null")
	}
	if out.Result == nil {
		out.Result = json.RawMessage("null")
	}
	if out.CreatedResources == nil {
		out.CreatedResources = []string{}
	}
	// Pulp 3.105 records the resources a task locked by PRN; pith locks hrefs.
	out.ReservedResourcesRecord = make([]string, len(t.Reserved))
	for i, res := range t.Reserved {
		shared, bare := "", res
		if b, ok := strings.CutPrefix(res, "shared:"); ok {
			shared, bare = "shared:", b
		}
		if prn, ok := s.env.PRNOf(bare); ok {
			res = shared + prn
		}
		out.ReservedResourcesRecord[i] = res
	}
	if t.WorkerPulpID != nil {
		h := href.Worker(*t.WorkerPulpID)
		out.Worker = &h
	}
	if t.ParentPulpID != nil {
		h := href.Task(*t.ParentPulpID)
		out.ParentTask = &h
	}
	if t.GroupPulpID != nil {
		h := href.Group(*t.GroupPulpID)
		out.TaskGroup = &h
	}
	for _, p := range t.Progress {
		out.ProgressReports = append(out.ProgressReports, progressReport(p))
	}
	return out
}

func (s *Server) taskList() rest.HandlerFunc {
	list := func(ctx context.Context, q meta.Querier, l meta.List) ([]task.Task, int64, error) {
		ts, n, err := task.List(ctx, q, l)
		if err == nil {
			err = task.WithChildren(ctx, q, ts)
		}
		return ts, n, err
	}
	return lister(s, taskListSpec(), s.scope(scoping{viewset: "tasks", id: "t.pulp_id"}, nil), list, each(func(t task.Task) any { return s.renderTask(t) }))
}

func (s *Server) taskRead(w http.ResponseWriter, r *http.Request) error {
	t, err := task.Get(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return s.writeTask(w, r, http.StatusOK, t)
}

// writeTask answers with one task, its children read.
func (s *Server) writeTask(w http.ResponseWriter, r *http.Request, code int, t task.Task) error {
	ts := []task.Task{t}
	if err := task.WithChildren(r.Context(), s.db, ts); err != nil {
		return err
	}
	return rest.WriteOne(w, r, code, s.renderTask(ts[0]))
}

func (s *Server) taskCancel(w http.ResponseWriter, r *http.Request) error {
	var in taskCancel
	raw, err := rest.ReadBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := rest.Decode(raw, &in); err != nil {
		return err
	}
	if in.State != task.Canceled {
		return rest.BadField("state", "%q is not a valid choice; only \"canceled\" is.", in.State)
	}
	t, err := s.env.Queue.Cancel(r.Context(), r.PathValue("id"))
	if err != nil {
		if t.PulpID != "" {
			// Finished already: Pulp answers 409 with the task as it is.
			return s.writeTask(w, r, http.StatusConflict, t)
		}
		return err
	}
	return s.writeTask(w, r, http.StatusOK, t)
}

func (s *Server) taskDelete(w http.ResponseWriter, r *http.Request) error {
	if err := task.Delete(r.Context(), s.db, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) taskPurge(w http.ResponseWriter, r *http.Request) error {
	var in purgeIn
	raw, err := rest.ReadBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := rest.Decode(raw, &in); err != nil {
		return err
	}
	before := time.Now().Add(-30 * 24 * time.Hour)
	if in.FinishedBefore != "" {
		t, err := rest.ParseTime(in.FinishedBefore)
		if err != nil {
			return rest.BadField("finished_before", "Datetime has wrong format: %q.", in.FinishedBefore)
		}
		before = t
	}
	states := in.States
	if len(states) == 0 {
		states = []string{task.Completed}
	}
	for _, st := range states {
		if !task.Final(st) {
			return rest.BadField("states", "%q is not a final task state.", st)
		}
	}
	return s.env.Dispatch(w, r, task.Spec{Name: content.PurgeTask, Args: content.PurgeArgs{Before: before.UnixMicro(), States: states}})
}

func renderGroup(g task.Group) taskGroupResponse {
	out := taskGroupResponse{
		PulpHref: href.Group(g.PulpID), Prn: href.PRN("core.taskgroup", g.PulpID), Description: g.Description, AllTasksDispatched: true,
		Waiting: g.Counts[task.Waiting], Skipped: g.Counts[task.Skipped], Running: g.Counts[task.Running],
		Completed: g.Counts[task.Completed], Canceled: g.Counts[task.Canceled], Failed: g.Counts[task.Failed],
		Canceling: g.Counts[task.Canceling], GroupProgress: []progressReport{}, Tasks: []minimalTask{},
	}
	for _, t := range g.Tasks {
		mt := minimalTask{PulpHref: href.Task(t.PulpID), Prn: href.PRN("core.task", t.PulpID), PulpCreated: rest.Time(t.Created), Name: t.Name,
			State: t.State, StartedAt: rest.TimePtr(t.Started), FinishedAt: rest.TimePtr(t.Finished)}
		if t.WorkerPulpID != nil {
			h := href.Worker(*t.WorkerPulpID)
			mt.Worker = &h
		}
		out.Tasks = append(out.Tasks, mt)
	}
	return out
}

func (s *Server) groupList() rest.HandlerFunc {
	return lister(s, rest.ListSpec{}, s.scope(scoping{viewset: "task-groups", group: "g.id"}, nil), task.ListGroups, each(func(g task.Group) any { return renderGroup(g) }))
}

func (s *Server) groupRead(w http.ResponseWriter, r *http.Request) error {
	g, err := task.GetGroup(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, renderGroup(g))
}

func (s *Server) groupCancel(w http.ResponseWriter, r *http.Request) error {
	var in taskCancel
	raw, err := rest.ReadBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := rest.Decode(raw, &in); err != nil {
		return err
	}
	if in.State != task.Canceled {
		return rest.BadField("state", "%q is not a valid choice; only \"canceled\" is.", in.State)
	}
	g, err := task.GetGroup(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	for _, t := range g.Tasks {
		if !task.Final(t.State) {
			s.env.Queue.Cancel(r.Context(), t.PulpID)
		}
	}
	g, err = task.GetGroup(r.Context(), s.db, g.PulpID)
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, renderGroup(g))
}

func workerListSpec() rest.ListSpec {
	fs := []rest.Filter{
		rest.TimeFilter("last_heartbeat", "w.last_heartbeat"),
		{Name: "missing", Type: rest.Custom, Boolean: true, Lookups: []string{"exact"}, Apply: func(l *meta.List, d meta.Dialect, v string) error {
			since := time.Now().Add(-appTTL).UnixMicro()
			if strings.EqualFold(v, "true") {
				l.And("w.last_heartbeat < ?", since)
			} else {
				l.And("w.last_heartbeat >= ?", since)
			}
			return nil
		}},
		{Name: "name", Col: "w.name", Lookups: rest.NameLookups},
		{Name: "online", Type: rest.Custom, Boolean: true, Lookups: []string{"exact"}, Apply: func(l *meta.List, d meta.Dialect, v string) error {
			since := time.Now().Add(-appTTL).UnixMicro()
			if strings.EqualFold(v, "true") {
				l.And("w.last_heartbeat >= ?", since)
			} else {
				l.And("w.last_heartbeat < ?", since)
			}
			return nil
		}},
	}
	fs = append(fs, rest.IdentityFilters("w.pulp_id")...)
	return rest.ListSpec{Filters: fs, Ordering: rest.Ordering("w", map[string]string{"pulp_id": "pulp_id", "pulp_created": "created", "name": "name", "last_heartbeat": "last_heartbeat"})}
}

func (s *Server) renderWorker(a task.App) workerResponse {
	out := workerResponse{PulpHref: href.Worker(a.PulpID), Prn: href.PRN("core.appstatus", a.PulpID), PulpCreated: rest.Time(a.Created),
		PulpLastUpdated: rest.Time(a.LastHeartbeat), Name: a.Name, LastHeartbeat: rest.Time(a.LastHeartbeat), Versions: s.versionMap()}
	if a.CurrentTask != nil {
		h := href.Task(*a.CurrentTask)
		out.CurrentTask = &h
	}
	return out
}

func (s *Server) workerList() rest.HandlerFunc {
	workers := func(ctx context.Context, q meta.Querier, l meta.List) ([]task.App, int64, error) {
		return task.Apps(ctx, q, "worker", 0, l)
	}
	return lister(s, workerListSpec(), nil, workers, each(func(a task.App) any { return s.renderWorker(a) }))
}

func (s *Server) workerRead(w http.ResponseWriter, r *http.Request) error {
	a, err := task.AppByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, s.renderWorker(a))
}
