package file

import (
	"context"
	"encoding/json"

	"pith/content"
	"pith/content/gitsource"
	"pith/meta"
	"pith/task"
)

// Type is the file type's repository, remote, publication, distribution and unit type.
const Type = "file.file"

// Plugin is the file content type.
type Plugin struct {
	core *content.Core
	// GitLimits bound a git remote's sync; a zero field is gitsource.DefaultLimits'.
	GitLimits gitsource.Limits
}

// New returns the file type over a core.
func New(core *content.Core) *Plugin { return &Plugin{core: core} }

// Name is the plugin's label.
func (*Plugin) Name() string { return "file" }

// Task names, as Pulp names them (clients filter task lists by name).
const (
	SyncTask    = "pulp_file.app.tasks.synchronizing.synchronize"
	PublishTask = "pulp_file.app.tasks.publishing.publish"
	// RefreshTask refreshes one path of an alternate content source. Pulp runs its sync
	// task into a hidden repository; this one only records what the path lists.
	RefreshTask = "pulp_file.app.tasks.synchronizing.refresh_acs"
)

// Tasks are the type's task functions by name.
func (p *Plugin) Tasks() map[string]task.Func {
	return map[string]task.Func{SyncTask: p.runSync, PublishTask: p.runPublish, RefreshTask: p.runRefresh}
}

// SyncArgs are the arguments of a sync task.
type SyncArgs struct {
	Repository string `json:"repository"`
	Remote     string `json:"remote"`
	Mirror     bool   `json:"mirror"`
	// Optimize skips the sync when the manifest, the remote and the settings are those
	// of the last sync and the repository has not changed since.
	Optimize bool `json:"optimize"`
}

// PublishArgs are the arguments of a publish task.
type PublishArgs struct {
	Repository string `json:"repository"`
	Version    int64  `json:"version"`
	Manifest   string `json:"manifest"`
	// Checkpoint makes a checkpoint publication.
	Checkpoint bool `json:"checkpoint,omitempty"`
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

// manifestOf is the manifest name a repository publishes ("" for none).
func manifestOf(repo meta.Repository) string {
	var attrs repoAttrs
	json.Unmarshal(repo.Attrs, &attrs)
	if attrs.Manifest != nil {
		return *attrs.Manifest
	}
	return "PULP_MANIFEST"
}

// Autopublish publishes a repository's new version with the repository's manifest.
func (p *Plugin) Autopublish(ctx context.Context, r *task.Run, repo meta.Repository, v meta.Version) (meta.Publication, error) {
	return p.publish(ctx, r, repo, PublishArgs{Version: v.Number, Manifest: manifestOf(repo)})
}
