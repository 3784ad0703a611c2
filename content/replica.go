package content

import (
	"context"

	"pith/task"
)

// Replicator is a type whose distributions a replica copies from an upstream Pulp or
// pith (Pulp's plugin replicators): the replication lists the upstream's distributions
// of the type and makes, for each, a remote, a repository and a distribution of the
// same name, and syncs the repository.
type Replicator interface {
	Replica() Replica
}

// UpstreamGetter reads an object of the upstream's API by its href into v.
type UpstreamGetter func(ctx context.Context, href string, v any) error

// Replica says how a type's distributions are replicated. The type's repositories and
// distributions are of kind Type, its remotes of kind RemoteType.
type Replica struct {
	// Component is the component the upstream's status must list ("file").
	Component string
	// Type is the kind of the distributions listed, and of the repositories and
	// distributions made ("file.file").
	Type string
	// RemoteType is the kind of the remotes made; "" is Type.
	RemoteType string
	// SignIn says the remote reads the upstream with the upstream Pulp's username and
	// password: its sync reads the upstream's API (a Galaxy's), which is not public as a
	// content app is.
	SignIn bool
	// RemoteURL is the URL a remote syncs the upstream distribution d from (its
	// base_url or client_url, or a file below it); "" when d serves nothing.
	RemoteURL func(ctx context.Context, get UpstreamGetter, d UpstreamDistribution) (string, error)
	// Repository are the type's own fields of the repository, given its remote's URL.
	Repository func(remoteURL string) map[string]any
	// Sync is the sync of the repository from the remote (pulp_ids), without locks on
	// them: the replication adds those.
	Sync func(repository, remote string) task.Spec
}

// UpstreamDistribution is what a replication reads of an upstream's distribution.
type UpstreamDistribution struct {
	Name                 string  `json:"name"`
	BasePath             string  `json:"base_path"`
	BaseURL              string  `json:"base_url"`
	ClientURL            string  `json:"client_url"` // ansible's: its Galaxy API's root
	Repository           *string `json:"repository"`
	RepositoryVersion    *string `json:"repository_version"`
	Publication          *string `json:"publication"`
	NoContentChangeSince *string `json:"no_content_change_since"`
}

// Remote is the kind of the remotes a replication makes.
func (r Replica) Remote() string {
	if r.RemoteType != "" {
		return r.RemoteType
	}
	return r.Type
}
