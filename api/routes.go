package api

import (
	"strings"

	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
)

// coreOps are the core's operations: status, docs, tasks, groups, signing services,
// schedules, workers, artifacts, uploads, orphans, and the generic lists of every kind
// (repositories, remotes, publications, distributions, content, versions).
func (s *Server) coreOps(t *rest.Table) []rest.Op {
	task := t.Schema("TaskResponse", taskResponse{})
	async := t.Async()
	pg := t.Paginated
	root := href.Root
	r := func(code int, schema string) []openapi.Response { return []openapi.Response{rest.Resp(code, schema)} }
	var ops []rest.Op
	add := func(op rest.Op) { ops = append(ops, op) }

	status := t.Schema("StatusResponse", statusResponse{})
	add(rest.Op{ID: "status_read", Method: "GET", Path: root + "status/", Pattern: root + "status/{$}", Tag: "Status", Detail: true,
		Responses: r(200, status), Anonymous: true, Handler: s.status})
	add(rest.Op{ID: "docs_api.json_get", Method: "GET", Path: root + "docs/api.json", Pattern: root + "docs/api.json", Tag: "Docs", Detail: true,
		Extra:     []openapi.Param{openapi.Query("lang", openapi.Schema{Type: "string"}, "Language of the document (only en is served).")},
		Responses: []openapi.Response{{Code: 200, MediaTypes: []string{"application/vnd.oai.openapi+json", "application/json"}}}, Anonymous: true, Handler: s.docs})

	tl := taskListSpec()
	add(rest.Op{ID: "tasks_list", Viewset: "tasks", Method: "GET", Path: root + "tasks/", Pattern: root + "tasks/{$}", Tag: "Tasks", List: &tl,
		Responses: r(200, pg(task)), Handler: s.taskList()})
	add(rest.Op{ID: "tasks_read", Viewset: "tasks", Method: "GET", Path: "{task_href}", Pattern: root + "tasks/{id}/{$}", Tag: "Tasks", Detail: true,
		Responses: r(200, task), Handler: s.taskRead})
	add(rest.Op{ID: "tasks_cancel", Viewset: "tasks", Action: "partial_update", Method: "PATCH", Path: "{task_href}", Pattern: root + "tasks/{id}/{$}", Tag: "Tasks",
		Body: taskCancel{}, BodyName: "PatchedTaskCancel", Media: rest.JSONForms, Responses: []openapi.Response{rest.Resp(200, task), rest.Resp(409, task)}, Handler: s.taskCancel})
	add(rest.Op{ID: "tasks_delete", Viewset: "tasks", Method: "DELETE", Path: "{task_href}", Pattern: root + "tasks/{id}/{$}", Tag: "Tasks",
		Responses: r(204, ""), Handler: s.taskDelete})
	add(rest.Op{ID: "tasks_purge", Viewset: "tasks", Action: "purge", Method: "POST", Path: root + "tasks/purge/", Pattern: root + "tasks/purge/{$}", Tag: "Tasks",
		Body: purgeIn{}, BodyName: "Purge", Media: rest.JSONForms, Responses: r(202, async), Handler: s.taskPurge})
	add(rest.Op{ID: "tasks_profile_artifacts", Viewset: "tasks", Action: "profile_artifacts", Method: "GET", Path: "{task_href}profile_artifacts/",
		Pattern: root + "tasks/{id}/profile_artifacts/{$}", Tag: "Tasks", Detail: true,
		Responses: r(200, t.Schema("ProfileArtifactResponse", profileArtifactResponse{})), Handler: s.taskProfileArtifacts})
	group := t.Schema("TaskGroupResponse", taskGroupResponse{})
	gl := rest.ListSpec{}
	add(rest.Op{ID: "task_groups_list", Viewset: "task-groups", Method: "GET", Path: root + "task-groups/", Pattern: root + "task-groups/{$}", Tag: "Task-Groups", List: &gl,
		Responses: r(200, pg(group)), Handler: s.groupList()})
	add(rest.Op{ID: "task_groups_read", Viewset: "task-groups", Method: "GET", Path: "{task_group_href}", Pattern: root + "task-groups/{id}/{$}", Tag: "Task-Groups", Detail: true,
		Responses: r(200, group), Handler: s.groupRead})
	add(rest.Op{ID: "task_groups_cancel", Viewset: "task-groups", Action: "partial_update", Method: "PATCH", Path: "{task_group_href}", Pattern: root + "task-groups/{id}/{$}", Tag: "Task-Groups",
		Body: taskCancel{}, BodyName: "PatchedTaskCancel", Media: rest.JSONForms, Responses: []openapi.Response{rest.Resp(200, group), rest.Resp(409, group)}, Handler: s.groupCancel})
	signing := t.Schema("SigningServiceResponse", signingServiceResponse{})
	sgl := signingListSpec()
	add(rest.Op{ID: "signing_services_list", Viewset: "signing-services", Method: "GET", Path: root + "signing-services/", Pattern: root + "signing-services/{$}", Tag: "Signing-Services", List: &sgl,
		Responses: r(200, pg(signing)), Handler: s.signingList()})
	add(rest.Op{ID: "signing_services_read", Viewset: "signing-services", Method: "GET", Path: "{signing_service_href}", Pattern: root + "signing-services/{id}/{$}", Tag: "Signing-Services", Detail: true,
		Responses: r(200, signing), Handler: s.signingRead})
	sched := t.Schema("TaskScheduleResponse", taskScheduleResponse{})
	sl := scheduleListSpec()
	add(rest.Op{ID: "task_schedules_list", Viewset: "task-schedules", Method: "GET", Path: root + "task-schedules/", Pattern: root + "task-schedules/{$}", Tag: "Task-Schedules", List: &sl,
		Responses: r(200, pg(sched)), Handler: s.scheduleList()})
	add(rest.Op{ID: "task_schedules_read", Viewset: "task-schedules", Method: "GET", Path: "{task_schedule_href}", Pattern: root + "task-schedules/{id}/{$}", Tag: "Task-Schedules", Detail: true,
		Responses: r(200, sched), Handler: s.scheduleRead})
	worker := t.Schema("WorkerResponse", workerResponse{})
	wl := workerListSpec()
	add(rest.Op{ID: "workers_list", Viewset: "workers", Method: "GET", Path: root + "workers/", Pattern: root + "workers/{$}", Tag: "Workers", List: &wl,
		Responses: r(200, pg(worker)), Handler: s.workerList()})
	add(rest.Op{ID: "workers_read", Viewset: "workers", Method: "GET", Path: "{worker_href}", Pattern: root + "workers/{id}/{$}", Tag: "Workers", Detail: true,
		Responses: r(200, worker), Handler: s.workerRead})

	artifact := t.Schema("ArtifactResponse", artifactResponse{})
	al := artifactListSpec()
	add(rest.Op{ID: "artifacts_list", Viewset: "artifacts", Method: "GET", Path: root + "artifacts/", Pattern: root + "artifacts/{$}", Tag: "Artifacts", List: &al,
		Responses: r(200, pg(artifact)), Handler: s.artifactList()})
	add(rest.Op{ID: "artifacts_create", Viewset: "artifacts", Method: "POST", Path: root + "artifacts/", Pattern: root + "artifacts/{$}", Tag: "Artifacts",
		Body: artifactIn{}, BodyName: "Artifact", Media: rest.FileForms, Responses: r(201, artifact), Handler: s.artifactCreate})
	add(rest.Op{ID: "artifacts_read", Viewset: "artifacts", Method: "GET", Path: "{artifact_href}", Pattern: root + "artifacts/{id}/{$}", Tag: "Artifacts", Detail: true,
		Responses: r(200, artifact), Handler: s.artifactRead})
	add(rest.Op{ID: "artifacts_delete", Viewset: "artifacts", Method: "DELETE", Path: "{artifact_href}", Pattern: root + "artifacts/{id}/{$}", Tag: "Artifacts",
		Responses: r(204, ""), Handler: s.artifactDelete})

	upload := t.Schema("UploadResponse", uploadResponse{})
	ul := uploadListSpec()
	add(rest.Op{ID: "uploads_list", Viewset: "uploads", Method: "GET", Path: root + "uploads/", Pattern: root + "uploads/{$}", Tag: "Uploads", List: &ul,
		Responses: r(200, pg(upload)), Handler: s.uploadList()})
	add(rest.Op{ID: "uploads_create", Viewset: "uploads", Method: "POST", Path: root + "uploads/", Pattern: root + "uploads/{$}", Tag: "Uploads",
		Body: uploadIn{}, BodyName: "Upload", Media: rest.JSONForms, Responses: r(201, upload), Handler: s.uploadCreate})
	add(rest.Op{ID: "uploads_read", Viewset: "uploads", Method: "GET", Path: "{upload_href}", Pattern: root + "uploads/{id}/{$}", Tag: "Uploads", Detail: true,
		Responses: r(200, t.Schema("UploadDetailResponse", uploadDetailResponse{})), Handler: s.uploadRead})
	add(rest.Op{ID: "uploads_update", Viewset: "uploads", Method: "PUT", Path: "{upload_href}", Pattern: root + "uploads/{id}/{$}", Tag: "Uploads",
		Body: uploadChunkIn{}, BodyName: "UploadChunk", Media: rest.FileForms, Extra: []openapi.Param{openapi.ContentRange()}, Responses: r(200, upload), Handler: s.uploadChunk})
	add(rest.Op{ID: "uploads_delete", Viewset: "uploads", Method: "DELETE", Path: "{upload_href}", Pattern: root + "uploads/{id}/{$}", Tag: "Uploads",
		Responses: r(204, ""), Handler: s.uploadDelete})
	add(rest.Op{ID: "uploads_commit", Viewset: "uploads", Action: "commit", Method: "POST", Path: "{upload_href}commit/", Pattern: root + "uploads/{id}/commit/{$}", Tag: "Uploads",
		Body: uploadCommitIn{}, BodyName: "UploadCommit", Media: rest.JSONForms, Responses: r(202, async), Handler: s.uploadCommit})

	add(rest.Op{ID: "orphans_cleanup_cleanup", Viewset: "orphans/cleanup", Method: "POST", Path: root + "orphans/cleanup/", Pattern: root + "orphans/cleanup/{$}", Tag: "Orphans: Cleanup",
		Body: orphansCleanupIn{}, BodyName: "OrphansCleanup", Media: rest.JSONForms, Responses: r(202, async), Handler: s.orphansCleanup})
	add(rest.Op{ID: "repositories_reclaim_space_reclaim", Viewset: "repositories/reclaim_space", Action: "reclaim", Method: "POST", Path: root + "repositories/reclaim_space/",
		Pattern: root + "repositories/reclaim_space/{$}", Tag: "Repositories: Reclaim_Space",
		Body: reclaimIn{}, BodyName: "ReclaimSpace", Media: rest.JSONForms, Responses: r(202, async), Handler: s.reclaimSpace})
	add(rest.Op{ID: "repair_post", Viewset: "repair", Method: "POST", Path: root + "repair/", Pattern: root + "repair/{$}", Tag: "Repair",
		Body: repairIn{}, BodyName: "Repair", Media: rest.JSONForms, Responses: r(202, async), Handler: s.repairAll})
	add(rest.Op{ID: "orphans_delete", Viewset: "orphans", Method: "DELETE", Path: root + "orphans/", Pattern: root + "orphans/{$}", Tag: "Orphans",
		Responses: r(202, async), Handler: s.orphansDelete})

	version := t.Schema("RepositoryVersionResponse", versionResponse{})
	vl := versionListSpec()
	add(rest.Op{ID: "repository_versions_list", Viewset: "repository_versions", Method: "GET", Path: root + "repository_versions/", Pattern: root + "repository_versions/{$}", Tag: "Repository_Versions",
		List: &vl, Responses: r(200, pg(version)), Handler: s.versionList(false)})
	rl := repoListSpec(nil)
	add(rest.Op{ID: "repositories_list", Viewset: "repositories", Method: "GET", Path: root + "repositories/", Pattern: root + "repositories/{$}", Tag: "Repositories",
		List: &rl, Responses: r(200, pg(t.Schema("RepositoryResponse", rest.RepoResponse{}))), Handler: s.repoList(nil)})
	rml := remoteListSpec(nil)
	add(rest.Op{ID: "remotes_list", Viewset: "remotes", Method: "GET", Path: root + "remotes/", Pattern: root + "remotes/{$}", Tag: "Remotes",
		List: &rml, Responses: r(200, pg(t.Schema("RemoteResponse", rest.RemoteResponse{}))), Handler: s.remoteList(nil)})
	pl := pubListSpec(nil)
	add(rest.Op{ID: "publications_list", Viewset: "publications", Method: "GET", Path: root + "publications/", Pattern: root + "publications/{$}", Tag: "Publications",
		List: &pl, Responses: r(200, pg(t.Schema("PublicationResponse", rest.PublicationResponse{}))), Handler: s.pubList(nil)})
	dl := distListSpec(nil)
	add(rest.Op{ID: "distributions_list", Viewset: "distributions", Method: "GET", Path: root + "distributions/", Pattern: root + "distributions/{$}", Tag: "Distributions",
		List: &dl, Responses: r(200, pg(t.Schema("DistributionResponse", rest.DistResponse{}))), Handler: s.distList(nil)})
	cl := unitListSpec(nil)
	add(rest.Op{ID: "content_list", Viewset: "content", Method: "GET", Path: root + "content/", Pattern: root + "content/{$}", Tag: "Content",
		List: &cl, Responses: r(200, pg(t.Schema("MultipleArtifactContentResponse", contentResponse{}))), Handler: s.contentList(nil)})
	for _, o := range []struct{ viewset, name, href, tag string }{{"tasks", "tasks", "{task_href}", "Tasks"},
		{"task-schedules", "task_schedules", "{task_schedule_href}", "Task-Schedules"}, {"uploads", "uploads", "{upload_href}", "Uploads"}} {
		ops = append(ops, s.objectRoleOps(t, o.viewset, o.name, o.href, root+o.viewset+"/{id}/", o.tag)...)
	}
	ops = append(ops, s.guardOps(t)...)
	ops = append(ops, s.upstreamOps(t)...)
	ops = append(ops, s.exporterOps(t, pulpExporters)...)
	ops = append(ops, s.exporterOps(t, fsExporters)...)
	ops = append(ops, s.importerOps(t)...)
	return append(ops, s.accessOps(t)...)
}

