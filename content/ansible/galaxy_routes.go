package ansible

import (
	"net/http"
	"slices"
	"strings"

	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
)

// The Galaxy API's operations. pulp_ansible serves each one twice: under
// /pulp_ansible/galaxy/<path>/api/ (pulp_ansible_galaxy_api_*) and under
// /pulp_ansible/galaxy/default/api/ (pulp_ansible_galaxy_default_api_*). The <path> of a
// route is one path segment here (see docs/compatibility.md).

// galaxyOp is one Galaxy operation, declared at both roots.
type galaxyOp struct {
	id     string // after pulp_ansible_galaxy_[default_]api_
	method string
	path   string // after .../api/
	// viewset and action name the access policy (access.json); empty viewset: anonymous.
	viewset, action string
	tag             string
	list            *rest.ListSpec // a paged list's filters and ordering, for the document
	extra           []openapi.Param
	body            any
	bodyName        string
	media           []string
	responses       []openapi.Response
	handler         rest.HandlerFunc
}

// declareGalaxy adds the Galaxy API: its access conditions and operations.
func (p *Plugin) declareGalaxy(t *rest.Table) error {
	if err := t.Condition("v3_can_view_repo_content", p.canViewRepoContent); err != nil {
		return err
	}
	if err := t.Condition("v3_can_modify_repo_content", p.canModifyRepoContent); err != nil {
		return err
	}
	async := []openapi.Response{rest.Resp(202, t.Async())}
	resp := func(schema string) []openapi.Response { return []openapi.Response{rest.Resp(200, schema)} }
	array := []openapi.Response{{Code: 200, MediaTypes: []string{"application/json"}}}
	none := []openapi.Response{{Code: 200}}
	coll := t.Schema("CollectionResponse", galaxyCollection{})
	collPage := galaxyPaginated(t, coll)
	version := t.Schema("CollectionVersionResponse", galaxyVersion{})
	versionPage := galaxyPaginated(t, t.Schema("CollectionVersionListResponse", galaxyVersionItem{}))
	docs := t.Schema("CollectionVersionDocsResponse", docsBlobResponse{})
	repoMeta := t.Schema("RepoMetadataResponse", repoMetadataResponse{})
	collSpec := rest.ListSpec{Filters: append([]rest.Filter{{Name: "namespace", Lookups: []string{"exact"}}, {Name: "name", Lookups: []string{"exact"}},
		{Name: "deprecated", Type: rest.Bool}}, rest.IdentityFilters("c.pulp_id")...), Ordering: map[string]string{}}
	for k := range collectionOrder {
		collSpec.Ordering[k] = k
	}
	versionSpec := galaxyVersionSpec()
	nsSpec := galaxyNamespaceSpec()
	ns := t.Schema("ansible.AnsibleNamespaceMetadataResponse", namespaceResponse{})
	nsPage := t.Paginated(ns)
	redirect := func(target string) rest.HandlerFunc {
		return p.legacyRedirect(func(r *http.Request) string { return expandPath(target, r) })
	}
	found := func(rs []openapi.Response) []openapi.Response {
		return append(slices.Clone(rs), openapi.Response{Code: 302})
	}
	const content = "v3/plugin/ansible/content/{distro_base_path}/"
	const index = content + "collections/index/{namespace}/{name}/"
	ops := []galaxyOp{
		{id: "get", method: "GET", path: "", tag: "Pulp_Ansible: Api", responses: none, handler: p.galaxyRoot},
		// Legacy v3 routes: 302 to the plugin route of the distribution.
		{id: "v3_read", method: "GET", path: "v3/", viewset: "collections", action: "retrieve", tag: "Pulp_Ansible: Api V3", responses: found(resp(repoMeta)), handler: redirect("collections/")},
		{id: "v3_collections_list", method: "GET", path: "v3/collections/", viewset: "collections", action: "list", tag: "Pulp_Ansible: Collections V3", list: &collSpec, responses: found(resp(collPage)), handler: redirect("collections/index/")},
		{id: "v3_collections_all_list", method: "GET", path: "v3/collections/all/", viewset: "collections/all", action: "list", tag: "Pulp_Ansible: Collections V3", extra: unpaged(collSpec), responses: found(array), handler: redirect("collections/all-collections/")},
		{id: "v3_collection_versions_all_list", method: "GET", path: "v3/collection_versions/all/", viewset: "collection_versions/all", action: "list", tag: "Pulp_Ansible: Collection Versions V3", responses: found(array), handler: redirect("collections/all-versions/")},
		{id: "v3_collections_read", method: "GET", path: "v3/collections/{namespace}/{name}/", viewset: "collections", action: "retrieve", tag: "Pulp_Ansible: Collections V3", responses: found(resp(coll)), handler: redirect("collections/index/{namespace}/{name}/")},
		{id: "v3_collections_update", method: "PATCH", path: "v3/collections/{namespace}/{name}/", viewset: "collections", action: "partial_update", tag: "Pulp_Ansible: Collections V3",
			body: collectionPatch{}, bodyName: "PatchedCollection", media: rest.JSONForms, responses: found(async), handler: redirect("collections/index/{namespace}/{name}/")},
		{id: "v3_collections_delete", method: "DELETE", path: "v3/collections/{namespace}/{name}/", viewset: "collections", action: "destroy", tag: "Pulp_Ansible: Collections V3", responses: found(async), handler: redirect("collections/index/{namespace}/{name}/")},
		{id: "v3_collections_versions_delete", method: "DELETE", path: "v3/collections/{namespace}/{name}/versions/{version}/", viewset: "collections", action: "destroy", tag: "Pulp_Ansible: Collection Versions V3", responses: found(async), handler: redirect("collections/index/{namespace}/{name}/versions/{version}/")},
		{id: "v3_collections_versions_list", method: "GET", path: "v3/collections/{namespace}/{name}/versions/", viewset: "collections", action: "list", tag: "Pulp_Ansible: Collection Versions V3", list: &versionSpec, responses: found(resp(versionPage)), handler: redirect("collections/index/{namespace}/{name}/versions/")},
		{id: "v3_artifacts_collections_get", method: "GET", path: "v3/artifacts/collections/{path}/{filename}", viewset: "artifacts/collections", action: "download", tag: "Pulp_Ansible: Artifacts Collections V3", responses: none, handler: redirect("collections/artifacts/{filename}")},
		{id: "v3_collections_versions_read", method: "GET", path: "v3/collections/{namespace}/{name}/versions/{version}/", viewset: "collections", action: "retrieve", tag: "Pulp_Ansible: Collection Versions V3", responses: found(resp(version)), handler: redirect("collections/index/{namespace}/{name}/versions/{version}/")},
		{id: "v3_collections_versions_docs_blob_read", method: "GET", path: "v3/collections/{namespace}/{name}/versions/{version}/docs-blob/", viewset: "collections", action: "retrieve", tag: "Pulp_Ansible: Collection Versions Docs V3", responses: found(resp(docs)), handler: redirect("collections/index/{namespace}/{name}/versions/{version}/docs-blob/")},
		{id: "v3_namespaces_list", method: "GET", path: "v3/namespaces/", viewset: "namespaces", action: "list", tag: "Pulp_Ansible: Namespaces V3", list: &nsSpec, responses: found(resp(nsPage)), handler: redirect("namespaces/")},
		{id: "v3_namespaces_read", method: "GET", path: "v3/namespaces/{name}/", viewset: "namespaces", action: "retrieve", tag: "Pulp_Ansible: Namespaces V3", responses: found(resp(ns)), handler: redirect("namespaces/{name}/")},
		// Publishing.
		{id: "v3_artifacts_collections_create", method: "POST", path: "v3/artifacts/collections/", viewset: "artifacts/collections", action: "create", tag: "Pulp_Ansible: Artifacts Collections V3",
			body: oneShotIn{}, bodyName: "CollectionOneShot", media: rest.FileForms, responses: async, handler: p.galaxyPublish},
		{id: "v3_plugin_ansible_content_collections_artifacts_create", method: "POST", path: content + "collections/artifacts/", viewset: "artifacts/collections", action: "create", tag: "Pulp_Ansible: Artifacts Collections V3",
			body: oneShotIn{}, bodyName: "CollectionOneShot", media: rest.FileForms, responses: async, handler: p.galaxyPublish},
		// The plugin routes.
		{id: "v3_plugin_ansible_client_configuration_read", method: "GET", path: "v3/plugin/ansible/client-configuration/", viewset: "plugin/ansible/client-configuration", action: "retrieve", tag: "Pulp_Ansible: Client Configuration",
			responses: resp(t.Schema("ClientConfigurationResponse", clientConfiguration{})), handler: p.clientConfiguration},
		{id: "v3_plugin_ansible_content_collections_read", method: "GET", path: content + "collections/", viewset: "collections", action: "retrieve", tag: "Pulp_Ansible: Repo Metadata", responses: resp(repoMeta), handler: p.repoMetadata},
		{id: "v3_plugin_ansible_content_collections_index_list", method: "GET", path: content + "collections/index/", viewset: "collections", action: "list", tag: "Pulp_Ansible: Collections", list: &collSpec, responses: resp(collPage), handler: p.collectionsList},
		{id: "v3_plugin_ansible_content_collections_all_collections_list", method: "GET", path: content + "collections/all-collections/", viewset: "collections/all", action: "list", tag: "Pulp_Ansible: Collections", extra: unpaged(collSpec), responses: array, handler: p.allCollections},
		{id: "v3_plugin_ansible_content_collections_all_versions_list", method: "GET", path: content + "collections/all-versions/", viewset: "collection_versions/all", action: "list", tag: "Pulp_Ansible: Collection Versions", responses: array, handler: p.allVersions},
		{id: "v3_plugin_ansible_content_collections_index_read", method: "GET", path: index, viewset: "collections", action: "retrieve", tag: "Pulp_Ansible: Collections", responses: resp(coll), handler: p.collectionDetail},
		{id: "v3_plugin_ansible_content_collections_index_update", method: "PATCH", path: index, viewset: "collections", action: "partial_update", tag: "Pulp_Ansible: Collections",
			body: collectionPatch{}, bodyName: "PatchedCollection", media: rest.JSONForms, responses: async, handler: p.collectionUpdate},
		{id: "v3_plugin_ansible_content_collections_index_delete", method: "DELETE", path: index, viewset: "collections", action: "destroy", tag: "Pulp_Ansible: Collections", responses: async, handler: p.galaxyDelete},
		{id: "v3_plugin_ansible_content_collections_index_versions_delete", method: "DELETE", path: index + "versions/{version}/", viewset: "collections", action: "destroy", tag: "Pulp_Ansible: Collection Versions", responses: async, handler: p.galaxyDelete},
		{id: "v3_plugin_ansible_content_collections_index_versions_list", method: "GET", path: index + "versions/", viewset: "collections", action: "list", tag: "Pulp_Ansible: Collection Versions", list: &versionSpec, responses: resp(versionPage), handler: p.versionsList},
		{id: "v3_plugin_ansible_content_collections_index_versions_read", method: "GET", path: index + "versions/{version}/", viewset: "collections", action: "retrieve", tag: "Pulp_Ansible: Collection Versions", responses: resp(version), handler: p.versionDetail},
		{id: "v3_plugin_ansible_content_collections_index_versions_docs_blob_read", method: "GET", path: index + "versions/{version}/docs-blob/", viewset: "collections", action: "retrieve", tag: "Pulp_Ansible: Collection Versions Docs", responses: resp(docs), handler: p.docsBlob},
		{id: "v3_plugin_ansible_content_namespaces_list", method: "GET", path: content + "namespaces/", viewset: "namespaces", action: "list", tag: "Pulp_Ansible: Namespaces", list: &nsSpec, responses: resp(nsPage), handler: p.namespacesList},
		{id: "v3_plugin_ansible_content_namespaces_create", method: "POST", path: content + "namespaces/", viewset: "namespaces", action: "create", tag: "Pulp_Ansible: Namespaces",
			body: galaxyNamespaceIn{}, bodyName: "ansible.AnsibleNamespaceMetadata", media: rest.FileForms, responses: async, handler: p.namespaceWrite},
		{id: "v3_plugin_ansible_content_namespaces_partial_update", method: "PATCH", path: content + "namespaces/{name}/", viewset: "namespaces", action: "partial_update", tag: "Pulp_Ansible: Namespaces",
			body: galaxyNamespaceIn{}, bodyName: "Patchedansible.AnsibleNamespaceMetadata", media: rest.FileForms, responses: async, handler: p.namespaceWrite},
		{id: "v3_plugin_ansible_content_namespaces_delete", method: "DELETE", path: content + "namespaces/{name}/", viewset: "namespaces", action: "delete", tag: "Pulp_Ansible: Namespaces", responses: async, handler: p.namespaceDelete},
		{id: "v3_plugin_ansible_content_namespaces_read", method: "GET", path: content + "namespaces/{name}/", viewset: "namespaces", action: "retrieve", tag: "Pulp_Ansible: Namespaces", responses: resp(ns), handler: p.namespaceDetail},
		{id: "v3_plugin_ansible_content_collections_artifacts_download", method: "GET", path: content + "collections/artifacts/{filename}", viewset: "artifacts/collections", action: "download", tag: "Pulp_Ansible: Artifacts Collections V3", responses: none, handler: p.artifactDownload},
	}
	for _, o := range ops {
		for _, root := range []struct{ id, path string }{
			{"pulp_ansible_galaxy_api_", GalaxyRoot + "{path}/api/"},
			{"pulp_ansible_galaxy_default_api_", GalaxyRoot + "default/api/"},
		} {
			t.Add(galaxyRouteOp(o, root.id+o.id, root.path+o.path))
		}
	}
	// The import a publish returns, polled by ansible-galaxy at its own server's
	// v3/imports/collections/<id>/ (a legacy route that pulp_ansible redirects; served in
	// place here).
	t.Add(rest.Op{ID: "collection_import_read", Method: "GET", Path: "{ansible_collection_import_href}",
		Pattern: defaultRoot + "imports/collections/{id}/{$}", Also: []string{GalaxyRoot + "{path}/api/v3/plugin/ansible/imports/collections/{id}/{$}",
			GalaxyRoot + "{path}/api/v3/imports/collections/{id}/{$}"}, Detail: true,
		Extra:   []openapi.Param{openapi.Query("since", openapi.Schema{Type: "string"}, "Filter messages since a given timestamp")},
		Viewset: "collections", Action: "retrieve", Tag: "Collection: Import", Responses: resp(t.Schema("CollectionImportDetailResponse", collectionImport{})),
		Handler: p.importDetail, WriteError: writeGalaxyError})
	t.Add(rest.Op{ID: "content_ansible_namespaces_avatar", Method: "GET", Path: "{ansible_ansible_namespace_metadata_href}avatar/",
		Pattern: href.Root + "content/" + namespaceSegment + "/{id}/avatar/{$}", Viewset: "content/" + namespaceSegment, Action: "avatar", Detail: true,
		Tag: "Content: Namespaces", Responses: []openapi.Response{{Code: 302, MediaTypes: []string{"application/json"}}}, Handler: p.namespaceAvatar})
	// The cross-repository search, with no access policy: administrators only.
	searchItemSchema := t.Schema("CollectionVersionSearchListResponse", searchItem{})
	searchPage := galaxyPaginated(t, searchItemSchema)
	for _, s := range []struct{ id, path, pattern string }{
		{"pulp_ansible_galaxy_default_api_v3_plugin_ansible_search_collection_versions_", defaultRoot + "search/collection-versions/", defaultRoot + "search/collection-versions/{$}"},
		{"api_v3_plugin_ansible_search_collection_versions_", "{ansible_cross_repository_collection_version_index_href}api/v3/plugin/ansible/search/collection-versions/",
			GalaxyRoot + "{path}/api/v3/plugin/ansible/search/collection-versions/{$}"},
	} {
		t.Add(rest.Op{ID: s.id + "list", Method: "GET", Path: s.path, Pattern: s.pattern, Viewset: "plugin/ansible/search/collection-versions", Action: "list",
			Detail: true, Extra: searchParams(), Tag: "Pulp_Ansible: Search", Responses: resp(searchPage), Handler: p.searchList})
		t.Add(rest.Op{ID: s.id + "rebuild", Method: "POST", Path: s.path, Pattern: s.pattern, Viewset: "plugin/ansible/search/collection-versions", Action: "rebuild",
			Body: searchRebuildIn{}, BodyName: "CollectionVersionSearchList", Media: rest.JSONForms, Tag: "Pulp_Ansible: Search",
			Responses: []openapi.Response{rest.Resp(201, searchItemSchema)}, Handler: p.searchRebuild})
	}
	// v1 roles, anonymous, in pulpcore's pages and errors.
	t.Add(rest.Op{ID: "api_v1_roles_get", Method: "GET", Path: "{ansible_role_href}api/v1/roles/", Pattern: GalaxyRoot + "{path}/api/v1/roles/{$}",
		Anonymous: true, Detail: true, Extra: openapi.Pagination(), Tag: "Api: Roles", Responses: resp(t.Paginated(t.Schema("GalaxyRoleResponse", v1Role{}))), Handler: p.rolesList})
	t.Add(rest.Op{ID: "api_v1_roles_versions_list", Method: "GET", Path: "{ansible_role_href}versions/", Pattern: GalaxyRoot + "{path}/api/v1/roles/{role}/versions/{$}",
		Anonymous: true, Detail: true, Extra: openapi.Pagination(), Tag: "Api: Roles", Responses: resp(t.Paginated(t.Schema("GalaxyRoleVersionResponse", v1RoleVersion{}))), Handler: p.roleVersions})
	return nil
}

