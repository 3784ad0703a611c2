package rpm

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"pith/meta"
	"pith/task"
)

// PruneTask removes old versions of packages from a repository's latest version.
const PruneTask = "pulp_rpm.app.tasks.prune.prune_packages"

// PruneArgs are the arguments of a prune task (one repository).
type PruneArgs struct {
	Repository string `json:"repository"`
	KeepDays   int64  `json:"keep_days"`
	DryRun     bool   `json:"dry_run"`
}

type pruneCandidate struct {
	id                                  int64
	name, arch, epoch, version, release string
	added                               int64 // µs: when the version that added it was made
}

// runPrune makes a new version without the packages that have a newer version of the
// same name and arch in the repository and were added more than KeepDays ago (0: keep
// only the newest of each). With DryRun it only reports what it would remove.
func (p *Plugin) runPrune(ctx context.Context, r *task.Run) error {
	var a PruneArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	repo, err := meta.RepositoryByPulpID(ctx, p.db, a.Repository)
	if err != nil {
		return err
	}
	n := repo.LatestVersion
	rows, err := p.db.Query(ctx, `SELECT c.id, c.attrs, v.created FROM contents c
		JOIN repository_content rc ON rc.content_id = c.id AND rc.repository_id = ?
		JOIN repository_versions v ON v.repository_id = rc.repository_id AND v.number = rc.version_added
		WHERE c.type = ? AND `+meta.InVersion("rc", "?"),
		repo.ID, PackageType, n, n)
	if err != nil {
		return err
	}
	newest := map[string]*pruneCandidate{}
	var all []*pruneCandidate
	for rows.Next() {
		var c pruneCandidate
		var attrs string
		if err := rows.Scan(&c.id, &attrs, &c.added); err != nil {
			rows.Close()
			return err
		}
		var pk struct{ Name, Arch, Epoch, Version, Release string }
		if err := json.Unmarshal([]byte(attrs), &pk); err != nil {
			rows.Close()
			return fmt.Errorf("package unit %d: %w", c.id, err)
		}
		c.name, c.arch, c.epoch, c.version, c.release = pk.Name, pk.Arch, pk.Epoch, pk.Version, pk.Release
		all = append(all, &c)
		key := c.name + "." + c.arch
		if cur := newest[key]; cur == nil || compareEVR(c.epoch, c.version, c.release, cur.epoch, cur.version, cur.release) > 0 {
			newest[key] = &c
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	cutoff := time.Now().Add(-time.Duration(a.KeepDays) * 24 * time.Hour).UnixMicro()
	var prune []int64
	for _, c := range all {
		if newest[c.name+"."+c.arch] != c && c.added < cutoff {
			prune = append(prune, c.id)
		}
	}
	prog := r.Progress("prune.packages", fmt.Sprintf("Pruning old Packages of %s", repo.Name), int64(len(prune)))
	if a.DryRun || len(prune) == 0 {
		prog.Finish(nil)
		return nil
	}
	var v meta.Version
	var created bool
	err = p.db.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		v, created, err = meta.NewVersion(ctx, tx, repo.ID, meta.Change{Remove: prune})
		return err
	})
	if err != nil {
		prog.Finish(err)
		return err
	}
	prog.Add(int64(len(prune)))
	prog.Finish(nil)
	if !created {
		return nil
	}
	p.core.Invalidate()
	return p.core.VersionMade(ctx, r, repo, v)
}
