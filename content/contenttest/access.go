package contenttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"slices"
	"sort"
	"strings"
	"testing"

	"pith/api"
	"pith/api/access"
	"pith/api/href"
	"pith/api/openapi"
)

// The permission matrix: every operation of the server, called by an anonymous client,
// a user without roles, a user holding the viewer role on every object the check made,
// one holding the owner role on every object, and an administrator; each answer is
// checked against what the default access policies decide, worked out here from the
// policies' data (the statements and the permissions each condition names), apart from
// the API's own evaluation.

// principal is who calls.
type principal struct {
	name string
	role string // "viewer" or "owner": the built-in role held on every object ("" none)
	anon bool
	sup  bool
}

var principals = []principal{{name: "anonymous", anon: true}, {name: "no roles"}, {name: "viewer", role: "viewer"},
	{name: "owner", role: "owner"}, {name: "administrator", sup: true}}

// outcome is what an answer means for access control.
type outcome string

const (
	unauthenticated outcome = "401"
	forbidden       outcome = "403"
	hidden          outcome = "404"
	allowed         outcome = "allowed" // anything else below 500: the operation ran or judged its input
	invalid         outcome = "400"     // a condition refused the body (a missing repository, say)
)

func outcomeOf(code int) outcome {
	switch code {
	case 401:
		return unauthenticated
	case 403:
		return forbidden
	case 404:
		return hidden
	}
	return allowed
}

func (s *suite) accessMatrix(t *testing.T) {
	for _, p := range principals {
		t.Run(p.name, func(t *testing.T) { s.matrix(t, p) })
	}
}

// caller is a principal's account in one environment and the permissions its role
// gives it on the objects of each model.
type caller struct {
	principal
	user, password string
	defaults       access.Defaults
}

// perms are the permissions the caller holds on an object of model.
func (c caller) perms(model string) map[string]bool {
	out := map[string]bool{}
	if c.role == "" {
		return out
	}
	for _, p := range c.defaults.Roles[model+"_"+c.role].Permissions {
		out[p] = true
	}
	return out
}

// modelOfPerm is the model a permission is of ("file.view_filerepository" →
// "file.filerepository").
func (c caller) modelOfPerm(perm string) string {
	for m, ps := range c.defaults.Permissions {
		if slices.Contains(ps, perm) {
			return m
		}
	}
	return ""
}

func (s *suite) matrix(t *testing.T, p principal) {
	e := s.env(t)
	tr := &tour{e: e, s: s, vars: map[string]string{}}
	tr.setup()
	c := caller{principal: p, defaults: e.API.AccessDefaults()}
	switch {
	case p.sup:
		c.user, c.password = "admin", "pw"
	case !p.anon:
		c.user, c.password = tr.name("caller"), "the caller's long passphrase"
		tr.json("POST", href.Root+"users/", map[string]any{"username": c.user, "password": c.password})
	}
	if p.role != "" {
		tr.grantAll(c)
	}
	ops := e.API.Operations()
	sort.SliceStable(ops, func(i, j int) bool { return phase(ops[i]) < phase(ops[j]) })
	// Purging tasks last: the deletions before it need finished tasks.
	sort.SliceStable(ops, func(i, j int) bool { return ops[j].ID == "tasks_purge" && ops[i].ID != "tasks_purge" })
	for _, op := range ops {
		if s.f.elsewhere(op.ID) {
			continue
		}
		g, guarded := e.API.GuardOf(op.ID)
		method, path, ct, body := tr.matrixRequest(op, c)
		var raw []byte
		if body != nil {
			raw, _ = io.ReadAll(body)
		}
		code, m, _ := e.DoAs(c.user, c.password, method, path, ct, bytes.NewReader(raw))
		want := allowed
		if guarded {
			want = c.expect(g, method, formFields(ct, raw))
		}
		got := outcomeOf(code)
		if code >= 500 || (got != want && !(want == invalid && code == 400)) {
			t.Errorf("%s %s (%s, %s/%s) as %s: %d %v; want %s", method, path, op.ID, g.Viewset, g.Action, p.name, code, m, want)
		}
		// A list the viewset's policy scopes shows a caller without roles nothing (lists
		// run before the caller makes anything), and one holding a role on every object
		// something wherever the administrator sees something.
		if n, ok := m["count"].(float64); ok && method == "GET" && code == 200 && !p.sup && !p.anon && c.scoped(g.Viewset) {
			_, am, _ := e.Do("GET", path, "", nil)
			all, _ := am["count"].(float64)
			if p.role == "" && n != 0 || p.role != "" && all > 0 && n == 0 {
				t.Errorf("GET %s (%s) as %s: sees %v of the %v the administrator sees", path, op.ID, p.name, n, all)
			}
		}
	}
}

