package ansible

import (
	"encoding/json"
	"strings"
	"time"

	"pith/api/href"
	"pith/api/rest"
	"pith/meta"
)

// The REST shapes of ansible repositories, remotes and distributions: what each adds
// to the shared ones (its attrs) and what it leaves out.

// repoAttrs are what an ansible repository adds.
type repoAttrs struct {
	LastSyncedMetadataTime *string `json:"last_synced_metadata_time" openapi:"format=date-time,nullable"`
	Gpgkey                 *string `json:"gpgkey" openapi:"nullable,minLength=1"`
	Private                bool    `json:"private" openapi:"optional"`
}

type repositoryIn struct {
	rest.RepoIn
	repoAttrs
}

// Validate checks the ansible fields: a gpgkey must be an armored OpenPGP public key
// block, as pulp_ansible verifies signatures with it.
func (r *repositoryIn) Validate() error {
	if r.Gpgkey != nil && !strings.Contains(*r.Gpgkey, "-----BEGIN PGP PUBLIC KEY BLOCK-----") {
		return rest.BadField("gpgkey", "Must be an ASCII-armored OpenPGP public key block.")
	}
	if r.LastSyncedMetadataTime != nil {
		if _, err := time.Parse(time.RFC3339Nano, *r.LastSyncedMetadataTime); err != nil {
			return rest.BadField("last_synced_metadata_time", "Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].")
		}
	}
	return nil
}

type repositoryResponse struct {
	rest.RepoResponse
	repoAttrs
}

// collectionRemoteAttrs are what a collection remote adds.
type collectionRemoteAttrs struct {
	RequirementsFile    *string `json:"requirements_file" openapi:"nullable,minLength=1"`
	AuthURL             *string `json:"auth_url" openapi:"nullable,minLength=1,maxLength=255"`
	SyncDependencies    bool    `json:"sync_dependencies" openapi:"optional"`
	SignedOnly          bool    `json:"signed_only" openapi:"optional"`
	SyncHighestVersions *int64  `json:"sync_highest_versions" openapi:"nullable"`
}

type collectionRemoteIn struct {
	rest.RemoteIn
	collectionRemoteAttrs
	// Token is the Galaxy API token (a secret: never shown, sealed at rest).
	Token *string `json:"token" openapi:"nullable,minLength=1,maxLength=2000,writeOnly"`
}

type collectionRemoteResponse struct {
	rest.RemoteResponse
	collectionRemoteAttrs
}

type roleRemoteIn struct{ rest.RemoteIn }

type roleRemoteResponse struct{ rest.RemoteResponse }

// gitRemoteAttrs are what a git remote adds.
type gitRemoteAttrs struct {
	MetadataOnly bool   `json:"metadata_only" openapi:"optional"`
	GitRef       string `json:"git_ref" openapi:"minLength=1,optional"`
}

// A git remote has no download policy: it clones.
type gitRemoteIn struct {
	rest.RemoteIn
	gitRemoteAttrs
	Policy *struct{} `json:"policy,omitempty" openapi:"omit"`
}

type gitRemoteResponse struct {
	rest.RemoteResponse
	gitRemoteAttrs
	Policy *struct{} `json:"policy,omitempty" openapi:"omit"`
}

// distributionIn is an ansible distribution's body: it serves a repository's latest
// version or one repository version, and has no publications.
type distributionIn struct {
	rest.DistIn
	RepositoryVersion *string   `json:"repository_version" openapi:"format=uri,nullable"`
	Publication       *struct{} `json:"publication,omitempty" openapi:"omit"`
	Checkpoint        *struct{} `json:"checkpoint,omitempty" openapi:"omit"`
}

// VersionHref is the repository version the body names.
func (d *distributionIn) VersionHref() *string { return d.RepositoryVersion }

type distributionResponse struct {
	rest.DistResponse
	ClientURL         string    `json:"client_url" openapi:"readOnly"`
	RepositoryVersion *string   `json:"repository_version" openapi:"format=uri,nullable"`
	BaseURL           *struct{} `json:"base_url,omitempty" openapi:"omit"`
	Publication       *struct{} `json:"publication,omitempty" openapi:"omit"`
	Checkpoint        *struct{} `json:"checkpoint,omitempty" openapi:"omit"`
}

// FinishDist shows where ansible-galaxy reaches the distribution and the version it
// serves.
func (d *distributionResponse) FinishDist(x meta.Distribution, origin string) {
	d.ClientURL = origin + GalaxyRoot + x.BasePath + "/"
	if x.VersionRepo != nil {
		h := href.Version(*x.VersionType, *x.VersionRepo, *x.VersionNumber)
		d.RepositoryVersion = &h
	}
}

// GalaxyRoot is where distributions are Galaxy servers: GalaxyRoot + base_path + "/api/".
const GalaxyRoot = "/pulp_ansible/galaxy/"

// syncIn is the body of an ansible repository's sync.
type syncIn struct {
	Remote   *string `json:"remote" openapi:"format=uri"`
	Mirror   bool    `json:"mirror" openapi:"default=false"`
	Optimize *bool   `json:"optimize" openapi:"default=true"`
}

func decodeAttrs[T any](raw json.RawMessage) T {
	var v T
	json.Unmarshal(raw, &v)
	return v
}
