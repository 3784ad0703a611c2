package contenttest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
	"pith/content"
	"pith/internal/testcert"
	"pith/internal/testfiles"
	"pith/meta"
)

// Example is a request of one of a type's own operations (content create, copy, ...),
// for the schema check: it may make what it needs through e first, and refs name what
// the check made before.
type Example func(e *Env, refs Refs) (method, path, contentType string, body io.Reader)

// Refs are the hrefs of what the schema check made before it runs a type's examples: a
// repository synced from the fixture's upstream, its latest version, its remote, a
// publication of it and a distribution.
type Refs struct {
	Repository, Version, Remote, Publication, Distribution string
}

// JSONBody is an Example's body as JSON.
func JSONBody(v any) (string, io.Reader) {
	b, _ := json.Marshal(v)
	return "application/json", bytes.NewReader(b)
}

// answer is one recorded response.
type answer struct {
	op     string
	method string
	path   string
	status int
	body   []byte
}

// schemas drives every operation the server implements at least once, through the
// API as a client would, and checks each response against the schema the reference
// release set's document declares for it (required properties, types, enums), the way
// the generated bindings read responses.
func (s *suite) schemas(t *testing.T) {
	e := s.env(t)
	doc, err := testfiles.ReadFile("reference", "pulp-3.105", "api-3105.json")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := openapi.NewChecker(doc)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var answers []answer
	e.Record = func(req *http.Request, status int, body []byte) {
		op, _ := e.API.OperationFor(req)
		mu.Lock()
		answers = append(answers, answer{op, req.Method, req.URL.Path, status, body})
		mu.Unlock()
	}
	tr := &tour{e: e, s: s, vars: map[string]string{}}
	tr.setup()
	tr.every()

	done := map[string]bool{}
	for _, a := range answers {
		if a.op == "" {
			continue // a pith extension, or a path no operation serves
		}
		if a.status >= 400 && !(a.op == "tasks_cancel" && a.status == http.StatusConflict) {
			t.Errorf("%s %s (%s): %d %s", a.method, a.path, a.op, a.status, a.body)
			continue
		}
		done[a.op] = true
		if !ref.Has(a.op) {
			t.Errorf("%s is not an operation of the reference release set", a.op)
			continue
		}
		for _, p := range ref.Response(a.op, a.status, a.body) {
			t.Errorf("%s %s (%s, %d): %s", a.method, a.path, a.op, a.status, p)
		}
	}
	t.Logf("%d responses of %d operations checked against the reference", len(answers), len(done))
	var missed []string
	for _, op := range e.API.Operations() {
		if !done[op.ID] && !s.f.elsewhere(op.ID) {
			missed = append(missed, op.ID)
		}
	}
	sort.Strings(missed)
	if len(missed) > 0 {
		t.Errorf("%d operations were not exercised: %s", len(missed), strings.Join(missed, " "))
	}
}

// tour makes one of everything and then calls every operation.
type tour struct {
	e    *Env
	s    *suite
	refs Refs
	vars map[string]string // href template variable ("rpm_rpm_repository_href") → an href
	n    int
	// user and role are a user and a custom role the check made (access control).
	user, role string
	ca         string // a CA certificate (PEM), for certificate guards
}

// name is a unique name.
func (tr *tour) name(what string) string {
	tr.n++
	return fmt.Sprintf("schema-%s-%d", what, tr.n)
}

// send makes a request and, for a 202 with a task, waits for the task to complete.
func (tr *tour) send(method, path, ct string, body io.Reader, hdr ...string) map[string]any {
	tr.e.T.Helper()
	code, m, _ := tr.e.Do(method, path, ct, body, hdr...)
	if code == http.StatusAccepted {
		if h, ok := m["task"].(string); ok {
			if tk := tr.e.Wait(h); tk["state"] != "completed" {
				tr.e.T.Errorf("%s %s: task %v: %v", method, path, tk["state"], tk["error"])
			}
		}
	}
	return m
}

