package api

import (
	"strings"

	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
)

// accessOps are the operations of access control: users, groups and their members, roles,
// the roles users and groups hold, access policies and login sessions.
func (s *Server) accessOps(t *rest.Table) []rest.Op {
	root := href.Root
	pg := t.Paginated
	r := func(code int, schema string) []openapi.Response { return []openapi.Response{rest.Resp(code, schema)} }
	var ops []rest.Op
	add := func(viewset string, op rest.Op) {
		op.Viewset = viewset
		ops = append(ops, op)
	}

	user := t.Schema("UserResponse", userResponse{})
	t.Schema("UserGroupResponse", userGroupResponse{})
	ul := userListSpec()
	add("users", rest.Op{ID: "users_list", Method: "GET", Path: root + "users/", Pattern: root + "users/{$}", Tag: "Users", List: &ul,
		Responses: r(200, pg(user)), Handler: s.userList()})
	add("users", rest.Op{ID: "users_create", Method: "POST", Path: root + "users/", Pattern: root + "users/{$}", Tag: "Users",
		Body: userIn{}, BodyName: "User", Media: rest.JSONForms, Responses: r(201, user), Handler: s.userCreate})
	uh, up := "{auth_user_href}", root+"users/{id}/"
	add("users", rest.Op{ID: "users_read", Method: "GET", Path: uh, Pattern: up + "{$}", Tag: "Users", Detail: true, Responses: r(200, user), Handler: s.userRead})
	add("users", rest.Op{ID: "users_update", Method: "PUT", Path: uh, Pattern: up + "{$}", Tag: "Users",
		Body: userIn{}, BodyName: "User", Media: rest.JSONForms, Responses: r(200, user), Handler: s.userUpdate(false)})
	add("users", rest.Op{ID: "users_partial_update", Method: "PATCH", Path: uh, Pattern: up + "{$}", Tag: "Users",
		Body: userIn{}, BodyName: "PatchedUser", Media: rest.JSONForms, Responses: r(200, user), Handler: s.userUpdate(true)})
	add("users", rest.Op{ID: "users_delete", Method: "DELETE", Path: uh, Pattern: up + "{$}", Tag: "Users", Responses: r(204, ""), Handler: s.userDelete})

	group := t.Schema("GroupResponse", groupResponse{})
	gl := groupListSpec()
	add("groups", rest.Op{ID: "groups_list", Method: "GET", Path: root + "groups/", Pattern: root + "groups/{$}", Tag: "Groups", List: &gl,
		Responses: r(200, pg(group)), Handler: s.groupsList()})
	add("groups", rest.Op{ID: "groups_create", Method: "POST", Path: root + "groups/", Pattern: root + "groups/{$}", Tag: "Groups",
		Body: groupIn{}, BodyName: "Group", Media: rest.JSONForms, Responses: r(201, group), Handler: s.groupsCreate})
	gh, gp := "{group_href}", root+"groups/{id}/"
	add("groups", rest.Op{ID: "groups_read", Method: "GET", Path: gh, Pattern: gp + "{$}", Tag: "Groups", Detail: true, Responses: r(200, group), Handler: s.groupsRead})
	add("groups", rest.Op{ID: "groups_update", Method: "PUT", Path: gh, Pattern: gp + "{$}", Tag: "Groups",
		Body: groupIn{}, BodyName: "Group", Media: rest.JSONForms, Responses: r(200, group), Handler: s.groupsUpdate})
	add("groups", rest.Op{ID: "groups_partial_update", Method: "PATCH", Path: gh, Pattern: gp + "{$}", Tag: "Groups",
		Body: groupIn{}, BodyName: "PatchedGroup", Media: rest.JSONForms, Responses: r(200, group), Handler: s.groupsPatch})
	add("groups", rest.Op{ID: "groups_delete", Method: "DELETE", Path: gh, Pattern: gp + "{$}", Tag: "Groups", Responses: r(204, ""), Handler: s.groupsDelete})
	ops = append(ops, s.objectRoleOps(t, "groups", "groups", gh, gp, "Groups")...)

	gu := t.Schema("GroupUserResponse", groupUserResponse{})
	gul := rest.ListSpec{}
	add("groups/users", rest.Op{ID: "groups_users_list", Method: "GET", Path: gh + "users/", Pattern: gp + "users/{$}", Tag: "Groups: Users", List: &gul,
		Responses: r(200, pg(gu)), Handler: s.groupUsersList})
	add("groups/users", rest.Op{ID: "groups_users_create", Method: "POST", Path: gh + "users/", Pattern: gp + "users/{$}", Tag: "Groups: Users",
		Body: groupUserIn{}, BodyName: "GroupUser", Media: rest.JSONForms, Responses: r(201, gu), Handler: s.groupUsersCreate})
	add("groups/users", rest.Op{ID: "groups_users_delete", Method: "DELETE", Path: "{groups_user_href}", Pattern: gp + "users/{uid}/{$}", Tag: "Groups: Users",
		Responses: r(204, ""), Handler: s.groupUsersDelete})

	for _, h := range []struct {
		collection, parent, path, tag, grantHref string
		group                                    bool
	}{{"users", uh, up, "Users: Roles", "{auth_users_user_role_href}", false}, {"groups", gh, gp, "Groups: Roles", "{groups_group_role_href}", true}} {
		name, schema := "UserRole", "UserRoleResponse"
		if h.group {
			name, schema = "GroupRole", "GroupRoleResponse"
		}
		grant := t.Schema(schema, grantResponse{})
		gsl := grantListSpec()
		vs := h.collection + "/roles"
		add(vs, rest.Op{ID: h.collection + "_roles_list", Method: "GET", Path: h.parent + "roles/", Pattern: h.path + "roles/{$}", Tag: h.tag, List: &gsl,
			Responses: r(200, pg(grant)), Handler: s.grantList(h.group)})
		add(vs, rest.Op{ID: h.collection + "_roles_create", Method: "POST", Path: h.parent + "roles/", Pattern: h.path + "roles/{$}", Tag: h.tag,
			Body: grantIn{}, BodyName: name, Media: rest.JSONForms, Responses: r(201, grant), Handler: s.grantCreate(h.group)})
		add(vs, rest.Op{ID: h.collection + "_roles_read", Method: "GET", Path: h.grantHref, Pattern: h.path + "roles/{rid}/{$}", Tag: h.tag, Detail: true,
			Responses: r(200, grant), Handler: s.grantRead(h.group)})
		add(vs, rest.Op{ID: h.collection + "_roles_delete", Method: "DELETE", Path: h.grantHref, Pattern: h.path + "roles/{rid}/{$}", Tag: h.tag,
			Responses: r(204, ""), Handler: s.grantDelete(h.group)})
	}

	role := t.Schema("RoleResponse", roleResponse{})
	rl := s.roleListSpec()
	add("roles", rest.Op{ID: "roles_list", Method: "GET", Path: root + "roles/", Pattern: root + "roles/{$}", Tag: "Roles", List: &rl,
		Responses: r(200, pg(role)), Handler: s.roleList()})
	add("roles", rest.Op{ID: "roles_create", Method: "POST", Path: root + "roles/", Pattern: root + "roles/{$}", Tag: "Roles",
		Body: roleIn{}, BodyName: "Role", Media: rest.JSONForms, Responses: r(201, role), Handler: s.roleCreate})
	rh, rp := "{role_href}", root+"roles/{id}/"
	add("roles", rest.Op{ID: "roles_read", Method: "GET", Path: rh, Pattern: rp + "{$}", Tag: "Roles", Detail: true, Responses: r(200, role), Handler: s.roleRead})
	add("roles", rest.Op{ID: "roles_update", Method: "PUT", Path: rh, Pattern: rp + "{$}", Tag: "Roles",
		Body: roleIn{}, BodyName: "Role", Media: rest.JSONForms, Responses: r(200, role), Handler: s.roleUpdate(false)})
	add("roles", rest.Op{ID: "roles_partial_update", Method: "PATCH", Path: rh, Pattern: rp + "{$}", Tag: "Roles",
		Body: roleIn{}, BodyName: "PatchedRole", Media: rest.JSONForms, Responses: r(200, role), Handler: s.roleUpdate(true)})
	add("roles", rest.Op{ID: "roles_delete", Method: "DELETE", Path: rh, Pattern: rp + "{$}", Tag: "Roles", Responses: r(204, ""), Handler: s.roleDelete})

	policy := t.Schema("AccessPolicyResponse", accessPolicyResponse{})
	pl := policyListSpec()
	add("access_policies", rest.Op{ID: "access_policies_list", Method: "GET", Path: root + "access_policies/", Pattern: root + "access_policies/{$}", Tag: "Access_Policies",
		List: &pl, Responses: r(200, pg(policy)), Handler: s.policyList()})
	ph, pp := "{access_policy_href}", root+"access_policies/{id}/"
	add("access_policies", rest.Op{ID: "access_policies_read", Method: "GET", Path: ph, Pattern: pp + "{$}", Tag: "Access_Policies", Detail: true,
		Responses: r(200, policy), Handler: s.policyRead})
	add("access_policies", rest.Op{ID: "access_policies_update", Method: "PUT", Path: ph, Pattern: pp + "{$}", Tag: "Access_Policies",
		Body: accessPolicyIn{}, BodyName: "AccessPolicy", Media: rest.JSONForms, Responses: r(200, policy), Handler: s.policyUpdate(false)})
	add("access_policies", rest.Op{ID: "access_policies_partial_update", Method: "PATCH", Path: ph, Pattern: pp + "{$}", Tag: "Access_Policies",
		Body: accessPolicyIn{}, BodyName: "PatchedAccessPolicy", Media: rest.JSONForms, Responses: r(200, policy), Handler: s.policyUpdate(true)})
	add("access_policies", rest.Op{ID: "access_policies_reset", Method: "POST", Path: ph + "reset/", Pattern: pp + "reset/{$}", Tag: "Access_Policies",
		Action: "reset", Responses: r(200, policy), Handler: s.policyReset})

	login := t.Schema("LoginResponse", loginResponse{})
	lp := root + "login/"
	add("login", rest.Op{ID: "login_read", Method: "GET", Path: lp, Pattern: lp + "{$}", Tag: "Login", Detail: true, Responses: r(200, login), Handler: s.loginRead})
	add("login", rest.Op{ID: "login", Method: "POST", Path: lp, Pattern: lp + "{$}", Tag: "Login", Responses: r(201, login), Handler: s.login})
	add("login", rest.Op{ID: "logout", Method: "DELETE", Path: lp, Pattern: lp + "{$}", Tag: "Login", Responses: r(204, ""), Handler: s.logout})
	return ops
}

