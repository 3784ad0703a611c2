package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"pith/api/href"
	"pith/api/rest"
	"pith/meta"
)

// Roles, the roles users and groups hold (/users/{id}/roles/, /groups/{id}/roles/), and
// the roles held on one object (its add_role, remove_role, list_roles and
// my_permissions).

type roleResponse struct {
	PulpHref        string   `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string   `json:"prn" openapi:"readOnly"`
	PulpCreated     string   `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated string   `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	Name            string   `json:"name" openapi:"required"`
	Description     *string  `json:"description" openapi:"nullable"`
	Permissions     []string `json:"permissions" openapi:"required"`
	Locked          bool     `json:"locked" openapi:"readOnly"`
}

type roleIn struct {
	Name        string   `json:"name" openapi:"required,minLength=1"`
	Description *string  `json:"description" openapi:"nullable,minLength=1"`
	Permissions []string `json:"permissions" openapi:"required"`
}

func renderRole(x meta.Role) roleResponse {
	return roleResponse{PulpHref: href.Root + "roles/" + x.PulpID + "/", Prn: href.PRN("core.role", x.PulpID), PulpCreated: rest.Time(x.Created),
		PulpLastUpdated: rest.Time(x.Updated), Name: x.Name, Description: x.Description, Permissions: x.Permissions, Locked: x.Locked}
}

func (s *Server) roleListSpec() rest.ListSpec {
	fs := []rest.Filter{
		{Name: "name", Col: "r.name", Lookups: rest.NameLookups},
		{Name: "description", Col: "r.description", Lookups: []string{"exact", "contains", "icontains", "iexact"}},
		{Name: "locked", Col: "r.locked", Type: rest.Bool, Lookups: []string{"exact"}},
		{Name: "contains_permission", Type: rest.Custom, Repeated: true, Lookups: []string{"exact"}, Desc: "Filter roles that have any of the permissions in the list.",
			Apply: func(l *meta.List, d meta.Dialect, v string) error {
				// Any of the permissions, each given as app.codename or as a codename.
				var conds []string
				var args []any
				for _, p := range rest.SplitComma([]string{v}) {
					_, _, dotted := strings.Cut(p, ".")
					if dotted {
						conds, args = append(conds, "rp.permission = ?"), append(args, p)
					} else {
						conds, args = append(conds, "substr(rp.permission, length(rp.permission) - length(?) + 1) = ?"), append(args, "."+p, "."+p)
					}
				}
				if len(conds) == 0 {
					return nil
				}
				l.And("EXISTS (SELECT 1 FROM role_permissions rp WHERE rp.role_id = r.id AND ("+strings.Join(conds, " OR ")+"))", args...)
				return nil
			}},
		{Name: "for_object_type", Type: rest.Custom, Lookups: []string{"exact"}, Desc: "Filter roles that only have permissions for the specified object HREF.",
			Apply: func(l *meta.List, d meta.Dialect, v string) error {
				model := s.modelOfHref(v)
				perms := s.policies.defaults.Permissions[model]
				if model == "" || len(perms) == 0 {
					return rest.BadField("for_object_type", "Invalid value for 'for_object_type': %s.", v)
				}
				l.And("EXISTS (SELECT 1 FROM role_permissions rp WHERE rp.role_id = r.id) AND NOT EXISTS (SELECT 1 FROM role_permissions rp WHERE rp.role_id = r.id AND rp.permission NOT IN "+
					rest.Placeholders(len(perms))+")", rest.Args(perms)...)
				return nil
			}},
	}
	fs = append(fs, rest.IdentityFilters("r.pulp_id")...)
	return rest.ListSpec{Filters: fs, Ordering: rest.Ordering("r", map[string]string{"pk": "id", "pulp_id": "pulp_id", "pulp_created": "created",
		"pulp_last_updated": "updated", "name": "name", "description": "description", "locked": "locked"})}
}

// modelOfHref is the PRN model of the objects an href (of an object or a collection)
// names ("" for none).
func (s *Server) modelOfHref(h string) string {
	if o, ok := s.env.ObjectOf(h); ok {
		return o.Type
	}
	if rest, ok := strings.CutPrefix(h, href.Root); ok {
		return s.env.ModelOf(strings.TrimSuffix(rest, "/") + "/")
	}
	return ""
}

func (s *Server) roleList() rest.HandlerFunc {
	return lister(s, s.roleListSpec(), nil, meta.ListRoles, each(func(x meta.Role) any { return renderRole(x) }))
}

func (s *Server) roleRead(w http.ResponseWriter, r *http.Request) error {
	x, err := meta.RoleByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, renderRole(x))
}

// checkPermissions refuses names that are not permissions of a model pith knows.
func (s *Server) checkPermissions(perms []string) error {
	for _, p := range perms {
		if !strings.Contains(p, ".") {
			return rest.BadField("permissions", "Permission '%s' is not in the format '<app_label>.<codename>'.", p)
		}
		if !s.policies.defaults.Known(p) {
			return rest.BadField("permissions", "Permission '%s' does not exist.", p)
		}
	}
	return nil
}

func (s *Server) roleCreate(w http.ResponseWriter, r *http.Request) error {
	var in roleIn
	if err := s.readRole(r, &in, true); err != nil {
		return err
	}
	x, err := meta.CreateRole(r.Context(), s.db, meta.Role{Name: in.Name, Description: in.Description, Permissions: in.Permissions})
	if errors.Is(err, meta.ErrConflict) {
		return rest.BadField("name", "This field must be unique.")
	}
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusCreated, renderRole(x))
}

// readRole reads a role body over in, which holds the role's current fields for an
// update; whole (a create or a PUT) requires name and permissions.
func (s *Server) readRole(r *http.Request, in *roleIn, whole bool) error {
	raw, err := rest.DecodeBody(r, in)
	if err != nil {
		return err
	}
	if whole {
		if err := rest.Require(raw, "name"); err != nil {
			return err
		}
		if !rest.Has(raw, "permissions") {
			return rest.BadField("permissions", "This field is required.")
		}
	}
	return s.checkPermissions(in.Permissions)
}

// lockedRole is the role a request changes, refused when it is built in.
func (s *Server) lockedRole(r *http.Request) (meta.Role, error) {
	x, err := meta.RoleByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return x, err
	}
	if x.Locked {
		return x, rest.Status(http.StatusForbidden, "The role is locked.")
	}
	return x, nil
}

func (s *Server) roleUpdate(partial bool) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		x, err := s.lockedRole(r)
		if err != nil {
			return err
		}
		in := roleIn{Name: x.Name, Description: x.Description, Permissions: x.Permissions}
		if err := s.readRole(r, &in, !partial); err != nil {
			return err
		}
		x.Name, x.Description, x.Permissions = in.Name, in.Description, in.Permissions
		if err := meta.UpdateRole(r.Context(), s.db, x); errors.Is(err, meta.ErrConflict) {
			return rest.BadField("name", "This field must be unique.")
		} else if err != nil {
			return err
		}
		x, err = meta.RoleByPulpID(r.Context(), s.db, x.PulpID)
		if err != nil {
			return err
		}
		return rest.WriteOne(w, r, http.StatusOK, renderRole(x))
	}
}

func (s *Server) roleDelete(w http.ResponseWriter, r *http.Request) error {
	x, err := s.lockedRole(r)
	if err != nil {
		return err
	}
	if err := meta.DeleteRole(r.Context(), s.db, x.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// A grant is a role a user or group holds, on every object or on one:
// /users/{id}/roles/ and /groups/{id}/roles/.

type grantResponse struct {
	PulpHref         string   `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn              string   `json:"prn" openapi:"readOnly"`
	PulpCreated      string   `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated  string   `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	Role             string   `json:"role" openapi:"required"`
	ContentObject    *string  `json:"content_object" openapi:"nullable"`
	ContentObjectPrn *string  `json:"content_object_prn" openapi:"nullable"`
	Description      string   `json:"description" openapi:"readOnly"`
	Permissions      []string `json:"permissions" openapi:"readOnly"`
	Domain           *string  `json:"domain" openapi:"format=uri,nullable"`
}

