package ansible

import (
	"context"
	"fmt"
	"os"

	"pith/content"
	"pith/content/gitsource"
	"pith/meta"
	"pith/task"
)

// Git sync: a git remote names a repository and a ref; the collection at the root of the
// ref's tree is built as `ansible-galaxy collection build` would build it
// (buildGit) and imported. metadata_only keeps the metadata only: the version
// points at the commit for its artifact, as pulp_ansible's does.

// GitSyncTask is the task name of a git remote's sync, as pulp_ansible names it.
const GitSyncTask = "pulp_ansible.app.tasks.git.synchronize"

// GitSyncArgs are the arguments of a git sync.
type GitSyncArgs struct {
	Repository string `json:"repository"`
	Remote     string `json:"remote"`
	Mirror     bool   `json:"mirror"`
}

func (p *Plugin) runGitSync(ctx context.Context, r *task.Run) error {
	var a GitSyncArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	remote, err := meta.RemoteByPulpID(ctx, p.db, a.Remote)
	if err != nil {
		return err
	}
	cfg, err := content.DownloadConfig(remote)
	if err != nil {
		return fmt.Errorf("remote %q: %w", remote.Name, err)
	}
	ga := decodeAttrs[gitRemoteAttrs](remote.Attrs)
	pc := r.Progress("sync.git.clone", "Cloning Git repository for Collection", 1)
	built, err := buildGit(ctx, gitBuildOptions{Options: gitsource.Options{URL: remote.URL, Ref: ga.GitRef, Remote: cfg},
		MetadataOnly: ga.MetadataOnly})
	if err != nil {
		pc.Finish(err)
		return fmt.Errorf("remote %q: %w", remote.Name, err)
	}
	defer built.Remove()
	pc.Add(1)
	pc.Finish(nil)

	v := built.Version
	c, docs, err := cvUnit(v, nil)
	if err != nil {
		return err
	}
	f := meta.ContentFile{RelativePath: c.RelativePath, RemoteID: &remote.ID, URL: built.RemoteURL, SHA256: v.SHA256}
	size := v.Size
	f.Size = &size
	var art *meta.Artifact
	if built.Path != "" {
		if art, err = p.storeFile(ctx, built.Path, v.SHA256); err != nil {
			return err
		}
	}
	var unit meta.Content
	err = p.db.Tx(ctx, func(tx *meta.Tx) error {
		if art != nil {
			a, _, err := meta.PutArtifact(ctx, tx, *art)
			if err != nil {
				return err
			}
			f.ArtifactID = &a.ID
		}
		var created bool
		unit, created, err = meta.PutContent(ctx, tx, c, []meta.ContentFile{f})
		if err != nil || !created {
			return err
		}
		return meta.PutDocuments(ctx, tx, unit.ID, docs)
	})
	if err != nil {
		return err
	}
	return p.core.NewVersion(ctx, r, a.Repository, meta.Change{RemoveAll: a.Mirror, Add: []int64{unit.ID}})
}

// storeFile stores a local file in the blob store, checked against its digest.
func (p *Plugin) storeFile(ctx context.Context, path, sha256 string) (*meta.Artifact, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a, err := content.StoreFrom(ctx, p.core.Store, f, sha256)
	if err != nil {
		return nil, err
	}
	return &a, nil
}
