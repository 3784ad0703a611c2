package meta_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"pith/meta"
)

// A list narrowed by Grants.Granted shows a user the objects it holds the permission on, through
// a role of its own or of one of its groups, and nothing held only with another
// permission, on an object of another type, or by someone else; a user with no such
// role sees nothing. On SQLite both ways: matched against the kept sets, and by the SQL
// forms PostgreSQL uses.
func TestGranted(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		testGranted(t, db)
		if db.Dialect() == meta.SQLite {
			t.Run("SQL forms", func(t *testing.T) {
				db := Open(t, filepath.Join(t.TempDir(), "pith.db"))
				meta.NoGrantSets(db)
				testGranted(t, db)
			})
		}
	})
}

func testGranted(t *testing.T, db *meta.DB) {
	ctx := context.Background()
	var users []meta.User
	for _, name := range []string{"ann", "bob", "cid", "dan"} {
		u, err := meta.CreateUser(ctx, db, meta.User{Username: name, Active: true})
		noErr(t, err)
		users = append(users, u)
	}
	ann, bob, cid, dan := users[0].ID, users[1].ID, users[2].ID, users[3].ID
	viewer, err := meta.CreateRole(ctx, db, meta.Role{Name: "viewer", Permissions: []string{"file.view_filerepository"}})
	noErr(t, err)
	// Two roles carrying the permission: a holder of either sees the object once.
	owner, err := meta.CreateRole(ctx, db, meta.Role{Name: "owner", Permissions: []string{"file.view_filerepository", "file.delete_filerepository"}})
	noErr(t, err)
	deleter, err := meta.CreateRole(ctx, db, meta.Role{Name: "deleter", Permissions: []string{"file.delete_filerepository"}})
	noErr(t, err)
	team, err := meta.CreateGroup(ctx, db, "team")
	noErr(t, err)
	noErr(t, meta.AddGroupUser(ctx, db, team.ID, bob))
	repos := map[string]string{} // name -> pulp_id
	for _, name := range []string{"direct", "both", "group", "other-perm", "other-type", "cids", "none"} {
		r, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: name})
		noErr(t, err)
		repos[name] = r.PulpID
	}
	on := func(name string) meta.Object { return meta.Object{Type: "file.filerepository", ID: repos[name]} }
	for _, g := range []struct {
		h    meta.Holder
		role int64
		o    meta.Object
	}{
		{meta.Holder{ID: ann}, viewer.ID, on("direct")},
		{meta.Holder{ID: ann}, viewer.ID, on("both")},
		{meta.Holder{ID: ann}, owner.ID, on("both")},
		{meta.Holder{Group: true, ID: team.ID}, owner.ID, on("group")},
		{meta.Holder{Group: true, ID: team.ID}, viewer.ID, on("both")},
		{meta.Holder{ID: ann}, deleter.ID, on("other-perm")},
		{meta.Holder{ID: ann}, viewer.ID, meta.Object{Type: "rpm.rpmrepository", ID: repos["other-type"]}},
		{meta.Holder{ID: cid}, viewer.ID, on("cids")},
	} {
		_, err := meta.AddGrant(ctx, db, g.h, g.role, g.o)
		noErr(t, err)
	}
	// Each form alone, and the page in the Row form with the count in the Set form.
	forms := map[string]func(*meta.List, meta.Cond){
		"row":  func(l *meta.List, c meta.Cond) { l.And(c.Row, c.Args...) },
		"set":  func(l *meta.List, c meta.Cond) { l.And(c.Set, c.Args...) },
		"both": (*meta.List).AndCond,
		"both, after a condition of its own": func(l *meta.List, c meta.Cond) {
			l.And("r.name <> ?", "none")
			l.AndCond(c)
		},
	}
	for form, and := range forms {
		for _, tc := range []struct {
			user int64
			want []string
		}{
			{ann, []string{"both", "direct"}},
			{bob, []string{"both", "group"}},
			{cid, []string{"cids"}},
			{dan, nil},
		} {
			var l meta.List
			grants, err := meta.UserGrants(ctx, db, tc.user)
			noErr(t, err)
			cond, err := grants.Granted(ctx, "r.pulp_id", "file.filerepository", "file.view_filerepository")
			noErr(t, err)
			and(&l, cond)
			got, n, err := meta.ListRepositories(ctx, db, l)
			noErr(t, err)
			names := repoNames(got)
			slices.Sort(names)
			if !slices.Equal(names, tc.want) || n != int64(len(tc.want)) {
				t.Errorf("%s form: user %d sees %v (count %d), want %v", form, tc.user, names, n, tc.want)
			}
		}
	}
}

