package rpm

import (
	"context"

	"pith/content"
	"pith/task"
)

// Replica is how pulp_rpm replicates: the remote syncs the distribution's base_url with
// mirror_complete, which makes the publication itself, so the repository does not
// autopublish.
func (*Plugin) Replica() content.Replica {
	return content.Replica{
		Component: "rpm",
		Type:      RepoType,
		RemoteURL: func(_ context.Context, _ content.UpstreamGetter, d content.UpstreamDistribution) (string, error) {
			if d.Repository == nil && d.Publication == nil && d.RepositoryVersion == nil {
				return "", nil
			}
			return d.BaseURL, nil
		},
		Repository: func(string) map[string]any { return map[string]any{"autopublish": false} },
		Sync: func(repository, remote string) task.Spec {
			return task.Spec{Name: SyncTask, Args: SyncArgs{Repository: repository, Remote: remote, SyncPolicy: MirrorComplete, SkipTypes: []string{}, Optimize: true}}
		},
	}
}
