package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"pith/api/access"
	"pith/api/href"
	"pith/api/rest"
	"pith/meta"
)

// Authorization: every operation names its access policy (Pulp's viewset name) and
// action; the policy's statements decide, with the conditions Pulp's default policies
// use, evaluated against the roles the caller and its groups hold in meta. Lists are
// narrowed in SQL to what the caller may see (scope); a detail operation on an object
// the caller may not see answers 404, as Pulp's scoped querysets do.

// adminOnly is the policy of an operation with none of its own, as Pulp's
// DEFAULT_ACCESS_POLICY: administrators only.
var adminOnly = access.Policy{Statements: []access.Statement{{Action: access.Strings{"*"}, Principal: access.Strings{"admin"}, Effect: "allow"}}}

// policyTTL bounds how long a policy changed by another process goes unseen here.
const policyTTL = 3 * time.Second

// policyCache holds the effective access policies: the stored ones (which an administrator
// may have customized) over the shipped defaults. Decisions read a snapshot without
// locking; one request at a time reloads it when it is older than policyTTL.
type policyCache struct {
	defaults access.Defaults
	mu       sync.Mutex // one reload at a time
	snap     atomic.Pointer[policySnapshot]
}

type policySnapshot struct {
	loaded time.Time
	stored map[string]access.Policy
}

// get is the policy of a viewset; ok is false for a viewset with no policy (adminOnly).
func (p *policyCache) get(ctx context.Context, db *meta.DB, viewset string) (access.Policy, bool, error) {
	snap := p.snap.Load()
	if snap == nil || time.Since(snap.loaded) > policyTTL {
		var err error
		if snap, err = p.reload(ctx, db); err != nil {
			return access.Policy{}, false, err
		}
	}
	if pol, ok := snap.stored[viewset]; ok {
		return pol, true, nil
	}
	if d, ok := p.defaults.Policies[viewset]; ok {
		return d.Policy, true, nil
	}
	return adminOnly, false, nil
}

func (p *policyCache) reload(ctx context.Context, db *meta.DB) (*policySnapshot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if snap := p.snap.Load(); snap != nil && time.Since(snap.loaded) <= policyTTL {
		return snap, nil // another request reloaded it meanwhile
	}
	rows, _, err := meta.ListAccessPolicies(ctx, db, meta.List{})
	if err != nil {
		return nil, fmt.Errorf("load access policies: %w", err)
	}
	snap := &policySnapshot{loaded: time.Now(), stored: make(map[string]access.Policy, len(rows))}
	for _, row := range rows {
		pol, err := storedPolicy(row)
		if err != nil {
			// A stored policy pith cannot read refuses everyone but administrators.
			pol = adminOnly
		}
		snap.stored[row.Viewset] = pol
	}
	p.snap.Store(snap)
	return snap, nil
}

// forget makes the next decision read the stored policies again (one was changed here).
func (p *policyCache) forget() { p.snap.Store(nil) }

func storedPolicy(row meta.AccessPolicy) (access.Policy, error) {
	var pol access.Policy
	if err := json.Unmarshal(row.Statements, &pol.Statements); err != nil {
		return pol, err
	}
	if err := json.Unmarshal(row.CreationHooks, &pol.CreationHooks); err != nil {
		return pol, err
	}
	var scoping access.Call
	if err := json.Unmarshal(row.QuerysetScoping, &scoping); err != nil {
		return pol, err
	}
	if scoping.Function != "" {
		pol.QuerysetScoping = &scoping
	}
	return pol, nil
}

// guard is what authorization knows of an operation.
type guard struct {
	viewset, action string
	// model is the PRN model of the object the URL's {id} names ("" when it names
	// none), and scopeViewset the policy whose scoping decides whether the caller may see
	// it: the viewset itself, or its parent for a nested one (a repository's versions).
	model, scopeViewset string
	body                bool // the operation takes a body
}

// guardOf works out an operation's guard.
func (s *Server) guardOf(op rest.Op) guard {
	g := guard{viewset: op.Viewset, action: op.AccessAction(), body: op.Body != nil}
	if !strings.Contains(op.Pattern, "{id}") {
		return g
	}
	for vs := g.viewset; vs != ""; {
		if m := s.env.ModelOf(vs + "/"); m != "" {
			g.model, g.scopeViewset = m, vs
			break
		}
		i := strings.LastIndexByte(vs, '/')
		if i < 0 {
			break
		}
		vs = vs[:i]
	}
	return g
}

