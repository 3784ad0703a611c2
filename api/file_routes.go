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

	s.typeTable(reg, add, typeRoutes{typ: fileType, plugin: "file", name: "file", title: "File", schema: "file.File",
		repo: fileRepositoryIn{}, repoView: fileRepositoryResponse{}, remote: remoteIn{}, remoteView: remoteResponse{},
		dist: distIn{}, distView: distResponse{}, sync: s.fileRepoSync, syncBody: fileSyncIn{}, syncBodyName: "RepositorySyncURL"})

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

}