func (tr *tour) json(method, path string, v any) map[string]any {
	ct, body := JSONBody(v)
	return tr.send(method, path, ct, body)
}

// kindName is the operations' name of a kind type: "rpm.rpm" → "rpm_rpm".
func kindName(typ string) string { return strings.ReplaceAll(href.Segment(typ), "/", "_") }

// acsBody is a good create body of an alternate content source of a kind: a new
// on_demand remote of its remote type, at the fixture's upstream.
func (tr *tour) acsBody(typ string) map[string]any {
	k, _ := tr.e.Core.Table().ACSKind(typ)
	remote := tr.json("POST", collection("remotes", k.Remote), map[string]any{"name": tr.name("acs-remote"), "url": tr.s.url, "policy": "on_demand"})
	return map[string]any{"name": tr.name("acs"), "remote": remote["pulp_href"]}
}

// createBody is a good create body of a repository, remote or distribution kind.
func (tr *tour) createBody(collection, typ string) map[string]any {
	switch collection {
	case "remotes":
		return tr.remoteFields(typ, map[string]any{"name": tr.name("remote"), "url": tr.s.url}, true)
	case "distributions":
		n := tr.name("dist")
		return map[string]any{"name": n, "base_path": n, "repository": tr.refs.Repository}
	}
	return map[string]any{"name": tr.name("repo")}
}

// remoteFields adds a remote kind's own fields (Fixture.RemoteBodies) to body: all of
// them when replace, else those body lacks.
func (tr *tour) remoteFields(typ string, body map[string]any, replace bool) map[string]any {
	for k, v := range tr.s.f.RemoteBodies[typ] {
		if _, ok := body[k]; replace || !ok {
			body[k] = v
		}
	}
	return body
}

// created is the href of what a create answered: the object, or the task's resource.
func (tr *tour) created(m map[string]any) string {
	if h, ok := m["pulp_href"].(string); ok {
		return h
	}
	tk := tr.e.Wait(m["task"].(string))
	return tk["created_resources"].([]any)[0].(string)
}

