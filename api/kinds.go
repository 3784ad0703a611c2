package api

import (
	"strings"

	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
)

// kindOps are the generic operations of every declared kind: for a repository type
// "rpm.rpm", operations repositories_rpm_rpm_*, hrefs {rpm_rpm_repository_href}, tags
// "Repositories: Rpm" and schemas rpm.RpmRepository(Response); likewise for remotes,
// distributions, publications (whose create is the type's own) and units.
func (s *Server) kindOps(t *rest.Table) []rest.Op {
	var ops []rest.Op
	add := func(op rest.Op) { ops = append(ops, op) }
	pg := t.Paginated
	async := t.Async()
	r := func(code int, schema string) []openapi.Response { return []openapi.Response{rest.Resp(code, schema)} }
	root := href.Root
	name := func(typ string) string { return strings.ReplaceAll(href.Segment(typ), "/", "_") } // "rpm.rpm" → "rpm_rpm"

	for _, k := range t.Repositories() {
		k := k
		rl := repoListSpec(&k)
		pn, rh, repoOps := s.crudOps(t, crudKind{collection: "repositories", one: "repository", typ: k.Type, title: k.Title, schema: k.Schema,
			body: func() any { return k.Body() }, view: k.View(), list: &rl, listH: s.repoList(&k), createH: s.repoCreate(k), readH: s.repoRead,
			createCode: 201, labelCode: 201, labels: s.repoLabels})
		ops = append(ops, repoOps...)
		pat, tag := root+"repositories/"+href.Segment(k.Type)+"/", "Repositories: "+k.Title
		vs := viewsetOf(pat)
		if k.Sync != nil {
			add(rest.Op{ID: "repositories_" + pn + "_sync", Viewset: vs, Action: "sync", Method: "POST", Path: rh + "sync/", Pattern: pat + "{id}/sync/{$}", Tag: tag,
				Body: k.Sync.Body, BodyName: k.Sync.BodyName, Media: rest.JSONForms, Responses: r(202, async), Handler: k.Sync.Handler})
		}
		add(rest.Op{ID: "repositories_" + pn + "_modify", Viewset: vs, Action: "modify", Method: "POST", Path: rh + "modify/", Pattern: pat + "{id}/modify/{$}", Tag: tag,
			Body: modifyIn{}, BodyName: "RepositoryAddRemoveContent", Media: rest.JSONForms, Responses: r(202, async), Handler: s.repoModify})
		version := t.Schema("RepositoryVersionResponse", versionResponse{})
		vl := versionListSpec()
		vh := "{" + pn + "_repository_version_href}"
		vtag := "Repositories: " + k.Title + " Versions"
		add(rest.Op{ID: "repositories_" + pn + "_versions_list", Viewset: vs + "/versions", Method: "GET", Path: rh + "versions/", Pattern: pat + "{id}/versions/{$}", Tag: vtag,
			List: &vl, Responses: r(200, pg(version)), Handler: s.versionList(true)})
		add(rest.Op{ID: "repositories_" + pn + "_versions_read", Viewset: vs + "/versions", Method: "GET", Path: vh, Pattern: pat + "{id}/versions/{n}/{$}", Tag: vtag, Detail: true,
			Responses: r(200, version), Handler: s.versionRead})
		add(rest.Op{ID: "repositories_" + pn + "_versions_delete", Viewset: vs + "/versions", Method: "DELETE", Path: vh, Pattern: pat + "{id}/versions/{n}/{$}", Tag: vtag,
			Responses: r(202, async), Handler: s.versionDelete})
		add(rest.Op{ID: "repositories_" + pn + "_versions_repair", Viewset: vs + "/versions", Action: "repair", Method: "POST", Path: vh + "repair/", Pattern: pat + "{id}/versions/{n}/repair/{$}", Tag: vtag,
			Body: repairIn{}, BodyName: "Repair", Media: rest.JSONForms, Responses: r(202, async), Handler: s.versionRepair})
	}
	for _, k := range t.Remotes() {
		k := k
		ml := remoteListSpec(&k)
		_, _, remoteOps := s.crudOps(t, crudKind{collection: "remotes", one: "remote", typ: k.Type, title: k.Title, schema: k.Schema,
			body: func() any { return k.Body() }, view: k.View(), list: &ml, listH: s.remoteList(&k), createH: s.remoteCreate(k), readH: s.remoteRead,
			createCode: 201, labelCode: 201, labels: s.remoteLabels})
		ops = append(ops, remoteOps...)
	}
	for _, k := range t.Distributions() {
		k := k
		dl := distListSpec(&k)
		_, _, distOps := s.crudOps(t, crudKind{collection: "distributions", one: "distribution", typ: k.Type, title: k.Title, schema: k.Schema,
			body: func() any { return k.Body() }, view: k.View(), list: &dl, listH: s.distList(&k), createH: s.distCreate(k), readH: s.distRead,
			createCode: 202, labelCode: 200, labels: s.distLabels})
		ops = append(ops, distOps...)
	}

	for _, k := range t.Publications() {
		k := k
		pub := t.Schema(k.Schema+"PublicationResponse", k.View)
		pl := pubListSpec(&k)
		pn, pat := name(k.Type), root+"publications/"+href.Segment(k.Type)+"/"
		ph := "{" + pn + "_publication_href}"
		tag := "Publications: " + k.Title
		vs := viewsetOf(pat)
		add(rest.Op{ID: "publications_" + pn + "_list", Viewset: vs, Method: "GET", Path: pat, Pattern: pat + "{$}", Tag: tag,
			List: &pl, Responses: r(200, pg(pub)), Handler: s.pubList(&k)})
		add(rest.Op{ID: "publications_" + pn + "_create", Viewset: vs, Method: "POST", Path: pat, Pattern: pat + "{$}", Tag: tag,
			Body: k.Create.Body, BodyName: k.Create.BodyName, Media: rest.JSONForms, Responses: r(202, async), Handler: k.Create.Handler})
		add(rest.Op{ID: "publications_" + pn + "_read", Viewset: vs, Method: "GET", Path: ph, Pattern: pat + "{id}/{$}", Tag: tag, Detail: true,
			Responses: r(200, pub), Handler: s.pubRead})
		add(rest.Op{ID: "publications_" + pn + "_delete", Viewset: vs, Method: "DELETE", Path: ph, Pattern: pat + "{id}/{$}", Tag: tag,
			Responses: r(204, ""), Handler: s.pubDelete})
		ops = append(ops, s.objectRoleOps(t, vs, "publications_"+pn, ph, pat+"{id}/", tag)...)
	}

	for _, k := range t.ACSKinds() {
		ops = append(ops, s.acsOps(t, k)...)
	}

	for _, k := range t.Objects() {
		ops = append(ops, s.objectRoleOps(t, k.Viewset, k.Prefix, k.Href, root+k.Collection+"{id}/", k.Tag)...)
	}

	for _, k := range t.Units() {
		k := k
		unit := t.Schema(k.Schema, k.View)
		l := unitListSpec(&k)
		pat := root + "content/" + k.Segment + "/"
		id := "content_" + strings.ReplaceAll(k.Segment, "/", "_")
		add(rest.Op{ID: id + "_list", Viewset: viewsetOf(pat), Method: "GET", Path: pat, Pattern: pat + "{$}", Tag: k.Tag,
			List: &l, Responses: r(200, pg(unit)), Handler: s.contentList(&k)})
		add(rest.Op{ID: id + "_read", Viewset: viewsetOf(pat), Method: "GET", Path: k.Href, Pattern: pat + "{id}/{$}", Tag: k.Tag, Detail: true,
			Responses: r(200, unit), Handler: s.unitRead(k)})
		ops = append(ops, s.labelOps(t, id, k.Href, pat, k.Tag, k.LabelStatus, s.contentLabels)...)
	}
	return ops
}

