package meta

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"pith/internal/testpg"
)

// Every change to what grants what adds to grant_changes in its own transaction: a
// user's or a group's role given or taken, a member added or removed, a role's
// permissions rewritten, and the rows a deleted role, user or group takes with it.
func TestGrantChanges(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testGrantChanges(t, openTest(t)) })
	t.Run("postgres", func(t *testing.T) {
		db, err := Open(context.Background(), testpg.URL(t))
		check(t, err)
		t.Cleanup(func() { db.Close() })
		testGrantChanges(t, db)
	})
}

func testGrantChanges(t *testing.T, db *DB) {
	ctx := context.Background()
	check(t, db.Migrate(ctx))
	changes := func() int64 {
		t.Helper()
		var n int64
		check(t, db.QueryRow(ctx, `SELECT n FROM grant_changes WHERE id = 1`).Scan(&n))
		return n
	}
	ann, err := CreateUser(ctx, db, User{Username: "ann", Active: true})
	check(t, err)
	bob, err := CreateUser(ctx, db, User{Username: "bob", Active: true})
	check(t, err)
	team, err := CreateGroup(ctx, db, "team")
	check(t, err)
	role, err := CreateRole(ctx, db, Role{Name: "viewer", Permissions: []string{"file.view_filerepository"}})
	check(t, err)
	other, err := CreateRole(ctx, db, Role{Name: "other", Permissions: []string{"file.view_filerepository"}})
	check(t, err)
	repo := Object{Type: "file.filerepository", ID: NewID()}
	for _, c := range []struct {
		what   string
		change func() error
	}{
		{"a user's role", func() error { _, err := AddGrant(ctx, db, Holder{ID: ann.ID}, role.ID, repo); return err }},
		{"a group's role", func() error { _, err := AddGrant(ctx, db, Holder{Group: true, ID: team.ID}, role.ID, repo); return err }},
		{"a member", func() error { return AddGroupUser(ctx, db, team.ID, ann.ID) }},
		{"a member removed", func() error { return RemoveGroupUser(ctx, db, team.ID, ann.ID) }},
		{"a repository", func() error {
			_, err := CreateRepository(ctx, db, Repository{Type: "file.file", Name: "r"})
			return err
		}},
		{"a role's permissions", func() error {
			role.Permissions = []string{"file.view_filerepository", "file.change_filerepository"}
			return UpdateRole(ctx, db, role)
		}},
		{"a user's role taken", func() error { return DeleteGrant(ctx, db, Holder{ID: ann.ID}, role.ID, repo) }},
		{"a role deleted", func() error {
			if _, err := AddGrant(ctx, db, Holder{ID: bob.ID}, other.ID, repo); err != nil {
				return err
			}
			before := changes()
			if err := DeleteRole(ctx, db, other.ID); err != nil {
				return err
			}
			if changes() <= before {
				t.Error("deleting a role held by a user did not count")
			}
			return nil
		}},
		{"a user deleted", func() error {
			if _, err := AddGrant(ctx, db, Holder{ID: bob.ID}, role.ID, repo); err != nil {
				return err
			}
			before := changes()
			if err := DeleteUser(ctx, db, bob.ID); err != nil {
				return err
			}
			if changes() <= before {
				t.Error("deleting a user holding a role did not count")
			}
			return nil
		}},
		{"a group deleted", func() error {
			if err := AddGroupUser(ctx, db, team.ID, ann.ID); err != nil {
				return err
			}
			before := changes()
			if err := DeleteGroup(ctx, db, team.ID); err != nil {
				return err
			}
			if changes() <= before {
				t.Error("deleting a group did not count")
			}
			return nil
		}},
	} {
		before := changes()
		check(t, c.change())
		if after := changes(); after <= before {
			t.Errorf("%s: grant_changes %d before, %d after", c.what, before, after)
		}
	}
}

