package ansible

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"pith/api/href"
	"pith/api/rest"
	"pith/blob"
	"pith/content"
	"pith/meta"
	"pith/task"
)

// Galaxy's namespaces: the namespace metadata of the served version, in pulpcore's pages
// and with the Pulp API's fields and filters.

// galaxyNamespaceSpec is the Galaxy namespace list's filters and orderings.
func galaxyNamespaceSpec() rest.ListSpec {
	s := namespaceSpec()
	s.Filters = append(s.Filters, rest.IdentityFilters("c.pulp_id")...)
	return s
}

// inServed narrows a unit list (alias c) to the units of a type in what d serves.
func inServed(l *meta.List, d dist, typ string) {
	l.And(`c.type = ? AND EXISTS (SELECT 1 FROM repository_content rc WHERE rc.content_id = c.id AND rc.repository_id = ? AND `+
		meta.InVersion("rc", "?")+`)`, typ, d.Repo.ID, d.Number, d.Number)
}

// namespacesList is content/<base>/namespaces/.
func (p *Plugin) namespacesList(w http.ResponseWriter, r *http.Request) error {
	d, _, done, err := p.servedRead(w, r)
	if err != nil || done {
		return err
	}
	q, err := rest.ParseList(r, p.db.Dialect(), galaxyNamespaceSpec())
	if err != nil {
		return err
	}
	inServed(&q.List, d, NamespaceType)
	cs, total, err := meta.ListContent(r.Context(), p.db, q.List)
	if err != nil {
		return q.Explain(err)
	}
	items, err := p.renderNamespaces(r.Context(), cs)
	if err != nil {
		return err
	}
	return rest.WritePage(w, r, q, total, items)
}

// namespaceDetail is content/<base>/namespaces/<name>/.
func (p *Plugin) namespaceDetail(w http.ResponseWriter, r *http.Request) error {
	d, _, done, err := p.servedRead(w, r)
	if err != nil || done {
		return err
	}
	c, err := p.servedNamespace(r, d, r.PathValue("name"))
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, renderNamespace(c, rest.OriginOf(r.Context())))
}

// galaxyNamespaceIn is the body of a Galaxy namespace create or update
// (ansible.AnsibleNamespaceMetadata).
type galaxyNamespaceIn struct {
	Name        string          `json:"name" openapi:"minLength=3,maxLength=64,desc=Required named, only accepts lowercase, numbers and underscores."`
	Company     *string         `json:"company" openapi:"maxLength=64,desc=Optional namespace company owner."`
	Email       *string         `json:"email" openapi:"maxLength=256,desc=Optional namespace contact email."`
	Description *string         `json:"description" openapi:"maxLength=256,desc=Optional short description."`
	Resources   *string         `json:"resources" openapi:"desc=Optional resource page in markdown format."`
	Links       json.RawMessage `json:"links" openapi:"type=object,desc=Labeled related links."`
	Avatar      string          `json:"avatar" openapi:"format=binary,writeOnly,optional,desc=Optional avatar image for Namespace"`
}

// namespaceName is what a namespace may be called (pulp_ansible's
// ^(?!.*__)[a-z][0-9a-z_]*$, without the lookahead RE2 lacks).
var namespaceName = regexp.MustCompile(`^[a-z][0-9a-z_]*$`)

// Bounds of a namespace's fields, as pulp_ansible's model has them.
const (
	maxNamespaceResources = 64 << 10
	maxNamespaceLinks     = 100
)

// apply overlays the body's fields on a namespace's metadata, checking each.
func (in galaxyNamespaceIn) apply(a *namespaceAttrs, raw map[string]json.RawMessage) error {
	if _, ok := raw["name"]; ok {
		a.Name = in.Name
	}
	switch n := len(a.Name); {
	case n < 3:
		return rest.BadField("name", "Ensure this field has at least 3 characters.")
	case n > 64:
		return rest.BadField("name", "Ensure this field has no more than 64 characters.")
	case !namespaceName.MatchString(a.Name) || strings.Contains(a.Name, "__"):
		return rest.BadField("name", "This value does not match the required pattern.")
	}
	for _, f := range []struct {
		name string
		v    *string
		dst  *string
		max  int
	}{{"company", in.Company, &a.Company, 64}, {"email", in.Email, &a.Email, 256}, {"description", in.Description, &a.Description, 256},
		{"resources", in.Resources, &a.Resources, maxNamespaceResources}} {
		if f.v == nil {
			continue
		}
		if len(*f.v) > f.max {
			return rest.BadField(f.name, "Ensure this field has no more than %d characters.", f.max)
		}
		*f.dst = *f.v
	}
	if len(in.Links) == 0 || string(in.Links) == "null" {
		return nil
	}
	links, err := parseLinks(in.Links)
	if err != nil {
		return err
	}
	a.Links = links
	return nil
}

// parseLinks reads links as pulp_ansible takes them: a JSON list of {"name", "url"}, or
// a form's string holding one, or objects separated by commas without the brackets.
func parseLinks(raw json.RawMessage) (map[string]string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s = strings.TrimSpace(s); !strings.HasPrefix(s, "[") {
			s = "[" + s + "]"
		}
		raw = json.RawMessage(s)
	} else if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' {
		// A form's value that is JSON arrives decoded.
		raw = json.RawMessage("[" + string(t) + "]")
	}
	var links []namespaceLink
	if err := json.Unmarshal(raw, &links); err != nil {
		return nil, rest.BadField("links", "Must be valid JSON: a list of {\"name\", \"url\"}.")
	}
	if len(links) > maxNamespaceLinks {
		return nil, rest.BadField("links", "Ensure this field has no more than %d elements.", maxNamespaceLinks)
	}
	out := map[string]string{}
	for _, l := range links {
		if l.Name == "" || l.URL == "" || len(l.Name) > 256 || len(l.URL) > 256 {
			return nil, rest.BadField("links", "Each link needs a name and a url of 1 to 256 characters.")
		}
		out[l.Name] = l.URL
	}
	return out, nil
}