// grantAll gives the caller its role on every object the tour made and on every task.
func (tr *tour) grantAll(c caller) {
	e := tr.e
	uid := tr.userID(c.user)
	objects := []string{tr.refs.Repository, tr.refs.Remote, tr.refs.Publication, tr.refs.Distribution}
	for v, h := range tr.vars {
		if strings.HasSuffix(v, "_href") && !strings.Contains(v, "version") && !strings.Contains(v, "user_role") && !strings.Contains(v, "group_role") &&
			!strings.HasPrefix(v, "groups_user") && v != "access_policy_href" && v != "role_href" {
			objects = append(objects, h)
		}
	}
	// Every task, repository and remote (the type's examples may have made more, and
	// every alternate content source has a remote of its own).
	for _, list := range []string{"tasks/", "repositories/", "remotes/"} {
		for _, o := range e.read(href.Root + list + "?limit=1000")["results"].([]any) {
			objects = append(objects, o.(map[string]any)["pulp_href"].(string))
		}
	}
	for _, h := range objects {
		tr.grant(uid, c, h)
	}
}

// grant gives the caller its role on the object at h, when the object's model has one.
func (tr *tour) grant(uid string, c caller, h string) {
	if h == "" {
		return
	}
	code, page, _ := tr.e.Do("GET", href.Root+"roles/?locked=true&for_object_type="+h, "", nil)
	if code != 200 {
		return // an href of something no role is held on
	}
	for _, r := range page["results"].([]any) {
		name := r.(map[string]any)["name"].(string)
		if strings.HasSuffix(name, "_"+c.role) {
			tr.json("POST", href.Root+"users/"+uid+"/roles/", map[string]any{"role": name, "content_object": h})
			return
		}
	}
}

func (tr *tour) userID(name string) string {
	page := tr.e.read(href.Root + "users/?username=" + name)
	u := page["results"].([]any)[0].(map[string]any)
	return fmt.Sprint(u["id"])
}

// expect is the outcome the default policies give the caller for one request.
func (c caller) expect(g api.Guard, method string, fields map[string]json.RawMessage) outcome {
	pol, ok := c.defaults.Policies[g.Viewset]
	statements := pol.Statements
	if !ok {
		statements = []access.Statement{{Action: access.Strings{"*"}, Principal: access.Strings{"admin"}, Effect: "allow"}}
	}
	if g.Model != "" && !c.sup && !c.anon && !c.sees(g) {
		return hidden
	}
	var condErr outcome
	holds := func(name, arg string) (bool, error) {
		ok, o := c.holds(g, name, arg, fields)
		if o != "" {
			condErr = o
			return false, fmt.Errorf("%s", o)
		}
		return ok, nil
	}
	ok, err := access.Allowed(statements, access.Request{Subject: c.subject(), Action: g.Action, Method: method}, holds)
	switch {
	case err != nil:
		return condErr
	case ok:
		return allowed
	case c.anon:
		return unauthenticated
	}
	return forbidden
}

// scoped reports whether a viewset's default policy narrows its lists.
func (c caller) scoped(viewset string) bool {
	pol, ok := c.defaults.Policies[viewset]
	return ok && pol.Scoped()
}

