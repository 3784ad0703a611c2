package rpm

import (
	"pith/blob"
	"pith/content"
	"pith/meta"
	"pith/sign"
	"pith/task"
)

// Content types, as Pulp names them in content summaries.
const (
	RepoType        = "rpm.rpm"
	PackageType     = "rpm.package"
	AdvisoryType    = "rpm.advisory"
	GroupType       = "rpm.packagegroup"
	CategoryType    = "rpm.packagecategory"
	EnvironmentType = "rpm.packageenvironment"
	LangpacksType   = "rpm.packagelangpacks"
	ModulemdType    = "rpm.modulemd"
	DefaultsType    = "rpm.modulemd_defaults"
	ObsoleteType    = "rpm.modulemd_obsolete"
)

// ULNRemoteType is pulp_rpm's ULN remote: an rpm remote whose url is uln://<channel
// label> on a ULN server (content/download logs in and maps the URLs).
const ULNRemoteType = "rpm.uln"

// Task names, as Pulp names them (clients filter task lists by name).
const (
	SyncTask    = "pulp_rpm.app.tasks.synchronizing.synchronize"
	PublishTask = "pulp_rpm.app.tasks.publishing.publish"
	// RefreshTask refreshes one path of an alternate content source. Pulp runs its sync
	// task into a hidden repository; this one only records the packages primary lists.
	RefreshTask = "pulp_rpm.app.tasks.synchronizing.refresh_acs"
)

// Plugin is the rpm content type.
type Plugin struct {
	core     *content.Core
	db       *meta.DB     // core.DB
	store    *blob.Store  // core.Store
	signer   *sign.Signer // signs metadata for the signing service signerID; nil: none
	signerID string
}

// SetSigner gives the plugin the key of a signing service (its pulp ID), so that
// publications of repositories that name the service are signed.
func (p *Plugin) SetSigner(serviceID string, s *sign.Signer) { p.signerID, p.signer = serviceID, s }

// New returns the rpm type over a core.
func New(core *content.Core) *Plugin {
	return &Plugin{core: core, db: core.DB, store: core.Store}
}

// Name is the plugin's label.
func (*Plugin) Name() string { return "rpm" }

// Claims is the pulp_rpm release pith's rpm type answers as.
func (*Plugin) Claims() content.Component {
	return content.Component{Component: "rpm", Version: "3.35.6", Package: "pulp-rpm", Module: "pulp_rpm.app"}
}

// Tasks are the type's task functions by name.
func (p *Plugin) Tasks() map[string]task.Func {
	return map[string]task.Func{SyncTask: p.runSync, PublishTask: p.runPublish, PruneTask: p.runPrune, CopyTask: p.runCopy, CompsTask: p.runComps,
		RefreshTask: p.runRefresh}
}

// Sync policies (sync_policy).
const (
	Additive          = "additive"
	MirrorContentOnly = "mirror_content_only"
	MirrorComplete    = "mirror_complete"
)

// SyncArgs are the arguments of a sync task.
type SyncArgs struct {
	Repository string   `json:"repository"`
	Remote     string   `json:"remote"`
	SyncPolicy string   `json:"sync_policy"`
	SkipTypes  []string `json:"skip_types,omitempty"` // "srpm", "treeinfo"
	Optimize   bool     `json:"optimize"`
}

// repoAttrs is the part of an rpm repository's attrs this package reads and writes.
type repoAttrs struct {
	LastSync *syncState `json:"last_sync,omitempty"`
}

// syncState identifies the upstream state and settings of the last sync (optimize).
type syncState struct {
	RepomdSHA256 string   `json:"repomd_sha256"`
	URL          string   `json:"url"`
	Policy       string   `json:"policy"`
	SyncPolicy   string   `json:"sync_policy"`
	SkipTypes    []string `json:"skip_types,omitempty"`
	Version      int64    `json:"version"`
	// TreeinfoSHA256 is the distribution tree's .treeinfo, "" without one.
	TreeinfoSHA256 string `json:"treeinfo_sha256,omitempty"`
}
