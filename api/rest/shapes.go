package rest

import (
	"pith/api/href"
	"pith/meta"
)

// The request and response shapes every type shares. Each is both what handlers decode
// or render and what the OpenAPI document describes (by reflection), so the two cannot
// disagree. Struct tags `openapi:"..."` carry what JSON tags can't (format, nullable,
// readOnly). A type's own shapes embed these and add its fields, which the attrs column
// of the row holds under Pulp's names.

// TaskRef is the body of a 202: exactly {"task": href}.
type TaskRef struct {
	Task string `json:"task" openapi:"format=uri,desc=The href of the task."`
}

// TaskGroupRef is the body of a 202 that dispatched a task group.
type TaskGroupRef struct {
	TaskGroup string `json:"task_group" openapi:"format=uri"`
}

// RepoIn is the body every repository type takes.
type RepoIn struct {
	PulpLabels         LabelsIn `json:"pulp_labels"`
	Name               string   `json:"name" openapi:"minLength=1"`
	Description        *string  `json:"description" openapi:"nullable,minLength=1"`
	RetainRepoVersions *int64   `json:"retain_repo_versions" openapi:"nullable,minimum=1"`
	Remote             *string  `json:"remote" openapi:"format=uri,nullable"`
	// RetainCheckpoints (newer Pulp releases) is how many of the newest checkpoint
	// publications stay checkpoints; null keeps every one.
	RetainCheckpoints *int64 `json:"retain_checkpoints" openapi:"newer"`
}

// Repo gives a type's body (which embeds RepoIn) to the generic code.
func (r *RepoIn) Repo() *RepoIn { return r }

// RepoBody is a repository type's body: it embeds RepoIn. One that also implements
// Validator checks its own fields.
type RepoBody interface{ Repo() *RepoIn }

// RepoResponse is what every repository type shows.
type RepoResponse struct {
	PulpHref           string            `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn                string            `json:"prn" openapi:"readOnly"`
	PulpCreated        string            `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated    string            `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	VersionsHref       string            `json:"versions_href" openapi:"format=uri,readOnly"`
	PulpLabels         map[string]string `json:"pulp_labels"`
	LatestVersionHref  string            `json:"latest_version_href" openapi:"format=uri,readOnly"`
	Name               string            `json:"name"`
	Description        *string           `json:"description" openapi:"nullable"`
	RetainRepoVersions *int64            `json:"retain_repo_versions" openapi:"nullable"`
	Remote             *string           `json:"remote" openapi:"format=uri,nullable"`
	RetainCheckpoints  *int64            `json:"retain_checkpoints" openapi:"newer"`
}

// Repo gives a type's view (which embeds RepoResponse) to the generic code.
func (r *RepoResponse) Repo() *RepoResponse { return r }

// RepoView is a repository type's response: it embeds RepoResponse.
type RepoView interface{ Repo() *RepoResponse }

// Validator is a body that checks its type's own fields.
type Validator interface{ Validate() error }

// Defaulter is a response that fills in what its row leaves unset, as Pulp shows it.
type Defaulter interface{ Default() }

// RemoteIn is the body every remote type takes. The attrs column holds the body's JSON
// without name, url, policy and labels (those are columns), under Pulp's field names,
// which content.DownloadConfig reads.
type RemoteIn struct {
	Name                string              `json:"name" openapi:"minLength=1"`
	URL                 string              `json:"url" openapi:"minLength=1"`
	PulpLabels          LabelsIn            `json:"pulp_labels"`
	Policy              string              `json:"policy" openapi:"enum=immediate|on_demand|streamed,default=immediate"`
	CACert              *string             `json:"ca_cert" openapi:"nullable,minLength=1"`
	ClientCert          *string             `json:"client_cert" openapi:"nullable,minLength=1"`
	ClientKey           *string             `json:"client_key" openapi:"nullable,minLength=1,writeOnly"`
	TLSValidation       bool                `json:"tls_validation" openapi:"optional"`
	ProxyURL            *string             `json:"proxy_url" openapi:"nullable,minLength=1"`
	ProxyUsername       *string             `json:"proxy_username" openapi:"nullable,minLength=1,writeOnly"`
	ProxyPassword       *string             `json:"proxy_password" openapi:"nullable,minLength=1,writeOnly"`
	Username            *string             `json:"username" openapi:"nullable,minLength=1,writeOnly"`
	Password            *string             `json:"password" openapi:"nullable,minLength=1,writeOnly"`
	MaxRetries          *int64              `json:"max_retries" openapi:"nullable"`
	TotalTimeout        *float64            `json:"total_timeout" openapi:"nullable,minimum=0"`
	ConnectTimeout      *float64            `json:"connect_timeout" openapi:"nullable,minimum=0"`
	SockConnectTimeout  *float64            `json:"sock_connect_timeout" openapi:"nullable,minimum=0"`
	SockReadTimeout     *float64            `json:"sock_read_timeout" openapi:"nullable,minimum=0"`
	Headers             []map[string]string `json:"headers"`
	DownloadConcurrency *int64              `json:"download_concurrency" openapi:"nullable,minimum=1"`
	RateLimit           *int64              `json:"rate_limit" openapi:"nullable"`
}

// Remote gives a type's body (which embeds RemoteIn) to the generic code.
func (r *RemoteIn) Remote() *RemoteIn { return r }

// RemoteBody is a remote type's body: it embeds RemoteIn. One that also implements
// Validator checks its own fields.
type RemoteBody interface{ Remote() *RemoteIn }

// HiddenField says whether a write-only remote field is set.
type HiddenField struct {
	Name  string `json:"name"`
	IsSet bool   `json:"is_set"`
}

// RemoteResponse is what every remote type shows.
type RemoteResponse struct {
	PulpHref            string              `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn                 string              `json:"prn" openapi:"readOnly"`
	PulpCreated         string              `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated     string              `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	Name                string              `json:"name"`
	URL                 string              `json:"url"`
	PulpLabels          map[string]string   `json:"pulp_labels"`
	Policy              string              `json:"policy"`
	CACert              *string             `json:"ca_cert" openapi:"nullable"`
	ClientCert          *string             `json:"client_cert" openapi:"nullable"`
	TLSValidation       bool                `json:"tls_validation"`
	ProxyURL            *string             `json:"proxy_url" openapi:"nullable"`
	MaxRetries          *int64              `json:"max_retries" openapi:"nullable"`
	TotalTimeout        *float64            `json:"total_timeout" openapi:"nullable"`
	ConnectTimeout      *float64            `json:"connect_timeout" openapi:"nullable"`
	SockConnectTimeout  *float64            `json:"sock_connect_timeout" openapi:"nullable"`
	SockReadTimeout     *float64            `json:"sock_read_timeout" openapi:"nullable"`
	Headers             []map[string]string `json:"headers"`
	DownloadConcurrency *int64              `json:"download_concurrency" openapi:"nullable"`
	RateLimit           *int64              `json:"rate_limit" openapi:"nullable"`
	HiddenFields        []HiddenField       `json:"hidden_fields" openapi:"readOnly"`
}