// caller is one request's view of its subject's permissions, loaded as needed and kept
// for the request.
type caller struct {
	s       *Server
	ctx     context.Context
	subject access.Subject
	global  map[string]bool
	objects map[meta.Object]map[string]bool
	groups  []string
	gotGrps bool
	grants  *meta.Grants // read once per request (userGrants)
	// decision is the one authorize took for the request (nil for none).
	decision *decision
}

func (s *Server) callerOf(ctx context.Context, sub access.Subject) *caller {
	return &caller{s: s, ctx: ctx, subject: sub}
}

type callerKey struct{}

// callerFrom is the caller of a request that went through authorization (nil for an
// anonymous operation).
func callerFrom(ctx context.Context) *caller {
	c, _ := ctx.Value(callerKey{}).(*caller)
	return c
}

// hasModelPerm: the caller holds perm on every object.
func (c *caller) hasModelPerm(perm string) (bool, error) {
	if c.subject.Superuser {
		return true, nil
	}
	if c.subject.Anonymous() {
		return false, nil
	}
	if c.global == nil {
		g, err := c.userGrants()
		if err != nil {
			return false, err
		}
		if c.global, err = g.Permissions(c.ctx); err != nil {
			return false, err
		}
	}
	return c.global[perm], nil
}

// userGrants are what the caller's roles grant, read once per request.
func (c *caller) userGrants() (*meta.Grants, error) {
	if c.grants == nil {
		g, err := meta.UserGrants(c.ctx, c.s.db, c.subject.ID)
		if err != nil {
			return nil, err
		}
		c.grants = g
	}
	return c.grants, nil
}

// hasObjectPerm: the caller holds perm on o itself.
func (c *caller) hasObjectPerm(perm string, o meta.Object) (bool, error) {
	if c.subject.Superuser {
		return true, nil
	}
	if c.subject.Anonymous() || o.Type == "" {
		return false, nil
	}
	ps, ok := c.objects[o]
	if !ok {
		var err error
		if ps, err = meta.Permissions(c.ctx, c.s.db, c.subject.ID, o); err != nil {
			return false, err
		}
		if c.objects == nil {
			c.objects = map[meta.Object]map[string]bool{}
		}
		c.objects[o] = ps
	}
	return ps[perm], nil
}

// can: the caller holds perm on every object or on o.
func (c *caller) can(perm string, o meta.Object) (bool, error) {
	if ok, err := c.hasModelPerm(perm); ok || err != nil {
		return ok, err
	}
	return c.hasObjectPerm(perm, o)
}

func (c *caller) groupNames() []string {
	if !c.gotGrps && !c.subject.Anonymous() {
		gs, err := meta.UserGroups(c.ctx, c.s.db, []int64{c.subject.ID})
		if err == nil {
			for _, g := range gs[c.subject.ID] {
				c.groups = append(c.groups, g.Name)
			}
		}
		c.gotGrps = true
	}
	return c.groups
}

// decision evaluates one operation's policy for one request; it implements rest.Check
// for the conditions content types add.
type decision struct {
	*caller
	r      *http.Request
	g      guard
	object meta.Object // the object the URL names, if any
	body   map[string]json.RawMessage
	// pending is true while a decision waits for a body its handler has not read.
	pending bool
}

func (d *decision) Subject() access.Subject                { return d.subject }
func (d *decision) Request() *http.Request                 { return d.r }
func (d *decision) HasModelPerm(perm string) (bool, error) { return d.hasModelPerm(perm) }

func (d *decision) HasPermOn(perm, h string) (bool, error) {
	o, ok := d.s.env.ObjectOf(h)
	if !ok {
		return false, nil
	}
	return d.hasObjectPerm(perm, o)
}

func (d *decision) Body() (map[string]json.RawMessage, error) {
	if d.body == nil {
		if !d.g.body {
			return map[string]json.RawMessage{}, nil
		}
		return nil, rest.ErrBodyPending
	}
	return d.body, nil
}

