package content

import (
	"context"
	"fmt"
	"strings"

	"pith/api/href"
	"pith/meta"
	"pith/task"
)

// Task names of the generic repository-version tasks, as Pulp names them.
const (
	ModifyTask        = "pulpcore.app.tasks.repository.add_and_remove"
	DeleteVersionTask = "pulpcore.app.tasks.repository.delete_version"
	RepairTask        = "pulpcore.app.tasks.repository.repair_version"
)

// NewVersion writes a new version of a repository (the change applied to its latest
// version, or to ch.Base) and, when it changed anything, reports it as the task's and
// applies the repository's retention and autopublish (VersionMade).
func (c *Core) NewVersion(ctx context.Context, r *task.Run, repoID string, ch meta.Change) error {
	repo, err := meta.RepositoryByPulpID(ctx, c.DB, repoID)
	if err != nil {
		return err
	}
	var v meta.Version
	var created bool
	ch.Finalize = c.Finalize
	err = c.DB.Tx(ctx, func(tx *meta.Tx) error {
		v, created, err = meta.NewVersion(ctx, tx, repo.ID, ch)
		return err
	})
	if err != nil {
		return fmt.Errorf("new version of repository %q: %w", repo.Name, err)
	}
	if !created {
		return nil
	}
	c.Invalidate()
	return c.VersionMade(ctx, r, repo, v)
}

// Finalize applies every type's Finalizer to versions being made (meta.Change's
// Finalize); every new version goes through it.
func (c *Core) Finalize(ctx context.Context, tx *meta.Tx, next map[int64]int64, removed map[int64]map[string]int64) (bool, error) {
	more := false
	for _, t := range c.types {
		if f, ok := t.(Finalizer); ok {
			m, err := f.Finalize(ctx, tx, next, removed)
			if err != nil {
				return false, err
			}
			more = more || m
		}
	}
	return more, nil
}

// VersionMade is what follows every new version, whoever made it (a modify, a sync, an
// upload, a copy), once the caller has told the content app (Invalidate) after its
// transaction: the task reports the version as created, the repository's type publishes
// it when the repository has autopublish, and the repository's retain_repo_versions
// deletes the versions beyond its limit.
func (c *Core) VersionMade(ctx context.Context, r *task.Run, repo meta.Repository, v meta.Version) error {
	r.Created(href.Version(repo.Type, repo.PulpID, v.Number))
	if settingsOf(repo).Autopublish {
		t, ok := c.TypeOf(repo.Type)
		if ap, can := t.(Autopublisher); ok && can {
			pub, err := ap.Autopublish(ctx, r, repo, v)
			if err != nil {
				return fmt.Errorf("autopublish version %d of repository %q: %w", v.Number, repo.Name, err)
			}
			r.Created(href.Publication(pub.Type, pub.PulpID))
			c.Invalidate()
		}
	}
	if repo.RetainVersions != nil {
		n, err := c.Retain(ctx, repo, *repo.RetainVersions)
		if err != nil {
			return fmt.Errorf("retain_repo_versions of repository %q: %w", repo.Name, err)
		}
		if n > 0 {
			c.Invalidate()
		}
	}
	return nil
}

// Retain deletes a repository's versions beyond the newest keep, as Pulp's
// retain_repo_versions does: versions that are served (a distribution's publication, or
// what a distribution of the repository serves) are protected and not counted; version
// 0 is a version like the others. It returns how many it deleted.
func (c *Core) Retain(ctx context.Context, repo meta.Repository, keep int64) (int, error) {
	protected, err := meta.ProtectedVersions(ctx, c.DB, repo.ID, meta.Now())
	if err != nil {
		return 0, err
	}
	vs, _, err := meta.ListVersions(ctx, c.DB, meta.List{Where: []string{"v.repository_id = ?"}, Args: []any{repo.ID}, OrderBy: "v.number DESC"})
	if err != nil {
		return 0, err
	}
	var kept int64
	deleted := 0
	for _, v := range vs {
		if protected[v.Number] {
			continue
		}
		if kept < keep {
			kept++
			continue
		}
		if err := c.DB.Tx(ctx, func(tx *meta.Tx) error { return meta.DeleteVersion(ctx, tx, v) }); err != nil {
			return deleted, fmt.Errorf("delete version %d: %w", v.Number, err)
		}
		deleted++
	}
	return deleted, nil
}