func (c caller) subject() access.Subject {
	if c.anon {
		return access.Subject{}
	}
	return access.Subject{ID: 2, Username: c.user, Superuser: c.sup}
}

// sees reports whether a detail operation's object is visible to the caller.
func (c caller) sees(g api.Guard) bool {
	pol, ok := c.defaults.Policies[g.ScopeViewset]
	switch {
	case !ok || !pol.Scoped():
		return true // no policy, or one that does not narrow: every object
	case strings.HasPrefix(g.ScopeViewset, "content/") || g.ScopeViewset == "task-groups":
		// Content in, and task groups of, objects the caller holds its role on.
		return c.role != ""
	case pol.ScopePermission == "":
		return true
	}
	return c.perms(g.Model)[pol.ScopePermission]
}

// holds evaluates one condition for the caller, who holds its role's permissions on
// every object the check made and no permission on every object; o is the outcome a
// condition that refuses the body gives.
func (c caller) holds(g api.Guard, name, arg string, body map[string]json.RawMessage) (ok bool, o outcome) {
	if c.sup {
		return name != "has_domain_perms", ""
	}
	param := func(field string) bool {
		if v, ok := body[field]; !ok || string(v) == "null" {
			return true
		}
		for _, p := range strings.Split(arg, ",") {
			if c.perms(c.modelOfPerm(p))[p] {
				return true
			}
		}
		return false
	}
	switch name {
	case "has_model_perms", "has_model_or_domain_perms", "has_domain_perms":
		return false, ""
	case "has_remote_param_obj_perms", "has_remote_param_model_or_obj_perms", "has_remote_param_model_or_domain_or_obj_perms":
		return param("remote"), ""
	case "has_repo_or_repo_ver_param_model_or_obj_perms", "has_repo_or_repo_ver_param_model_or_domain_or_obj_perms":
		if _, ok := body["repository"]; ok {
			return param("repository"), ""
		}
		return param("repository_version"), ""
	case "has_publication_param_model_or_obj_perms", "has_publication_param_model_or_domain_or_obj_perms":
		return param("publication"), ""
	case "has_upload_param_model_or_obj_perms", "has_upload_param_model_or_domain_or_obj_perms":
		return param("upload"), ""
	case "has_required_repo_perms_on_upload":
		if v, ok := body["repository"]; !ok || string(v) == "null" {
			return false, invalid
		}
		return param("repository"), ""
	case "has_perms_to_copy":
		return c.perms(c.modelOfPerm("rpm.modify_content_rpmrepository"))["rpm.modify_content_rpmrepository"] &&
			c.perms(c.modelOfPerm("rpm.view_rpmrepository"))["rpm.view_rpmrepository"], ""
	}
	// A permission on the object the URL names (or its repository, or its group).
	return g.Model != "" && c.perms(g.Model)[arg], ""
}