// authorize decides whether the request may run its operation. It returns the request's
// context, carrying the caller and, when the decision depends on the body, a gate that
// takes it once the handler reads the body.
func (s *Server) authorize(r *http.Request, g guard) (context.Context, error) {
	ctx := r.Context()
	c := s.callerOf(ctx, rest.SubjectOf(ctx))
	d := &decision{caller: c, r: r, g: g}
	c.decision = d
	ctx = context.WithValue(ctx, callerKey{}, c)
	pol, _, err := s.policies.get(ctx, s.db, g.viewset)
	if err != nil {
		return ctx, err
	}
	req := access.Request{Subject: c.subject, Action: g.action, Method: r.Method, Groups: c.groupNames}
	if g.model != "" {
		d.object = meta.Object{Type: g.model, ID: r.PathValue("id")}
		// An anonymous caller the policy refuses learns nothing of the object: a 401
		// comes before the 404 of an object it may not see.
		if c.subject.Anonymous() {
			if ok, err := access.Allowed(pol.Statements, req, func(string, string) (bool, error) { return false, nil }); err != nil || !ok {
				return ctx, refused(false, c.subject)
			}
		}
		if err := s.visible(ctx, c, g.scopeViewset, d.object); err != nil {
			return ctx, err
		}
	}
	ok, err := access.Allowed(pol.Statements, req, d.cond)
	if errors.Is(err, rest.ErrBodyPending) {
		d.pending = true
		return rest.WithGate(ctx, func(raw map[string]json.RawMessage) error {
			d.pending, d.body = false, raw
			ok, err := access.Allowed(pol.Statements, req, d.cond)
			if err != nil {
				return err
			}
			return refused(ok, c.subject)
		}), nil
	}
	if err != nil {
		return ctx, err
	}
	return ctx, refused(ok, c.subject)
}

// refused is nil for an allowed request, else the answer: 401 to anonymous callers, 403
// to the others.
func refused(ok bool, sub access.Subject) error {
	switch {
	case ok:
		return nil
	case sub.Anonymous():
		return errUnauthenticated
	}
	return rest.ErrForbidden
}

var errUnauthenticated = rest.Status(http.StatusUnauthorized, "Authentication credentials were not provided.")

// condition is one condition of Pulp's vocabulary (global_access_conditions).
type condition func(d *decision, arg string) (bool, error)

// conditions are the conditions Pulp's default policies use, by name; content types add
// theirs (rest.Table.Condition).
var conditions = func() map[string]condition {
	model := func(d *decision, arg string) (bool, error) { return d.hasModelPerm(arg) }
	obj := func(d *decision, arg string) (bool, error) { return d.hasObjectPerm(arg, d.object) }
	param := func(field string, several bool) condition {
		return func(d *decision, arg string) (bool, error) { return d.param(field, arg, several) }
	}
	either := func(f condition) condition {
		return func(d *decision, arg string) (bool, error) {
			if ok, err := model(d, arg); ok || err != nil {
				return ok, err
			}
			return f(d, arg)
		}
	}
	m := map[string]condition{
		"has_model_perms":                               model,
		"has_domain_perms":                              func(*decision, string) (bool, error) { return false, nil }, // pith has no domains
		"has_obj_perms":                                 obj,
		"has_model_or_obj_perms":                        either(obj),
		"has_remote_param_obj_perms":                    param("remote", true),
		"has_remote_param_model_or_obj_perms":           either(param("remote", true)),
		"has_repo_or_repo_ver_param_model_or_obj_perms": either((*decision).repoParam),
		"has_publication_param_model_or_obj_perms":      either(param("publication", false)),
		"has_upload_param_model_or_obj_perms":           either(param("upload", false)),
		"has_required_repo_perms_on_upload":             (*decision).uploadRepo,
	}
	// The object the URL names is the repository (of a version) or the group (of a
	// membership) itself.
	for _, prefix := range []string{"has_repo_attr_", "has_repository_", "has_group_"} {
		m[prefix+"obj_perms"], m[prefix+"model_or_obj_perms"] = obj, either(obj)
	}
	// Without domains, "model or domain" is "model".
	for name, f := range m {
		if n := strings.Replace(name, "model_or_", "model_or_domain_or_", 1); n != name {
			m[n] = f
		}
	}
	m["has_model_or_domain_perms"] = model
	return m
}()

// cond evaluates one condition, Pulp's or one a content type added.
func (d *decision) cond(name, arg string) (bool, error) {
	if fn, ok := conditions[name]; ok {
		return fn(d, arg)
	}
	if fn, ok := d.s.conds[name]; ok {
		return fn(d, arg)
	}
	d.s.cfg.Logger.Error("access policy names an unknown condition; it does not hold", "viewset", d.g.viewset, "condition", name)
	return false, nil
}

