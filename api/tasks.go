package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"pith/meta"
	"pith/task"
)

// identity filters every resource list has: pulp_id__in, pulp_href__in, prn__in.
func identityFilters(col string) []filter {
	ids := func(conv func(string) (string, bool)) func(l *meta.List, d meta.Dialect, v string) error {
		return func(l *meta.List, d meta.Dialect, v string) error {
			parts := splitComma([]string{v})
			if len(parts) == 0 {
				l.And("1 = 0")
				return nil
			}
			args := make([]any, 0, len(parts))
			for _, p := range parts {
				id, ok := conv(p)
				if !ok {
					id = "-"
				}
				args = append(args, id)
			}
			l.And(col+" IN ("+strings.TrimSuffix(strings.Repeat("?,", len(args)), ",")+")", args...)
			return nil
		}
	}
	return []filter{
		{name: "pulp_id__in", kind: kCustom, lookups: []string{"exact"}, apply: ids(func(s string) (string, bool) { return s, true })},
		{name: "pulp_href__in", kind: kCustom, lookups: []string{"exact"}, apply: ids(func(s string) (string, bool) {
			p, ok := parseHref(s)
			return p.id, ok
		})},
		{name: "prn__in", kind: kCustom, lookups: []string{"exact"}, apply: ids(func(s string) (string, bool) {
			i := strings.LastIndex(s, ":")
			return s[i+1:], strings.HasPrefix(s, "prn:") && i > 0
		})},
	}
}

func timeFilter(name, col string) filter {
	return filter{name: name, col: col, kind: kTime, lookups: []string{"exact", "gt", "gte", "isnull", "lt", "lte", "range"}}
}

var nameLookups = []string{"exact", "contains", "icontains", "iexact", "in", "iregex", "istartswith", "regex", "startswith"}

// resourceFilter matches tasks that locked a resource (href) exclusively, shared or either.
func resourceFilter(name string, excl *bool) []filter {
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
	rec := func(d meta.Dialect, v string) (string, []any) {
		pat := v
		if excl != nil && !*excl {
			pat = "shared:" + v
		}
		return d.Contains("t.reserved", false), []any{`"` + pat + `"`}
	}
	one := func(l *meta.List, d meta.Dialect, v string) error {
		rc, ra := rec(d, v)
		if excl != nil && *excl {
			rc += " AND NOT " + d.Contains("t.reserved", false)
			ra = append(ra, `"shared:`+v+`"`)
		}
		l.And("("+cond(1)+" OR ("+rc+"))", append([]any{v}, ra...)...)
		return nil
	}
	in := func(l *meta.List, d meta.Dialect, v string) error {
		parts := splitComma([]string{v})
		var ors []string
		var args []any
		for _, p := range parts {
			sub := meta.List{}
			one(&sub, d, p)
			ors = append(ors, sub.Where[0])
			args = append(args, sub.Args...)
		}
		if len(ors) == 0 {
			l.And("1 = 0")
			return nil
		}
		l.And("("+strings.Join(ors, " OR ")+")", args...)
		return nil
	}
	return []filter{
		{name: name, kind: kCustom, lookups: []string{"exact"}, apply: one},
		{name: name + "__in", kind: kCustom, lookups: []string{"exact"}, apply: in},
	}
}

func hrefFilter(name, col, collection string) filter {
	return filter{name: name, kind: kCustom, lookups: []string{"exact"}, apply: func(l *meta.List, d meta.Dialect, v string) error {
		p, ok := parseHref(v)
		if !ok || (collection != "" && p.collection != collection) {
			return badField(name, "Invalid hyperlink - No URL match for %q.", v)
		}
		l.And(col+" = ?", p.id)
		return nil
	}}
}

func taskListSpec() listSpec {
	t, f := true, false
	fs := []filter{
		{name: "child_tasks", kind: kCustom, lookups: []string{"exact"}, apply: func(l *meta.List, d meta.Dialect, v string) error {
			p, _ := parseHref(v)
			l.And("t.id = (SELECT c.parent_task_id FROM tasks c WHERE c.pulp_id = ?)", p.id)
			return nil
		}},
		{name: "created_resources", kind: kCustom, uuid: true, lookups: []string{"exact"}, apply: func(l *meta.List, d meta.Dialect, v string) error {
			l.And(d.Contains("t.created_resources", false), `"`+v+`"`)
			return nil
		}},
		timeFilter("finished_at", "t.finished"),
		{name: "logging_cid", col: "t.logging_cid", lookups: []string{"exact", "contains"}},
		{name: "name", col: "t.name", lookups: []string{"exact", "contains", "in", "ne"}},
		hrefFilter("parent_task", "(SELECT p.pulp_id FROM tasks p WHERE p.id = t.parent_task_id)", "tasks/"),
		timeFilter("pulp_created", "t.created"),
		timeFilter("started_at", "t.started"),
		{name: "state", col: "t.state", lookups: []string{"exact", "in", "ne"}},
		hrefFilter("task_group", "(SELECT g.pulp_id FROM task_groups g WHERE g.id = t.task_group_id)", "task-groups/"),
		timeFilter("unblocked_at", "t.unblocked"),
		hrefFilter("worker", "(SELECT w.pulp_id FROM workers w WHERE w.id = t.worker_id)", "workers/"),
	}
	fs = append(fs, resourceFilter("exclusive_resources", &t)...)
	fs = append(fs, resourceFilter("shared_resources", &f)...)
	fs = append(fs, resourceFilter("reserved_resources", nil)...)
	fs = append(fs, identityFilters("t.pulp_id")...)
	return listSpec{filters: fs, ordering: ordering("t", map[string]string{
		"pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated", "state": "state", "name": "name",
		"logging_cid": "logging_cid", "unblocked_at": "unblocked", "started_at": "started", "finished_at": "finished",
	})}
}