// matrixRequest is the one request the matrix sends for an operation: a valid body where
// one is needed, made (as the administrator) on an object made for it when the
// operation changes or deletes its object, on which the caller then gets its role.
func (tr *tour) matrixRequest(op openapi.Operation, c caller) (method, path, ct string, body io.Reader) {
	e := tr.e
	p := tr.path(op.Path)
	coll, _, _ := strings.Cut(op.ID, "_")
	suffix := op.ID[strings.LastIndex(op.ID, "_")+1:]
	fresh := func(h string) string {
		if c.role != "" && !c.anon {
			tr.grant(tr.userID(c.user), c, objectOf(h))
		}
		return h
	}
	jsonReq := func(method, path string, v any) (string, string, string, io.Reader) {
		ct, b := JSONBody(v)
		return method, path, ct, b
	}
	if ex, own := tr.s.f.Examples[op.ID]; own {
		// The caller holds its role on what the example made too: the object it acts
		// on and those its body names.
		method, path, ct, body := ex(e, tr.refs)
		if _, ok := href.Parse(path); ok {
			fresh(objectOf(path))
		}
		raw, _ := io.ReadAll(body)
		for _, v := range formFields(ct, raw) {
			for _, h := range hrefsIn(v) {
				fresh(h)
			}
		}
		return method, path, ct, bytes.NewReader(raw)
	}
	switch {
	case op.Method == "GET":
		return "GET", p, "", nil
	case op.ID == "artifacts_create":
		ct, b := Multipart(nil, "file", "blob", []byte("an artifact of "+c.name))
		return "POST", p, ct, b
	case op.ID == "uploads_create":
		return jsonReq("POST", p, map[string]any{"size": 1})
	case op.ID == "uploads_update":
		up := fresh(tr.json("POST", href.Root+"uploads/", map[string]any{"size": 3})["pulp_href"].(string))
		ct, b := Multipart(nil, "file", "blob", []byte("abc"))
		return "PUT", up, ct, io.MultiReader(b)
	case op.ID == "uploads_commit":
		up := fresh(tr.json("POST", href.Root+"uploads/", map[string]any{"size": 1})["pulp_href"].(string))
		return jsonReq("POST", up+"commit/", map[string]any{"sha256": strings.Repeat("0", 64)})
	case op.ID == "orphans_cleanup_cleanup" || op.ID == "tasks_purge" || op.ID == "access_policies_reset" || op.ID == "login" || op.ID == "repair_post":
		return jsonReq("POST", p, map[string]any{})
	case op.ID == "repositories_reclaim_space_reclaim":
		return jsonReq("POST", p, map[string]any{"repo_hrefs": []string{tr.refs.Repository}})
	case op.ID == "orphans_delete" || op.ID == "logout":
		return "DELETE", p, "", nil
	case op.ID == "tasks_cancel" || op.ID == "task_groups_cancel":
		return jsonReq("PATCH", p, map[string]any{"state": "canceled"})
	case op.ID == "users_create":
		return jsonReq("POST", p, map[string]any{"username": tr.name("user")})
	case op.ID == "groups_create":
		return jsonReq("POST", p, map[string]any{"name": tr.name("group")})
	case op.ID == "roles_create":
		return jsonReq("POST", p, map[string]any{"name": tr.name("role"), "permissions": []string{}})
	case op.ID == "groups_users_create":
		return jsonReq("POST", p, map[string]any{"username": tr.user})
	case op.ID == "users_roles_create" || op.ID == "groups_roles_create":
		return jsonReq("POST", p, map[string]any{"role": tr.role, "content_object": tr.refs.Remote})
	case strings.HasSuffix(op.ID, "_add_role") || strings.HasSuffix(op.ID, "_remove_role"):
		obj := strings.TrimSuffix(strings.TrimSuffix(p, "add_role/"), "remove_role/")
		return jsonReq("POST", p, map[string]any{"role": tr.objectRole(obj), "users": []string{tr.user}})
	case strings.HasSuffix(op.ID, "_set_label"):
		return jsonReq("POST", p, map[string]any{"key": "matrix", "value": c.name})
	case strings.HasSuffix(op.ID, "_unset_label"):
		return jsonReq("POST", p, map[string]any{"key": "matrix"})
	case suffix == "update" && op.Method == "PATCH":
		return jsonReq("PATCH", p, map[string]any{})
	case suffix == "update":
		cur := e.read(p)
		b := map[string]any{}
		for _, keep := range []string{"name", "url", "base_path", "repository", "publication", "remote", "username", "permissions", "statements",
			"header_name", "header_value", "ca_certificate", "api_root", "path", "repositories"} {
			if v, ok := cur[keep]; ok && v != nil {
				b[keep] = v
			}
		}
		if op.ID == "upstream_pulps_update" {
			b["base_url"] = cur["base_url"] // a distribution's is read-only
		}
		if coll == "remotes" {
			tr.remoteFields(tr.kindOf(coll, op.ID), b, false)
		}
		return jsonReq("PUT", p, b)
	case suffix == "sync" || suffix == "repair" || suffix == "refresh":
		return jsonReq("POST", p, map[string]any{})
	case suffix == "create" && coll == "acs":
		return jsonReq("POST", p, tr.acsBody(tr.kindOf(coll, op.ID)))
	case suffix == "modify":
		return jsonReq("POST", p, map[string]any{"add_content_units": []string{}})
	case suffix == "create" && (coll == "repositories" || coll == "remotes" || coll == "distributions"):
		return jsonReq("POST", p, tr.createBody(coll, tr.kindOf(coll, op.ID)))
	case suffix == "create" && coll == "publications":
		return jsonReq("POST", p, map[string]any{"repository": tr.refs.Repository})
	case suffix == "create" && coll == "contentguards":
		return jsonReq("POST", p, tr.guardBody(guardSegment(p)))
	case coll == "exporters" && strings.HasSuffix(op.ID, "_exports_create"):
		p, body := tr.exportRequest(exporterKind(op.ID))
		return jsonReq("POST", fresh(strings.TrimSuffix(p, "exports/"))+"exports/", body)
	case isImporter(op.ID) && suffix != "delete" && !strings.HasSuffix(op.ID, "update"):
		if method, path, body, ok := tr.importerRequest(op.ID, p); ok {
			return jsonReq(method, path, body)
		}
	case coll == "exporters" && suffix == "create":
		return jsonReq("POST", p, tr.exporterBody(exporterKind(op.ID)))
	case op.ID == "upstream_pulps_create":
		return jsonReq("POST", p, tr.upstreamBody())
	case op.ID == "upstream_pulps_replicate":
		return jsonReq("POST", p, map[string]any{})
	case suffix == "delete":
		return "DELETE", fresh(tr.deletable(op, coll)), "", nil
	}
	e.T.Fatalf("the permission matrix does not know how to call %s %s", op.ID, op.Path)
	return
}

