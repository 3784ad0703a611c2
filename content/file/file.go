package file

import (
	"context"
	"encoding/json"
	"fmt"

	"pith/blob"
	"pith/content"
	"pith/content/download"
	"pith/meta"
	"pith/task"
)

// Type is the content type "file.file".
const Type = "file.file"

// Plugin runs the file type's tasks.
type Plugin struct {
	db         *meta.DB
	store      *blob.Store
	invalidate func()
}

// New returns the file plugin over a store; invalidate is called when what the content
// app serves may have changed.
func New(db *meta.DB, store *blob.Store, invalidate func()) *Plugin {
	if invalidate == nil {
		invalidate = func() {}
	}
	return &Plugin{db: db, store: store, invalidate: invalidate}
}

// Task names, as Pulp names them (clients filter task lists by name).
const (
	SyncTask    = "pulp_file.app.tasks.synchronizing.synchronize"
	PublishTask = "pulp_file.app.tasks.publishing.publish"
)

// TaskFuncs are the plugin's task functions by name.
func (p *Plugin) TaskFuncs() map[string]task.Func {
	return map[string]task.Func{SyncTask: p.runSync, PublishTask: p.runPublish}
}

// SyncArgs are the arguments of a sync task.
type SyncArgs struct {
	Repository string `json:"repository"`
	Remote     string `json:"remote"`
	Mirror     bool   `json:"mirror"`
}

// PublishArgs are the arguments of a publish task.
type PublishArgs struct {
	Repository string `json:"repository"`
	Version    int64  `json:"version"`
	Manifest   string `json:"manifest"`
}

// repoAttrs is the part of a file repository's attrs this package reads and writes.
type repoAttrs struct {
	Autopublish bool    `json:"autopublish"`
	Manifest    *string `json:"manifest"`
	// LastSync identifies the upstream state of the last sync (optimize).
	LastSync *syncState `json:"last_sync,omitempty"`
}

type syncState struct {
	ManifestSHA256 string `json:"manifest_sha256"`
	URL            string `json:"url"`
	Policy         string `json:"policy"`
	Mirror         bool   `json:"mirror"`
	Version        int64  `json:"version"`
}

// FetchURL downloads a URL into an artifact (content create with file_url).
func (p *Plugin) FetchURL(ctx context.Context, url string) (meta.Artifact, error) {
	d, err := download.New(download.Config{URL: url, TLSValidation: true})
	if err != nil {
		return meta.Artifact{}, err
	}
	dg, err := content.FetchBlob(ctx, p.store, d, url, download.Expect{Size: -1})
	if err != nil {
		return meta.Artifact{}, err
	}
	a, _, err := meta.PutArtifact(ctx, p.db, content.Artifact(dg))
	return a, err
}

// Refetch stores a missing or corrupt file again from its first working remote source.
func (p *Plugin) Refetch(ctx context.Context, f meta.FileRef) error {
	return content.Refetch(ctx, p.db, p.store, f)
}

// AfterVersion applies autopublish and retention to a repository's new version.
func (p *Plugin) AfterVersion(ctx context.Context, r *task.Run, repo meta.Repository, v meta.Version) error {
	if repo.Type != Type {
		return nil
	}
	var attrs repoAttrs
	json.Unmarshal(repo.Attrs, &attrs)
	if attrs.Autopublish {
		manifest := "PULP_MANIFEST"
		if attrs.Manifest != nil {
			manifest = *attrs.Manifest
		}
		pub, err := p.publish(ctx, r, repo, v.Number, manifest)
		if err != nil {
			return fmt.Errorf("autopublish: %w", err)
		}
		r.Created(publicationHref(pub.PulpID))
	}
	if repo.RetainVersions != nil {
		if err := content.Retain(ctx, p.db, repo, *repo.RetainVersions); err != nil {
			return fmt.Errorf("retain_repo_versions: %w", err)
		}
		p.invalidate()
	}
	return nil
}

func publicationHref(id string) string { return "/pulp/api/v3/publications/file/file/" + id + "/" }
