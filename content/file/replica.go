package file

import (
	"context"
	"strings"

	"pith/content"
	"pith/task"
)

// Replica is how pulp_file replicates: the remote syncs the manifest the upstream's
// repository (or publication) names, below the distribution's base_url; the repository
// publishes that manifest itself (autopublish) and syncs in mirror mode.
func (*Plugin) Replica() content.Replica {
	return content.Replica{
		Component: "file",
		Type:      Type,
		RemoteURL: func(ctx context.Context, get content.UpstreamGetter, d content.UpstreamDistribution) (string, error) {
			var from *string
			switch {
			case d.Repository != nil:
				from = d.Repository
			case d.Publication != nil:
				from = d.Publication
			default:
				return "", nil // serves nothing, or a version pulp_file does not replicate
			}
			var o struct {
				Manifest *string `json:"manifest"`
			}
			if err := get(ctx, *from, &o); err != nil {
				return "", err
			}
			manifest := "PULP_MANIFEST"
			if o.Manifest != nil && *o.Manifest != "" {
				manifest = *o.Manifest
			}
			return d.BaseURL + manifest, nil
		},
		Repository: func(remoteURL string) map[string]any {
			return map[string]any{"manifest": remoteURL[strings.LastIndex(remoteURL, "/")+1:], "autopublish": true}
		},
		Sync: func(repository, remote string) task.Spec {
			return task.Spec{Name: SyncTask, Args: SyncArgs{Repository: repository, Remote: remote, Mirror: true, Optimize: true}}
		},
	}
}