type grantIn struct {
	Role             string  `json:"role" openapi:"required,minLength=1"`
	ContentObject    *string `json:"content_object" openapi:"nullable,minLength=1"`
	ContentObjectPrn *string `json:"content_object_prn" openapi:"nullable,minLength=1"`
	Domain           *string `json:"domain" openapi:"format=uri,nullable"`
}

// holderOf is the user or group a nested request's {id} names.
func (s *Server) holderOf(r *http.Request, group bool) (meta.Holder, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return meta.Holder{}, rest.ErrNotFound
	}
	if group {
		_, err = meta.GroupByID(r.Context(), s.db, id)
	} else {
		_, err = meta.UserByID(r.Context(), s.db, id)
	}
	return meta.Holder{Group: group, ID: id}, err
}

func (s *Server) renderGrant(g meta.Grant) grantResponse {
	parent, model := userHref(g.Holder.ID), "core.userrole"
	if g.Holder.Group {
		parent, model = groupHref(g.Holder.ID), "core.grouprole"
	}
	desc := ""
	if g.Role.Description != nil {
		desc = *g.Role.Description
	}
	out := grantResponse{PulpHref: parent + "roles/" + g.PulpID + "/", Prn: href.PRN(model, g.PulpID), PulpCreated: rest.Time(g.Created),
		PulpLastUpdated: rest.Time(g.Updated), Role: g.Role.Name, Description: desc, Permissions: g.Role.Permissions}
	if g.Object.Type != "" {
		h, p := s.objectHref(g.Object), href.PRN(g.Object.Type, g.Object.ID)
		out.ContentObject, out.ContentObjectPrn = &h, &p
	}
	return out
}