// Remote gives a type's view (which embeds RemoteResponse) to the generic code.
func (r *RemoteResponse) Remote() *RemoteResponse { return r }

// RemoteView is a remote type's response: it embeds RemoteResponse.
type RemoteView interface{ Remote() *RemoteResponse }

// DistIn is the body every distribution type takes.
type DistIn struct {
	BasePath     string   `json:"base_path" openapi:"minLength=1"`
	ContentGuard *string  `json:"content_guard" openapi:"format=uri,nullable"`
	Hidden       bool     `json:"hidden" openapi:"default=false"`
	PulpLabels   LabelsIn `json:"pulp_labels"`
	Name         string   `json:"name" openapi:"minLength=1"`
	Repository   *string  `json:"repository" openapi:"format=uri,nullable"`
	Publication  *string  `json:"publication" openapi:"format=uri,nullable"`
	Checkpoint   bool     `json:"checkpoint" openapi:"optional"`
	// RepositoryVersion (newer Pulp releases) is accepted unset: pith's distributions
	// serve a publication or a repository's latest version.
	RepositoryVersion *string `json:"repository_version" openapi:"newer"`
}

// Dist gives a type's body (which embeds DistIn) to the generic code.
func (d *DistIn) Dist() *DistIn { return d }

// DistBody is a distribution type's body: it embeds DistIn.
type DistBody interface{ Dist() *DistIn }

// DistResponse is what every distribution type shows.
type DistResponse struct {
	PulpHref             string            `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn                  string            `json:"prn" openapi:"readOnly"`
	PulpCreated          string            `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated      string            `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	BasePath             string            `json:"base_path"`
	BaseURL              string            `json:"base_url" openapi:"readOnly"`
	ContentGuard         *string           `json:"content_guard" openapi:"format=uri,nullable"`
	NoContentChangeSince *string           `json:"no_content_change_since" openapi:"readOnly"`
	Hidden               bool              `json:"hidden"`
	PulpLabels           map[string]string `json:"pulp_labels"`
	Name                 string            `json:"name"`
	Repository           *string           `json:"repository" openapi:"format=uri,nullable"`
	Publication          *string           `json:"publication" openapi:"format=uri,nullable"`
	Checkpoint           bool              `json:"checkpoint"`
}

// Dist gives a type's view (which embeds DistResponse) to the generic code.
func (d *DistResponse) Dist() *DistResponse { return d }

// DistView is a distribution type's response: it embeds DistResponse.
type DistView interface{ Dist() *DistResponse }

// VersionBody is the body of a distribution kind that serves repository versions
// (DistKind.Versions): the repository_version href it names, if any.
type VersionBody interface{ VersionHref() *string }

// DistFinisher is a distribution response that fills in its kind's own read-only fields
// once the shared ones are set: from the distribution and the origin the request reached
// the API at (ansible's client_url and repository_version).
type DistFinisher interface {
	FinishDist(d meta.Distribution, origin string)
}

// PublicationIn is what every publication create body takes: what to publish.
type PublicationIn struct {
	RepositoryVersion *string `json:"repository_version" openapi:"format=uri"`
	Repository        *string `json:"repository" openapi:"format=uri,desc=A URI of the repository to be published."`
	Checkpoint        bool    `json:"checkpoint" openapi:"optional"`
}

// PublicationResponse is what every publication type shows.
type PublicationResponse struct {
	PulpHref          string `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn               string `json:"prn" openapi:"readOnly"`
	PulpCreated       string `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated   string `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	RepositoryVersion string `json:"repository_version" openapi:"format=uri"`
	Repository        string `json:"repository" openapi:"format=uri"`
}

