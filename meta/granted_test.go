package meta_test

import (
	"context"
	"slices"
	"testing"

	"pith/meta"
)

// A list narrowed by Granted shows a user the objects it holds the permission on, through
// a role of its own or of one of its groups, and nothing held only with another
// permission, on an object of another type, or by someone else; a user with no such
// role sees nothing.
func TestGranted(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		var users []meta.User
		for _, name := range []string{"ann", "bob", "cid", "dan"} {
			u, err := meta.CreateUser(ctx, db, meta.User{Username: name, Active: true})
			must(err)
			users = append(users, u)
		}
		ann, bob, cid, dan := users[0].ID, users[1].ID, users[2].ID, users[3].ID
		viewer, err := meta.CreateRole(ctx, db, meta.Role{Name: "viewer", Permissions: []string{"file.view_filerepository"}})
		must(err)
		// Two roles carrying the permission: a holder of either sees the object once.
		owner, err := meta.CreateRole(ctx, db, meta.Role{Name: "owner", Permissions: []string{"file.view_filerepository", "file.delete_filerepository"}})
		must(err)
		deleter, err := meta.CreateRole(ctx, db, meta.Role{Name: "deleter", Permissions: []string{"file.delete_filerepository"}})
		must(err)
		team, err := meta.CreateGroup(ctx, db, "team")
		must(err)
		must(meta.AddGroupUser(ctx, db, team.ID, bob))
		repos := map[string]string{} // name -> pulp_id
		for _, name := range []string{"direct", "both", "group", "other-perm", "other-type", "cids", "none"} {
			r, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: name})
			must(err)
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
			must(err)
		}
		for _, perRow := range []bool{false, true} {
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
				cond, args, err := meta.Granted(ctx, db, "r.pulp_id", tc.user, "file.filerepository", "file.view_filerepository", perRow)
				must(err)
				l.And(cond, args...)
				got, n, err := meta.ListRepositories(ctx, db, l)
				must(err)
				var names []string
				for _, r := range got {
					names = append(names, r.Name)
				}
				slices.Sort(names)
				if !slices.Equal(names, tc.want) || n != int64(len(tc.want)) {
					t.Errorf("perRow %v: user %d sees %v (count %d), want %v", perRow, tc.user, names, n, tc.want)
				}
			}
		}
	})
}
