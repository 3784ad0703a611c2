package meta

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Groups, roles, the roles users and groups hold (on every object or on one), access
// policies and login sessions. Objects are named by their PRN model ("file.filerepository")
// and their pulp_id; users and groups, which Pulp numbers, by their integer id.

// Object names one resource a role may be held on; the zero Object is every object
// (Pulp's model-level roles).
type Object struct {
	Type string // PRN model: "file.filerepository", "core.task", "auth.user"
	ID   string // pulp_id, or a user's or group's id
}

// Group is a group of users.
type Group struct {
	ID      int64
	Name    string
	Created int64
}

// CreateGroup inserts a group; a taken name is ErrConflict.
func CreateGroup(ctx context.Context, q Querier, name string) (Group, error) {
	var id int64
	err := q.QueryRow(ctx, `INSERT INTO groups (name, created) VALUES (?, ?) RETURNING id`, name, Now()).Scan(&id)
	if IsUniqueViolation(err) {
		return Group{}, fmt.Errorf("group %q: %w", name, ErrConflict)
	}
	if err != nil {
		return Group{}, fmt.Errorf("insert group %q: %w", name, err)
	}
	return Group{ID: id, Name: name}, nil
}

// GroupByID finds a group.
func GroupByID(ctx context.Context, q Querier, id int64) (Group, error) {
	var g Group
	err := q.QueryRow(ctx, `SELECT id, name, created FROM groups WHERE id = ?`, id).Scan(&g.ID, &g.Name, &g.Created)
	return g, noRows(err, "group", strconv.FormatInt(id, 10))
}

// GroupByName finds a group by name.
func GroupByName(ctx context.Context, q Querier, name string) (Group, error) {
	var g Group
	err := q.QueryRow(ctx, `SELECT id, name, created FROM groups WHERE name = ?`, name).Scan(&g.ID, &g.Name, &g.Created)
	return g, noRows(err, "group", name)
}

// ListGroups selects a page of groups (alias g).
func ListGroups(ctx context.Context, q Querier, l List) ([]Group, int64, error) {
	return Page(ctx, q, "g.id, g.name, g.created", "groups g", "g.id", l, func(r *sql.Rows) (Group, error) {
		var g Group
		return g, r.Scan(&g.ID, &g.Name, &g.Created)
	})
}

// RenameGroup changes a group's name.
func RenameGroup(ctx context.Context, q Querier, id int64, name string) error {
	_, err := q.Exec(ctx, `UPDATE groups SET name = ? WHERE id = ?`, name, id)
	if IsUniqueViolation(err) {
		return fmt.Errorf("group %q: %w", name, ErrConflict)
	}
	return err
}

// DeleteGroup deletes a group with its memberships and roles, and the roles held on it.
func DeleteGroup(ctx context.Context, q Querier, id int64) error {
	if _, err := q.Exec(ctx, `DELETE FROM user_roles WHERE object_type = 'core.group' AND object_id = ?`, strconv.FormatInt(id, 10)); err != nil {
		return err
	}
	if _, err := q.Exec(ctx, `DELETE FROM group_roles WHERE object_type = 'core.group' AND object_id = ?`, strconv.FormatInt(id, 10)); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `DELETE FROM groups WHERE id = ?`, id)
	return err
}

// AddGroupUser makes a user a member of a group; membership already held is ErrConflict.
func AddGroupUser(ctx context.Context, q Querier, groupID, userID int64) error {
	_, err := q.Exec(ctx, `INSERT INTO group_users (group_id, user_id) VALUES (?, ?)`, groupID, userID)
	if IsUniqueViolation(err) {
		return fmt.Errorf("user %d in group %d: %w", userID, groupID, ErrConflict)
	}
	return err
}

// RemoveGroupUser ends a membership; none is ErrNotFound.
func RemoveGroupUser(ctx context.Context, q Querier, groupID, userID int64) error {
	res, err := q.Exec(ctx, `DELETE FROM group_users WHERE group_id = ? AND user_id = ?`, groupID, userID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("group member", strconv.FormatInt(userID, 10))
	}
	return nil
}

// ListGroupUsers selects a page of a group's members (alias u).
func ListGroupUsers(ctx context.Context, q Querier, groupID int64, l List) ([]User, int64, error) {
	l.And("u.id IN (SELECT user_id FROM group_users WHERE group_id = ?)", groupID)
	return ListUsers(ctx, q, l)
}