// NewPublicationResponse fills the head of publication p of a kind whose PRN model is
// prn.
func NewPublicationResponse(p meta.Publication, prn string) PublicationResponse {
	return PublicationResponse{
		PulpHref: href.Publication(p.Type, p.PulpID), Prn: href.PRN(prn, p.PulpID), PulpCreated: Time(p.Created), PulpLastUpdated: Time(p.Updated),
		RepositoryVersion: href.Version(p.RepoType, p.RepoPulpID, p.VersionNumber), Repository: href.Repository(p.RepoType, p.RepoPulpID),
	}
}

// ContentIn is what every content create body takes: where the file comes from (exactly
// one of file, artifact, upload and file_url), labels, and the repository to add to.
type ContentIn struct {
	Repository *string  `json:"repository" openapi:"format=uri,writeOnly"`
	PulpLabels LabelsIn `json:"pulp_labels"`
	Artifact   *string  `json:"artifact" openapi:"format=uri,writeOnly"`
	File       *string  `json:"file" openapi:"format=binary,writeOnly"`
	Upload     *string  `json:"upload" openapi:"format=uri,writeOnly"`
	FileURL    *string  `json:"file_url" openapi:"format=uri,writeOnly,minLength=1"`
	Downloader any      `json:"downloader_config" openapi:"writeOnly,nullable"`
	// Overwrite false makes adding the unit to the repository fail when it would replace
	// one with the same repo key (Pulp 3.106+; true by default, as there).
	Overwrite *bool `json:"overwrite" openapi:"newer"`
}

// Content gives a type's body (which embeds ContentIn) to the generic code.
func (c *ContentIn) Content() *ContentIn { return c }

// ContentBody is a content create body: it embeds ContentIn.
type ContentBody interface{ Content() *ContentIn }

// UnitHead is the head of every unit as Pulp shows it: identity and labels.
type UnitHead struct {
	PulpHref        string            `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string            `json:"prn" openapi:"readOnly"`
	PulpCreated     string            `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated string            `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	PulpLabels      map[string]string `json:"pulp_labels"`
	VulnReport      *string           `json:"vuln_report" openapi:"format=uri,readOnly"`
}

// NewUnitHead fills the head of unit c of a kind whose href segment is segment and PRN
// model prn.
func NewUnitHead(c meta.Content, segment, prn string) UnitHead {
	return UnitHead{PulpHref: href.Content(segment, c.PulpID), Prn: href.PRN(prn, c.PulpID), PulpCreated: Time(c.Created),
		PulpLastUpdated: Time(c.Updated), PulpLabels: c.Labels}
}

// ArtifactUnit is the head of a unit with one artifact as Pulp shows it: identity,
// labels and the artifact with its digests.
type ArtifactUnit struct {
	PulpHref        string            `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string            `json:"prn" openapi:"readOnly"`
	PulpCreated     string            `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated string            `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	MD5             *string           `json:"md5" openapi:"readOnly"`
	SHA1            *string           `json:"sha1" openapi:"readOnly"`
	SHA224          *string           `json:"sha224" openapi:"readOnly"`
	SHA256          *string           `json:"sha256" openapi:"readOnly"`
	SHA384          *string           `json:"sha384" openapi:"readOnly"`
	SHA512          *string           `json:"sha512" openapi:"readOnly"`
	PulpLabels      map[string]string `json:"pulp_labels"`
	VulnReport      *string           `json:"vuln_report" openapi:"format=uri,readOnly"`
	Artifact        *string           `json:"artifact" openapi:"format=uri"`
}

// NewArtifactUnit fills the head of unit c (href segment segment, PRN model prn), with
// its artifact when it has one.
func NewArtifactUnit(c meta.Content, segment, prn string, a *meta.Artifact) ArtifactUnit {
	out := ArtifactUnit{PulpHref: href.Content(segment, c.PulpID), Prn: href.PRN(prn, c.PulpID), PulpCreated: Time(c.Created),
		PulpLastUpdated: Time(c.Updated), PulpLabels: c.Labels}
	if a != nil {
		h := href.Artifact(a.PulpID)
		out.Artifact = &h
		sha := a.SHA256
		out.MD5, out.SHA1, out.SHA224, out.SHA256, out.SHA384, out.SHA512 = a.MD5, a.SHA1, a.SHA224, &sha, a.SHA384, a.SHA512
	}
	return out
}
