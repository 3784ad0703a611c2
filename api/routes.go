package api

import (
	"net/http"
	"sort"
	"strings"

	"pith/api/openapi"
)

// Media types of request bodies, as the reference declares them.
var (
	jsonForms = []string{"application/json", "application/x-www-form-urlencoded", "multipart/form-data"}
	fileForms = []string{"multipart/form-data", "application/x-www-form-urlencoded"}
)

// params turns a list declaration into the operation's parameters; the document
// orders them as the reference does.
func (spec listSpec) params() []openapi.Param {
	var ps []openapi.Param
	for _, f := range spec.filters {
		ps = append(ps, f.params()...)
	}
	if len(spec.filters) > 0 {
		ps = append(ps, openapi.Q())
	}
	if len(spec.ordering) > 0 {
		names := make([]string, 0, len(spec.ordering))
		for k := range spec.ordering {
			names = append(names, k)
		}
		sort.Strings(names)
		ps = append(ps, openapi.Ordering(names...))
	}
	return openapi.Params(openapi.ListParams(), ps)
}

func (f filter) params() []openapi.Param {
	switch f.kind {
	case kInt:
		return openapi.IntFilter(f.name, f.lookups...)
	case kTime:
		return openapi.DateTimeFilter(f.name, f.lookups...)
	case kBool:
		return []openapi.Param{openapi.BoolFilter(f.name)}
	case kCustom:
		switch {
		case f.name == "pulp_id__in":
			return []openapi.Param{openapi.UUIDFilter(f.name)}
		case f.name == "pulp_label_select":
			return []openapi.Param{openapi.LabelSelect()}
		case strings.HasSuffix(f.name, "__in"):
			return []openapi.Param{openapi.MultiFilter(f.name)}
		case f.boolean:
			return []openapi.Param{openapi.BoolFilter(f.name)}
		case f.uuid:
			return []openapi.Param{openapi.Query(f.name, openapi.Schema{Type: "string", Format: "uuid"}, f.desc)}
		case f.number:
			return []openapi.Param{openapi.Query(f.name, openapi.Schema{Type: "number"}, f.desc)}
		}
		return []openapi.Param{openapi.HrefFilter(f.name, f.desc)}
	}
	return openapi.StringFilter(f.name, f.lookups...)
}

// opDef is one row of the route table before it becomes a route.
type opDef struct {
	id, method, path, pattern, tag string
	list                           *listSpec
	detail                         bool // takes fields/exclude_fields
	body                           any  // request shape, nil for none
	bodyName                       string
	media                          []string
	responses                      []openapi.Response
	anonymous                      bool
	extra                          []openapi.Param // operation-specific parameters (headers)
	h                              func(w http.ResponseWriter, r *http.Request) error
}

func resp(code int, schema string) openapi.Response {
	return openapi.Response{Code: code, Schema: schema}
}