func (tr *tour) setup() {
	e, s, t := tr.e, tr.s, tr.e.Core.Table()
	remote := tr.json("POST", collection("remotes", s.f.Remote), map[string]any{"name": tr.name("remote"), "url": s.url})
	repo := tr.json("POST", collection("repositories", s.f.Repository), map[string]any{"name": tr.name("repo"), "remote": remote["pulp_href"]})
	tr.refs.Remote, tr.refs.Repository = remote["pulp_href"].(string), repo["pulp_href"].(string)
	tr.json("POST", tr.refs.Repository+"sync/", map[string]any{})
	tr.refs.Version = e.read(tr.refs.Repository)["latest_version_href"].(string)
	dist := map[string]any{"name": tr.name("dist"), "base_path": tr.name("dist")}
	if _, ok := t.PubKind(s.f.Repository); ok {
		m := tr.json("POST", collection("publications", s.f.Repository), map[string]any{"repository": tr.refs.Repository})
		tr.refs.Publication = tr.created(m)
		dist["publication"] = tr.refs.Publication
	} else {
		dist["repository"] = tr.refs.Repository
	}
	tr.refs.Distribution = tr.created(tr.json("POST", collection("distributions", s.f.Distribution), dist))

	// The type's own operations, which may make units the reads need.
	ids := make([]string, 0, len(s.f.Examples))
	for id := range s.f.Examples {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		method, path, ct, body := s.f.Examples[id](e, tr.refs)
		tr.send(method, path, ct, body)
	}
	if s.f.Seed != nil {
		s.f.Seed(e, tr.refs)
	}
	if s.f.Vars != nil {
		for k, v := range s.f.Vars(e, tr.refs) {
			tr.vars[k] = v
		}
	}

	// One of every other kind of the registered types.
	for _, k := range t.Repositories() {
		h := tr.refs.Repository
		if k.Type != s.f.Repository {
			h = tr.json("POST", collection("repositories", k.Type), tr.createBody("repositories", ""))["pulp_href"].(string)
		}
		tr.vars[kindName(k.Type)+"_repository_href"] = h
		tr.vars[kindName(k.Type)+"_repository_version_href"] = e.read(h)["latest_version_href"].(string)
	}
	for _, k := range t.Remotes() {
		h := tr.refs.Remote
		if k.Type != s.f.Remote {
			h = tr.json("POST", collection("remotes", k.Type), tr.createBody("remotes", k.Type))["pulp_href"].(string)
		}
		tr.vars[rest.HrefName(k.Schema+"Remote")+"_href"] = h
	}
	for _, k := range t.Distributions() {
		h := tr.refs.Distribution
		if k.Type != s.f.Distribution {
			h = tr.created(tr.json("POST", collection("distributions", k.Type), tr.createBody("distributions", "")))
		}
		tr.vars[kindName(k.Type)+"_distribution_href"] = h
	}
	for _, k := range t.Publications() {
		tr.vars[kindName(k.Type)+"_publication_href"] = tr.first(collection("publications", k.Type))
	}
	for _, k := range t.Units() {
		tr.vars[strings.Trim(k.Href, "{}")] = tr.first(href.Root + "content/" + k.Segment + "/")
	}
	for _, k := range t.ACSKinds() {
		tr.vars[kindName(k.Type)+"_alternate_content_source_href"] = tr.json("POST", collection("acs", k.Type), tr.acsBody(k.Type))["pulp_href"].(string)
	}

	// The core's resources.
	ctx := context.Background()
	if _, err := meta.PutSigningService(ctx, e.DB, meta.SigningService{Name: "schema-check", PublicKey: "-----BEGIN PGP PUBLIC KEY BLOCK-----",
		Fingerprint: "0123456789ABCDEF0123456789ABCDEF01234567", Script: "none"}); err != nil {
		e.T.Fatal(err)
	}
	if err := e.Core.SetSchedules(ctx, content.Schedules{UploadProtection: time.Hour}); err != nil {
		e.T.Fatal(err)
	}
	ct, body := Multipart(nil, "file", "blob", []byte("an artifact of the schema check"))
	tr.send("POST", href.Root+"artifacts/", ct, body)
	up := tr.json("POST", href.Root+"uploads/", map[string]any{"size": 5})
	ct, body = Multipart(nil, "file", "blob", []byte("hello"))
	tr.send("PUT", up["pulp_href"].(string), ct, body, "Content-Range", "bytes 0-4/5")
	tr.vars["upload_href"] = up["pulp_href"].(string)
	// A task group (pith's bulk_modify makes one).
	tr.json("POST", href.Root+"repositories/bulk_modify/", map[string]any{"repositories": []string{tr.refs.Repository}, "remove_content_units": []string{"*"}})
	for v, list := range map[string]string{"task_href": "tasks/", "task_group_href": "task-groups/", "artifact_href": "artifacts/",
		"worker_href": "workers/", "signing_service_href": "signing-services/", "task_schedule_href": "task-schedules/"} {
		tr.vars[v] = tr.first(href.Root + list)
	}

	// Access control: a user in a group, a custom role each holds, an access policy.
	user := tr.json("POST", href.Root+"users/", map[string]any{"username": tr.name("user"), "password": "a long passphrase"})
	group := tr.json("POST", href.Root+"groups/", map[string]any{"name": tr.name("group")})
	role := tr.json("POST", href.Root+"roles/", map[string]any{"name": tr.name("role"), "permissions": []string{"core.view_task"}})
	tr.vars["auth_user_href"], tr.vars["group_href"], tr.vars["role_href"] = user["pulp_href"].(string), group["pulp_href"].(string), role["pulp_href"].(string)
	tr.user, tr.role = user["username"].(string), role["name"].(string)
	tr.json("POST", tr.vars["group_href"]+"users/", map[string]any{"username": tr.user})
	tr.vars["groups_user_href"] = tr.vars["group_href"] + "users/" + strings.TrimSuffix(strings.TrimPrefix(tr.vars["auth_user_href"], href.Root+"users/"), "/") + "/"
	grant := map[string]any{"role": tr.role, "content_object": nil}
	tr.vars["auth_users_user_role_href"] = tr.json("POST", tr.vars["auth_user_href"]+"roles/", grant)["pulp_href"].(string)
	tr.vars["groups_group_role_href"] = tr.json("POST", tr.vars["group_href"]+"roles/", grant)["pulp_href"].(string)
	tr.vars["access_policy_href"] = tr.first(href.Root + "access_policies/?viewset_name=tasks")

	// An upstream Pulp: this server, through a filter that selects nothing, deleting
	// nothing.
	tr.vars["upstream_pulp_href"] = tr.json("POST", href.Root+"upstream-pulps/", tr.upstreamBody())["pulp_href"].(string)

	// One exporter of each kind, with an export.
	for _, kind := range []string{"pulp", "filesystem"} {
		x := tr.export(kind)
		tr.vars[kind+"_exporter_href"] = x[:strings.Index(x, "exports/")]
		tr.vars[kind+"_"+kind+"_export_href"] = x
	}

	// An importer, with an import.
	imp := tr.importRow()
	tr.vars["pulp_importer_href"] = imp[:strings.Index(imp, "imports/")]
	tr.vars["pulp_pulp_import_href"] = imp

	// One content guard of each kind.
	tr.ca = string(testcert.NewCA(e.T, "schema check CA").PEM)
	for _, g := range guardVars {
		tr.vars[g.v] = tr.json("POST", href.Root+"contentguards/"+g.seg+"/", tr.guardBody(g.seg))["pulp_href"].(string)
	}
}