// crudKind is a repository, remote or distribution type as crudOps needs it.
type crudKind struct {
	collection, one       string // "repositories", "repository"
	typ, title, schema    string
	body                  func() any // a fresh body of the kind
	view                  any        // its response shape
	list                  *rest.ListSpec
	listH, createH, readH rest.HandlerFunc
	createCode, labelCode int        // Pulp answers a distribution's create 202 and its labels 200
	labels                labelStore // nil: the kind has no labels
}

// crudOps are the list, create, read, update, partial update, delete and label
// operations of a repository, remote or distribution type; updates and deletes are
// Pulp's general tasks. It returns the operations' name ("rpm_rpm") and href template.
func (s *Server) crudOps(t *rest.Table, c crudKind) (string, string, []rest.Op) {
	pn := strings.ReplaceAll(href.Segment(c.typ), "/", "_")
	pat := href.Root + c.collection + "/" + href.Segment(c.typ) + "/"
	h := "{" + rest.HrefName(c.schema+camel(c.one)) + "_href}"
	tag := strings.ToUpper(c.collection[:1]) + c.collection[1:] + ": " + c.title
	name := c.schema + camel(c.one) // "rpm.RpmRepository"
	view := t.Schema(name+"Response", c.view)
	async := t.Async()
	lock := selfLock(c.collection + "/" + href.Segment(c.typ) + "/")
	r := func(code int, schema string) []openapi.Response { return []openapi.Response{rest.Resp(code, schema)} }
	created := r(201, view)
	if c.createCode == 202 {
		created = r(202, async)
	}
	updated := []openapi.Response{rest.Resp(200, view), rest.Resp(202, async)}
	id := c.collection + "_" + pn
	vs := viewsetOf(pat)
	ops := []rest.Op{
		{ID: id + "_list", Viewset: vs, Method: "GET", Path: pat, Pattern: pat + "{$}", Tag: tag, List: c.list, Responses: r(200, t.Paginated(view)), Handler: c.listH},
		{ID: id + "_create", Viewset: vs, Method: "POST", Path: pat, Pattern: pat + "{$}", Tag: tag,
			Body: c.body(), BodyName: name, Media: rest.JSONForms, Responses: created, Handler: c.createH},
		{ID: id + "_read", Viewset: vs, Method: "GET", Path: h, Pattern: pat + "{id}/{$}", Tag: tag, Detail: true, Responses: r(200, view), Handler: c.readH},
		{ID: id + "_update", Viewset: vs, Method: "PUT", Path: h, Pattern: pat + "{id}/{$}", Tag: tag,
			Body: c.body(), BodyName: name, Media: rest.JSONForms, Responses: updated, Handler: s.updateHandler(c.one, c.body(), false, lock)},
		{ID: id + "_partial_update", Viewset: vs, Method: "PATCH", Path: h, Pattern: pat + "{id}/{$}", Tag: tag,
			Body: c.body(), BodyName: "Patched" + name, Media: rest.JSONForms, Responses: updated, Handler: s.updateHandler(c.one, c.body(), true, lock)},
		{ID: id + "_delete", Viewset: vs, Method: "DELETE", Path: h, Pattern: pat + "{id}/{$}", Tag: tag, Responses: r(202, async), Handler: s.deleteHandler(c.one, lock)},
	}
	ops = append(ops, s.objectRoleOps(t, vs, id, h, pat+"{id}/", tag)...)
	if c.labels != nil {
		ops = append(ops, s.labelOps(t, id, h, pat, tag, c.labelCode, c.labels)...)
	}
	return pn, h, ops
}

