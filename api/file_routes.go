package api

import "pith/api/openapi"

// fileTable adds the file plugin's operations.
func (s *Server) fileTable(reg *openapi.Registry, add func(opDef)) {
	pg := reg.Paginated
	async := reg.Add("AsyncOperationResponse", taskRef{})
	setLabel := reg.Add("SetLabelResponse", setLabelResponse{})
	unsetLabel := reg.Add("UnsetLabelResponse", unsetLabelResponse{})
	const root = "/pulp/api/v3/"
	contentSet, contentUnset := s.labelHandlers(201, s.contentLabels)
	repoSet, repoUnset := s.labelHandlers(201, s.repoLabels)
	remoteSet, remoteUnset := s.labelHandlers(201, s.remoteLabels)
	distSet, distUnset := s.labelHandlers(200, s.distLabels)
	r := func(code int, schema string) []openapi.Response { return []openapi.Response{resp(code, schema)} }

	// Content.
	fc := reg.Add("file.FileContentResponse", fileContentResponse{})
	cl := contentListSpec(fileType)
	const cpat = "/pulp/api/v3/content/file/files/"
	add(opDef{id: "content_file_files_list", method: "GET", path: root + "content/file/files/", pattern: cpat + "{$}", tag: "Content: Files",
		list: &cl, responses: r(200, pg(fc)), h: s.contentList(fileType)})
	add(opDef{id: "content_file_files_create", method: "POST", path: root + "content/file/files/", pattern: cpat + "{$}", tag: "Content: Files",
		body: fileContentIn{}, bodyName: "file.FileContent", media: fileForms, responses: r(202, async), h: s.fileContentCreate})
	add(opDef{id: "content_file_files_upload", method: "POST", path: root + "content/file/files/upload/", pattern: cpat + "upload/{$}", tag: "Content: Files",
		body: fileContentIn{}, bodyName: "file.FileContent", media: fileForms, responses: r(201, fc), h: s.fileContentUpload})
	add(opDef{id: "content_file_files_read", method: "GET", path: "{file_file_content_href}", pattern: cpat + "{id}/{$}", tag: "Content: Files",
		detail: true, responses: r(200, fc), h: s.fileContentRead})
	add(opDef{id: "content_file_files_set_label", method: "POST", path: "{file_file_content_href}set_label/", pattern: cpat + "{id}/set_label/{$}", tag: "Content: Files",
		body: setLabelIn{}, bodyName: "SetLabel", media: jsonForms, responses: r(201, setLabel), h: contentSet})
	add(opDef{id: "content_file_files_unset_label", method: "POST", path: "{file_file_content_href}unset_label/", pattern: cpat + "{id}/unset_label/{$}", tag: "Content: Files",
		body: unsetLabelIn{}, bodyName: "UnsetLabel", media: jsonForms, responses: r(201, unsetLabel), h: contentUnset})

	// Repositories and their versions.
	repo := reg.Add("file.FileRepositoryResponse", fileRepositoryResponse{})
	rl := repoListSpec(fileType)
	const rpat = "/pulp/api/v3/repositories/file/file/"
	const rh = "{file_file_repository_href}"
	const tag = "Repositories: File"
	repoLock := selfLock("repositories/file/file/")
	add(opDef{id: "repositories_file_file_list", method: "GET", path: root + "repositories/file/file/", pattern: rpat + "{$}", tag: tag,
		list: &rl, responses: r(200, pg(repo)), h: s.repoList(fileType)})
	add(opDef{id: "repositories_file_file_create", method: "POST", path: root + "repositories/file/file/", pattern: rpat + "{$}", tag: tag,
		body: fileRepositoryIn{}, bodyName: "file.FileRepository", media: jsonForms, responses: r(201, repo), h: s.repoCreate(fileType)})
	add(opDef{id: "repositories_file_file_read", method: "GET", path: rh, pattern: rpat + "{id}/{$}", tag: tag, detail: true,
		responses: r(200, repo), h: s.repoRead})
	add(opDef{id: "repositories_file_file_update", method: "PUT", path: rh, pattern: rpat + "{id}/{$}", tag: tag,
		body: fileRepositoryIn{}, bodyName: "file.FileRepository", media: jsonForms,
		responses: []openapi.Response{resp(200, repo), resp(202, async)}, h: s.updateHandler("repository", fileType, rh, false, repoLock)})
	add(opDef{id: "repositories_file_file_partial_update", method: "PATCH", path: rh, pattern: rpat + "{id}/{$}", tag: tag,
		body: fileRepositoryIn{}, bodyName: "Patchedfile.FileRepository", media: jsonForms,
		responses: []openapi.Response{resp(200, repo), resp(202, async)}, h: s.updateHandler("repository", fileType, rh, true, repoLock)})
	add(opDef{id: "repositories_file_file_delete", method: "DELETE", path: rh, pattern: rpat + "{id}/{$}", tag: tag,
		responses: r(202, async), h: s.deleteHandler("repository", repoLock)})
	add(opDef{id: "repositories_file_file_set_label", method: "POST", path: rh + "set_label/", pattern: rpat + "{id}/set_label/{$}", tag: tag,
		body: setLabelIn{}, bodyName: "SetLabel", media: jsonForms, responses: r(201, setLabel), h: repoSet})
	add(opDef{id: "repositories_file_file_unset_label", method: "POST", path: rh + "unset_label/", pattern: rpat + "{id}/unset_label/{$}", tag: tag,
		body: unsetLabelIn{}, bodyName: "UnsetLabel", media: jsonForms, responses: r(201, unsetLabel), h: repoUnset})
	add(opDef{id: "repositories_file_file_sync", method: "POST", path: rh + "sync/", pattern: rpat + "{id}/sync/{$}", tag: tag,
		body: fileSyncIn{}, bodyName: "RepositorySyncURL", media: jsonForms, responses: r(202, async), h: s.fileRepoSync})
	add(opDef{id: "repositories_file_file_modify", method: "POST", path: rh + "modify/", pattern: rpat + "{id}/modify/{$}", tag: tag,
		body: modifyIn{}, bodyName: "RepositoryAddRemoveContent", media: jsonForms, responses: r(202, async), h: s.repoModify})
	version := reg.Add("RepositoryVersionResponse", versionResponse{})
	vl := versionListSpec()
	const vh = "{file_file_repository_version_href}"
	const vtag = "Repositories: File Versions"
	add(opDef{id: "repositories_file_file_versions_list", method: "GET", path: rh + "versions/", pattern: rpat + "{id}/versions/{$}", tag: vtag,
		list: &vl, responses: r(200, pg(version)), h: s.versionList(true)})
	add(opDef{id: "repositories_file_file_versions_read", method: "GET", path: vh, pattern: rpat + "{id}/versions/{n}/{$}", tag: vtag, detail: true,
		responses: r(200, version), h: s.versionRead})
	add(opDef{id: "repositories_file_file_versions_delete", method: "DELETE", path: vh, pattern: rpat + "{id}/versions/{n}/{$}", tag: vtag,
		responses: r(202, async), h: s.versionDelete})
	add(opDef{id: "repositories_file_file_versions_repair", method: "POST", path: vh + "repair/", pattern: rpat + "{id}/versions/{n}/repair/{$}", tag: vtag,
		body: repairIn{}, bodyName: "Repair", media: jsonForms, responses: r(202, async), h: s.versionRepair})

	// Remotes.
	remote := reg.Add("file.FileRemoteResponse", remoteResponse{})
	ml := remoteListSpec(fileType)
	const mpat = "/pulp/api/v3/remotes/file/file/"
	const mh = "{file_file_remote_href}"
	const mtag = "Remotes: File"
	remoteLock := selfLock("remotes/file/file/")
	add(opDef{id: "remotes_file_file_list", method: "GET", path: root + "remotes/file/file/", pattern: mpat + "{$}", tag: mtag,
		list: &ml, responses: r(200, pg(remote)), h: s.remoteList(fileType)})
	add(opDef{id: "remotes_file_file_create", method: "POST", path: root + "remotes/file/file/", pattern: mpat + "{$}", tag: mtag,
		body: remoteIn{}, bodyName: "file.FileRemote", media: jsonForms, responses: r(201, remote), h: s.remoteCreate(fileType)})
	add(opDef{id: "remotes_file_file_read", method: "GET", path: mh, pattern: mpat + "{id}/{$}", tag: mtag, detail: true,
		responses: r(200, remote), h: s.remoteRead})
	add(opDef{id: "remotes_file_file_update", method: "PUT", path: mh, pattern: mpat + "{id}/{$}", tag: mtag,
		body: remoteIn{}, bodyName: "file.FileRemote", media: jsonForms,
		responses: []openapi.Response{resp(200, remote), resp(202, async)}, h: s.updateHandler("remote", fileType, mh, false, remoteLock)})
	add(opDef{id: "remotes_file_file_partial_update", method: "PATCH", path: mh, pattern: mpat + "{id}/{$}", tag: mtag,
		body: remoteIn{}, bodyName: "Patchedfile.FileRemote", media: jsonForms,
		responses: []openapi.Response{resp(200, remote), resp(202, async)}, h: s.updateHandler("remote", fileType, mh, true, remoteLock)})
	add(opDef{id: "remotes_file_file_delete", method: "DELETE", path: mh, pattern: mpat + "{id}/{$}", tag: mtag,
		responses: r(202, async), h: s.deleteHandler("remote", remoteLock)})
	add(opDef{id: "remotes_file_file_set_label", method: "POST", path: mh + "set_label/", pattern: mpat + "{id}/set_label/{$}", tag: mtag,
		body: setLabelIn{}, bodyName: "SetLabel", media: jsonForms, responses: r(201, setLabel), h: remoteSet})
	add(opDef{id: "remotes_file_file_unset_label", method: "POST", path: mh + "unset_label/", pattern: mpat + "{id}/unset_label/{$}", tag: mtag,
		body: unsetLabelIn{}, bodyName: "UnsetLabel", media: jsonForms, responses: r(201, unsetLabel), h: remoteUnset})

	// Publications.
	pub := reg.Add("file.FilePublicationResponse", filePublicationResponse{})
	pl := pubListSpec(fileType)
	const ppat = "/pulp/api/v3/publications/file/file/"
	const ph = "{file_file_publication_href}"
	const ptag = "Publications: File"
	add(opDef{id: "publications_file_file_list", method: "GET", path: root + "publications/file/file/", pattern: ppat + "{$}", tag: ptag,
		list: &pl, responses: r(200, pg(pub)), h: s.pubList(fileType)})
	add(opDef{id: "publications_file_file_create", method: "POST", path: root + "publications/file/file/", pattern: ppat + "{$}", tag: ptag,
		body: filePublicationIn{}, bodyName: "file.FilePublication", media: jsonForms, responses: r(202, async), h: s.pubCreate})
	add(opDef{id: "publications_file_file_read", method: "GET", path: ph, pattern: ppat + "{id}/{$}", tag: ptag, detail: true,
		responses: r(200, pub), h: s.pubRead})
	add(opDef{id: "publications_file_file_delete", method: "DELETE", path: ph, pattern: ppat + "{id}/{$}", tag: ptag,
		responses: r(204, ""), h: s.pubDelete})

	// Distributions.
	dist := reg.Add("file.FileDistributionResponse", distResponse{})
	dl := distListSpec(fileType)
	const dpat = "/pulp/api/v3/distributions/file/file/"
	const dh = "{file_file_distribution_href}"
	const dtag = "Distributions: File"
	distLock := selfLock("distributions/file/file/")
	add(opDef{id: "distributions_file_file_list", method: "GET", path: root + "distributions/file/file/", pattern: dpat + "{$}", tag: dtag,
		list: &dl, responses: r(200, pg(dist)), h: s.distList(fileType)})
	add(opDef{id: "distributions_file_file_create", method: "POST", path: root + "distributions/file/file/", pattern: dpat + "{$}", tag: dtag,
		body: distIn{}, bodyName: "file.FileDistribution", media: jsonForms, responses: r(202, async), h: s.distCreate(fileType)})
	add(opDef{id: "distributions_file_file_read", method: "GET", path: dh, pattern: dpat + "{id}/{$}", tag: dtag, detail: true,
		responses: r(200, dist), h: s.distRead})
	add(opDef{id: "distributions_file_file_update", method: "PUT", path: dh, pattern: dpat + "{id}/{$}", tag: dtag,
		body: distIn{}, bodyName: "file.FileDistribution", media: jsonForms,
		responses: []openapi.Response{resp(200, dist), resp(202, async)}, h: s.updateHandler("distribution", fileType, dh, false, distLock)})
	add(opDef{id: "distributions_file_file_partial_update", method: "PATCH", path: dh, pattern: dpat + "{id}/{$}", tag: dtag,
		body: distIn{}, bodyName: "Patchedfile.FileDistribution", media: jsonForms,
		responses: []openapi.Response{resp(200, dist), resp(202, async)}, h: s.updateHandler("distribution", fileType, dh, true, distLock)})
	add(opDef{id: "distributions_file_file_delete", method: "DELETE", path: dh, pattern: dpat + "{id}/{$}", tag: dtag,
		responses: r(202, async), h: s.deleteHandler("distribution", distLock)})
	add(opDef{id: "distributions_file_file_set_label", method: "POST", path: dh + "set_label/", pattern: dpat + "{id}/set_label/{$}", tag: dtag,
		body: setLabelIn{}, bodyName: "SetLabel", media: jsonForms, responses: r(200, setLabel), h: distSet})
	add(opDef{id: "distributions_file_file_unset_label", method: "POST", path: dh + "unset_label/", pattern: dpat + "{id}/unset_label/{$}", tag: dtag,
		body: unsetLabelIn{}, bodyName: "UnsetLabel", media: jsonForms, responses: r(200, unsetLabel), h: distUnset})
}