// objectHref is the href of an object roles are held on.
func (s *Server) objectHref(o meta.Object) string {
	return href.Root + s.env.CollectionOf(o.Type) + o.ID + "/"
}

func grantListSpec() rest.ListSpec {
	fs := []rest.Filter{
		{Name: "role", Col: "r.name", Lookups: []string{"exact", "contains", "icontains", "in", "startswith"}},
		{Name: "content_object", Type: rest.Custom, Lookups: []string{"exact"}, Desc: "content_object", Apply: nil},
		{Name: "domain", Type: rest.Custom, Lookups: []string{"exact"}, Apply: func(l *meta.List, d meta.Dialect, v string) error {
			if v != "null" && v != "" {
				l.And("1 = 0") // pith has no domains
			}
			return nil
		}},
	}
	fs = append(fs, rest.IdentityFilters("x.pulp_id")...)
	return rest.ListSpec{Filters: fs, Ordering: map[string]string{"role": "r.name", "description": "r.description", "pulp_created": "x.created", "pk": "x.id"}}
}

func (s *Server) grantList(group bool) rest.HandlerFunc {
	spec := grantListSpec()
	for i := range spec.Filters {
		if spec.Filters[i].Name == "content_object" {
			spec.Filters[i].Apply = func(l *meta.List, d meta.Dialect, v string) error {
				if v == "null" {
					l.And("x.object_type = ''")
					return nil
				}
				o, ok := s.env.ObjectOf(v)
				if !ok {
					return rest.BadField("content_object", "Invalid value for 'content_object': %s.", v)
				}
				l.And("x.object_type = ? AND x.object_id = ?", o.Type, o.ID)
				return nil
			}
		}
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		h, err := s.holderOf(r, group)
		if err != nil {
			return err
		}
		return lister(s, spec, nil, func(ctx context.Context, q meta.Querier, l meta.List) ([]meta.Grant, int64, error) {
			return meta.ListGrants(ctx, q, h, l)
		}, each(func(g meta.Grant) any { return s.renderGrant(g) }))(w, r)
	}
}

func (s *Server) grantRead(group bool) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		h, err := s.holderOf(r, group)
		if err != nil {
			return err
		}
		g, err := meta.GrantByPulpID(r.Context(), s.db, h, r.PathValue("rid"))
		if err != nil {
			return err
		}
		return rest.WriteOne(w, r, http.StatusOK, s.renderGrant(g))
	}
}

func (s *Server) grantDelete(group bool) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		h, err := s.holderOf(r, group)
		if err != nil {
			return err
		}
		if err := meta.DeleteGrantByPulpID(r.Context(), s.db, h, r.PathValue("rid")); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

