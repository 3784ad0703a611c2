package ansible

import (
	_ "embed"

	"pith/api/access"
	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
)

// Declare adds the ansible type's kinds and operations to the table.
func (p *Plugin) Declare(t *rest.Table) error {
	p.declareUnits(t)
	p.declareOtherUnits(t)
	p.declareOps(t)
	p.declareTags(t)
	p.declareCollections(t)
	if err := p.declareGalaxy(t); err != nil {
		return err
	}
	t.Repository(rest.RepoKind{Type: RepoType, Title: "Ansible", Schema: "ansible.Ansible", PRN: "ansible.ansiblerepository",
		Body: func() rest.RepoBody { return &repositoryIn{} }, View: func() rest.RepoView { return &repositoryResponse{} },
		Remotes: []string{CollectionRemoteType, RoleRemoteType, GitRemoteType},
		Sync:    &rest.Action{Body: syncIn{}, BodyName: "AnsibleRepositorySyncURL", Handler: p.syncRepository}})
	t.Remote(rest.RemoteKind{Type: CollectionRemoteType, Title: "Collection", Schema: "ansible.Collection", PRN: "ansible.collectionremote",
		Body: func() rest.RemoteBody {
			return &collectionRemoteIn{collectionRemoteAttrs: collectionRemoteAttrs{SyncDependencies: true}} // pulp_ansible's default
		}, View: func() rest.RemoteView { return &collectionRemoteResponse{} },
		Filters: []rest.Filter{{Name: "url", Col: "m.url", Lookups: []string{"exact", "contains", "icontains", "in"}}}})
	t.Remote(rest.RemoteKind{Type: RoleRemoteType, Title: "Role", Schema: "ansible.Role", PRN: "ansible.roleremote",
		Body: func() rest.RemoteBody { return &roleRemoteIn{} }, View: func() rest.RemoteView { return &roleRemoteResponse{} }})
	t.Remote(rest.RemoteKind{Type: GitRemoteType, Title: "Git", Schema: "ansible.Git", PRN: "ansible.gitremote",
		Body: func() rest.RemoteBody { return &gitRemoteIn{} }, View: func() rest.RemoteView { return &gitRemoteResponse{} }})
	t.Distribution(rest.DistKind{Type: RepoType, Title: "Ansible", Schema: "ansible.Ansible", PRN: "ansible.ansibledistribution",
		Body: func() rest.DistBody { return &distributionIn{} }, View: func() rest.DistView { return &distributionResponse{} },
		Repositories: RepoType, Versions: true})

	async := t.Async()
	t.Add(rest.Op{ID: "upload_collection", Viewset: "ansible/collections", Method: "POST", Path: "/ansible/collections/", Pattern: "/ansible/collections/{$}",
		Tag: "Ansible: Collections", Body: oneShotIn{}, BodyName: "CollectionOneShot", Media: rest.FileForms,
		Responses: []openapi.Response{rest.Resp(202, async)}, Handler: p.oneShot})
	if err := t.Create(cvKind, p.runImport); err != nil {
		return err
	}
	if err := t.Create(unitKind, p.runUnit); err != nil {
		return err
	}
	d, err := access.Parse(accessJSON)
	if err != nil {
		return err
	}
	return t.Access(d)
}

// accessJSON are pulp_ansible's default access policies, built-in roles and
// permissions (scripts/pulp-access.py).
//
//go:embed access.json
var accessJSON []byte

// declareUnits adds the unit kinds with their renderers and create operations.
func (p *Plugin) declareUnits(t *rest.Table) {
	async := t.Async()
	t.Unit(rest.UnitKind{Type: CollectionVersionType, Segment: cvSegment, PRN: "ansible.collectionversion", Href: "{ansible_collection_version_href}",
		Tag: "Content: Collection_Versions", Schema: "ansible.CollectionVersionResponse", View: cvResponse{},
		Filters: cvFilters(), Ordering: cvOrdering(), Render: p.renderCVs, LabelStatus: 201})
	pat := href.Root + "content/" + cvSegment + "/"
	t.Add(rest.Op{ID: "content_ansible_collection_versions_create", Viewset: "content/" + cvSegment, Method: "POST", Path: pat, Pattern: pat + "{$}",
		Tag: "Content: Collection_Versions", Body: cvIn{}, BodyName: "ansible.CollectionVersion", Media: rest.FileForms,
		Responses: []openapi.Response{rest.Resp(202, async)}, Handler: p.cvCreate})
}