// A request reads the counter of grant changes once and takes what is kept at it: a
// user's permissions, its sets of granted objects, the sets of repositories a condition
// selects. A change (a grant, a repository added) makes new ones; a replaced set stays
// known to SQL for its grace, then is forgotten (a query naming it fails, saying so). A
// set over the budget or over its size bound is not kept: Granted writes its SQL forms,
// InRepositories says so.
func TestGrantSets(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	check(t, db.Migrate(ctx))
	g := db.grants
	now := time.Unix(1e9, 0)
	g.now = func() time.Time { return now }
	ann, role, repos := grantFixture(t, db)
	bob, err := CreateUser(ctx, db, User{Username: "bob", Active: true})
	check(t, err)
	grant := func(user int64, id string, o string) {
		t.Helper()
		_, err := AddGrant(ctx, db, Holder{ID: user}, role.ID, Object{Type: o, ID: id})
		check(t, err)
	}
	request := func(user int64) *Grants {
		t.Helper()
		gs, err := UserGrants(ctx, db, user)
		check(t, err)
		return gs
	}
	set := func(user int64) (int64, Cond) {
		t.Helper()
		c, err := request(user).Granted(ctx, "r.pulp_id", "file.filerepository", "file.view_filerepository")
		check(t, err)
		if len(c.Args) != 1 {
			return 0, c
		}
		return c.Args[0].(int64), c
	}
	holds := func(set int64, id string) bool {
		t.Helper()
		v, err := inGrantSet(set, id)
		check(t, err)
		return v.(bool)
	}
	names := func(c Cond) []string {
		t.Helper()
		var l List
		l.AndCond(c)
		rs, _, err := ListRepositories(ctx, db, l)
		check(t, err)
		var out []string
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return out
	}

	grant(ann.ID, repos[0].PulpID, "file.filerepository")
	grant(ann.ID, repos[1].PulpID, "file.filerepository")
	first, c := set(ann.ID)
	if first == 0 || !holds(first, repos[0].PulpID) || !holds(first, repos[1].PulpID) || holds(first, repos[2].PulpID) {
		t.Fatalf("ann's set %d (%q): want repos 0 and 1", first, c.Row)
	}
	if got := names(c); fmt.Sprint(got) != "[r0 r1]" {
		t.Errorf("ann's list: %v, want [r0 r1]", got)
	}
	if again, _ := set(ann.ID); again != first {
		t.Errorf("set read again (%d) with no grant changed: want the kept %d", again, first)
	}
	if _, c := set(bob.ID); c.Row != "1 = 0" {
		t.Errorf("bob's condition %q: want 1 = 0", c.Row)
	}

	// Permissions on every object: kept, and read again after a change.
	if ps, err := request(bob.ID).Permissions(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("bob's permissions %v, %v: want none", ps, err)
	}
	grant(bob.ID, "", "")
	if ps, err := request(bob.ID).Permissions(ctx); err != nil || !ps["file.view_filerepository"] {
		t.Errorf("bob's permissions after a role on every object: %v, %v", ps, err)
	}

	// The repositories a condition selects, as a set of row ids.
	open := Cond{Row: "rr.type = ?", Set: "rr.type = ?", Args: []any{"file.file"}}
	in, ok, err := request(ann.ID).InRepositories(ctx, "r.id", open)
	check(t, err)
	if !ok || fmt.Sprint(names(in)) != "[r0 r1 r2]" {
		t.Errorf("repositories of an open type: %v (kept %v), want r0 r1 r2", names(in), ok)
	}
	_, err = CreateRepository(ctx, db, Repository{Type: "file.file", Name: "r3"})
	check(t, err)
	in, _, err = request(ann.ID).InRepositories(ctx, "r.id", open)
	check(t, err)
	if fmt.Sprint(names(in)) != "[r0 r1 r2 r3]" {
		t.Errorf("after a repository was added: %v, want r0 r1 r2 r3", names(in))
	}
	gs := request(ann.ID)
	granted, err := gs.Granted(ctx, "rr.pulp_id", "file.filerepository", "file.view_filerepository")
	check(t, err)
	in, _, err = gs.InRepositories(ctx, "r.id", granted)
	check(t, err)
	if fmt.Sprint(names(in)) != "[r0 r1]" {
		t.Errorf("repositories granted: %v, want r0 r1", names(in))
	}

	// A change makes a new set; the old one is known for its grace.
	grant(ann.ID, repos[2].PulpID, "file.filerepository")
	second, _ := set(ann.ID)
	if second == first || !holds(second, repos[2].PulpID) {
		t.Errorf("after a grant: set %d, want a new one holding r2", second)
	}
	if !holds(first, repos[0].PulpID) {
		t.Error("the replaced set is forgotten within its grace")
	}
	now = now.Add(grantSetGrace + time.Second)
	grant(bob.ID, repos[0].PulpID, "file.filerepository")
	set(bob.ID) // sweeps
	if _, err := inGrantSet(first, repos[0].PulpID); err == nil || !strings.Contains(err.Error(), errNoSet) {
		t.Errorf("a set past its grace: %v, want %q", err, errNoSet)
	}
	if !holds(second, repos[2].PulpID) {
		t.Error("the kept set was forgotten")
	}

	// Over the budget or the size bound: not kept.
	g.budget = g.held + 1
	grant(ann.ID, NewID(), "file.filerepository")
	if id, c := set(ann.ID); id != 0 || !strings.Contains(c.Row, "EXISTS") {
		t.Errorf("a set over the budget: %d, %q; want the SQL form", id, c.Row)
	}
	if _, ok, err := request(ann.ID).InRepositories(ctx, "r.id", open); ok || err != nil {
		t.Errorf("repositories over the budget: kept %v, %v", ok, err)
	}
	// Each user's condition in SQL has its own text: reading its repositories does not
	// take the store's kept-statement places.
	stmts := db.nRowStmts.Load()
	for _, u := range []int64{ann.ID, bob.ID} {
		gs := request(u)
		c, err := gs.Granted(ctx, "rr.pulp_id", "file.filerepository", "file.view_filerepository")
		check(t, err)
		_, _, err = gs.InRepositories(ctx, "r.id", c)
		check(t, err)
	}
	if n := db.nRowStmts.Load(); n != stmts {
		t.Errorf("kept statements %d → %d after reading two users' repositories", stmts, n)
	}
	g.budget, g.max = grantSetBudget, 2
	if id, _ := set(ann.ID); id != 0 {
		t.Errorf("a set over its size bound was kept (%d)", id)
	}
	g.max = maxGrantSet
	if id, _ := set(ann.ID); id != 0 {
		t.Errorf("a set found too large was read again at the same counter (%d)", id)
	}
	grant(bob.ID, repos[1].PulpID, "file.filerepository")
	if id, _ := set(ann.ID); id == 0 {
		t.Error("a set within bounds was not kept after a change")
	}
}

