package file

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"pith/api/href"
	"pith/blob"
	"pith/meta"
	"pith/task"
)

func (p *Plugin) runPublish(ctx context.Context, r *task.Run) error {
	var a PublishArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	repo, err := meta.RepositoryByPulpID(ctx, p.core.DB, a.Repository)
	if err != nil {
		return err
	}
	pub, err := p.publish(ctx, r, repo, a)
	if err != nil {
		return err
	}
	r.Created(href.Publication(pub.Type, pub.PulpID))
	return nil
}

type publishedUnit struct {
	contentArtifact int64
	path            string
	digest          string
	size            int64
}

// publish makes a publication of version a.Version: every unit file at its relative
// path, plus the generated manifest (when a.Manifest is not empty).
func (p *Plugin) publish(ctx context.Context, r *task.Run, repo meta.Repository, a PublishArgs) (meta.Publication, error) {
	n, manifest := a.Version, a.Manifest
	if _, err := meta.VersionByNumber(ctx, p.core.DB, repo.ID, n); err != nil {
		return meta.Publication{}, err
	}
	rows, err := p.core.DB.Query(ctx, `SELECT ca.id, ca.relative_path, c.digest,
		COALESCE((SELECT a.size FROM artifacts a WHERE a.id = ca.artifact_id), (SELECT max(ra.size) FROM remote_artifacts ra WHERE ra.content_artifact_id = ca.id), 0)
		FROM content_artifacts ca JOIN contents c ON c.id = ca.content_id
		WHERE c.type = ? AND EXISTS (SELECT 1 FROM repository_content rc WHERE rc.content_id = c.id AND rc.repository_id = ?
		AND `+meta.InVersion("rc", "?")+`)
		ORDER BY ca.relative_path`, Type, repo.ID, n, n)
	if err != nil {
		return meta.Publication{}, fmt.Errorf("list units of version %d: %w", n, err)
	}
	var units []publishedUnit
	for rows.Next() {
		var u publishedUnit
		if err := rows.Scan(&u.contentArtifact, &u.path, &u.digest, &u.size); err != nil {
			rows.Close()
			return meta.Publication{}, err
		}
		units = append(units, u)
	}
	rows.Close()
	prog := r.Progress("publish.generating_metadata", "Generating metadata files", int64(len(units)))
	files := make([]meta.PublishedFile, 0, len(units)+1)
	entries := make([]Entry, 0, len(units))
	for _, u := range units {
		ca := u.contentArtifact
		files = append(files, meta.PublishedFile{RelativePath: u.path, ContentArtifactID: &ca})
		entries = append(entries, Entry{RelativePath: u.path, Digest: u.digest, Size: u.size})
	}
	if manifest != "" {
		for _, u := range units {
			if u.path == manifest {
				return meta.Publication{}, fmt.Errorf("manifest name %q clashes with a file of the repository version", manifest)
			}
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].RelativePath < entries[j].RelativePath })
		var buf bytes.Buffer
		if err := WriteManifest(&buf, entries); err != nil {
			return meta.Publication{}, err
		}
		dg, err := p.core.Store.Put(ctx, &buf, blob.Expect{Size: -1})
		if err != nil {
			return meta.Publication{}, fmt.Errorf("store manifest: %w", err)
		}
		art, _, err := meta.PutArtifact(ctx, p.core.DB, meta.ArtifactOf(dg))
		if err != nil {
			return meta.Publication{}, err
		}
		files = append(files, meta.PublishedFile{RelativePath: manifest, ArtifactID: &art.ID})
	}
	prog.Add(int64(len(units)))
	prog.Finish(nil)
	var m *string
	if manifest != "" {
		m = &manifest
	}
	attrs, _ := json.Marshal(map[string]*string{"manifest": m})
	var pub meta.Publication
	err = p.core.DB.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		pub, err = meta.CreatePublication(ctx, tx, meta.Publication{Type: Type, RepositoryID: repo.ID, VersionNumber: n, Checkpoint: a.Checkpoint, Attrs: attrs}, files)
		return err
	})
	if err != nil {
		return pub, err
	}
	p.core.Invalidate()
	return pub, nil
}
