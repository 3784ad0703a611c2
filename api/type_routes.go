package api

import (
	"net/http"

	"pith/api/openapi"
)

// typeRoutes names one repository type's standard operations: for plugin "file" and
// name "file", operation IDs repositories_file_file_*, hrefs {file_file_repository_href},
// tags "Repositories: File" and schemas file.FileRepository(Response).
type typeRoutes struct {
	typ                                                string // meta type, e.g. "file.file"
	plugin, name                                       string // "file", "file"
	title                                              string // tag word: "File", "Rpm"
	schema                                             string // schema prefix: "file.File", "rpm.Rpm"
	repo, repoView, remote, remoteView, dist, distView any
	sync                                               func(http.ResponseWriter, *http.Request) error
	syncBody                                           any
	syncBodyName                                       string
}

// typeTable adds a type's repositories (with versions, sync and modify), remotes and
// distributions.
func (s *Server) typeTable(reg *openapi.Registry, add func(opDef), t typeRoutes) {
	pg := reg.Paginated
	async := reg.Add("AsyncOperationResponse", taskRef{})
	setLabel := reg.Add("SetLabelResponse", setLabelResponse{})
	unsetLabel := reg.Add("UnsetLabelResponse", unsetLabelResponse{})
	root := "/pulp/api/v3/"
	repoSet, repoUnset := s.labelHandlers(201, s.repoLabels)
	remoteSet, remoteUnset := s.labelHandlers(201, s.remoteLabels)
	distSet, distUnset := s.labelHandlers(200, s.distLabels)
	r := func(code int, schema string) []openapi.Response { return []openapi.Response{resp(code, schema)} }
	pn := t.plugin + "_" + t.name
	coll := t.plugin + "/" + t.name + "/"
	typ := t.typ

	// Repositories and their versions.
	repo := reg.Add(t.schema+"RepositoryResponse", t.repoView)
	rl := repoListSpec(typ)
	rpat := root + "repositories/" + coll
	rh := "{" + pn + "_repository_href}"
	tag := "Repositories: " + t.title
	repoLock := selfLock("repositories/" + coll)
	add(opDef{id: "repositories_" + pn + "_list", method: "GET", path: root + "repositories/" + coll, pattern: rpat + "{$}", tag: tag,
		list: &rl, responses: r(200, pg(repo)), h: s.repoList(typ)})
	add(opDef{id: "repositories_" + pn + "_create", method: "POST", path: root + "repositories/" + coll, pattern: rpat + "{$}", tag: tag,
		body: t.repo, bodyName: t.schema + "Repository", media: jsonForms, responses: r(201, repo), h: s.repoCreate(typ)})
	add(opDef{id: "repositories_" + pn + "_read", method: "GET", path: rh, pattern: rpat + "{id}/{$}", tag: tag, detail: true,
		responses: r(200, repo), h: s.repoRead})
	add(opDef{id: "repositories_" + pn + "_update", method: "PUT", path: rh, pattern: rpat + "{id}/{$}", tag: tag,
		body: t.repo, bodyName: t.schema + "Repository", media: jsonForms,
		responses: []openapi.Response{resp(200, repo), resp(202, async)}, h: s.updateHandler("repository", typ, rh, false, repoLock)})
	add(opDef{id: "repositories_" + pn + "_partial_update", method: "PATCH", path: rh, pattern: rpat + "{id}/{$}", tag: tag,
		body: t.repo, bodyName: "Patched" + t.schema + "Repository", media: jsonForms,
		responses: []openapi.Response{resp(200, repo), resp(202, async)}, h: s.updateHandler("repository", typ, rh, true, repoLock)})
	add(opDef{id: "repositories_" + pn + "_delete", method: "DELETE", path: rh, pattern: rpat + "{id}/{$}", tag: tag,
		responses: r(202, async), h: s.deleteHandler("repository", repoLock)})
	add(opDef{id: "repositories_" + pn + "_set_label", method: "POST", path: rh + "set_label/", pattern: rpat + "{id}/set_label/{$}", tag: tag,
		body: setLabelIn{}, bodyName: "SetLabel", media: jsonForms, responses: r(201, setLabel), h: repoSet})
	add(opDef{id: "repositories_" + pn + "_unset_label", method: "POST", path: rh + "unset_label/", pattern: rpat + "{id}/unset_label/{$}", tag: tag,
		body: unsetLabelIn{}, bodyName: "UnsetLabel", media: jsonForms, responses: r(201, unsetLabel), h: repoUnset})
	add(opDef{id: "repositories_" + pn + "_sync", method: "POST", path: rh + "sync/", pattern: rpat + "{id}/sync/{$}", tag: tag,
		body: t.syncBody, bodyName: t.syncBodyName, media: jsonForms, responses: r(202, async), h: t.sync})
	add(opDef{id: "repositories_" + pn + "_modify", method: "POST", path: rh + "modify/", pattern: rpat + "{id}/modify/{$}", tag: tag,
		body: modifyIn{}, bodyName: "RepositoryAddRemoveContent", media: jsonForms, responses: r(202, async), h: s.repoModify})
	version := reg.Add("RepositoryVersionResponse", versionResponse{})
	vl := versionListSpec()
	vh := "{" + pn + "_repository_version_href}"
	vtag := "Repositories: " + t.title + " Versions"
	add(opDef{id: "repositories_" + pn + "_versions_list", method: "GET", path: rh + "versions/", pattern: rpat + "{id}/versions/{$}", tag: vtag,
		list: &vl, responses: r(200, pg(version)), h: s.versionList(true)})
	add(opDef{id: "repositories_" + pn + "_versions_read", method: "GET", path: vh, pattern: rpat + "{id}/versions/{n}/{$}", tag: vtag, detail: true,
		responses: r(200, version), h: s.versionRead})
	add(opDef{id: "repositories_" + pn + "_versions_delete", method: "DELETE", path: vh, pattern: rpat + "{id}/versions/{n}/{$}", tag: vtag,
		responses: r(202, async), h: s.versionDelete})
	add(opDef{id: "repositories_" + pn + "_versions_repair", method: "POST", path: vh + "repair/", pattern: rpat + "{id}/versions/{n}/repair/{$}", tag: vtag,
		body: repairIn{}, bodyName: "Repair", media: jsonForms, responses: r(202, async), h: s.versionRepair})

	// Remotes.
	remote := reg.Add(t.schema+"RemoteResponse", t.remoteView)
	ml := remoteListSpec(typ)
	mpat := root + "remotes/" + coll
	mh := "{" + pn + "_remote_href}"
	mtag := "Remotes: " + t.title
	remoteLock := selfLock("remotes/" + coll)
	add(opDef{id: "remotes_" + pn + "_list", method: "GET", path: root + "remotes/" + coll, pattern: mpat + "{$}", tag: mtag,
		list: &ml, responses: r(200, pg(remote)), h: s.remoteList(typ)})
	add(opDef{id: "remotes_" + pn + "_create", method: "POST", path: root + "remotes/" + coll, pattern: mpat + "{$}", tag: mtag,
		body: t.remote, bodyName: t.schema + "Remote", media: jsonForms, responses: r(201, remote), h: s.remoteCreate(typ)})
	add(opDef{id: "remotes_" + pn + "_read", method: "GET", path: mh, pattern: mpat + "{id}/{$}", tag: mtag, detail: true,
		responses: r(200, remote), h: s.remoteRead})
	add(opDef{id: "remotes_" + pn + "_update", method: "PUT", path: mh, pattern: mpat + "{id}/{$}", tag: mtag,
		body: t.remote, bodyName: t.schema + "Remote", media: jsonForms,
		responses: []openapi.Response{resp(200, remote), resp(202, async)}, h: s.updateHandler("remote", typ, mh, false, remoteLock)})
	add(opDef{id: "remotes_" + pn + "_partial_update", method: "PATCH", path: mh, pattern: mpat + "{id}/{$}", tag: mtag,
		body: t.remote, bodyName: "Patched" + t.schema + "Remote", media: jsonForms,
		responses: []openapi.Response{resp(200, remote), resp(202, async)}, h: s.updateHandler("remote", typ, mh, true, remoteLock)})
	add(opDef{id: "remotes_" + pn + "_delete", method: "DELETE", path: mh, pattern: mpat + "{id}/{$}", tag: mtag,
		responses: r(202, async), h: s.deleteHandler("remote", remoteLock)})
	add(opDef{id: "remotes_" + pn + "_set_label", method: "POST", path: mh + "set_label/", pattern: mpat + "{id}/set_label/{$}", tag: mtag,
		body: setLabelIn{}, bodyName: "SetLabel", media: jsonForms, responses: r(201, setLabel), h: remoteSet})
	add(opDef{id: "remotes_" + pn + "_unset_label", method: "POST", path: mh + "unset_label/", pattern: mpat + "{id}/unset_label/{$}", tag: mtag,
		body: unsetLabelIn{}, bodyName: "UnsetLabel", media: jsonForms, responses: r(201, unsetLabel), h: remoteUnset})

	// Distributions.
	dist := reg.Add(t.schema+"DistributionResponse", t.distView)
	dl := distListSpec(typ)
	dpat := root + "distributions/" + coll
	dh := "{" + pn + "_distribution_href}"
	dtag := "Distributions: " + t.title
	distLock := selfLock("distributions/" + coll)
	add(opDef{id: "distributions_" + pn + "_list", method: "GET", path: root + "distributions/" + coll, pattern: dpat + "{$}", tag: dtag,
		list: &dl, responses: r(200, pg(dist)), h: s.distList(typ)})
	add(opDef{id: "distributions_" + pn + "_create", method: "POST", path: root + "distributions/" + coll, pattern: dpat + "{$}", tag: dtag,
		body: t.dist, bodyName: t.schema + "Distribution", media: jsonForms, responses: r(202, async), h: s.distCreate(typ)})
	add(opDef{id: "distributions_" + pn + "_read", method: "GET", path: dh, pattern: dpat + "{id}/{$}", tag: dtag, detail: true,
		responses: r(200, dist), h: s.distRead})
	add(opDef{id: "distributions_" + pn + "_update", method: "PUT", path: dh, pattern: dpat + "{id}/{$}", tag: dtag,
		body: t.dist, bodyName: t.schema + "Distribution", media: jsonForms,
		responses: []openapi.Response{resp(200, dist), resp(202, async)}, h: s.updateHandler("distribution", typ, dh, false, distLock)})
	add(opDef{id: "distributions_" + pn + "_partial_update", method: "PATCH", path: dh, pattern: dpat + "{id}/{$}", tag: dtag,
		body: t.dist, bodyName: "Patched" + t.schema + "Distribution", media: jsonForms,
		responses: []openapi.Response{resp(200, dist), resp(202, async)}, h: s.updateHandler("distribution", typ, dh, true, distLock)})
	add(opDef{id: "distributions_" + pn + "_delete", method: "DELETE", path: dh, pattern: dpat + "{id}/{$}", tag: dtag,
		responses: r(202, async), h: s.deleteHandler("distribution", distLock)})
	add(opDef{id: "distributions_" + pn + "_set_label", method: "POST", path: dh + "set_label/", pattern: dpat + "{id}/set_label/{$}", tag: dtag,
		body: setLabelIn{}, bodyName: "SetLabel", media: jsonForms, responses: r(200, setLabel), h: distSet})
	add(opDef{id: "distributions_" + pn + "_unset_label", method: "POST", path: dh + "unset_label/", pattern: dpat + "{id}/unset_label/{$}", tag: dtag,
		body: unsetLabelIn{}, bodyName: "UnsetLabel", media: jsonForms, responses: r(200, unsetLabel), h: distUnset})
}