// galaxyVersionSpec is the versions list's filters and orderings: the Pulp API's
// collection version list's.
func galaxyVersionSpec() rest.ListSpec {
	return rest.ListSpec{Filters: append(append(cvFilters(), rest.UnitFilters()...), rest.IdentityFilters("c.pulp_id")...), Ordering: cvOrdering()}
}

// galaxyRouteOp makes the table's operation of a Galaxy operation at one root.
func galaxyRouteOp(o galaxyOp, id, path string) rest.Op {
	// The legacy download names {path} twice; the mux wants its wildcards unique.
	pattern := strings.Replace(path, "collections/{path}/", "collections/{artifact_path}/", 1)
	if strings.HasSuffix(pattern, "/") {
		pattern += "{$}"
	}
	return rest.Op{ID: id, Method: o.method, Path: path, Pattern: pattern, Tag: o.tag, List: o.list, Detail: o.method == "GET" && o.list == nil,
		Extra: o.extra, Body: o.body, BodyName: o.bodyName, Media: o.media, Responses: o.responses, Handler: o.handler,
		Viewset: o.viewset, Action: o.action, Anonymous: o.viewset == "", WriteError: writeGalaxyError}
}

// unpaged are a list's filter and ordering parameters without its paging (the
// unpaginated lists), for the document.
func unpaged(spec rest.ListSpec) []openapi.Param {
	var out []openapi.Param
	for _, prm := range spec.Params() {
		switch prm.Name {
		case "limit", "offset", "fields", "exclude_fields", "X-Task-Diagnostics":
			continue
		}
		out = append(out, prm)
	}
	return out
}