// table is the route table: every operation pith implements, its document entry and its
// handler. Paths are the reference's (href templates for detail operations); patterns
// are the mux's.
func (s *Server) table(reg *openapi.Registry) []route {
	task := reg.Add("TaskResponse", taskResponse{})
	async := reg.Add("AsyncOperationResponse", taskRef{})
	pg := reg.Paginated
	root := "/pulp/api/v3/"
	var defs []opDef
	add := func(d opDef) { defs = append(defs, d) }

	// Core.
	status := reg.Add("StatusResponse", statusResponse{})
	add(opDef{id: "status_read", method: "GET", path: root + "status/", pattern: "/pulp/api/v3/status/{$}", tag: "Status", detail: true,
		responses: []openapi.Response{resp(200, status)}, anonymous: true, h: s.status})
	add(opDef{id: "docs_api.json_get", method: "GET", path: root + "docs/api.json", pattern: "/pulp/api/v3/docs/api.json", tag: "Docs", detail: true,
		extra:     []openapi.Param{openapi.Query("lang", openapi.Schema{Type: "string"}, "Language of the document (only en is served).")},
		responses: []openapi.Response{{Code: 200, MediaTypes: []string{"application/vnd.oai.openapi+json", "application/json"}}}, anonymous: true, h: s.docs})

	tl := taskListSpec()
	add(opDef{id: "tasks_list", method: "GET", path: root + "tasks/", pattern: "/pulp/api/v3/tasks/{$}", tag: "Tasks", list: &tl,
		responses: []openapi.Response{resp(200, pg(task))}, h: s.taskList})
	add(opDef{id: "tasks_read", method: "GET", path: "{task_href}", pattern: "/pulp/api/v3/tasks/{id}/{$}", tag: "Tasks", detail: true,
		responses: []openapi.Response{resp(200, task)}, h: s.taskRead})
	add(opDef{id: "tasks_cancel", method: "PATCH", path: "{task_href}", pattern: "/pulp/api/v3/tasks/{id}/{$}", tag: "Tasks",
		body: taskCancel{}, bodyName: "PatchedTaskCancel", media: jsonForms, responses: []openapi.Response{resp(200, task), resp(409, task)}, h: s.taskCancel})
	add(opDef{id: "tasks_delete", method: "DELETE", path: "{task_href}", pattern: "/pulp/api/v3/tasks/{id}/{$}", tag: "Tasks",
		responses: []openapi.Response{resp(204, "")}, h: s.taskDelete})
	add(opDef{id: "tasks_purge", method: "POST", path: root + "tasks/purge/", pattern: "/pulp/api/v3/tasks/purge/{$}", tag: "Tasks",
		body: purgeIn{}, bodyName: "Purge", media: jsonForms, responses: []openapi.Response{resp(202, async)}, h: s.taskPurge})
	group := reg.Add("TaskGroupResponse", taskGroupResponse{})
	gl := listSpec{}
	add(opDef{id: "task_groups_list", method: "GET", path: root + "task-groups/", pattern: "/pulp/api/v3/task-groups/{$}", tag: "Task-Groups", list: &gl,
		responses: []openapi.Response{resp(200, pg(group))}, h: s.groupList})
	add(opDef{id: "task_groups_read", method: "GET", path: "{task_group_href}", pattern: "/pulp/api/v3/task-groups/{id}/{$}", tag: "Task-Groups", detail: true,
		responses: []openapi.Response{resp(200, group)}, h: s.groupRead})
	add(opDef{id: "task_groups_cancel", method: "PATCH", path: "{task_group_href}", pattern: "/pulp/api/v3/task-groups/{id}/{$}", tag: "Task-Groups",
		body: taskCancel{}, bodyName: "PatchedTaskCancel", media: jsonForms, responses: []openapi.Response{resp(200, group), resp(409, group)}, h: s.groupCancel})
	signing := reg.Add("SigningServiceResponse", signingServiceResponse{})
	sgl := signingListSpec()
	add(opDef{id: "signing_services_list", method: "GET", path: root + "signing-services/", pattern: "/pulp/api/v3/signing-services/{$}", tag: "Signing-Services", list: &sgl,
		responses: []openapi.Response{resp(200, pg(signing))}, h: s.signingList})
	add(opDef{id: "signing_services_read", method: "GET", path: "{signing_service_href}", pattern: "/pulp/api/v3/signing-services/{id}/{$}", tag: "Signing-Services", detail: true,
		responses: []openapi.Response{resp(200, signing)}, h: s.signingRead})
	sched := reg.Add("TaskScheduleResponse", taskScheduleResponse{})
	sl := scheduleListSpec()
	add(opDef{id: "task_schedules_list", method: "GET", path: root + "task-schedules/", pattern: "/pulp/api/v3/task-schedules/{$}", tag: "Task-Schedules", list: &sl,
		responses: []openapi.Response{resp(200, pg(sched))}, h: s.scheduleList})
	add(opDef{id: "task_schedules_read", method: "GET", path: "{task_schedule_href}", pattern: "/pulp/api/v3/task-schedules/{id}/{$}", tag: "Task-Schedules", detail: true,
		responses: []openapi.Response{resp(200, sched)}, h: s.scheduleRead})
	worker := reg.Add("WorkerResponse", workerResponse{})
	wl := workerListSpec()
	add(opDef{id: "workers_list", method: "GET", path: root + "workers/", pattern: "/pulp/api/v3/workers/{$}", tag: "Workers", list: &wl,
		responses: []openapi.Response{resp(200, pg(worker))}, h: s.workerList})
	add(opDef{id: "workers_read", method: "GET", path: "{worker_href}", pattern: "/pulp/api/v3/workers/{id}/{$}", tag: "Workers", detail: true,
		responses: []openapi.Response{resp(200, worker)}, h: s.workerRead})

	artifact := reg.Add("ArtifactResponse", artifactResponse{})
	al := artifactListSpec()
	add(opDef{id: "artifacts_list", method: "GET", path: root + "artifacts/", pattern: "/pulp/api/v3/artifacts/{$}", tag: "Artifacts", list: &al,
		responses: []openapi.Response{resp(200, pg(artifact))}, h: s.artifactList})
	add(opDef{id: "artifacts_create", method: "POST", path: root + "artifacts/", pattern: "/pulp/api/v3/artifacts/{$}", tag: "Artifacts",
		body: artifactIn{}, bodyName: "Artifact", media: fileForms, responses: []openapi.Response{resp(201, artifact)}, h: s.artifactCreate})
	add(opDef{id: "artifacts_read", method: "GET", path: "{artifact_href}", pattern: "/pulp/api/v3/artifacts/{id}/{$}", tag: "Artifacts", detail: true,
		responses: []openapi.Response{resp(200, artifact)}, h: s.artifactRead})
	add(opDef{id: "artifacts_delete", method: "DELETE", path: "{artifact_href}", pattern: "/pulp/api/v3/artifacts/{id}/{$}", tag: "Artifacts",
		responses: []openapi.Response{resp(204, "")}, h: s.artifactDelete})

	upload := reg.Add("UploadResponse", uploadResponse{})
	ul := uploadListSpec()
	add(opDef{id: "uploads_list", method: "GET", path: root + "uploads/", pattern: "/pulp/api/v3/uploads/{$}", tag: "Uploads", list: &ul,
		responses: []openapi.Response{resp(200, pg(upload))}, h: s.uploadList})
	add(opDef{id: "uploads_create", method: "POST", path: root + "uploads/", pattern: "/pulp/api/v3/uploads/{$}", tag: "Uploads",
		body: uploadIn{}, bodyName: "Upload", media: jsonForms, responses: []openapi.Response{resp(201, upload)}, h: s.uploadCreate})
	add(opDef{id: "uploads_read", method: "GET", path: "{upload_href}", pattern: "/pulp/api/v3/uploads/{id}/{$}", tag: "Uploads", detail: true,
		responses: []openapi.Response{resp(200, upload)}, h: s.uploadRead})
	add(opDef{id: "uploads_update", method: "PUT", path: "{upload_href}", pattern: "/pulp/api/v3/uploads/{id}/{$}", tag: "Uploads",
		body: uploadChunkIn{}, bodyName: "UploadChunk", media: fileForms, extra: []openapi.Param{openapi.ContentRange()}, responses: []openapi.Response{resp(200, upload)}, h: s.uploadChunk})
	add(opDef{id: "uploads_delete", method: "DELETE", path: "{upload_href}", pattern: "/pulp/api/v3/uploads/{id}/{$}", tag: "Uploads",
		responses: []openapi.Response{resp(204, "")}, h: s.uploadDelete})
	add(opDef{id: "uploads_commit", method: "POST", path: "{upload_href}commit/", pattern: "/pulp/api/v3/uploads/{id}/commit/{$}", tag: "Uploads",
		body: uploadCommitIn{}, bodyName: "UploadCommit", media: jsonForms, responses: []openapi.Response{resp(202, async)}, h: s.uploadCommit})

	add(opDef{id: "orphans_cleanup_cleanup", method: "POST", path: root + "orphans/cleanup/", pattern: "/pulp/api/v3/orphans/cleanup/{$}", tag: "Orphans: Cleanup",
		body: orphansCleanupIn{}, bodyName: "OrphansCleanup", media: jsonForms, responses: []openapi.Response{resp(202, async)}, h: s.orphansCleanup})
	add(opDef{id: "orphans_delete", method: "DELETE", path: root + "orphans/", pattern: "/pulp/api/v3/orphans/{$}", tag: "Orphans",
		responses: []openapi.Response{resp(202, async)}, h: s.orphansDelete})

	version := reg.Add("RepositoryVersionResponse", versionResponse{})
	vl := versionListSpec()
	add(opDef{id: "repository_versions_list", method: "GET", path: root + "repository_versions/", pattern: "/pulp/api/v3/repository_versions/{$}", tag: "Repository_Versions",
		list: &vl, responses: []openapi.Response{resp(200, pg(version))}, h: s.versionList(false)})
	generic := reg.Add("RepositoryResponse", repoResponse{})
	rl := repoListSpec("")
	add(opDef{id: "repositories_list", method: "GET", path: root + "repositories/", pattern: "/pulp/api/v3/repositories/{$}", tag: "Repositories",
		list: &rl, responses: []openapi.Response{resp(200, pg(generic))}, h: s.repoList("")})
	rml := remoteListSpec("")
	add(opDef{id: "remotes_list", method: "GET", path: root + "remotes/", pattern: "/pulp/api/v3/remotes/{$}", tag: "Remotes",
		list: &rml, responses: []openapi.Response{resp(200, pg(reg.Add("RemoteResponse", remoteResponse{})))}, h: s.remoteList("")})
	pl := pubListSpec("")
	add(opDef{id: "publications_list", method: "GET", path: root + "publications/", pattern: "/pulp/api/v3/publications/{$}", tag: "Publications",
		list: &pl, responses: []openapi.Response{resp(200, pg(reg.Add("PublicationResponse", filePublicationResponse{})))}, h: s.pubList("")})
	dl := distListSpec("")
	add(opDef{id: "distributions_list", method: "GET", path: root + "distributions/", pattern: "/pulp/api/v3/distributions/{$}", tag: "Distributions",
		list: &dl, responses: []openapi.Response{resp(200, pg(reg.Add("DistributionResponse", distResponse{})))}, h: s.distList("")})
	cl := contentListSpec("")
	add(opDef{id: "content_list", method: "GET", path: root + "content/", pattern: "/pulp/api/v3/content/{$}", tag: "Content",
		list: &cl, responses: []openapi.Response{resp(200, pg(reg.Add("MultipleArtifactContentResponse", contentResponse{})))}, h: s.contentList("")})

	s.fileTable(reg, add)
	s.rpmTable(reg, add)

	out := make([]route, 0, len(defs))
	for _, d := range defs {
		op := openapi.Operation{ID: d.id, Method: d.method, Path: d.path, Tag: d.tag, Responses: d.responses, Anonymous: d.anonymous}
		switch {
		case d.list != nil:
			op.Params = d.list.params()
		case d.detail:
			op.Params = openapi.ReadParams()
		default:
			op.Params = []openapi.Param{openapi.Diagnostics()}
		}
		op.Params = append(op.Params, d.extra...)
		if d.body != nil {
			name := d.bodyName
			if _, done := reg.Schema(name); done {
				// Shared by several operations; registered already.
			} else if strings.HasPrefix(name, "Patched") {
				// A partial update requires nothing: the same shape without required fields.
				sc, _ := reg.Schema(reg.Add(strings.TrimPrefix(name, "Patched"), d.body))
				sc.Required = nil
				reg.AddSchema(name, sc)
			} else {
				reg.Add(name, d.body)
			}
			op.Body = &openapi.Body{MediaTypes: d.media, Schema: name}
		}
		out = append(out, route{op: op, pattern: d.pattern, h: d.h})
	}
	return out
}
