package content

import (
	"context"
	"errors"
	"fmt"

	"pith/blob"
	"pith/meta"
	"pith/task"
)

// ReclaimTask is Pulp's name of the reclaim_space task.
const ReclaimTask = "pulpcore.app.tasks.reclaim_space.reclaim_space"

// ReclaimArgs are the arguments of the reclaim_space task: repositories and kept
// versions by pulp_id, as the API resolved them.
type ReclaimArgs struct {
	Repositories []string      `json:"repositories"`
	Keep         []VersionArgs `json:"keep,omitempty"`
}

// runReclaim drops the stored files of the units the repositories hold that can be
// fetched again (they have a remote source) and that no other repository and no kept
// version holds; the content app fetches them again on request. As Pulp's, its one
// progress report counts the artifacts whose files were dropped. Repositories deleted
// since the request are skipped.
func (c *Core) runReclaim(ctx context.Context, r *task.Run) error {
	var a ReclaimArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	rc := meta.Reclaim{Before: meta.Now()}
	for _, id := range a.Repositories {
		repo, err := meta.RepositoryByPulpID(ctx, c.DB, id)
		if errors.Is(err, meta.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		rc.Repositories = append(rc.Repositories, repo.ID)
	}
	for _, k := range a.Keep {
		repo, err := meta.RepositoryByPulpID(ctx, c.DB, k.Repository)
		if errors.Is(err, meta.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		rc.Keep = append(rc.Keep, meta.VersionKey{RepositoryID: repo.ID, Number: k.Number})
	}
	for _, k := range c.table.Units() {
		if k.Reclaimable {
			rc.Types = append(rc.Types, k.Type)
		}
	}
	var lost int64
	var digests []string
	err := c.DB.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		lost, digests, err = meta.ReclaimFiles(ctx, tx, rc)
		return err
	})
	if err != nil {
		return err
	}
	c.Invalidate()
	p := r.Progress("reclaim-space.artifact", "Reclaim disk space", lost)
	for _, d := range digests {
		// Check again: a sync or an upload may have recorded the digest anew meanwhile.
		if _, err := meta.ArtifactBySHA256(ctx, c.DB, d); !errors.Is(err, meta.ErrNotFound) {
			continue
		}
		if err := c.Store.Delete(ctx, d); err != nil && !errors.Is(err, blob.ErrNotFound) {
			return fmt.Errorf("delete reclaimed blob %s: %w", d, err)
		}
		p.Add(1)
	}
	p.Finish(nil)
	return nil
}
