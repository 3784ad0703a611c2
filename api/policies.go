package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"pith/api/access"
	"pith/api/href"
	"pith/api/rest"
	"pith/content"
	"pith/meta"
	"pith/task"
)

// Access policies (/access_policies/): one per viewset pith serves that Pulp stores one
// for, the shipped default until an administrator changes it (customized) or resets it.

type accessPolicyResponse struct {
	PulpHref              string            `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn                   string            `json:"prn" openapi:"readOnly"`
	PulpCreated           string            `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated       string            `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	PermissionsAssignment []json.RawMessage `json:"permissions_assignment"`
	CreationHooks         []json.RawMessage `json:"creation_hooks"`
	Statements            []json.RawMessage `json:"statements" openapi:"required"`
	ViewsetName           string            `json:"viewset_name" openapi:"readOnly"`
	Customized            bool              `json:"customized" openapi:"readOnly"`
	QuerysetScoping       json.RawMessage   `json:"queryset_scoping"`
}

type accessPolicyIn struct {
	PermissionsAssignment []json.RawMessage `json:"permissions_assignment"`
	CreationHooks         []json.RawMessage `json:"creation_hooks"`
	Statements            []json.RawMessage `json:"statements" openapi:"required"`
	QuerysetScoping       json.RawMessage   `json:"queryset_scoping"`
}

func renderPolicy(p meta.AccessPolicy) accessPolicyResponse {
	var hooks, statements []json.RawMessage
	json.Unmarshal(p.CreationHooks, &hooks)
	json.Unmarshal(p.Statements, &statements)
	if hooks == nil {
		hooks = []json.RawMessage{}
	}
	return accessPolicyResponse{PulpHref: href.Root + "access_policies/" + p.PulpID + "/", Prn: href.PRN("core.accesspolicy", p.PulpID),
		PulpCreated: rest.Time(p.Created), PulpLastUpdated: rest.Time(p.Updated), PermissionsAssignment: hooks, CreationHooks: hooks,
		Statements: statements, ViewsetName: p.Viewset, Customized: p.Customized, QuerysetScoping: p.QuerysetScoping}
}

func policyListSpec() rest.ListSpec {
	fs := []rest.Filter{
		{Name: "viewset_name", Col: "p.viewset_name", Lookups: rest.NameLookups},
		{Name: "customized", Col: "p.customized", Type: rest.Bool, Lookups: []string{"exact"}},
	}
	fs = append(fs, rest.IdentityFilters("p.pulp_id")...)
	return rest.ListSpec{Filters: fs, Ordering: rest.Ordering("p", map[string]string{"pk": "id", "pulp_id": "pulp_id", "pulp_created": "created",
		"pulp_last_updated": "updated", "viewset_name": "viewset_name", "customized": "customized", "statements": "statements",
		"creation_hooks": "creation_hooks", "queryset_scoping": "queryset_scoping"})}
}

func (s *Server) policyList() rest.HandlerFunc {
	return lister(s, policyListSpec(), nil, meta.ListAccessPolicies, each(func(p meta.AccessPolicy) any { return renderPolicy(p) }))
}

func (s *Server) policyRead(w http.ResponseWriter, r *http.Request) error {
	p, err := meta.AccessPolicyByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, renderPolicy(p))
}

func (s *Server) policyUpdate(partial bool) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, err := meta.AccessPolicyByPulpID(r.Context(), s.db, r.PathValue("id"))
		if err != nil {
			return err
		}
		var in accessPolicyIn
		raw, err := rest.DecodeBody(r, &in)
		if err != nil {
			return err
		}
		if !partial && !rest.Has(raw, "statements") {
			return rest.BadField("statements", "This field is required.")
		}
		if rest.Has(raw, "permissions_assignment") {
			if rest.Has(raw, "creation_hooks") && string(raw["creation_hooks"]) != string(raw["permissions_assignment"]) {
				return rest.NonField("Cannot specify both 'permissions_assignment' and 'creation_hooks'.")
			}
			raw["creation_hooks"] = raw["permissions_assignment"]
		}
		for field, dst := range map[string]*json.RawMessage{"statements": &p.Statements, "creation_hooks": &p.CreationHooks, "queryset_scoping": &p.QuerysetScoping} {
			if v, ok := raw[field]; ok {
				*dst = v
			}
		}
		pol, err := storedPolicy(p)
		if err != nil {
			return rest.NonField("The policy does not parse: %v.", err)
		}
		if err := pol.Validate(s.knownCondition); err != nil {
			return rest.BadField("statements", "%v.", err)
		}
		for _, h := range pol.CreationHooks {
			names, _ := access.HookRoles(h)
			for _, name := range names {
				if _, err := meta.RoleByName(r.Context(), s.db, name); err != nil {
					return rest.BadField("creation_hooks", "Role %q does not exist.", name)
				}
			}
		}
		if len(raw) > 0 {
			p.Customized = true
		}
		return s.savePolicy(w, r, p)
	}
}

// savePolicy stores a policy, makes this process's decisions use it at once, and
// answers with it.
func (s *Server) savePolicy(w http.ResponseWriter, r *http.Request, p meta.AccessPolicy) error {
	if err := meta.UpdateAccessPolicy(r.Context(), s.db, p); err != nil {
		return err
	}
	s.policies.forget()
	p, err := meta.AccessPolicyByPulpID(r.Context(), s.db, p.PulpID)
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, renderPolicy(p))
}

// policyReset restores a policy's shipped default.
func (s *Server) policyReset(w http.ResponseWriter, r *http.Request) error {
	p, err := meta.AccessPolicyByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	d, ok := s.policies.defaults.Policies[p.Viewset]
	if !ok {
		return rest.Status(http.StatusBadRequest, "No default access policy is shipped for %s.", p.Viewset)
	}
	row := storableDefault(d)
	p.Statements, p.CreationHooks, p.QuerysetScoping, p.Customized = row.Statements, row.CreationHooks, row.QuerysetScoping, false
	return s.savePolicy(w, r, p)
}

func storableDefault(d access.DefaultPolicy) meta.AccessPolicy {
	st, _ := json.Marshal(d.Statements)
	hooks, _ := json.Marshal(d.CreationHooks)
	scoping := []byte("{}")
	if d.QuerysetScoping != nil {
		scoping, _ = json.Marshal(d.QuerysetScoping)
	}
	if d.CreationHooks == nil {
		hooks = []byte("[]")
	}
	return meta.AccessPolicy{Statements: st, CreationHooks: hooks, QuerysetScoping: scoping}
}

// syncAccess stores the built-in roles and the default policies of the viewsets this
// API serves, as Pulp does after migrating. Two API processes starting at once may race
// to insert the same rows: the loser tries again and finds them.
func (s *Server) syncAccess(ctx context.Context) error {
	served := map[string]bool{}
	for _, rt := range s.routes {
		served[rt.guard.viewset] = true
	}
	policies := map[string]meta.AccessPolicy{}
	for name, d := range s.policies.defaults.Policies {
		if served[name] && !d.Unlisted {
			policies[name] = storableDefault(d)
		}
	}
	roles := map[string]meta.Role{}
	for _, name := range slices.Sorted(maps.Keys(s.policies.defaults.Roles)) {
		d := s.policies.defaults.Roles[name]
		roles[name] = meta.Role{Description: d.Description, Permissions: d.Permissions}
	}
	var err error
	for range 3 {
		err = s.db.Tx(ctx, func(tx *meta.Tx) error {
			if err := meta.SyncLockedRoles(ctx, tx, roles); err != nil {
				return err
			}
			return meta.SyncAccessPolicies(ctx, tx, policies)
		})
		if !errors.Is(err, meta.ErrConflict) && !meta.IsUniqueViolation(err) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("store built-in roles and access policies: %w", err)
	}
	return nil
}

// created runs the creation hooks of a viewset's policy for an object the caller just
// made: add_roles_for_object_creator gives it the roles the hook names on the object.
// Superusers hold every permission already and get none (docs/compatibility.md).
func (s *Server) created(ctx context.Context, viewset string, o meta.Object) error {
	sub := rest.SubjectOf(ctx)
	if sub.Anonymous() || sub.Superuser {
		return nil
	}
	return s.policies.grantCreator(ctx, s.db, s.db, viewset, sub.ID, o)
}

// grantCreator gives user the roles viewset's creation hooks name on o (in q).
func (p *policyCache) grantCreator(ctx context.Context, db *meta.DB, q meta.Querier, viewset string, user int64, o meta.Object) error {
	pol, _, err := p.get(ctx, db, viewset)
	if err != nil {
		return err
	}
	for _, h := range pol.CreationHooks {
		if h.Function != "add_roles_for_object_creator" {
			continue
		}
		names, err := access.HookRoles(h)
		if err != nil {
			return fmt.Errorf("access policy %s: creation hook: %w", viewset, err)
		}
		for _, name := range names {
			role, err := meta.RoleByName(ctx, q, name)
			if err != nil {
				return fmt.Errorf("access policy %s: creation hook role %s: %w", viewset, name, err)
			}
			if _, err := meta.AddGrant(ctx, q, meta.Holder{ID: user}, role.ID, o); err != nil && !errors.Is(err, meta.ErrConflict) {
				return err
			}
		}
	}
	return nil
}

// newPolicyCache holds the policies of the core and of the types a table declares.
func newPolicyCache(t *rest.Table) (*policyCache, error) {
	defaults, err := access.Core()
	if err != nil {
		return nil, err
	}
	if err := defaults.Merge(t.AccessDefaults()); err != nil {
		return nil, err
	}
	return &policyCache{defaults: defaults}, nil
}

// TaskHooks give a user who dispatches a task (not a superuser) the roles the tasks
// policy's creation hooks name on it (core.task_owner), and on every resource the task
// creates the roles that resource's policy names (file.filepublication_owner, ...), as
// Pulp does for the objects its tasks create. Worker processes install them too.
func TaskHooks(core *content.Core) (task.Hooks, error) {
	p, err := newPolicyCache(core.Table())
	if err != nil {
		return task.Hooks{}, err
	}
	db, env := core.DB, core.Env()
	ordinary := func(ctx context.Context, q meta.Querier, id int64) (bool, error) {
		u, err := meta.UserByID(ctx, q, id)
		if errors.Is(err, meta.ErrNotFound) {
			return false, nil
		}
		return err == nil && !u.Superuser, err
	}
	return task.Hooks{
		Dispatched: func(ctx context.Context, tx *meta.Tx, t task.Task) error {
			if ok, err := ordinary(ctx, tx, *t.CreatedBy); !ok {
				return err
			}
			return p.grantCreator(ctx, db, tx, "tasks", *t.CreatedBy, meta.Object{Type: "core.task", ID: t.PulpID})
		},
		Created: func(ctx context.Context, t task.Task, h string) error {
			o, ok := env.ObjectOf(h)
			if !ok {
				return nil // a version: its repository's roles cover it
			}
			if ok, err := ordinary(ctx, db, *t.CreatedBy); !ok {
				return err
			}
			return p.grantCreator(ctx, db, db, strings.TrimSuffix(env.CollectionOf(o.Type), "/"), *t.CreatedBy, o)
		},
		Profile: storeProfile(db, core.Store),
	}, nil
}