func (s *Server) grantCreate(group bool) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		h, err := s.holderOf(r, group)
		if err != nil {
			return err
		}
		var in grantIn
		raw, err := rest.DecodeBody(r, &in)
		if err != nil {
			return err
		}
		if err := rest.Require(raw, "role"); err != nil {
			return err
		}
		role, err := meta.RoleByName(r.Context(), s.db, in.Role)
		if errors.Is(err, meta.ErrNotFound) {
			return rest.BadField("role", "Object with name=%s does not exist.", in.Role)
		}
		if err != nil {
			return err
		}
		if in.Domain != nil {
			return rest.BadField("domain", "Invalid hyperlink - Object does not exist.")
		}
		if !rest.Has(raw, "content_object") && !rest.Has(raw, "content_object_prn") {
			return rest.NonField("Either 'content_object' or 'content_object_prn' needs to be specified. Use 'null' for global or domain level access.")
		}
		var o meta.Object
		target := in.ContentObject
		if target == nil {
			target = in.ContentObjectPrn
		}
		if target != nil {
			var ok bool
			if o, ok = s.env.ObjectOf(*target); !ok {
				return rest.BadField("content_object", "Invalid value: %s.", *target)
			}
			if err := s.objectExists(r, o); err != nil {
				return rest.BadField("content_object", "Invalid value: %s.", *target)
			}
			if !s.roleFits(role, o) {
				return rest.NonField("The role '%s' does not carry any permission for that object.", role.Name)
			}
		}
		id, err := meta.AddGrant(r.Context(), s.db, h, role.ID, o)
		if errors.Is(err, meta.ErrConflict) {
			who := "user"
			if group {
				who = "group"
			}
			return rest.NonField("The role is already assigned to this %s.", who)
		}
		if err != nil {
			return err
		}
		g, err := meta.GrantByPulpID(r.Context(), s.db, h, id)
		if err != nil {
			return err
		}
		return rest.WriteOne(w, r, http.StatusCreated, s.renderGrant(g))
	}
}

// roleFits reports whether a role carries a permission on objects like o.
func (s *Server) roleFits(role meta.Role, o meta.Object) bool {
	for _, p := range role.Permissions {
		if slices.Contains(s.policies.defaults.Permissions[o.Type], p) {
			return true
		}
	}
	return false
}

// objectExists checks that the object roles are to be held on exists.
func (s *Server) objectExists(r *http.Request, o meta.Object) error {
	table, col := s.tableOf(o.Type)
	if table == "" {
		for _, k := range s.core.Table().Objects() {
			if k.Model == o.Type {
				ok, err := k.Exists(r.Context(), o.ID)
				if err == nil && !ok {
					err = meta.ErrNotFound
				}
				return err
			}
		}
		return meta.ErrNotFound
	}
	var n int
	err := s.db.QueryRow(r.Context(), "SELECT count(*) FROM "+table+" WHERE "+col+" = ?", o.ID).Scan(&n)
	if err == nil && n == 0 {
		err = meta.ErrNotFound
	}
	return err
}

// tableOf is the table (and its key column) holding objects of a PRN model.
func (s *Server) tableOf(model string) (table, col string) {
	switch model {
	case "auth.user":
		return "users", "CAST(id AS TEXT)"
	case "core.group":
		return "groups", "CAST(id AS TEXT)"
	case "core.task":
		return "tasks", "pulp_id"
	case "core.taskgroup":
		return "task_groups", "pulp_id"
	case "core.taskschedule":
		return "task_schedules", "pulp_id"
	case "core.upload":
		return "uploads", "pulp_id"
	case "core.artifact":
		return "artifacts", "pulp_id"
	case "core.role":
		return "roles", "pulp_id"
	case "core.upstreampulp":
		return "upstream_pulps", "pulp_id"
	case "core.pulpexporter", "core.filesystemexporter":
		return "exporters", "pulp_id"
	}
	switch coll := s.env.CollectionOf(model); {
	case strings.HasPrefix(coll, "contentguards/"):
		return "content_guards", "pulp_id"
	case strings.HasPrefix(coll, "repositories/"):
		return "repositories", "pulp_id"
	case strings.HasPrefix(coll, "remotes/"):
		return "remotes", "pulp_id"
	case strings.HasPrefix(coll, "publications/"):
		return "publications", "pulp_id"
	case strings.HasPrefix(coll, "distributions/"):
		return "distributions", "pulp_id"
	case strings.HasPrefix(coll, "content/"):
		return "contents", "pulp_id"
	case strings.HasPrefix(coll, "acs/"):
		return "acs", "pulp_id"
	}
	return "", ""
}

// Object roles: POST {href}add_role/ and remove_role/ with {role, users, groups}, GET
// {href}list_roles/ and my_permissions/.

type nestedRole struct {
	Users  []string `json:"users" openapi:"default=[]"`
	Groups []string `json:"groups" openapi:"default=[]"`
	Role   string   `json:"role" openapi:"required,minLength=1"`
	// Size is accepted and ignored: Pulp documents an upload's add_role and remove_role
	// with the body of an upload, so bindings generated from it may send one.
	Size *int64 `json:"size" openapi:"newer"`
}