// A set's bound is on its members, not on the rows that grant them: a user holding two
// roles on each of two repositories and a group's role on a third sees all three
// however the rows come.
func TestGrantSetRepeatedRows(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	check(t, db.Migrate(ctx))
	db.grants.max = 3
	ann, role, repos := grantFixture(t, db)
	owner, err := CreateRole(ctx, db, Role{Name: "owner", Permissions: []string{"file.view_filerepository"}})
	check(t, err)
	team, err := CreateGroup(ctx, db, "team")
	check(t, err)
	check(t, AddGroupUser(ctx, db, team.ID, ann.ID))
	on := func(r Repository) Object { return Object{Type: "file.filerepository", ID: r.PulpID} }
	for _, r := range repos[:2] {
		for _, id := range []int64{role.ID, owner.ID} {
			_, err := AddGrant(ctx, db, Holder{ID: ann.ID}, id, on(r))
			check(t, err)
		}
	}
	_, err = AddGrant(ctx, db, Holder{Group: true, ID: team.ID}, role.ID, on(repos[2]))
	check(t, err)
	gs, err := UserGrants(ctx, db, ann.ID)
	check(t, err)
	c, err := gs.Granted(ctx, "r.pulp_id", "file.filerepository", "file.view_filerepository")
	check(t, err)
	var l List
	l.AndCond(c)
	rs, _, err := ListRepositories(ctx, db, l)
	check(t, err)
	var names []string
	for _, r := range rs {
		names = append(names, r.Name)
	}
	if fmt.Sprint(names) != "[r0 r1 r2]" || len(c.Args) != 1 {
		t.Errorf("ann sees %v (condition %q): want [r0 r1 r2] from a kept set", names, c.Row)
	}
}