// camel spells a snake_case name in CamelCase: "alternate_content_source" →
// "AlternateContentSource".
func camel(s string) string {
	var b strings.Builder
	for w := range strings.SplitSeq(s, "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// viewsetOf is the access policy of a collection's operations: Pulp's viewset name, the
// collection's path below the API root ("/pulp/api/v3/remotes/rpm/rpm/" → "remotes/rpm/rpm").
func viewsetOf(pattern string) string {
	return strings.TrimSuffix(strings.TrimPrefix(pattern, href.Root), "/")
}

// labelOps are the set_label and unset_label operations of a resource kind, answered
// with status.
func (s *Server) labelOps(t *rest.Table, id, h, pat, tag string, status int, load labelStore) []rest.Op {
	set, unset := s.labelHandlers(status, load)
	setLabel := t.Schema("SetLabelResponse", setLabelResponse{})
	unsetLabel := t.Schema("UnsetLabelResponse", unsetLabelResponse{})
	vs := viewsetOf(pat)
	return []rest.Op{
		{ID: id + "_set_label", Method: "POST", Path: h + "set_label/", Pattern: pat + "{id}/set_label/{$}", Tag: tag, Viewset: vs, Action: "set_label",
			Body: setLabelIn{}, BodyName: "SetLabel", Media: rest.JSONForms, Responses: []openapi.Response{rest.Resp(status, setLabel)}, Handler: set},
		{ID: id + "_unset_label", Method: "POST", Path: h + "unset_label/", Pattern: pat + "{id}/unset_label/{$}", Tag: tag, Viewset: vs, Action: "unset_label",
			Body: unsetLabelIn{}, BodyName: "UnsetLabel", Media: rest.JSONForms, Responses: []openapi.Response{rest.Resp(status, unsetLabel)}, Handler: unset},
	}
}