// UserGroups are the groups of each of the users, by user id, ordered by name.
func UserGroups(ctx context.Context, q Querier, userIDs []int64) (map[int64][]Group, error) {
	out := map[int64][]Group{}
	if len(userIDs) == 0 {
		return out, nil
	}
	in, args := inList(userIDs)
	rows, err := q.Query(ctx, `SELECT gu.user_id, g.id, g.name, g.created FROM group_users gu JOIN groups g ON g.id = gu.group_id
		WHERE gu.user_id IN `+in+` ORDER BY g.name`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var uid int64
		var g Group
		if err := rows.Scan(&uid, &g.ID, &g.Name, &g.Created); err != nil {
			return nil, err
		}
		out[uid] = append(out[uid], g)
	}
	return out, rows.Err()
}

// Role is a named set of permissions.
type Role struct {
	ID          int64
	PulpID      string
	Name        string
	Description *string
	Locked      bool
	Permissions []string // sorted
	Created     int64
	Updated     int64
}

const roleCols = "r.id, r.pulp_id, r.name, r.description, r.locked, r.created, r.updated"

func scanRole(r interface{ Scan(...any) error }) (Role, error) {
	var x Role
	var desc sql.NullString
	err := r.Scan(&x.ID, &x.PulpID, &x.Name, &desc, &x.Locked, &x.Created, &x.Updated)
	if desc.Valid {
		x.Description = &desc.String
	}
	return x, err
}

// ListRoles selects a page of roles (alias r) with their permissions.
func ListRoles(ctx context.Context, q Querier, l List) ([]Role, int64, error) {
	roles, n, err := Page(ctx, q, roleCols, "roles r", "r.name", l, func(r *sql.Rows) (Role, error) { return scanRole(r) })
	if err != nil {
		return nil, 0, err
	}
	return roles, n, rolePermissions(ctx, q, roles)
}

func rolePermissions(ctx context.Context, q Querier, roles []Role) error {
	if len(roles) == 0 {
		return nil
	}
	idx := map[int64]int{}
	ids := make([]int64, len(roles))
	for i, r := range roles {
		idx[r.ID], ids[i] = i, r.ID
	}
	in, args := inList(ids)
	rows, err := q.Query(ctx, `SELECT role_id, permission FROM role_permissions WHERE role_id IN `+in+` ORDER BY permission`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var p string
		if err := rows.Scan(&id, &p); err != nil {
			return err
		}
		roles[idx[id]].Permissions = append(roles[idx[id]].Permissions, p)
	}
	for i := range roles {
		if roles[i].Permissions == nil {
			roles[i].Permissions = []string{}
		}
	}
	return rows.Err()
}

func roleBy(ctx context.Context, q Querier, col string, v any) (Role, error) {
	x, err := scanRole(q.QueryRow(ctx, "SELECT "+roleCols+" FROM roles r WHERE r."+col+" = ?", v))
	if err != nil {
		return Role{}, noRows(err, "role", fmt.Sprint(v))
	}
	rs := []Role{x}
	return rs[0], rolePermissions(ctx, q, rs)
}

// RoleByPulpID finds a role by its href UUID.
func RoleByPulpID(ctx context.Context, q Querier, id string) (Role, error) {
	return roleBy(ctx, q, "pulp_id", id)
}

// RoleByName finds a role by name.
func RoleByName(ctx context.Context, q Querier, name string) (Role, error) {
	return roleBy(ctx, q, "name", name)
}