// namespaceWrite is a Galaxy namespace create (POST) or update (PATCH): the metadata,
// overlaid on the served one for an update, is stored as a new unit that replaces the
// namespace's metadata in the repository, by a task.
func (p *Plugin) namespaceWrite(w http.ResponseWriter, r *http.Request) error {
	d, err := p.distribution(r.Context(), distBasePath(r))
	if err != nil {
		return err
	}
	if d.Repo == nil {
		return rest.NonField("Distribution must have either repository or repository_version set")
	}
	env := p.core.Env()
	var pf *rest.PendingFile
	var in galaxyNamespaceIn
	raw, err := rest.ReadBody(r, &in, env.ReceiveFile(r.Context(), "avatar", &pf))
	if err == nil {
		err = rest.Decode(raw, &in)
	}
	var a namespaceAttrs
	if err == nil && r.Method == http.MethodPatch {
		var c meta.Content
		c, err = p.servedNamespace(r, d, r.PathValue("name"))
		a = decodeAttrs[namespaceAttrs](c.Attrs)
	} else if err == nil {
		err = rest.Require(raw, "name")
	}
	if err == nil {
		err = in.apply(&a, raw)
	}
	if err != nil {
		pf.Cancel(r.Context())
		return err
	}
	var files []meta.ContentFile
	if pf != nil {
		art, err := env.CommitArtifact(r.Context(), pf, blob.Expect{Size: -1})
		if err != nil {
			return err
		}
		a.AvatarSHA256 = &art.SHA256
		files = []meta.ContentFile{{RelativePath: avatarPath(a.Name), ArtifactID: &art.ID}}
	}
	repo, err := meta.RepositoryByPulpID(r.Context(), p.db, d.Repo.PulpID)
	if err != nil {
		return err
	}
	return env.DispatchCreate(w, r, unitKind, href.Root+"content/"+namespaceSegment+"/",
		unitArgs{Unit: namespaceUnit(a, nil), Files: files, Repository: repo.PulpID}, &repo)
}

// servedNamespace is the metadata unit of a namespace in what d serves.
func (p *Plugin) servedNamespace(r *http.Request, d dist, name string) (meta.Content, error) {
	if d.Version == 0 {
		return meta.Content{}, rest.ErrNotFound
	}
	l := meta.List{Limit: 1}
	inServed(&l, d, NamespaceType)
	l.And("c.repo_key = ?", name)
	cs, _, err := meta.ListContent(r.Context(), p.db, l)
	if err != nil {
		return meta.Content{}, err
	}
	if len(cs) == 0 {
		return meta.Content{}, rest.ErrNotFound
	}
	return cs[0], nil
}

// namespaceDelete removes a namespace's metadata from the repository, refused while
// collections of the namespace are served.
func (p *Plugin) namespaceDelete(w http.ResponseWriter, r *http.Request) error {
	d, ix, err := p.served(r)
	if err != nil {
		return err
	}
	name := r.PathValue("name")
	ns, ok := ix.namespaces[name]
	if !ok || d.Repo == nil {
		return rest.ErrNotFound
	}
	for _, c := range ix.colls {
		if c.Namespace == name {
			return rest.NonField("Namespace %s cannot be deleted because there are still collections associated with it.", name)
		}
	}
	return p.core.Env().Dispatch(w, r, task.Spec{Name: content.ModifyTask, Args: content.ModifyArgs{Repository: d.Repo.PulpID, Remove: []int64{ns.ID}},
		Exclusive: []string{repoHref(d.Repo.PulpID)}})
}

// namespaceAvatar is content_ansible_namespaces_avatar: 302 to the avatar in the content
// app of a distribution serving the namespace's metadata; 404 without an avatar or
// without such a distribution.
func (p *Plugin) namespaceAvatar(w http.ResponseWriter, r *http.Request) error {
	c, err := meta.ContentByPulpID(r.Context(), p.db, r.PathValue("id"))
	if err != nil || c.Type != NamespaceType {
		return rest.ErrNotFound
	}
	a := decodeAttrs[namespaceAttrs](c.Attrs)
	if a.AvatarSHA256 == nil {
		return rest.ErrNotFound
	}
	ds, _, err := meta.ListDistributions(r.Context(), p.db, meta.List{Where: []string{"d.type = ?"}, Args: []any{RepoType}, OrderBy: "d.id"})
	if err != nil {
		return err
	}
	for _, md := range ds {
		d, err := p.distribution(r.Context(), md.BasePath)
		if err != nil || d.Version == 0 {
			continue
		}
		ix, err := p.galaxy.indexes.get(r.Context(), p, d)
		if err != nil {
			return err
		}
		if ns, ok := ix.namespaces[a.Name]; ok && ns.ID == c.ID {
			w.Header().Set("Location", p.galaxy.contentURL(r, d.BasePath, avatarPath(a.Name)))
			w.WriteHeader(http.StatusFound)
			return nil
		}
	}
	return rest.ErrNotFound
}

// avatarPath is the relative path of a namespace's avatar in a distribution.
func avatarPath(namespace string) string { return namespace + "-avatar" }
