package file

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"pith/content"
	"pith/content/download"
	"pith/meta"
	"pith/task"
)

// entryResult is what a sync learned about one manifest line.
type entryResult struct {
	Entry
	artifact *meta.Artifact // stored (immediate, or already present)
	url      string         // where the file comes from; "" for none the remote can give again
}

func (p *Plugin) runSync(ctx context.Context, r *task.Run) error {
	var a SyncArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	repo, err := meta.RepositoryByPulpID(ctx, p.core.DB, a.Repository)
	if err != nil {
		return err
	}
	remote, err := meta.RemoteByPulpID(ctx, p.core.DB, a.Remote)
	if err != nil {
		return err
	}
	if remote.Type == GitRemoteType {
		return p.syncGit(ctx, r, repo, remote, a.Mirror)
	}
	d, err := content.Downloader(remote)
	if err != nil {
		return err
	}

	// 1. The manifest, staged to a temporary file while it is hashed.
	pm := r.Progress("sync.downloading.metadata", "Downloading Metadata Files", 1)
	mf, digest, err := p.fetchManifest(ctx, d, remote.URL)
	if err != nil {
		pm.Finish(err)
		return err
	}
	defer mf.Close()
	pm.Add(1)
	pm.Finish(nil)

	var attrs repoAttrs
	json.Unmarshal(repo.Attrs, &attrs)
	state := syncState{ManifestSHA256: digest, URL: remote.URL, Policy: remote.Policy, Mirror: a.Mirror, Version: repo.LatestVersion}
	if last := attrs.LastSync; a.Optimize && last != nil && *last == state {
		r.Progress("sync.skipped", "Skipping sync: the manifest has not changed since the last sync", 0).Finish(nil)
		return nil
	}

	// 2. The whole manifest is parsed and checked before anything is downloaded.
	base := content.URLBase(remote.URL)
	var entries []*entryResult
	if err := ParseManifest(mf, func(e Entry) error {
		entries = append(entries, &entryResult{Entry: e, url: content.JoinURL(base, e.RelativePath)})
		return nil
	}); err != nil {
		return fmt.Errorf("manifest %s: %w", remote.URL, err)
	}

	// 3. Files: reuse stored artifacts; download the rest when the policy is immediate.
	for _, e := range entries {
		var err error
		if e.artifact, err = p.stored(ctx, e.Digest); err != nil {
			return err
		}
	}
	if remote.Policy == "immediate" {
		if err := p.downloadAll(ctx, r, d, entries); err != nil {
			return err
		}
	}

	// 4. Units, artifacts and the new version in one transaction.
	return p.saveSync(ctx, r, repo, remote, entries, a.Mirror, &state)
}

// stored is the artifact of sha256 when its blob is stored; nil when not.
func (p *Plugin) stored(ctx context.Context, sha256 string) (*meta.Artifact, error) {
	art, err := meta.ArtifactBySHA256(ctx, p.core.DB, sha256)
	if errors.Is(err, meta.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if _, err := p.core.Store.Stat(ctx, sha256); err != nil {
		return nil, nil
	}
	return &art, nil
}

// saveSync stores a sync's units, with their artifacts, and the new version in one
// transaction; state, if set, is recorded as the repository's last sync. An entry with a
// url records the remote as where its file comes from.
func (p *Plugin) saveSync(ctx context.Context, r *task.Run, repo meta.Repository, remote meta.Remote, entries []*entryResult, mirror bool, state *syncState) error {
	pa := r.Progress("associating.content", "Associating Content", int64(len(entries)))
	var v meta.Version
	var created bool
	err := p.core.DB.Tx(ctx, func(tx *meta.Tx) error {
		units := make([]meta.NewUnit, 0, len(entries))
		for _, e := range entries {
			f := meta.ContentFile{RelativePath: e.RelativePath, SHA256: e.Digest}
			if e.url != "" {
				f.RemoteID, f.URL = &remote.ID, e.url
			}
			size := e.Size
			f.Size = &size
			if e.artifact != nil {
				art, _, err := meta.PutArtifact(ctx, tx, *e.artifact)
				if err != nil {
					return err
				}
				f.ArtifactID = &art.ID
			}
			attrs, _ := json.Marshal(map[string]string{"relative_path": e.RelativePath, "digest": e.Digest})
			units = append(units, meta.NewUnit{Content: meta.Content{Type: Type, NaturalKey: e.Digest + ":" + e.RelativePath, RepoKey: e.RelativePath,
				RelativePath: e.RelativePath, Digest: e.Digest, Attrs: attrs}, Files: []meta.ContentFile{f}})
		}
		stored, _, err := meta.PutContents(ctx, tx, units)
		if err != nil {
			return err
		}
		ids := make([]int64, len(stored))
		for i, c := range stored {
			ids[i] = c.ID
		}
		v, created, err = meta.NewVersion(ctx, tx, repo.ID, meta.Change{RemoveAll: mirror, Add: ids})
		if err != nil || state == nil {
			return err
		}
		state.Version = v.Number
		return meta.SetRepositoryAttr(ctx, tx, repo.ID, "last_sync", *state)
	})
	if err != nil {
		pa.Finish(err)
		return fmt.Errorf("save sync of repository %q: %w", repo.Name, err)
	}
	pa.Add(int64(len(entries)))
	pa.Finish(nil)
	if !created {
		return nil
	}
	p.core.Invalidate()
	repo, err = meta.RepositoryByID(ctx, p.core.DB, repo.ID)
	if err != nil {
		return err
	}
	return p.core.VersionMade(ctx, r, repo, v)
}

// fetchManifest downloads the manifest into an unnamed temporary file, returning it
// rewound, with its sha256.
func (p *Plugin) fetchManifest(ctx context.Context, d *download.Downloader, url string) (io.ReadCloser, string, error) {
	f, sum, err := p.core.FetchTemp(ctx, d, url, download.Expect{Size: -1}, sha256.New)
	if err != nil {
		return nil, "", fmt.Errorf("download manifest: %w", err)
	}
	return f, sum, nil
}

// downloadAll fetches every entry without a stored artifact, from an alternate content
// source that lists its sha256 first, then from the remote; the downloader bounds the
// concurrency per remote. The first failure cancels the rest.
func (p *Plugin) downloadAll(ctx context.Context, r *task.Run, d *download.Downloader, entries []*entryResult) error {
	var todo []*entryResult
	for _, e := range entries {
		if e.artifact == nil {
			todo = append(todo, e)
		}
	}
	alt, err := p.core.Alternates(ctx, r)
	if err != nil {
		return err
	}
	defer alt.Finish()
	sums := make([]string, len(todo))
	for i, e := range todo {
		sums[i] = e.Digest
	}
	srcs, err := alt.Lookup(ctx, sums)
	if err != nil {
		return err
	}
	pd := r.Progress("sync.downloading.artifacts", "Downloading Artifacts", int64(len(todo)))
	err = content.Parallel(ctx, d.Concurrency(), slices.Values(todo), func(e *entryResult) string { return e.RelativePath },
		func(ctx context.Context, e *entryResult) error {
			dg, err := alt.FetchBlob(ctx, srcs[e.Digest], d, e.url, download.Expect{Size: e.Size, SHA256: e.Digest})
			if err != nil {
				return err
			}
			art := meta.ArtifactOf(dg)
			e.artifact = &art
			pd.Add(1)
			return nil
		})
	pd.Finish(err)
	return err
}