// CreateRole inserts a role with its permissions; a taken name is ErrConflict.
func CreateRole(ctx context.Context, q Querier, x Role) (Role, error) {
	now := Now()
	if x.PulpID == "" {
		x.PulpID = NewID()
	}
	err := q.QueryRow(ctx, `INSERT INTO roles (pulp_id, name, description, locked, created, updated) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
		x.PulpID, x.Name, x.Description, x.Locked, now, now).Scan(&x.ID)
	if IsUniqueViolation(err) {
		return Role{}, fmt.Errorf("role %q: %w", x.Name, ErrConflict)
	}
	if err != nil {
		return Role{}, fmt.Errorf("insert role %q: %w", x.Name, err)
	}
	if err := setRolePermissions(ctx, q, x.ID, x.Permissions); err != nil {
		return Role{}, err
	}
	return RoleByPulpID(ctx, q, x.PulpID)
}

// UpdateRole writes a role's name, description and permissions.
func UpdateRole(ctx context.Context, q Querier, x Role) error {
	_, err := q.Exec(ctx, `UPDATE roles SET name = ?, description = ?, updated = ? WHERE id = ?`, x.Name, x.Description, Now(), x.ID)
	if IsUniqueViolation(err) {
		return fmt.Errorf("role %q: %w", x.Name, ErrConflict)
	}
	if err != nil {
		return err
	}
	return setRolePermissions(ctx, q, x.ID, x.Permissions)
}

func setRolePermissions(ctx context.Context, q Querier, id int64, perms []string) error {
	if _, err := q.Exec(ctx, `DELETE FROM role_permissions WHERE role_id = ?`, id); err != nil {
		return err
	}
	for _, p := range uniqueSorted(perms) {
		if _, err := q.Exec(ctx, `INSERT INTO role_permissions (role_id, permission) VALUES (?, ?)`, id, p); err != nil {
			return err
		}
	}
	return nil
}

// DeleteRole deletes a role and every assignment of it.
func DeleteRole(ctx context.Context, q Querier, id int64) error {
	_, err := q.Exec(ctx, `DELETE FROM roles WHERE id = ?`, id)
	return err
}

// SyncLockedRoles makes the built-in roles exactly roles (name → role): missing ones are
// created, changed ones rewritten and locked roles no longer shipped deleted, as Pulp
// does after each migration. Processes starting at once may race: a role another made
// meanwhile is taken as found (the caller retries on a unique violation).
func SyncLockedRoles(ctx context.Context, tx *Tx, roles map[string]Role) error {
	existing, _, err := ListRoles(ctx, tx, List{Where: []string{"r.locked = ?"}, Args: []any{true}})
	if err != nil {
		return err
	}
	for _, r := range existing {
		if _, keep := roles[r.Name]; !keep {
			if err := DeleteRole(ctx, tx, r.ID); err != nil {
				return err
			}
		}
	}
	// In name order: processes starting at once write the same rows in the same order,
	// so one waits for the other instead of each holding a row the other needs
	// (PostgreSQL's deadlock).
	for _, name := range slices.Sorted(maps.Keys(roles)) {
		want := roles[name]
		want.Name, want.Locked = name, true
		got, err := RoleByName(ctx, tx, name)
		switch {
		case errors.Is(err, ErrNotFound):
			if _, err := CreateRole(ctx, tx, want); err != nil {
				return err
			}
		case err != nil:
			return err
		case !got.Locked:
			return fmt.Errorf("built-in role %q: a custom role has that name; rename or delete it", name)
		case !slices.Equal(got.Permissions, uniqueSorted(want.Permissions)) || !equalPtr(got.Description, want.Description):
			want.ID = got.ID
			if err := UpdateRole(ctx, tx, want); err != nil {
				return err
			}
		}
	}
	return nil
}

func equalPtr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func uniqueSorted(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}

// Holder is who holds a role: a user or a group.
type Holder struct {
	Group bool
	ID    int64
}

func (h Holder) table() (table, col string) {
	if h.Group {
		return "group_roles", "group_id"
	}
	return "user_roles", "user_id"
}

// Grant is a role held by a user or a group, on every object or on one.
type Grant struct {
	ID      int64
	PulpID  string
	Holder  Holder
	Role    Role
	Object  Object
	Created int64
	Updated int64
}

// grantCols select a grant (alias x) with its role (alias r).
const grantCols = "x.id, x.pulp_id, x.object_type, x.object_id, x.created, x.updated, " + roleCols

func scanGrant(rows interface{ Scan(...any) error }, h Holder) (Grant, error) {
	g := Grant{Holder: h}
	var desc sql.NullString
	err := rows.Scan(&g.ID, &g.PulpID, &g.Object.Type, &g.Object.ID, &g.Created, &g.Updated,
		&g.Role.ID, &g.Role.PulpID, &g.Role.Name, &desc, &g.Role.Locked, &g.Role.Created, &g.Role.Updated)
	if desc.Valid {
		g.Role.Description = &desc.String
	}
	return g, err
}

// ListGrants selects a page of the roles a user or group holds (alias x, role alias r).
func ListGrants(ctx context.Context, q Querier, h Holder, l List) ([]Grant, int64, error) {
	table, col := h.table()
	l.And("x."+col+" = ?", h.ID)
	gs, n, err := Page(ctx, q, grantCols, table+" x JOIN roles r ON r.id = x.role_id", "x.id", l, func(r *sql.Rows) (Grant, error) { return scanGrant(r, h) })
	if err != nil {
		return nil, 0, err
	}
	roles := make([]Role, len(gs))
	for i := range gs {
		roles[i] = gs[i].Role
	}
	if err := rolePermissions(ctx, q, roles); err != nil {
		return nil, 0, err
	}
	for i := range gs {
		gs[i].Role = roles[i]
	}
	return gs, n, nil
}

// GrantByPulpID finds one of a holder's grants.
func GrantByPulpID(ctx context.Context, q Querier, h Holder, id string) (Grant, error) {
	gs, _, err := ListGrants(ctx, q, h, List{Where: []string{"x.pulp_id = ?"}, Args: []any{id}})
	if err != nil {
		return Grant{}, err
	}
	if len(gs) == 0 {
		return Grant{}, notFound("role assignment", id)
	}
	return gs[0], nil
}

// AddGrant gives a holder a role on an object (or every object); holding it already is
// ErrConflict.
func AddGrant(ctx context.Context, q Querier, h Holder, roleID int64, o Object) (string, error) {
	table, col := h.table()
	id, now := NewID(), Now()
	_, err := q.Exec(ctx, `INSERT INTO `+table+` (pulp_id, `+col+`, role_id, object_type, object_id, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		id, h.ID, roleID, o.Type, o.ID, now, now)
	if IsUniqueViolation(err) {
		return "", fmt.Errorf("role %d on %s %s: %w", roleID, o.Type, o.ID, ErrConflict)
	}
	return id, err
}

// HasGrant reports whether a holder holds a role on an object.
func HasGrant(ctx context.Context, q Querier, h Holder, roleID int64, o Object) (bool, error) {
	table, col := h.table()
	var n int
	err := q.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE `+col+` = ? AND role_id = ? AND object_type = ? AND object_id = ?`,
		h.ID, roleID, o.Type, o.ID).Scan(&n)
	return n > 0, err
}

// DeleteGrant removes a holder's role on an object; none is ErrNotFound.
func DeleteGrant(ctx context.Context, q Querier, h Holder, roleID int64, o Object) error {
	table, col := h.table()
	res, err := q.Exec(ctx, `DELETE FROM `+table+` WHERE `+col+` = ? AND role_id = ? AND object_type = ? AND object_id = ?`, h.ID, roleID, o.Type, o.ID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("role assignment", o.Type+" "+o.ID)
	}
	return nil
}

// DeleteGrantByPulpID removes one of a holder's grants; none is ErrNotFound.
func DeleteGrantByPulpID(ctx context.Context, q Querier, h Holder, id string) error {
	table, col := h.table()
	res, err := q.Exec(ctx, `DELETE FROM `+table+` WHERE `+col+` = ? AND pulp_id = ?`, h.ID, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("role assignment", id)
	}
	return nil
}

// ObjectRole is a role held on one object, with who holds it.
type ObjectRole struct {
	Role   string
	Users  []string
	Groups []string
}

// ObjectRoles lists the roles held on an object, by role name, users and groups sorted.
func ObjectRoles(ctx context.Context, q Querier, o Object) ([]ObjectRole, error) {
	rows, err := q.Query(ctx, `SELECT r.name, u.username, '' FROM user_roles x JOIN roles r ON r.id = x.role_id JOIN users u ON u.id = x.user_id
		WHERE x.object_type = ? AND x.object_id = ?
		UNION ALL SELECT r.name, '', g.name FROM group_roles x JOIN roles r ON r.id = x.role_id JOIN groups g ON g.id = x.group_id
		WHERE x.object_type = ? AND x.object_id = ?`, o.Type, o.ID, o.Type, o.ID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	idx := map[string]int{}
	var out []ObjectRole
	for rows.Next() {
		var role, user, group string
		if err := rows.Scan(&role, &user, &group); err != nil {
			return nil, err
		}
		i, ok := idx[role]
		if !ok {
			i = len(out)
			idx[role] = i
			out = append(out, ObjectRole{Role: role, Users: []string{}, Groups: []string{}})
		}
		if user != "" {
			out[i].Users = append(out[i].Users, user)
		} else {
			out[i].Groups = append(out[i].Groups, group)
		}
	}
	slices.SortFunc(out, func(a, b ObjectRole) int { return strings.Compare(a.Role, b.Role) })
	for i := range out {
		slices.Sort(out[i].Users)
		slices.Sort(out[i].Groups)
	}
	return out, rows.Err()
}

// ForgetGrants removes the roles held on the rows of table that where selects, before
// they are deleted. It matches roles by pulp_id alone: pulp_ids are UUIDs, unique across
// every table.
func ForgetGrants(ctx context.Context, q Querier, table, where string, args ...any) error {
	for _, grants := range []string{"user_roles", "group_roles"} {
		if _, err := q.Exec(ctx, `DELETE FROM `+grants+` WHERE object_id IN (SELECT pulp_id FROM `+table+` WHERE `+where+`)`, args...); err != nil {
			return fmt.Errorf("forget roles held on %s: %w", table, err)
		}
	}
	return nil
}

// Permissions are the permissions a user holds through its roles and its groups' roles
// on every object (o the zero Object) or on one object (not counting those held on
// every object). Each is looked up by its holder: the user's roles, and the roles of
// each of its groups (CROSS JOIN: SQLite reads the user's groups first, not every
// group's roles on every object).
func Permissions(ctx context.Context, q Querier, userID int64, o Object) (map[string]bool, error) {
	rows, err := QueryKept(ctx, q, `SELECT rp.permission FROM user_roles x JOIN role_permissions rp ON rp.role_id = x.role_id
		WHERE x.user_id = ? AND x.object_type = ? AND x.object_id = ?
		UNION SELECT rp.permission FROM group_users gu CROSS JOIN group_roles x JOIN role_permissions rp ON rp.role_id = x.role_id
		WHERE x.group_id = gu.group_id AND gu.user_id = ? AND x.object_type = ? AND x.object_id = ?`, userID, o.Type, o.ID, userID, o.Type, o.ID)
	if err != nil {
		return nil, fmt.Errorf("permissions of user %d: %w", userID, err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out[p] = true
	}
	return out, rows.Err()
}

// Cond is a condition on a list's rows written two equivalent ways, with the same
// arguments: Row checks each row by itself (a correlated subquery: a page read in index
// order stops at its limit), Set matches the rows against a set read once per statement
// (cheaper per row: a count, which checks every row, or a subquery itself read as a set).
// List.AndCond puts each where it is cheaper.
type Cond struct {
	Row, Set string
	Args     []any
	// Narrow marks a condition that narrows a list to what its caller may see (Granted's,
	// and those built of it): Page chooses the form of its page by how many rows it keeps.
	Narrow bool
	// Sparse is the page's form of a condition that does not narrow, where the list's
	// narrowing keeps few rows and the page reads them from the Set forms ("": Row).
	Sparse string
}

// grantWays are the roles through which a user holds a permission on some object of a
// type: roles of its own, and roles of its groups (both empty: on no object).
type grantWays struct{ own, group []int64 }

// readWays asks, for each role carrying perm, whether the user holds it on some object
// of the type, itself or through a group (index seeks).
func readWays(ctx context.Context, q Querier, userID int64, objectType, perm string) (grantWays, error) {
	var w grantWays
	rows, err := QueryKept(ctx, q, `SELECT rp.role_id,
		EXISTS (SELECT 1 FROM user_roles x WHERE x.user_id = ? AND x.role_id = rp.role_id AND x.object_type = ?),
		EXISTS (SELECT 1 FROM group_users gu JOIN group_roles x ON x.group_id = gu.group_id WHERE gu.user_id = ? AND x.role_id = rp.role_id AND x.object_type = ?)
		FROM role_permissions rp WHERE rp.permission = ? ORDER BY rp.role_id`, userID, objectType, userID, objectType, perm)
	if err != nil {
		return w, fmt.Errorf("grants of user %d on %s: %w", userID, objectType, err)
	}
	defer rows.Close()
	for rows.Next() {
		var role int64
		var own, group bool
		if err := rows.Scan(&role, &own, &group); err != nil {
			return w, err
		}
		if own {
			w.own = append(w.own, role)
		}
		if group {
			w.group = append(w.group, role)
		}
	}
	return w, rows.Err()
}

// cond is Grants.Granted written in SQL: on PostgreSQL, and on SQLite for a set too
// large to keep. It names only the ways and the roles that hold some grant of the type
// ("1 = 0" for none), so a user in no group is not matched against group roles. The
// user, the roles and the type are written into the text, not passed as arguments, so
// that PostgreSQL's planner estimates from its statistics how many grants they select,
// and the plan it keeps for the statement is the one it makes for these values: an IN
// subquery of role_permissions it estimated at 26 grants of 3,000, and with arguments
// its generic plan read all the grants before the page's first row (5.2 ms for a page of
// 100 repositories against 0.6 ms walking the repositories in order).
//
// The Set form is an IN list: each role is a range of the (user_id, role_id,
// object_type, object_id) index, read once per statement, and SQLite matches rows
// against the list with a Bloom filter (or, with few grants, seeks the rows the list
// names). The Row form is a correlated EXISTS: one seek of the same index per row and
// role, which costs more over every row but lets a page read in index order stop at its
// limit instead of first reading every grant. For a viewer of 3,000 repositories and
// 1,000 tasks, the count of the repositories took 5.1 ms in the Row form and 3.8 ms in
// the Set form, of the tasks 2.3 and 1.1 ms; a page of 100 repositories 0.3 ms in the
// Row form (docs/benchmarks.md).
//
// On PostgreSQL the Row form's subquery ends in OFFSET 0, which keeps the planner from
// turning it into a join: as a join it read every grant and sorted every row it kept
// before the page's limit (a page of 100 of 1,000 tasks 2.3 ms), where checked row by
// row in the list's order it stops at the limit (0.6 ms). Counts take the Set form.
func (w grantWays) cond(col string, userID int64, objectType string, d Dialect) Cond {
	fence := ""
	if d == Postgres {
		fence = " OFFSET 0"
	}
	var row, set []string
	for _, way := range []struct {
		roles []int64
		from  string
	}{
		{w.own, `user_roles x WHERE x.user_id = %d AND x.role_id IN (%s) AND x.object_type = %s`},
		{w.group, `group_roles x JOIN group_users gu ON gu.group_id = x.group_id WHERE gu.user_id = %d AND x.role_id IN (%s) AND x.object_type = %s`},
	} {
		if len(way.roles) == 0 {
			continue
		}
		ids := make([]string, len(way.roles))
		for i, r := range way.roles {
			ids[i] = strconv.FormatInt(r, 10)
		}
		from := fmt.Sprintf(way.from, userID, strings.Join(ids, ", "), "'"+strings.ReplaceAll(objectType, "'", "''")+"'")
		row = append(row, `EXISTS (SELECT 1 FROM `+from+` AND x.object_id = `+col+fence+`)`)
		set = append(set, col+` IN (SELECT x.object_id FROM `+from+`)`)
	}
	if len(row) == 0 {
		return Cond{Row: "1 = 0", Set: "1 = 0"}
	}
	return Cond{Row: anyOf(row), Set: anyOf(set), Narrow: true}
}

// anyOf is the disjunction of conds.
func anyOf(conds []string) string {
	if len(conds) == 1 {
		return conds[0]
	}
	return "(" + strings.Join(conds, " OR ") + ")"
}

// AccessPolicy is a viewset's stored policy; its JSON members are kept as sent.
type AccessPolicy struct {
	ID              int64
	PulpID          string
	Viewset         string
	Statements      json.RawMessage
	CreationHooks   json.RawMessage
	QuerysetScoping json.RawMessage
	Customized      bool
	Created         int64
	Updated         int64
}

const policyCols = "p.id, p.pulp_id, p.viewset_name, p.statements, p.creation_hooks, p.queryset_scoping, p.customized, p.created, p.updated"

func scanPolicy(r interface{ Scan(...any) error }) (AccessPolicy, error) {
	var p AccessPolicy
	var st, ch, qs string
	err := r.Scan(&p.ID, &p.PulpID, &p.Viewset, &st, &ch, &qs, &p.Customized, &p.Created, &p.Updated)
	p.Statements, p.CreationHooks, p.QuerysetScoping = json.RawMessage(st), json.RawMessage(ch), json.RawMessage(qs)
	return p, err
}

// ListAccessPolicies selects a page of access policies (alias p).
func ListAccessPolicies(ctx context.Context, q Querier, l List) ([]AccessPolicy, int64, error) {
	return Page(ctx, q, policyCols, "access_policies p", "p.viewset_name", l, func(r *sql.Rows) (AccessPolicy, error) { return scanPolicy(r) })
}

// AccessPolicyByPulpID finds a policy by its href UUID.
func AccessPolicyByPulpID(ctx context.Context, q Querier, id string) (AccessPolicy, error) {
	p, err := scanPolicy(q.QueryRow(ctx, "SELECT "+policyCols+" FROM access_policies p WHERE p.pulp_id = ?", id))
	return p, noRows(err, "access policy", id)
}

// UpdateAccessPolicy writes a policy's members and whether it is customized.
func UpdateAccessPolicy(ctx context.Context, q Querier, p AccessPolicy) error {
	_, err := q.Exec(ctx, `UPDATE access_policies SET statements = ?, creation_hooks = ?, queryset_scoping = ?, customized = ?, updated = ? WHERE id = ?`,
		string(p.Statements), rawArray(p.CreationHooks), rawText(p.QuerysetScoping), p.Customized, Now(), p.ID)
	return err
}

// SyncAccessPolicies stores the shipped policies (viewset → policy): missing ones are
// inserted and those not customized are rewritten to the shipped version.
func SyncAccessPolicies(ctx context.Context, tx *Tx, policies map[string]AccessPolicy) error {
	have, _, err := ListAccessPolicies(ctx, tx, List{})
	if err != nil {
		return err
	}
	byName := map[string]AccessPolicy{}
	for _, p := range have {
		byName[p.Viewset] = p
	}
	now := Now()
	for name, want := range policies {
		got, ok := byName[name]
		switch {
		case !ok:
			_, err = tx.Exec(ctx, `INSERT INTO access_policies (pulp_id, viewset_name, statements, creation_hooks, queryset_scoping, customized, created, updated)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, NewID(), name, string(want.Statements), rawArray(want.CreationHooks), rawText(want.QuerysetScoping), false, now, now)
		case !got.Customized && !(jsonEqual(got.Statements, want.Statements) && jsonEqual(got.CreationHooks, rawArrayJSON(want.CreationHooks)) &&
			jsonEqual(got.QuerysetScoping, rawTextJSON(want.QuerysetScoping))):
			want.ID = got.ID
			err = UpdateAccessPolicy(ctx, tx, want)
		}
		if err != nil {
			return fmt.Errorf("access policy %s: %w", name, err)
		}
	}
	return nil
}