// ordering builds the orderable fields: API name → alias.column.
func ordering(alias string, m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = alias + "." + v
	}
	return out
}

func renderTask(t task.Task) taskResponse {
	out := taskResponse{
		PulpHref: taskHref(t.PulpID), Prn: prn("core.task", t.PulpID),
		PulpCreated: ts(t.Created), PulpLastUpdated: ts(t.Updated),
		State: t.State, Name: t.Name, LoggingCID: t.LoggingCID,
		UnblockedAt: tsPtr(t.Unblocked), StartedAt: tsPtr(t.Started), FinishedAt: tsPtr(t.Finished),
		Error: t.Error, ChildTasks: []string{}, ProgressReports: []progressReport{},
		CreatedResources: t.CreatedResources, ReservedResourcesRecord: t.Reserved, Result: t.Result,
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
	if out.ReservedResourcesRecord == nil {
		out.ReservedResourcesRecord = []string{}
	}
	if t.WorkerPulpID != nil {
		h := workerHref(*t.WorkerPulpID)
		out.Worker = &h
	}
	if t.ParentPulpID != nil {
		h := taskHref(*t.ParentPulpID)
		out.ParentTask = &h
	}
	if t.GroupPulpID != nil {
		h := groupHref(*t.GroupPulpID)
		out.TaskGroup = &h
	}
	for _, p := range t.Progress {
		out.ProgressReports = append(out.ProgressReports, progressReport(p))
	}
	return out
}

func (s *Server) taskList(w http.ResponseWriter, r *http.Request) error {
	q, err := parseList(r, s.db.Dialect(), taskListSpec())
	if err != nil {
		return err
	}
	tasks, total, err := task.List(r.Context(), s.db, q.list)
	if err != nil {
		return err
	}
	items := make([]any, len(tasks))
	for i, t := range tasks {
		items[i] = renderTask(t)
	}
	return writePage(w, r, q, total, items)
}

func (s *Server) taskRead(w http.ResponseWriter, r *http.Request) error {
	t, err := task.Get(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusOK, renderTask(t))
}

func (s *Server) taskCancel(w http.ResponseWriter, r *http.Request) error {
	var in taskCancel
	raw, err := readBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := decode(raw, &in); err != nil {
		return err
	}
	if in.State != task.Canceled {
		return badField("state", "%q is not a valid choice; only \"canceled\" is.", in.State)
	}
	t, err := s.cfg.Queue.Cancel(r.Context(), r.PathValue("id"))
	if err != nil {
		if t.PulpID != "" {
			writeJSON(w, http.StatusConflict, map[string]string{"detail": err.Error()})
			return nil
		}
		return err
	}
	return writeOne(w, r, http.StatusOK, renderTask(t))
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
	raw, err := readBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := decode(raw, &in); err != nil {
		return err
	}
	before := time.Now().Add(-30 * 24 * time.Hour)
	if in.FinishedBefore != "" {
		t, err := parseTime(in.FinishedBefore)
		if err != nil {
			return badField("finished_before", "Datetime has wrong format: %q.", in.FinishedBefore)
		}
		before = t
	}
	states := in.States
	if len(states) == 0 {
		states = []string{task.Completed}
	}
	for _, st := range states {
		if !task.Final(st) {
			return badField("states", "%q is not a final task state.", st)
		}
	}
	t, err := s.dispatch(r, task.Spec{Name: "pulpcore.app.tasks.purge.purge", Args: purgeArgs{Before: before.UnixMicro(), States: states}})
	if err != nil {
		return err
	}
	return accepted(w, t)
}

type purgeArgs struct {
	Before        int64    `json:"before,omitempty"`             // µs
	OlderThanMins int64    `json:"older_than_minutes,omitempty"` // instead of before, for schedules
	States        []string `json:"states"`
}

func renderGroup(g task.Group) taskGroupResponse {
	out := taskGroupResponse{
		PulpHref: groupHref(g.PulpID), Prn: prn("core.taskgroup", g.PulpID), Description: g.Description, AllTasksDispatched: true,
		Waiting: g.Counts[task.Waiting], Skipped: g.Counts[task.Skipped], Running: g.Counts[task.Running],
		Completed: g.Counts[task.Completed], Canceled: g.Counts[task.Canceled], Failed: g.Counts[task.Failed],
		Canceling: g.Counts[task.Canceling], GroupProgress: []progressReport{}, Tasks: []minimalTask{},
	}
	for _, t := range g.Tasks {
		mt := minimalTask{PulpHref: taskHref(t.PulpID), Prn: prn("core.task", t.PulpID), PulpCreated: ts(t.Created), Name: t.Name,
			State: t.State, StartedAt: tsPtr(t.Started), FinishedAt: tsPtr(t.Finished)}
		if t.WorkerPulpID != nil {
			h := workerHref(*t.WorkerPulpID)
			mt.Worker = &h
		}
		out.Tasks = append(out.Tasks, mt)
	}
	return out
}

func (s *Server) groupList(w http.ResponseWriter, r *http.Request) error {
	q, err := parseList(r, s.db.Dialect(), listSpec{})
	if err != nil {
		return err
	}
	gs, total, err := task.ListGroups(r.Context(), s.db, q.list)
	if err != nil {
		return err
	}
	items := make([]any, len(gs))
	for i, g := range gs {
		items[i] = renderGroup(g)
	}
	return writePage(w, r, q, total, items)
}

func (s *Server) groupRead(w http.ResponseWriter, r *http.Request) error {
	g, err := task.GetGroup(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusOK, renderGroup(g))
}

func (s *Server) groupCancel(w http.ResponseWriter, r *http.Request) error {
	var in taskCancel
	raw, err := readBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := decode(raw, &in); err != nil {
		return err
	}
	if in.State != task.Canceled {
		return badField("state", "%q is not a valid choice; only \"canceled\" is.", in.State)
	}
	g, err := task.GetGroup(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	for _, t := range g.Tasks {
		if !task.Final(t.State) {
			s.cfg.Queue.Cancel(r.Context(), t.PulpID)
		}
	}
	g, err = task.GetGroup(r.Context(), s.db, g.PulpID)
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusOK, renderGroup(g))
}

func workerListSpec() listSpec {
	fs := []filter{
		timeFilter("last_heartbeat", "w.last_heartbeat"),
		{name: "missing", kind: kCustom, boolean: true, lookups: []string{"exact"}, apply: func(l *meta.List, d meta.Dialect, v string) error {
			since := time.Now().Add(-appTTL).UnixMicro()
			if strings.EqualFold(v, "true") {
				l.And("w.last_heartbeat < ?", since)
			} else {
				l.And("w.last_heartbeat >= ?", since)
			}
			return nil
		}},
		{name: "name", col: "w.name", lookups: nameLookups},
		{name: "online", kind: kCustom, boolean: true, lookups: []string{"exact"}, apply: func(l *meta.List, d meta.Dialect, v string) error {
			since := time.Now().Add(-appTTL).UnixMicro()
			if strings.EqualFold(v, "true") {
				l.And("w.last_heartbeat >= ?", since)
			} else {
				l.And("w.last_heartbeat < ?", since)
			}
			return nil
		}},
	}
	fs = append(fs, identityFilters("w.pulp_id")...)
	return listSpec{filters: fs, ordering: ordering("w", map[string]string{"pulp_id": "pulp_id", "pulp_created": "created", "name": "name", "last_heartbeat": "last_heartbeat"})}
}

func renderWorker(a task.App) workerResponse {
	out := workerResponse{PulpHref: workerHref(a.PulpID), Prn: prn("core.appstatus", a.PulpID), PulpCreated: ts(a.Created),
		PulpLastUpdated: ts(a.LastHeartbeat), Name: a.Name, LastHeartbeat: ts(a.LastHeartbeat), Versions: versionMap()}
	if a.CurrentTask != nil {
		h := taskHref(*a.CurrentTask)
		out.CurrentTask = &h
	}
	return out
}

func (s *Server) workerList(w http.ResponseWriter, r *http.Request) error {
	q, err := parseList(r, s.db.Dialect(), workerListSpec())
	if err != nil {
		return err
	}
	apps, total, err := task.Apps(r.Context(), s.db, "worker", 0, q.list)
	if err != nil {
		return err
	}
	items := make([]any, len(apps))
	for i, a := range apps {
		items[i] = renderWorker(a)
	}
	return writePage(w, r, q, total, items)
}

func (s *Server) workerRead(w http.ResponseWriter, r *http.Request) error {
	a, err := task.AppByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusOK, renderWorker(a))
}
