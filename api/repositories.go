package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"

	"pith/api/href"
	"pith/api/rest"
	"pith/content"
	"pith/meta"
	"pith/task"
)

// repoListSpec is the repository list of a kind, or of every kind (nil).
func repoListSpec(k *rest.RepoKind) rest.ListSpec {
	var remotes []string
	if k != nil {
		for _, typ := range k.Remotes {
			remotes = append(remotes, "remotes/"+href.Segment(typ)+"/")
		}
	}
	fs := []rest.Filter{
		{Name: "latest_with_content", Type: rest.Custom, Lookups: []string{"exact"}, Apply: withContent(true)},
		{Name: "name", Col: "r.name", Lookups: rest.NameLookups},
		rest.LabelSelect("r.labels"),
		rest.HrefFilter("remote", "(SELECT m.pulp_id FROM remotes m WHERE m.id = r.remote_id)", remotes...),
		{Name: "retain_repo_versions", Col: "r.retain_repo_versions", Type: rest.Int, Lookups: []string{"exact", "gt", "gte", "isnull", "lt", "lte", "ne", "range"}},
		{Name: "with_content", Type: rest.Custom, Lookups: []string{"exact"}, Apply: withContent(false)},
	}
	if k == nil {
		fs = append(fs, rest.Filter{Name: "pulp_type", Col: "r.type", Lookups: []string{"exact", "in"}})
	}
	fs = append(fs, rest.IdentityFilters("r.pulp_id")...)
	return rest.ListSpec{Filters: fs, Ordering: rest.Ordering("r", map[string]string{
		"pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated", "name": "name",
		"description": "description", "next_version": "next_version", "retain_repo_versions": "retain_repo_versions",
	})}
}

// withContent filters repositories having a unit (href) in any version, or in the latest.
func withContent(latest bool) func(l *meta.List, d meta.Dialect, v string) error {
	return func(l *meta.List, d meta.Dialect, v string) error {
		p, ok := href.Parse(v)
		if !ok {
			return rest.BadField("with_content", "Invalid hyperlink - No URL match for %q.", v)
		}
		cond := `EXISTS (SELECT 1 FROM repository_content rc JOIN contents c ON c.id = rc.content_id WHERE rc.repository_id = r.id AND c.pulp_id = ?`
		if latest {
			cond += ` AND rc.version_removed IS NULL`
		}
		l.And(cond+")", p.ID)
		return nil
	}
}

// repoColumns are the body fields kept in columns rather than in attrs.
var repoColumns = []string{"name", "description", "retain_repo_versions", "remote", "pulp_labels"}

func (s *Server) renderRepo(r meta.Repository) any {
	kind, _ := s.core.Table().RepoKind(r.Type)
	v := kind.View()
	json.Unmarshal(r.Attrs, v)
	if d, ok := v.(rest.Defaulter); ok {
		d.Default()
	}
	out := v.Repo()
	*out = rest.RepoResponse{
		PulpHref: href.Repository(r.Type, r.PulpID), Prn: href.PRN(kind.PRN, r.PulpID), PulpCreated: rest.Time(r.Created), PulpLastUpdated: rest.Time(r.Updated),
		VersionsHref: href.Repository(r.Type, r.PulpID) + "versions/", PulpLabels: r.Labels, LatestVersionHref: href.Version(r.Type, r.PulpID, r.LatestVersion),
		Name: r.Name, Description: r.Description, RetainRepoVersions: r.RetainVersions, RetainCheckpoints: meta.RetainCheckpointsOf(r.Attrs),
	}
	if r.RemotePulpID != nil {
		h := href.Remote(*r.RemoteType, *r.RemotePulpID)
		out.Remote = &h
	}
	return v
}

// applyRepo applies a create or update body to a repository of kind k, validating it.
// With partial, fields not sent keep their values; otherwise they reset to defaults.
func applyRepo(ctx context.Context, q meta.Querier, cur meta.Repository, k rest.RepoKind, raw map[string]json.RawMessage, partial bool) (meta.Repository, error) {
	body := k.Body()
	in := body.Repo()
	if partial {
		json.Unmarshal(cur.Attrs, body)
		*in = rest.RepoIn{Name: cur.Name, Description: cur.Description, RetainRepoVersions: cur.RetainVersions,
			RetainCheckpoints: meta.RetainCheckpointsOf(cur.Attrs)}
		if cur.RemotePulpID != nil {
			h := href.Remote(*cur.RemoteType, *cur.RemotePulpID)
			in.Remote = &h
		}
	} else if err := rest.Require(raw, "name"); err != nil {
		return cur, err
	}
	if err := rest.Decode(raw, body); err != nil {
		return cur, err
	}
	if in.Name == "" {
		return cur, rest.BadField("name", "This field may not be blank.")
	}
	if in.RetainRepoVersions != nil && *in.RetainRepoVersions < 1 {
		return cur, rest.BadField("retain_repo_versions", "Ensure this value is greater than or equal to 1.")
	}
	if in.RetainCheckpoints != nil && *in.RetainCheckpoints < 1 {
		return cur, rest.BadField("retain_checkpoints", "Ensure this value is greater than or equal to 1.")
	}
	if v, ok := body.(rest.Validator); ok {
		if err := v.Validate(); err != nil {
			return cur, err
		}
	}
	out := cur
	out.Type = k.Type
	out.Name, out.Description, out.RetainVersions = in.Name, in.Description, in.RetainRepoVersions
	out.RemoteID = nil
	if in.Remote != nil {
		p, ok := href.Parse(*in.Remote)
		valid := false
		for _, typ := range k.Remotes {
			valid = valid || ok && p.Rest == "" && p.Collection == "remotes/"+href.Segment(typ)+"/"
		}
		if !valid {
			return cur, rest.BadField("remote", "Invalid hyperlink - No URL match for %q.", *in.Remote)
		}
		m, err := meta.RemoteByPulpID(ctx, q, p.ID)
		if err != nil {
			return cur, rest.BadField("remote", "Invalid hyperlink - Object does not exist.")
		}
		out.RemoteID = &m.ID
	}
	if rest.Has(raw, "pulp_labels") || !partial {
		l, err := rest.SetLabels(in.PulpLabels)
		if err != nil {
			return cur, err
		}
		out.Labels = l
	}
	drop := repoColumns
	if in.RetainCheckpoints == nil {
		drop = append(slices.Clip(drop), "retain_checkpoints") // unset, as in repositories made before it
	}
	var err error
	out.Attrs, err = attrsWithout(body, drop...)
	return out, err
}