// route is one served operation: its document entry, mux pattern and handler.
type route struct {
	op      openapi.Operation
	pattern string
	h       rest.HandlerFunc
	body    any // the request shape, nil for none
	def     rest.Op
	guard   guard
}

// routes turns operations into routes and registers their body schemas: a schema named
// Patched… is its body without required fields.
func routes(t *rest.Table, ops []rest.Op) []route {
	reg := t.Reg
	out := make([]route, 0, len(ops))
	for _, d := range ops {
		op := openapi.Operation{ID: d.ID, Method: d.Method, Path: d.Path, Tag: d.Tag, Responses: d.Responses, Anonymous: d.Anonymous}
		switch {
		case d.List != nil:
			op.Params = d.List.Params()
		case d.Detail:
			op.Params = openapi.ReadParams()
		default:
			op.Params = []openapi.Param{openapi.Diagnostics()}
		}
		op.Params = append(op.Params, d.Extra...)
		if d.Body != nil {
			name := d.BodyName
			if _, done := reg.Schema(name); done {
				// Shared by several operations; registered already.
			} else if strings.HasPrefix(name, "Patched") {
				// A partial update requires nothing: the same shape without required fields.
				sc, _ := reg.Schema(reg.Add(strings.TrimPrefix(name, "Patched"), d.Body))
				sc.Required = nil
				reg.AddSchema(name, sc)
			} else {
				reg.Add(name, d.Body)
			}
			op.Body = &openapi.Body{MediaTypes: d.Media, Schema: name}
		}
		out = append(out, route{op: op, pattern: d.Pattern, h: d.Handler, body: d.Body, def: d})
	}
	return out
}