// galaxyPaginated registers Galaxy's page of item ({meta, links, data}) under the name
// pulp_ansible's document gives it.
func galaxyPaginated(t *rest.Table, item string) string {
	name := "Paginated" + item + "List"
	if _, ok := t.Reg.Schema(name); ok {
		return name
	}
	link := openapi.Schema{Type: "string", Nullable: true}
	return t.Reg.AddSchema(name, openapi.Schema{Type: "object", Properties: []openapi.Property{
		{Name: "meta", Schema: openapi.Schema{Type: "object", Properties: []openapi.Property{{Name: "count", Schema: openapi.Schema{Type: "integer", Example: 123}}}}},
		{Name: "links", Schema: openapi.Schema{Type: "object", Properties: []openapi.Property{{Name: "first", Schema: link}, {Name: "previous", Schema: link},
			{Name: "next", Schema: link}, {Name: "last", Schema: link}}}},
		{Name: "data", Schema: openapi.Schema{Type: "array", Items: &openapi.Schema{Ref: item}}},
	}})
}

// expandPath fills a route's {wildcards} from the request's path values.
func expandPath(target string, r *http.Request) string {
	for _, k := range []string{"namespace", "name", "version", "filename"} {
		target = strings.ReplaceAll(target, "{"+k+"}", escapePath(r.PathValue(k)))
	}
	return target
}

