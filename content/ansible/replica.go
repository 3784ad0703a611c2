package ansible

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"pith/content"
	"pith/task"
)

// Replica is how an ansible distribution is replicated (pulp_ansible has no replicator;
// this is pith's): a collection remote syncs, in mirror mode, every collection the
// upstream's distribution serves through its Galaxy API, whose root is the
// distribution's client_url with "api/". That API is not public, so the remote signs in
// with the upstream Pulp's username and password; and it is read at the upstream's
// base_url, the host the replication was told to trust, whatever host client_url names.
func (*Plugin) Replica() content.Replica {
	return content.Replica{
		Component:  "ansible",
		Type:       RepoType,
		RemoteType: CollectionRemoteType,
		SignIn:     true,
		RemoteURL: func(_ context.Context, _ content.UpstreamGetter, d content.UpstreamDistribution) (string, error) {
			if d.Repository == nil && d.RepositoryVersion == nil {
				return "", nil
			}
			u, err := url.Parse(d.ClientURL)
			if err != nil || !strings.HasPrefix(u.Path, "/") || !strings.HasSuffix(u.Path, "/") {
				return "", fmt.Errorf("ansible distribution %q: client_url %q is not a Galaxy API root", d.Name, d.ClientURL)
			}
			return u.Path + "api/", nil
		},
		Repository: func(string) map[string]any { return map[string]any{} },
		Sync: func(repository, remote string) task.Spec {
			return task.Spec{Name: SyncTask, Args: SyncArgs{Repository: repository, Remote: remote, Mirror: true, Optimize: true}}
		},
	}
}