type nestedRoleResponse struct {
	Users  []string `json:"users" openapi:"default=[]"`
	Groups []string `json:"groups" openapi:"default=[]"`
	Role   string   `json:"role" openapi:"required"`
}

type objectRolesResponse struct {
	Roles []nestedRoleResponse `json:"roles" openapi:"required"`
}

type myPermissionsResponse struct {
	Permissions []string `json:"permissions" openapi:"required"`
}

// objectOf is the object a detail request's {id} names in collection.
func (s *Server) objectOf(r *http.Request, collection string) (meta.Object, error) {
	o := meta.Object{Type: s.env.ModelOf(collection), ID: r.PathValue("id")}
	if err := s.objectExists(r, o); err != nil {
		return o, err
	}
	return o, nil
}

func (s *Server) listRoles(collection string) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		o, err := s.objectOf(r, collection)
		if err != nil {
			return err
		}
		roles, err := meta.ObjectRoles(r.Context(), s.db, o)
		if err != nil {
			return err
		}
		out := objectRolesResponse{Roles: []nestedRoleResponse{}}
		for _, x := range roles {
			out.Roles = append(out.Roles, nestedRoleResponse{Users: x.Users, Groups: x.Groups, Role: x.Role})
		}
		return rest.WriteOne(w, r, http.StatusOK, out)
	}
}

func (s *Server) myPermissions(collection string) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		o, err := s.objectOf(r, collection)
		if err != nil {
			return err
		}
		c := callerFrom(r.Context())
		perms := []string{}
		for _, p := range s.policies.defaults.Permissions[o.Type] {
			if ok, err := c.can(p, o); err != nil {
				return err
			} else if ok {
				perms = append(perms, p)
			}
		}
		return rest.WriteOne(w, r, http.StatusOK, myPermissionsResponse{Permissions: perms})
	}
}

// changeRole is add_role (assign) or remove_role: every user and group named must not
// hold the role yet (or must hold it), else nothing changes.
func (s *Server) changeRole(collection string, assign bool) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		o, err := s.objectOf(r, collection)
		if err != nil {
			return err
		}
		in := nestedRole{Users: []string{}, Groups: []string{}}
		raw, err := rest.DecodeBody(r, &in)
		if err != nil {
			return err
		}
		if err := rest.Require(raw, "role"); err != nil {
			return err
		}
		ctx := r.Context()
		role, err := meta.RoleByName(ctx, s.db, in.Role)
		if errors.Is(err, meta.ErrNotFound) {
			return rest.BadField("role", "Object with name=%s does not exist.", in.Role)
		}
		if err != nil {
			return err
		}
		if assign && !s.roleFits(role, o) {
			return rest.NonField("The role does not contain any permission for that object.")
		}
		var holders []meta.Holder
		for _, name := range in.Users {
			u, err := meta.UserByName(ctx, s.db, name)
			if err != nil {
				return rest.BadField("users", "Object with username=%s does not exist.", name)
			}
			holders = append(holders, meta.Holder{ID: u.ID})
		}
		for _, name := range in.Groups {
			g, err := meta.GroupByName(ctx, s.db, name)
			if err != nil {
				return rest.BadField("groups", "Object with name=%s does not exist.", name)
			}
			holders = append(holders, meta.Holder{Group: true, ID: g.ID})
		}
		err = s.db.Tx(ctx, func(tx *meta.Tx) error {
			for i, h := range holders {
				name, what := "", "user"
				if h.Group {
					name, what = in.Groups[i-len(in.Users)], "group"
				} else {
					name = in.Users[i]
				}
				held, err := meta.HasGrant(ctx, tx, h, role.ID, o)
				switch {
				case err != nil:
					return err
				case assign && held:
					return rest.NonField("The role is already assigned to %s '%s'.", what, name)
				case !assign && !held:
					return rest.NonField("The role is not assigned to %s '%s'.", what, name)
				case assign:
					_, err = meta.AddGrant(ctx, tx, h, role.ID, o)
				default:
					err = meta.DeleteGrant(ctx, tx, h, role.ID, o)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		return rest.WriteOne(w, r, http.StatusCreated, nestedRoleResponse{Users: in.Users, Groups: in.Groups, Role: role.Name})
	}
}