func rawArray(r json.RawMessage) string {
	if len(r) == 0 || string(r) == "null" {
		return "[]"
	}
	return string(r)
}

func rawArrayJSON(r json.RawMessage) json.RawMessage { return json.RawMessage(rawArray(r)) }
func rawTextJSON(r json.RawMessage) json.RawMessage  { return json.RawMessage(rawText(r)) }

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ax, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return string(ax) == string(by)
}

// CreateSession stores a login session (keyHash is the SHA-256 of its cookie).
func CreateSession(ctx context.Context, q Querier, keyHash string, userID int64, csrf string, expires int64) error {
	_, err := q.Exec(ctx, `INSERT INTO sessions (key_hash, user_id, csrf, created, expires) VALUES (?, ?, ?, ?, ?)`, keyHash, userID, csrf, Now(), expires)
	return err
}

// Session finds the live session of a cookie's hash: its user and CSRF token.
func Session(ctx context.Context, q Querier, keyHash string) (userID int64, csrf string, err error) {
	err = q.QueryRow(ctx, `SELECT user_id, csrf FROM sessions WHERE key_hash = ? AND expires > ?`, keyHash, Now()).Scan(&userID, &csrf)
	return userID, csrf, noRows(err, "session", "")
}

// DeleteSession ends a session.
func DeleteSession(ctx context.Context, q Querier, keyHash string) error {
	_, err := q.Exec(ctx, `DELETE FROM sessions WHERE key_hash = ?`, keyHash)
	return err
}

// DeleteExpiredSessions removes sessions past their expiry.
func DeleteExpiredSessions(ctx context.Context, q Querier) error {
	_, err := q.Exec(ctx, `DELETE FROM sessions WHERE expires <= ?`, Now())
	return err
}