// upstreamBody is a good create body of an upstream Pulp.
func (tr *tour) upstreamBody() map[string]any {
	return map[string]any{"name": tr.name("upstream"), "base_url": tr.e.URL, "api_root": "/pulp/", "q_select": `name="none"`, "policy": "nodelete"}
}

// guardSegment is the kind segment ("core/rbac") of a content guard's path or href
// template.
func guardSegment(p string) string {
	for _, g := range guardVars {
		if strings.Contains(p, "/contentguards/"+g.seg+"/") || strings.HasPrefix(p, "{"+g.v+"}") {
			return g.seg
		}
	}
	return ""
}

// guardVars are the content guards' kinds: their href variable and segment.
var guardVars = []struct{ v, seg string }{{"r_b_a_c_content_guard_href", "core/rbac"},
	{"content_redirect_content_guard_href", "core/content_redirect"}, {"header_content_guard_href", "core/header"},
	{"composite_content_guard_href", "core/composite"}, {"certguard_x509_cert_guard_href", "certguard/x509"},
	{"certguard_r_h_s_m_cert_guard_href", "certguard/rhsm"}}

// guardBody is a good create body of a content guard of a kind (its segment).
func (tr *tour) guardBody(seg string) map[string]any {
	b := map[string]any{"name": tr.name("guard")}
	switch seg {
	case "core/header":
		b["header_name"], b["header_value"] = "X-Schema", "check"
	case "certguard/x509", "certguard/rhsm":
		b["ca_certificate"] = tr.ca
	}
	return b
}