// When the budget is spent, a new set is not kept and the fresh entries stay: only
// entries made stale by a change are evicted.
func TestGrantSetBudgetKeepsFresh(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	check(t, db.Migrate(ctx))
	g := db.grants
	ann, role, repos := grantFixture(t, db)
	bob, err := CreateUser(ctx, db, User{Username: "bob", Active: true})
	check(t, err)
	for _, u := range []int64{ann.ID, bob.ID} {
		_, err := AddGrant(ctx, db, Holder{ID: u}, role.ID, Object{Type: "file.filerepository", ID: repos[0].PulpID})
		check(t, err)
	}
	granted := func(user int64) Cond {
		t.Helper()
		gs, err := UserGrants(ctx, db, user)
		check(t, err)
		c, err := gs.Granted(ctx, "r.pulp_id", "file.filerepository", "file.view_filerepository")
		check(t, err)
		return c
	}
	if c := granted(ann.ID); len(c.Args) != 1 {
		t.Fatalf("ann's set not kept: %q", c.Row)
	}
	kept := len(g.kept)
	g.budget = g.held // full
	if c := granted(bob.ID); len(c.Args) != 0 {
		t.Errorf("bob's set kept over the budget: %q", c.Row)
	}
	if len(g.kept) != kept || g.kept[grantKey{user: ann.ID, objectType: "file.filerepository", perm: "file.view_filerepository"}] == nil {
		t.Errorf("kept entries %d, want the %d fresh ones, ann's among them", len(g.kept), kept)
	}
}

// On PostgreSQL the repositories a condition selects are kept as an array constant:
// the condition lists them, and a repository added is in the next request's.
func TestInRepositoriesPostgres(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, testpg.URL(t))
	check(t, err)
	t.Cleanup(func() { db.Close() })
	check(t, db.Migrate(ctx))
	ann, role, repos := grantFixture(t, db)
	_, err = AddGrant(ctx, db, Holder{ID: ann.ID}, role.ID, Object{Type: "file.filerepository", ID: repos[1].PulpID})
	check(t, err)
	names := func() string {
		t.Helper()
		gs, err := UserGrants(ReadsOnly(ctx), db, ann.ID)
		check(t, err)
		granted, err := gs.Granted(ctx, "rr.pulp_id", "file.filerepository", "file.view_filerepository")
		check(t, err)
		in, ok, err := gs.InRepositories(ctx, "r.id", Cond{Row: "(rr.type = ? OR " + granted.Row + ")", Set: "(rr.type = ? OR " + granted.Set + ")",
			Args: append([]any{"rpm.rpm"}, granted.Args...)})
		check(t, err)
		if !ok || !strings.Contains(in.Row, "ANY('{") {
			t.Fatalf("not kept as an array constant: %v %q", ok, in.Row)
		}
		var l List
		l.AndCond(in)
		rs, _, err := ListRepositories(ctx, db, l)
		check(t, err)
		var out []string
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return fmt.Sprint(out)
	}
	if got := names(); got != "[r1]" {
		t.Errorf("granted r1: %s", got)
	}
	_, err = CreateRepository(ctx, db, Repository{Type: "rpm.rpm", Name: "r3"})
	check(t, err)
	if got := names(); got != "[r1 r3]" {
		t.Errorf("after an rpm repository was added: %s, want [r1 r3]", got)
	}
}

// grantFixture makes a user ann, a role viewing file repositories, and three file
// repositories r0, r1 and r2.
func grantFixture(t *testing.T, db *DB) (User, Role, []Repository) {
	t.Helper()
	ctx := context.Background()
	ann, err := CreateUser(ctx, db, User{Username: "ann", Active: true})
	check(t, err)
	role, err := CreateRole(ctx, db, Role{Name: "viewer", Permissions: []string{"file.view_filerepository"}})
	check(t, err)
	var repos []Repository
	for _, name := range []string{"r0", "r1", "r2"} {
		r, err := CreateRepository(ctx, db, Repository{Type: "file.file", Name: name})
		check(t, err)
		repos = append(repos, r)
	}
	return ann, role, repos
}