// objectRoleOps are add_role, remove_role, list_roles and my_permissions of the objects
// of a viewset: prefix names the operations ("repositories_file_file"), h their href
// template and pattern the objects' mux pattern ("/pulp/api/v3/repositories/file/file/{id}/").
func (s *Server) objectRoleOps(t *rest.Table, viewset, prefix, h, pattern, tag string) []rest.Op {
	nested := t.Schema("NestedRoleResponse", nestedRoleResponse{})
	body := "NestedRole"
	if viewset == "uploads" {
		body = "Upload" // as Pulp's document declares it (see nestedRole.Size)
	}
	collection := strings.TrimPrefix(strings.TrimSuffix(pattern, "{id}/"), href.Root)
	r := func(code int, schema string) []openapi.Response { return []openapi.Response{rest.Resp(code, schema)} }
	return []rest.Op{
		{ID: prefix + "_add_role", Method: "POST", Path: h + "add_role/", Pattern: pattern + "add_role/{$}", Tag: tag, Viewset: viewset, Action: "add_role",
			Body: nestedRole{}, BodyName: body, Media: rest.JSONForms, Responses: r(201, nested), Handler: s.changeRole(collection, true)},
		{ID: prefix + "_remove_role", Method: "POST", Path: h + "remove_role/", Pattern: pattern + "remove_role/{$}", Tag: tag, Viewset: viewset, Action: "remove_role",
			Body: nestedRole{}, BodyName: body, Media: rest.JSONForms, Responses: r(201, nested), Handler: s.changeRole(collection, false)},
		{ID: prefix + "_list_roles", Method: "GET", Path: h + "list_roles/", Pattern: pattern + "list_roles/{$}", Tag: tag, Viewset: viewset, Action: "list_roles",
			Detail: true, Responses: r(200, t.Schema("ObjectRolesResponse", objectRolesResponse{})), Handler: s.listRoles(collection)},
		{ID: prefix + "_my_permissions", Method: "GET", Path: h + "my_permissions/", Pattern: pattern + "my_permissions/{$}", Tag: tag, Viewset: viewset, Action: "my_permissions",
			Detail: true, Responses: r(200, t.Schema("MyPermissionsResponse", myPermissionsResponse{})), Handler: s.myPermissions(collection)},
	}
}