// ModifyArgs are the arguments of the add_and_remove task.
type ModifyArgs struct {
	Repository string  `json:"repository"`
	Add        []int64 `json:"add"`
	Remove     []int64 `json:"remove"`
	RemoveAll  bool    `json:"remove_all"`
	// Base is the number of the version the change applies to, of BaseRepository when
	// that is set (Pulp's base_version may name another repository's version).
	Base           *int64 `json:"base"`
	BaseRepository string `json:"base_repository,omitempty"`
	// Overwrite false fails the task when an added unit would replace one with the same
	// repo key (Pulp's overwrite; nil is true).
	Overwrite *bool `json:"overwrite,omitempty"`
}

func (c *Core) runModify(ctx context.Context, r *task.Run) error {
	var a ModifyArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	ch := meta.Change{Base: a.Base, RemoveAll: a.RemoveAll, Remove: a.Remove, Add: a.Add}
	repo, err := meta.RepositoryByPulpID(ctx, c.DB, a.Repository)
	if err != nil {
		return err
	}
	against, n := repo, repo.LatestVersion // what the change applies to
	if a.Base != nil {
		against, n = repo, *a.Base
		if a.BaseRepository != "" && a.BaseRepository != a.Repository {
			if against, err = meta.RepositoryByPulpID(ctx, c.DB, a.BaseRepository); err != nil {
				return fmt.Errorf("base version's repository: %w", err)
			}
			ch.BaseRepository = against.ID
		}
	}
	if a.Overwrite != nil && !*a.Overwrite && !a.RemoveAll && len(a.Add) > 0 {
		if err := c.checkOverwrite(ctx, against, n, a.Add, a.Remove); err != nil {
			return err
		}
	}
	return c.NewVersion(ctx, r, a.Repository, ch)
}

// VersionArgs name one repository version for the delete and repair tasks.
type VersionArgs struct {
	Repository      string `json:"repository"`
	Number          int64  `json:"number"`
	VerifyChecksums bool   `json:"verify_checksums,omitempty"`
}

func (c *Core) runDeleteVersion(ctx context.Context, r *task.Run) error {
	var a VersionArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	repo, err := meta.RepositoryByPulpID(ctx, c.DB, a.Repository)
	if err != nil {
		return err
	}
	err = c.DB.Tx(ctx, func(tx *meta.Tx) error {
		v, err := meta.VersionByNumber(ctx, tx, repo.ID, a.Number)
		if err != nil {
			return err
		}
		return meta.DeleteVersion(ctx, tx, v)
	})
	if err == nil {
		c.Invalidate()
	}
	return err
}

// checkOverwrite fails, as Pulp's overwrite=false does, when adding the units add to
// version n of a repository would replace units of it (other than those in remove).
func (c *Core) checkOverwrite(ctx context.Context, repo meta.Repository, n int64, add, remove []int64) error {
	os, err := meta.Overwrites(ctx, c.DB, repo.ID, n, add, remove)
	if err != nil || len(os) == 0 {
		return err
	}
	pairs := make([]string, len(os))
	for i, o := range os {
		pairs[i] = o.Incoming + "->" + o.Exists
	}
	return fmt.Errorf("[PLP0023] Content overwrite rejected: new content of type '%s' would overwrite %d existing content unit(s) "+
		"in the repository with the same unique key. Conflicting content (incoming->existing): [%s]", os[0].Type, len(os), strings.Join(pairs, ", "))
}