// objectOf is the href of the object a path names first: the repository of a version,
// the group of a membership.
func objectOf(path string) string {
	rest := strings.TrimPrefix(path, href.Root)
	if segs := strings.SplitN(rest, "/", 3); len(segs) == 3 && (segs[0] == "users" || segs[0] == "groups") {
		return href.Root + segs[0] + "/" + segs[1] + "/" // numbered: /groups/3/roles/<uuid>/ is group 3's
	}
	if p, ok := href.Parse(path); ok {
		return href.Root + p.Collection + p.ID + "/"
	}
	return path
}

// hrefsIn are the hrefs anywhere in a JSON value.
func hrefsIn(v json.RawMessage) []string {
	var x any
	json.Unmarshal(v, &x)
	var out []string
	var walk func(any)
	walk = func(x any) {
		switch y := x.(type) {
		case string:
			if strings.HasPrefix(y, href.Root) {
				out = append(out, y)
			}
		case []any:
			for _, z := range y {
				walk(z)
			}
		case map[string]any:
			for _, z := range y {
				walk(z)
			}
		}
	}
	walk(x)
	return out
}

// formFields reads a request body as the server does, into JSON values by field: a JSON
// object, or a multipart form's text fields as strings.
func formFields(ct string, body []byte) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	mt, params, _ := mime.ParseMediaType(ct)
	if mt != "multipart/form-data" {
		json.Unmarshal(body, &out)
		return out
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		part, err := mr.NextPart()
		if err != nil {
			return out
		}
		if part.FileName() == "" {
			v, _ := io.ReadAll(part)
			out[part.FormName()], _ = json.Marshal(string(v))
		}
	}
}