// canViewRepoContent is pulp_ansible's v3_can_view_repo_content: on a route naming a
// distribution (distro_base_path), false when it serves nothing, and for a private
// repository only with ansible.view_ansiblerepository on the model or the repository.
func (p *Plugin) canViewRepoContent(c rest.Check, _ string) (bool, error) {
	bp := c.Request().PathValue("distro_base_path")
	if bp == "" {
		return true, nil
	}
	d, err := p.distribution(c.Request().Context(), bp)
	if err != nil {
		// An unknown distribution is the handler's 404.
		return true, nil
	}
	if d.Repo == nil || d.Version == 0 {
		return false, nil
	}
	if !d.Repo.Private {
		return true, nil
	}
	return p.holds(c, "ansible.view_ansiblerepository", d)
}

// canModifyRepoContent is pulp_ansible's v3_can_modify_repo_content.
func (p *Plugin) canModifyRepoContent(c rest.Check, _ string) (bool, error) {
	bp := c.Request().PathValue("distro_base_path")
	if bp == "" {
		return c.HasModelPerm("ansible.modify_ansible_repo_content")
	}
	d, err := p.distribution(c.Request().Context(), bp)
	if err != nil || d.Repo == nil {
		return c.HasModelPerm("ansible.modify_ansible_repo_content")
	}
	return p.holds(c, "ansible.modify_ansible_repo_content", d)
}

// holds reports whether the caller holds perm on the model or on d's repository.
func (p *Plugin) holds(c rest.Check, perm string, d dist) (bool, error) {
	if ok, err := c.HasModelPerm(perm); ok || err != nil {
		return ok, err
	}
	return c.HasPermOn(perm, repoHref(d.Repo.PulpID))
}
