package ansible

import (
	"pith/content"
	"pith/meta"
	"pith/sign"
	"pith/task"
)

// Types of the ansible kinds, as Pulp names them (pulp_type).
const (
	// RepoType is the repository and distribution type.
	RepoType = "ansible.ansible"
	// Remote types: a Galaxy's collections, a Galaxy's (v1) roles, a git repository.
	CollectionRemoteType = "ansible.collection"
	RoleRemoteType       = "ansible.role"
	GitRemoteType        = "ansible.git"
	// Unit types.
	CollectionVersionType = "ansible.collection_version"
	SignatureType         = "ansible.collection_signature"
	DeprecationType       = "ansible.collection_deprecation"
	MarkType              = "ansible.collection_mark"
	NamespaceType         = "ansible.namespace"
	RoleType              = "ansible.role"
)

// Plugin is the ansible content type: collections, their signatures, deprecations,
// marks and namespaces, and legacy roles, in ansible repositories that distributions
// serve as Galaxy servers.
type Plugin struct {
	core *content.Core
	db   *meta.DB
	// signer signs for the signing service signerID (nil: none).
	signer   *sign.Signer
	signerID string
	// roleOrigin replaces GitHub as where role archives come from ("": GitHub).
	roleOrigin string
	// galaxy serves the Galaxy API.
	galaxy *galaxyAPI
}

// New returns the ansible type over a core.
func New(core *content.Core) *Plugin {
	p := &Plugin{core: core, db: core.DB}
	p.galaxy = newGalaxy(p)
	return p
}

// Name is the plugin's label, as Pulp's status lists it.
func (*Plugin) Name() string { return "ansible" }

// Claims is the pulp_ansible release pith's ansible type answers as.
func (*Plugin) Claims() content.Component {
	return content.Component{Component: "ansible", Version: "0.30.3", Package: "pulp-ansible", Module: "pulp_ansible.app"}
}

// Tasks are the type's task functions by name.
func (p *Plugin) Tasks() map[string]task.Func {
	return map[string]task.Func{CopyMoveTask: p.runCopyMove, CopyContentTask: p.runCopyContent, MarkTask: p.runMark(true),
		UnmarkTask: p.runMark(false), SignTask: p.runSign, RebuildTask: p.runRebuild, RoleSyncTask: p.runRoleSync,
		GitSyncTask: p.runGitSync, DeleteTask: p.runDelete, SyncTask: p.runSync}
}
