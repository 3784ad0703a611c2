package content

import (
	"context"
	"fmt"

	"pith/api/rest"
	"pith/meta"
	"pith/task"
)

// BulkModifyTask adds and removes units in a batch of repositories, one new version each,
// all in one transaction (pith's bulk_modify, beyond Pulp's API).
const BulkModifyTask = "pith.app.tasks.repository.bulk_modify"

// BulkModifyArgs are the arguments of one bulk_modify task: its batch of repositories
// (UUIDs) and the change made to each.
type BulkModifyArgs struct {
	Repositories []string `json:"repositories"`
	Add          []int64  `json:"add"`
	Remove       []int64  `json:"remove"`
	RemoveAll    bool     `json:"remove_all"`
}

// runBulkModify makes one new version per repository of its batch in one transaction,
// then reports each and applies its repository's retention and autopublish.
func (c *Core) runBulkModify(ctx context.Context, r *task.Run) error {
	var a BulkModifyArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	return c.BulkChange(ctx, r, a.Repositories, meta.Change{RemoveAll: a.RemoveAll, Remove: a.Remove, Add: a.Add})
}

// BulkChange makes the version ch makes of each repository (UUIDs) in one transaction,
// set-based (meta.NewVersions), then reports each version and applies its repository's
// retention and autopublish. The task holds the repositories' locks.
func (c *Core) BulkChange(ctx context.Context, r *task.Run, repos []string, ch meta.Change) error {
	byID := map[string]meta.Repository{}
	for start := 0; start < len(repos); start += 500 {
		part := repos[start:min(start+500, len(repos))]
		got, _, err := meta.ListRepositories(ctx, c.DB, meta.List{Where: []string{"r.pulp_id IN " + rest.Placeholders(len(part))}, Args: rest.Args(part)})
		if err != nil {
			return err
		}
		for _, repo := range got {
			byID[repo.PulpID] = repo
		}
	}
	ids := make([]int64, 0, len(repos))
	byRepo := map[int64]meta.Repository{}
	for _, id := range repos {
		repo, ok := byID[id]
		if !ok {
			return fmt.Errorf("repository %s: %w (deleted after the request)", id, meta.ErrNotFound)
		}
		ids = append(ids, repo.ID)
		byRepo[repo.ID] = repo
	}
	p := r.Progress("bulk_modify.repositories", "Adding and removing content in repositories", int64(len(ids)))
	var versions []meta.Version
	ch.Finalize = c.Finalize
	err := c.DB.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		versions, err = meta.NewVersions(ctx, tx, ids, ch)
		return err
	})
	if err != nil {
		p.Finish(err)
		return err
	}
	p.Add(int64(len(ids)))
	if len(versions) > 0 {
		c.Invalidate()
	}
	for _, v := range versions {
		if err := c.VersionMade(ctx, r, byRepo[v.RepositoryID], v); err != nil {
			p.Finish(err)
			return err
		}
	}
	p.Finish(nil)
	return nil
}
