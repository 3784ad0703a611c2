package meta_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"pith/meta"
)

// Processes starting at once write the built-in roles at once: each finishes (retrying
// a transaction another's insert made fail), and the roles are there once.
func TestSyncLockedRolesConcurrently(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		roles := map[string]meta.Role{}
		for i := range 40 {
			roles[fmt.Sprintf("pith.role_%d", i)] = meta.Role{Permissions: []string{"core.view_task"}}
		}
		sync1 := func(ctx context.Context) error {
			var err error
			for range 5 {
				err = db.Tx(ctx, func(tx *meta.Tx) error { return meta.SyncLockedRoles(ctx, tx, roles) })
				if !errors.Is(err, meta.ErrConflict) && !meta.IsUniqueViolation(err) {
					return err
				}
			}
			return err
		}
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() { errs[i] = sync1(t.Context()) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		got, n, err := meta.ListRoles(t.Context(), db, meta.List{})
		if err != nil || n != int64(len(roles)) || len(got[0].Permissions) != 1 {
			t.Fatalf("%d roles (%v), want %d", n, err, len(roles))
		}
	})
}