// allow lets administrators run actions on the object at p when its viewset's access
// policy names none of them (Pulp's policies leave out set_label on some kinds, and
// pulp_rpm's ACS policy my_permissions, so nobody may run those until an administrator
// allows it), and returns what restores the policy.
func (tr *tour) allow(p string, actions ...string) func() {
	viewset := strings.TrimPrefix(p, href.Root)
	viewset = viewset[:strings.LastIndex(strings.TrimSuffix(viewset, "/"), "/")]
	viewset = viewset[:strings.LastIndex(viewset, "/")]
	page := tr.e.read(href.Root + "access_policies/?viewset_name=" + viewset)
	rs, _ := page["results"].([]any)
	if len(rs) == 0 {
		return func() {}
	}
	policy := rs[0].(map[string]any)
	named := map[string]bool{}
	for _, st := range policy["statements"].([]any) {
		as := fmt.Sprint(st.(map[string]any)["action"])
		for _, a := range actions {
			named[a] = named[a] || strings.Contains(as, a) || strings.Contains(as, "*")
		}
	}
	if len(named) == len(actions) && !slices.Contains(slices.Collect(maps.Values(named)), false) {
		return func() {}
	}
	h := policy["pulp_href"].(string)
	statements := append(policy["statements"].([]any), map[string]any{"action": actions, "principal": "admin", "effect": "allow"})
	tr.json("PATCH", h, map[string]any{"statements": statements})
	return func() { tr.send("POST", h+"reset/", "", nil) }
}

// objectRole is a role that fits the object at h (one of the built-in ones for it).
func (tr *tour) objectRole(h string) string {
	page := tr.e.read(href.Root + "roles/?locked=true&for_object_type=" + h)
	rs, _ := page["results"].([]any)
	if len(rs) == 0 {
		tr.e.T.Fatalf("no built-in role carries a permission on %s", h)
	}
	return rs[0].(map[string]any)["name"].(string)
}

// first is the href of the first object a list holds; the test fails without one.
func (tr *tour) first(list string) string {
	tr.e.T.Helper()
	sep := "?"
	if strings.Contains(list, "?") {
		sep = "&"
	}
	page := tr.e.read(list + sep + "limit=1")
	rs, _ := page["results"].([]any)
	if len(rs) == 0 {
		tr.e.T.Fatalf("%s is empty: the schema check needs one", list)
	}
	return rs[0].(map[string]any)["pulp_href"].(string)
}

// path is an operation's path with its href variable filled in.
func (tr *tour) path(p string) string {
	if !strings.HasPrefix(p, "{") {
		return p
	}
	v, rest, _ := strings.Cut(strings.TrimPrefix(p, "{"), "}")
	h, ok := tr.vars[v]
	if !ok {
		tr.e.T.Fatalf("no object for %s", p)
	}
	return h + rest
}

// phase orders operations: reads, then changes, then deletions.
func phase(op openapi.Operation) int {
	switch {
	case op.Method == "GET":
		return 0
	case op.Method == "DELETE" || strings.HasSuffix(op.ID, "_cancel") || op.ID == "tasks_purge":
		return 2
	}
	return 1
}