// A list's count takes the Set form of a condition added by AndCond and its page the Row
// form, each with the arguments in their places among the list's other conditions. (The
// page is full, so the count is asked of the database.)
func TestAndCond(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		for _, name := range []string{"a", "b", "c"} {
			if _, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: name}); err != nil {
				t.Fatal(err)
			}
		}
		l := meta.List{Limit: 1}
		l.And("r.name <> ?", "c")
		l.AndCond(meta.Cond{Row: "r.name <> ?", Set: "r.name >= ?", Args: []any{"a"}})
		l.And("r.type = ?", "file.file")
		got, n, err := meta.ListRepositories(ctx, db, l)
		if err != nil {
			t.Fatal(err)
		}
		names := repoNames(got)
		if !slices.Equal(names, []string{"b"}) || n != 2 {
			t.Errorf("page %v, count %d; want the page [b] (Row form) and the count 2 (Set form: a, b)", names, n)
		}
	})
}

// A list's count is exact wherever its page falls: a page that ends the list counts it
// from its own rows, one that does not (or an offset past the end) asks the database.
func TestPageCount(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		for _, name := range []string{"a", "b", "c", "x"} {
			if _, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: name}); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			limit, offset int
			want          []string
		}{
			{0, 0, []string{"a", "b", "c"}},
			{2, 0, []string{"a", "b"}},
			{3, 0, []string{"a", "b", "c"}},
			{5, 0, []string{"a", "b", "c"}},
			{2, 2, []string{"c"}},
			{2, 1, []string{"b", "c"}},
			{2, 3, nil},
			{2, 9, nil},
			{0, 2, []string{"c"}},
			{0, 9, nil},
		} {
			l := meta.List{Limit: tc.limit, Offset: tc.offset}
			l.And("r.name <> ?", "x")
			got, n, err := meta.ListRepositories(ctx, db, l)
			if err != nil {
				t.Fatal(err)
			}
			names := repoNames(got)
			if !slices.Equal(names, tc.want) || n != 3 {
				t.Errorf("limit %d offset %d: page %v, count %d; want %v, count 3", tc.limit, tc.offset, names, n, tc.want)
			}
		}
	})
}

func repoNames(rs []meta.Repository) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