// deletable makes (as the administrator) something an operation may delete and returns
// its href.
func (tr *tour) deletable(op openapi.Operation, coll string) string {
	switch {
	case strings.HasSuffix(op.ID, "_versions_delete"):
		r := tr.json("POST", collection("repositories", tr.kindOf("repositories", op.ID)), tr.createBody("repositories", ""))["pulp_href"].(string)
		units := tr.e.units(tr.refs.Version)
		tr.json("POST", r+"modify/", map[string]any{"add_content_units": units[:1]})
		tr.json("POST", r+"modify/", map[string]any{"remove_content_units": units[:1]})
		return r + "versions/1/"
	case coll == "repositories" || coll == "remotes" || coll == "distributions":
		return tr.created(tr.json("POST", collection(coll, tr.kindOf(coll, op.ID)), tr.createBody(coll, tr.kindOf(coll, op.ID))))
	case coll == "acs":
		return tr.json("POST", collection(coll, tr.kindOf(coll, op.ID)), tr.acsBody(tr.kindOf(coll, op.ID)))["pulp_href"].(string)
	case coll == "publications":
		return tr.created(tr.json("POST", collection("publications", tr.kindOf(coll, op.ID)), map[string]any{"repository": tr.refs.Repository}))
	case op.ID == "artifacts_delete":
		ct, body := Multipart(nil, "file", "blob", []byte("an artifact to delete "+tr.name("a")))
		return tr.send("POST", href.Root+"artifacts/", ct, body)["pulp_href"].(string)
	case op.ID == "uploads_delete":
		return tr.json("POST", href.Root+"uploads/", map[string]any{"size": 1})["pulp_href"].(string)
	case op.ID == "upstream_pulps_delete":
		return tr.json("POST", href.Root+"upstream-pulps/", tr.upstreamBody())["pulp_href"].(string)
	case coll == "exporters" && strings.HasSuffix(op.ID, "_exports_delete"):
		return tr.export(exporterKind(op.ID))
	case coll == "exporters":
		return tr.exporter(exporterKind(op.ID))
	case op.ID == "importers_core_pulp_imports_delete":
		return tr.importRow()
	case coll == "importers":
		return tr.importer()
	case op.ID == "tasks_delete":
		// One the administrator dispatched (the caller's own tasks are its to delete).
		return tr.first(href.Root + "tasks/?state=completed&ordering=pulp_created")
	case coll == "contentguards":
		seg := guardSegment(op.Path)
		return tr.json("POST", href.Root+"contentguards/"+seg+"/", tr.guardBody(seg))["pulp_href"].(string)
	case op.ID == "users_delete":
		return tr.json("POST", href.Root+"users/", map[string]any{"username": tr.name("user")})["pulp_href"].(string)
	case op.ID == "groups_delete":
		return tr.json("POST", href.Root+"groups/", map[string]any{"name": tr.name("group")})["pulp_href"].(string)
	case op.ID == "roles_delete":
		return tr.json("POST", href.Root+"roles/", map[string]any{"name": tr.name("role"), "permissions": []string{}})["pulp_href"].(string)
	case op.ID == "users_roles_delete" || op.ID == "groups_roles_delete":
		parent := tr.json("POST", href.Root+"users/", map[string]any{"username": tr.name("user")})["pulp_href"].(string)
		if op.ID == "groups_roles_delete" {
			parent = tr.json("POST", href.Root+"groups/", map[string]any{"name": tr.name("group")})["pulp_href"].(string)
		}
		return tr.json("POST", parent+"roles/", map[string]any{"role": tr.objectRole(tr.refs.Remote), "content_object": tr.refs.Remote})["pulp_href"].(string)
	case op.ID == "groups_users_delete":
		u := tr.json("POST", href.Root+"users/", map[string]any{"username": tr.name("user")})
		tr.json("POST", tr.vars["group_href"]+"users/", map[string]any{"username": u["username"]})
		return tr.vars["group_href"] + "users/" + strings.TrimPrefix(u["pulp_href"].(string), href.Root+"users/")
	}
	tr.e.T.Fatalf("the permission matrix does not know how to delete with %s", op.ID)
	return ""
}