// every calls each operation the server implements; the type's own operations ran in
// setup.
func (tr *tour) every() {
	e := tr.e
	ops := e.API.Operations()
	sort.SliceStable(ops, func(i, j int) bool { return phase(ops[i]) < phase(ops[j]) })
	for _, op := range ops {
		if _, own := tr.s.f.Examples[op.ID]; own || tr.s.f.elsewhere(op.ID) {
			continue
		}
		coll, _, _ := strings.Cut(op.ID, "_")
		p := tr.path(op.Path)
		switch suffix := op.ID[strings.LastIndex(op.ID, "_")+1:]; {
		case tr.callExporter(op.ID, suffix):
		case tr.callImporter(op.ID, p):
		case op.ID == "artifacts_create":
			ct, body := Multipart(nil, "file", "blob", []byte("another artifact"))
			tr.send("POST", p, ct, body)
		case op.ID == "uploads_create":
			tr.json("POST", p, map[string]any{"size": 1})
		case op.ID == "uploads_update":
			up := tr.json("POST", href.Root+"uploads/", map[string]any{"size": 3})
			ct, body := Multipart(nil, "file", "blob", []byte("abc"))
			tr.send("PUT", up["pulp_href"].(string), ct, body, "Content-Range", "bytes 0-2/3")
		case op.ID == "uploads_commit":
			sum := sha256.Sum256([]byte("hello"))
			tr.json("POST", p, map[string]any{"sha256": hex.EncodeToString(sum[:])})
		case op.ID == "orphans_cleanup_cleanup" || op.ID == "tasks_purge" || op.ID == "repair_post":
			tr.json("POST", p, map[string]any{})
		case op.ID == "repositories_reclaim_space_reclaim":
			tr.json("POST", p, map[string]any{"repo_hrefs": []string{tr.refs.Repository}})
		case op.ID == "orphans_delete":
			tr.send("DELETE", p, "", nil)
		case op.ID == "tasks_cancel" || op.ID == "task_groups_cancel":
			tr.json("PATCH", p, map[string]any{"state": "canceled"})
		case op.ID == "users_create":
			tr.json("POST", p, map[string]any{"username": tr.name("user"), "password": "another long passphrase"})
		case op.ID == "groups_create":
			tr.json("POST", p, map[string]any{"name": tr.name("group")})
		case op.ID == "roles_create":
			tr.json("POST", p, map[string]any{"name": tr.name("role"), "permissions": []string{"core.view_upload"}})
		case op.ID == "groups_users_create":
			tr.json("POST", p, map[string]any{"username": tr.user})
		case op.ID == "users_roles_create" || op.ID == "groups_roles_create":
			// Of a new user or group: the add_role calls give the others roles on objects.
			parent := tr.json("POST", href.Root+"users/", map[string]any{"username": tr.name("user")})["pulp_href"].(string)
			if op.ID == "groups_roles_create" {
				parent = tr.json("POST", href.Root+"groups/", map[string]any{"name": tr.name("group")})["pulp_href"].(string)
			}
			tr.json("POST", parent+"roles/", map[string]any{"role": tr.objectRole(tr.refs.Repository), "content_object": tr.refs.Repository})
		case op.ID == "access_policies_reset" || op.ID == "login":
			tr.send("POST", p, "", nil)
		case op.ID == "logout":
			tr.send("DELETE", p, "", nil)
		case suffix == "role" && strings.HasSuffix(op.ID, "_add_role"):
			obj := strings.TrimSuffix(p, "add_role/")
			if op.ID == "uploads_add_role" {
				obj = tr.json("POST", href.Root+"uploads/", map[string]any{"size": 1})["pulp_href"].(string) // the other was committed
			}
			tr.json("POST", obj+"add_role/", map[string]any{"role": tr.objectRole(obj), "users": []string{tr.user}})
		case suffix == "role" && strings.HasSuffix(op.ID, "_remove_role"):
			obj := strings.TrimSuffix(p, "remove_role/")
			if op.ID == "uploads_remove_role" {
				obj = tr.json("POST", href.Root+"uploads/", map[string]any{"size": 1})["pulp_href"].(string)
				p = obj + "remove_role/"
			}
			body := map[string]any{"role": tr.objectRole(obj), "groups": []string{tr.e.read(tr.vars["group_href"])["name"].(string)}}
			tr.json("POST", obj+"add_role/", body)
			tr.json("POST", p, body)
		case strings.HasSuffix(op.ID, "_my_permissions"):
			restore := tr.allow(p, "my_permissions") // pulp_rpm's ACS policy names it nowhere
			tr.send("GET", p, "", nil)
			restore()
		case op.Method == "GET":
			tr.send("GET", p, "", nil)
		case strings.HasSuffix(op.ID, "_set_label"):
			restore := tr.allow(p, "set_label")
			tr.json("POST", p, map[string]any{"key": "schema", "value": "check"})
			restore()
		case strings.HasSuffix(op.ID, "_unset_label"):
			restore := tr.allow(p, "set_label", "unset_label")
			tr.json("POST", strings.TrimSuffix(p, "unset_label/")+"set_label/", map[string]any{"key": "schema", "value": "check"})
			tr.json("POST", p, map[string]any{"key": "schema"})
			restore()
		case suffix == "update" && op.Method == "PATCH":
			tr.json("PATCH", p, map[string]any{})
		case suffix == "update":
			// The object as it is, its writable identity fields sent again.
			cur := e.read(p)
			body := map[string]any{}
			for _, keep := range []string{"name", "url", "base_path", "repository", "publication", "remote", "username", "permissions", "statements",
				"header_name", "header_value", "ca_certificate", "api_root", "path", "repositories"} {
				if v, ok := cur[keep]; ok && v != nil {
					body[keep] = v
				}
			}
			if op.ID == "upstream_pulps_update" {
				body["base_url"] = cur["base_url"] // a distribution's is read-only
			}
			if coll == "remotes" {
				tr.remoteFields(tr.kindOf(coll, op.ID), body, false)
			}
			tr.json("PUT", p, body)
		case suffix == "sync" || suffix == "repair" || suffix == "refresh":
			tr.json("POST", p, map[string]any{})
		case suffix == "create" && coll == "acs":
			tr.json("POST", p, tr.acsBody(tr.kindOf(coll, op.ID)))
		case suffix == "modify":
			tr.json("POST", p, map[string]any{"add_content_units": []string{}})
		case suffix == "create" && (coll == "repositories" || coll == "remotes" || coll == "distributions"):
			tr.json("POST", p, tr.createBody(coll, tr.kindOf(coll, op.ID)))
		case suffix == "create" && coll == "publications":
			tr.json("POST", p, map[string]any{"repository": tr.refs.Repository})
		case suffix == "create" && coll == "contentguards":
			tr.json("POST", p, tr.guardBody(guardSegment(p)))
		case op.ID == "upstream_pulps_create":
			tr.json("POST", p, tr.upstreamBody())
		case op.ID == "upstream_pulps_replicate":
			tr.json("POST", p, map[string]any{})
		case suffix == "delete":
			tr.delete(op, coll)
		default:
			e.T.Errorf("the schema check does not know how to call %s %s", op.ID, op.Path)
		}
	}
}