// attrsWithout is v's JSON without the named members.
func attrsWithout(v any, drop ...string) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, k := range drop {
		delete(m, k)
	}
	return json.Marshal(m)
}

// repoList lists repositories of a kind, or of every kind (nil).
func (s *Server) repoList(k *rest.RepoKind) rest.HandlerFunc {
	typ := ""
	if k != nil {
		typ = k.Type
	}
	return lister(s, repoListSpec(k), s.scope(kindScoping("repositories", typ, "r"), ofType("r.type", typ)), meta.ListRepositories, each(func(x meta.Repository) any { return s.renderRepo(x) }))
}

func (s *Server) repoCreate(k rest.RepoKind) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		raw, err := rest.ReadBody(r, k.Body(), nil)
		if err != nil {
			return err
		}
		repo, err := applyRepo(r.Context(), s.db, meta.Repository{}, k, raw, false)
		if err != nil {
			return err
		}
		repo, err = meta.CreateRepository(r.Context(), s.db, repo)
		if errors.Is(err, meta.ErrConflict) {
			return rest.BadField("name", "This field must be unique.")
		}
		if err != nil {
			return err
		}
		if err := s.created(r.Context(), "repositories/"+href.Segment(k.Type), meta.Object{Type: k.PRN, ID: repo.PulpID}); err != nil {
			return err
		}
		return rest.WriteOne(w, r, http.StatusCreated, s.renderRepo(repo))
	}
}

func (s *Server) repoRead(w http.ResponseWriter, r *http.Request) error {
	repo, err := s.env.RepoByPath(r)
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, s.renderRepo(repo))
}

// selfLock is the resource list of a request on one resource: its own href.
func selfLock(collection string) func(r *http.Request) []string {
	return func(r *http.Request) []string {
		return []string{href.Root + collection + r.PathValue("id") + "/"}
	}
}

func (s *Server) repoModify(w http.ResponseWriter, r *http.Request) error {
	repo, err := s.env.RepoByPath(r)
	if err != nil {
		return err
	}
	var in modifyIn
	if _, err := rest.DecodeBody(r, &in); err != nil {
		return err
	}
	a := content.ModifyArgs{Repository: repo.PulpID, Overwrite: in.Overwrite}
	if a.Add, err = s.env.ContentIDs(r.Context(), "add_content_units", in.AddContentUnits); err != nil {
		return err
	}
	var remove []string
	for _, h := range in.RemoveContentUnits {
		if h == "*" {
			a.RemoveAll = true
		} else {
			remove = append(remove, h)
		}
	}
	if a.Remove, err = s.env.ContentIDs(r.Context(), "remove_content_units", remove); err != nil {
		return err
	}
	if in.BaseVersion != nil {
		// Pulp takes a version of any repository as the base (the CLI's
		// --base-repository): the new version starts from its content.
		p, ok := href.Parse(*in.BaseVersion)
		n, isVersion := p.VersionNumber()
		if !ok || !isVersion || !s.isRepoCollection(p.Collection) {
			return rest.BadField("base_version", "Invalid hyperlink - No URL match for %q.", *in.BaseVersion)
		}
		base, err := meta.RepositoryByPulpID(r.Context(), s.db, p.ID)
		if err == nil {
			_, err = meta.VersionByNumber(r.Context(), s.db, base.ID, n)
		}
		if err != nil {
			return rest.BadField("base_version", "Invalid hyperlink - Object does not exist.")
		}
		a.Base, a.BaseRepository = &n, base.PulpID
	}
	spec := task.Spec{Name: content.ModifyTask, Args: a, Exclusive: []string{href.Repository(repo.Type, repo.PulpID)}}
	if a.BaseRepository != "" && a.BaseRepository != repo.PulpID {
		base, _ := meta.RepositoryByPulpID(r.Context(), s.db, a.BaseRepository)
		spec.Shared = []string{href.Repository(base.Type, base.PulpID)}
	}
	return s.env.Dispatch(w, r, spec)
}

// isRepoCollection reports whether c ("repositories/rpm/rpm/") is the collection of a
// declared repository kind.
func (s *Server) isRepoCollection(c string) bool {
	for _, k := range s.core.Table().Repositories() {
		if c == "repositories/"+href.Segment(k.Type)+"/" {
			return true
		}
	}
	return false
}