// The page of a narrowed list (a condition marked Narrow) takes the Row forms where the
// list without its narrowing has at most four times as many rows as with it, and
// otherwise the narrowing conditions' Set forms and the others' Sparse forms; its count
// takes the Set forms either way. (The forms below differ on purpose, so that the page
// shows which were used.)
func TestNarrowedPage(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		for i := range 10 {
			if _, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: fmt.Sprintf("r%d", i)}); err != nil {
				t.Fatal(err)
			}
		}
		list := func(upTo string, limit, offset int) meta.List {
			l := meta.List{Limit: limit, Offset: offset}
			l.And("r.name <> ?", "r9")
			l.AndCond(meta.Cond{Row: "r.name > ?", Set: "r.name <= ?", Args: []any{upTo}, Narrow: true})
			l.AndCond(meta.Cond{Row: "r.name <> ?", Set: "r.name <> ?", Sparse: "r.name >= ?", Args: []any{"r0"}})
			return l
		}
		for _, tc := range []struct {
			upTo          string
			limit, offset int
			want          []string
			count         int64
		}{
			// r1 of the 8 rows (r1..r8) is kept: the Set and Sparse forms.
			{"r1", 3, 0, []string{"r0", "r1"}, 1},
			// r1..r4 of the 8 are kept: the Row forms.
			{"r4", 3, 0, []string{"r5", "r6", "r7"}, 4},
			{"r4", 3, 2, []string{"r7", "r8"}, 4},
			// r1 and r2 of 8: exactly one in four, still the Row forms.
			{"r2", 2, 0, []string{"r3", "r4"}, 2},
			// No limit: the whole list from the Set forms.
			{"r4", 0, 0, []string{"r0", "r1", "r2", "r3", "r4"}, 4},
			// An offset at or past the count: no page.
			{"r4", 3, 4, nil, 4},
			{"r00", 3, 0, nil, 0},
		} {
			got, n, err := meta.ListRepositories(ctx, db, list(tc.upTo, tc.limit, tc.offset))
			if err != nil {
				t.Fatal(err)
			}
			if names := repoNames(got); !slices.Equal(names, tc.want) || n != tc.count {
				t.Errorf("kept up to %s, limit %d offset %d: page %v, count %d; want %v, count %d", tc.upTo, tc.limit, tc.offset, names, n, tc.want, tc.count)
			}
		}
	})
}

// Permissions are what a user holds on every object, or on one object, through its own
// roles and its groups' roles: not another object's, not another user's or another
// group's, and on one object not those held on every object.
func TestPermissions(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		var users []int64
		for _, name := range []string{"ann", "bob"} {
			u, err := meta.CreateUser(ctx, db, meta.User{Username: name, Active: true})
			noErr(t, err)
			users = append(users, u.ID)
		}
		ann, bob := users[0], users[1]
		role := func(name string, perms ...string) int64 {
			r, err := meta.CreateRole(ctx, db, meta.Role{Name: name, Permissions: perms})
			noErr(t, err)
			return r.ID
		}
		own, ownObj, grp, grpObj, other := role("own", "p.own"), role("own-obj", "p.own_obj"), role("grp", "p.grp"), role("grp-obj", "p.grp_obj"), role("other", "p.other")
		team, err := meta.CreateGroup(ctx, db, "team")
		noErr(t, err)
		outsiders, err := meta.CreateGroup(ctx, db, "outsiders")
		noErr(t, err)
		noErr(t, meta.AddGroupUser(ctx, db, team.ID, ann))
		noErr(t, meta.AddGroupUser(ctx, db, outsiders.ID, bob))
		obj := meta.Object{Type: "file.filerepository", ID: "r1"}
		for _, g := range []struct {
			h    meta.Holder
			role int64
			o    meta.Object
		}{
			{meta.Holder{ID: ann}, own, meta.Object{}},
			{meta.Holder{ID: ann}, ownObj, obj},
			{meta.Holder{Group: true, ID: team.ID}, grp, meta.Object{}},
			{meta.Holder{Group: true, ID: team.ID}, grpObj, obj},
			{meta.Holder{ID: ann}, other, meta.Object{Type: "file.filerepository", ID: "r2"}},
			{meta.Holder{ID: bob}, other, meta.Object{}},
			{meta.Holder{Group: true, ID: outsiders.ID}, other, obj},
		} {
			_, err := meta.AddGrant(ctx, db, g.h, g.role, g.o)
			noErr(t, err)
		}
		for _, tc := range []struct {
			user int64
			o    meta.Object
			want []string
		}{
			{ann, meta.Object{}, []string{"p.grp", "p.own"}},
			{ann, obj, []string{"p.grp_obj", "p.own_obj"}},
			{bob, meta.Object{}, []string{"p.other"}},
			{bob, meta.Object{Type: "file.filerepository", ID: "r2"}, nil},
		} {
			got, err := meta.Permissions(ctx, db, tc.user, tc.o)
			noErr(t, err)
			names := slices.Sorted(maps.Keys(got))
			if !slices.Equal(names, tc.want) {
				t.Errorf("user %d on %v: %v, want %v", tc.user, tc.o, names, tc.want)
			}
		}
	})
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