// kindOf is the kind type an operation of a collection acts on: the operation
// "remotes_rpm_rpm_delete" acts on "rpm.rpm".
func (tr *tour) kindOf(collection, opID string) string {
	t := tr.e.Core.Table()
	var types []string
	for _, k := range t.Repositories() {
		types = append(types, k.Type)
	}
	for _, k := range t.Remotes() {
		types = append(types, k.Type)
	}
	for _, k := range t.Distributions() {
		types = append(types, k.Type)
	}
	for _, k := range t.Publications() {
		types = append(types, k.Type)
	}
	for _, k := range t.ACSKinds() {
		types = append(types, k.Type)
	}
	for _, typ := range types {
		if strings.HasPrefix(opID, collection+"_"+kindName(typ)+"_") {
			return typ
		}
	}
	tr.e.T.Fatalf("no kind serves %s", opID)
	return ""
}

// delete deletes something made for the purpose, never what the other operations use.
func (tr *tour) delete(op openapi.Operation, coll string) {
	e := tr.e
	switch {
	case strings.HasSuffix(op.ID, "_versions_delete"):
		// A version of a repository no distribution serves, with a newer one.
		r := tr.json("POST", collection("repositories", tr.kindOf("repositories", op.ID)), tr.createBody("repositories", ""))["pulp_href"].(string)
		units := e.units(tr.refs.Version)
		if len(units) == 0 {
			e.T.Fatal("no units to make versions with")
		}
		tr.json("POST", r+"modify/", map[string]any{"add_content_units": units[:1]})
		tr.json("POST", r+"modify/", map[string]any{"remove_content_units": units[:1]})
		tr.send("DELETE", r+"versions/1/", "", nil)
	case coll == "repositories" || coll == "remotes" || coll == "distributions":
		h := tr.created(tr.json("POST", collection(coll, tr.kindOf(coll, op.ID)), tr.createBody(coll, tr.kindOf(coll, op.ID))))
		tr.send("DELETE", h, "", nil)
	case coll == "acs":
		h := tr.json("POST", collection(coll, tr.kindOf(coll, op.ID)), tr.acsBody(tr.kindOf(coll, op.ID)))["pulp_href"].(string)
		tr.send("DELETE", h, "", nil)
	case coll == "publications":
		m := tr.json("POST", collection("publications", tr.kindOf(coll, op.ID)), map[string]any{"repository": tr.refs.Repository})
		tr.send("DELETE", tr.created(m), "", nil)
	case op.ID == "artifacts_delete":
		// Pulp's policy lets nobody delete artifacts until an administrator allows it.
		policy := tr.first(href.Root + "access_policies/?viewset_name=artifacts")
		tr.json("PATCH", policy, map[string]any{"statements": []any{map[string]any{"action": []string{"*"}, "principal": "admin", "effect": "allow"}}})
		ct, body := Multipart(nil, "file", "blob", []byte("an artifact to delete"))
		tr.send("DELETE", tr.send("POST", href.Root+"artifacts/", ct, body)["pulp_href"].(string), "", nil)
		tr.send("POST", policy+"reset/", "", nil)
	case op.ID == "uploads_delete":
		tr.send("DELETE", tr.json("POST", href.Root+"uploads/", map[string]any{"size": 1})["pulp_href"].(string), "", nil)
	case op.ID == "upstream_pulps_delete":
		tr.send("DELETE", tr.json("POST", href.Root+"upstream-pulps/", tr.upstreamBody())["pulp_href"].(string), "", nil)
	case op.ID == "tasks_delete":
		tr.send("DELETE", tr.first(href.Root+"tasks/?state=completed"), "", nil)
	case coll == "contentguards":
		seg := guardSegment(op.Path)
		tr.send("DELETE", tr.json("POST", href.Root+"contentguards/"+seg+"/", tr.guardBody(seg))["pulp_href"].(string), "", nil)
	case op.ID == "users_delete":
		tr.send("DELETE", tr.json("POST", href.Root+"users/", map[string]any{"username": tr.name("user")})["pulp_href"].(string), "", nil)
	case op.ID == "groups_delete":
		tr.send("DELETE", tr.json("POST", href.Root+"groups/", map[string]any{"name": tr.name("group")})["pulp_href"].(string), "", nil)
	case op.ID == "roles_delete":
		r := tr.json("POST", href.Root+"roles/", map[string]any{"name": tr.name("role"), "permissions": []string{}})
		tr.send("DELETE", r["pulp_href"].(string), "", nil)
	case op.ID == "users_roles_delete" || op.ID == "groups_roles_delete":
		parent := tr.json("POST", href.Root+"users/", map[string]any{"username": tr.name("user")})["pulp_href"].(string)
		if op.ID == "groups_roles_delete" {
			parent = tr.json("POST", href.Root+"groups/", map[string]any{"name": tr.name("group")})["pulp_href"].(string)
		}
		g := tr.json("POST", parent+"roles/", map[string]any{"role": tr.objectRole(tr.refs.Remote), "content_object": tr.refs.Remote})
		tr.send("DELETE", g["pulp_href"].(string), "", nil)
	case op.ID == "groups_users_delete":
		u := tr.json("POST", href.Root+"users/", map[string]any{"username": tr.name("user")})
		tr.json("POST", tr.vars["group_href"]+"users/", map[string]any{"username": u["username"]})
		tr.send("DELETE", tr.vars["group_href"]+"users/"+strings.TrimPrefix(u["pulp_href"].(string), href.Root+"users/"), "", nil)
	default:
		e.T.Errorf("the schema check does not know how to call %s", op.ID)
	}
}