// knownCondition reports whether a condition name can be evaluated.
func (s *Server) knownCondition(name string) bool {
	_, ok := conditions[name]
	_, theirs := s.conds[name]
	return ok || theirs
}

// bodyHref is the href a body field holds ("" when absent or null); a value that is
// not an href of this API is a 400 naming the field, as Pulp's serializer answers.
func (d *decision) bodyHref(field string) (string, error) {
	body, err := d.Body()
	if err != nil {
		return "", err
	}
	raw, ok := body[field]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var h string
	if json.Unmarshal(raw, &h) != nil || !strings.HasPrefix(h, href.Root) {
		return "", rest.BadField(field, "Invalid hyperlink - No URL match for %s.", raw)
	}
	return h, nil
}

// param: the caller holds one of perms (comma-separated when several may do) on the
// object the body's field names; true when the body names none.
func (d *decision) param(field, perms string, several bool) (bool, error) {
	h, err := d.bodyHref(field)
	if err != nil || h == "" {
		return h == "" && err == nil, err
	}
	o, ok := d.s.env.ObjectOf(h)
	if !ok {
		return false, rest.BadField(field, "Invalid hyperlink - No URL match for %q.", h)
	}
	list := []string{perms}
	if several {
		list = strings.Split(perms, ",")
	}
	for _, p := range list {
		if ok, err := d.hasObjectPerm(strings.TrimSpace(p), o); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// repoParam: the caller holds perm on the body's repository, or on the repository of
// its repository_version; true when it names neither.
func (d *decision) repoParam(perm string) (bool, error) {
	if h, err := d.bodyHref("repository"); err != nil || h != "" {
		if err != nil {
			return false, err
		}
		return d.param("repository", perm, false)
	}
	h, err := d.bodyHref("repository_version")
	if err != nil || h == "" {
		return h == "" && err == nil, err
	}
	return d.hasObjectPerm(perm, repositoryOfVersion(d.s.env, h))
}

// repositoryOfVersion names the repository a version href belongs to (the zero Object
// for anything else).
func repositoryOfVersion(e *rest.Env, h string) meta.Object {
	p, ok := href.Parse(h)
	if _, isVersion := p.VersionNumber(); !ok || !isVersion {
		return meta.Object{}
	}
	return meta.Object{Type: e.ModelOf(p.Collection), ID: p.ID}
}

// uploadRepo is has_required_repo_perms_on_upload: a caller who is not an administrator
// must name the repository the content goes to and hold perm on it (or on every
// repository); labels on new content need core.manage_content_labels.
func (d *decision) uploadRepo(perm string) (bool, error) {
	if d.subject.Superuser {
		return true, nil
	}
	h, err := d.bodyHref("repository")
	if err != nil {
		return false, err
	}
	if h == "" {
		return false, rest.NonField("Destination upload repository was not provided.")
	}
	body, _ := d.Body()
	if labels, ok := body["pulp_labels"]; ok && d.g.action == "create" && !emptyJSON(labels) {
		if ok, err := d.hasModelPerm("core.manage_content_labels"); err != nil || !ok {
			if err != nil {
				return false, err
			}
			return false, rest.NonField("pulp_labels cannot be specified by users who do not have the core.manage_labels permission.")
		}
	}
	if ok, err := d.hasModelPerm(perm); ok || err != nil {
		return ok, err
	}
	return d.param("repository", perm, false)
}

func emptyJSON(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null" || s == "{}" || s == `""`
}

// Guard is what authorization knows of an operation, for tests and documentation: its
// access policy and action, and the PRN model of the object its URL names ("" for none),
// whose scoping viewset decides whether a caller may see it.
type Guard struct {
	Viewset, Action, Model, ScopeViewset string
}

// GuardOf is the guard of an operation; ok is false for an operation pith does not
// implement, or one anyone may call (status, the document).
func (s *Server) GuardOf(opID string) (Guard, bool) {
	for _, rt := range s.routes {
		if rt.op.ID == opID && !rt.op.Anonymous {
			g := rt.guard
			return Guard{Viewset: g.viewset, Action: g.action, Model: g.model, ScopeViewset: g.scopeViewset}, true
		}
	}
	return Guard{}, false
}

// AccessDefaults are the default policies, built-in roles and permissions the API
// serves (the core's and every type's).
func (s *Server) AccessDefaults() access.Defaults { return s.policies.defaults }
