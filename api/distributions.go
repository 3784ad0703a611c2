package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"pith/api/href"
	"pith/api/rest"
	"pith/content"
	"pith/meta"
	"pith/task"
)

// distListSpec is the distribution list of a kind, or of every kind (nil).
func distListSpec(k *rest.DistKind) rest.ListSpec {
	fs := []rest.Filter{
		{Name: "base_path", Col: "d.base_path", Lookups: []string{"exact", "contains", "icontains", "in"}},
		{Name: "checkpoint", Col: "d.checkpoint", Type: rest.Bool, Lookups: []string{"exact"}},
		{Name: "name", Col: "d.name", Lookups: rest.NameLookups},
		rest.LabelSelect("d.labels"),
		rest.HrefFilter("repository", "(SELECT r.pulp_id FROM repositories r WHERE r.id = d.repository_id)", ""),
		{Name: "repository__in", Type: rest.Custom, Lookups: []string{"exact"}, Apply: func(l *meta.List, d meta.Dialect, v string) error {
			var ids []any
			for _, h := range rest.SplitComma([]string{v}) {
				p, ok := href.Parse(h)
				if !ok {
					return rest.BadField("repository__in", "Invalid hyperlink - No URL match for %q.", h)
				}
				ids = append(ids, p.ID)
			}
			if len(ids) == 0 {
				l.And("1 = 0")
				return nil
			}
			l.And("d.repository_id IN (SELECT r.id FROM repositories r WHERE r.pulp_id IN ("+strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+"))", ids...)
			return nil
		}},
		{Name: "with_content", Type: rest.Custom, Lookups: []string{"exact"}, Apply: func(l *meta.List, d meta.Dialect, v string) error {
			p, ok := href.Parse(v)
			if !ok {
				return rest.BadField("with_content", "Invalid hyperlink - No URL match for %q.", v)
			}
			l.And(`(EXISTS (SELECT 1 FROM repository_content rc JOIN contents c ON c.id = rc.content_id WHERE rc.repository_id = d.repository_id
				AND rc.version_removed IS NULL AND c.pulp_id = ?) OR EXISTS (SELECT 1 FROM publications p JOIN repository_content rc ON rc.repository_id = p.repository_id
				JOIN contents c ON c.id = rc.content_id WHERE p.id = d.publication_id AND c.pulp_id = ? AND `+meta.InVersion("rc", "p.version_number")+`))`, p.ID, p.ID)
			return nil
		}},
	}
	if k == nil {
		fs = append(fs, rest.Filter{Name: "pulp_type", Col: "d.type", Lookups: []string{"exact", "in"}})
	}
	fs = append(fs, rest.IdentityFilters("d.pulp_id")...)
	return rest.ListSpec{Filters: fs, Ordering: rest.Ordering("d", map[string]string{
		"pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated", "name": "name", "base_path": "base_path",
	})}
}

func distError(err error) error {
	if errors.Is(err, meta.ErrConflict) {
		if strings.Contains(err.Error(), "base_path") {
			return rest.BadField("base_path", "%v", strings.TrimSuffix(err.Error(), ": "+meta.ErrConflict.Error()))
		}
		return rest.BadField("name", "This field must be unique.")
	}
	return err
}

// distColumns are the body fields kept in columns rather than in attrs.
var distColumns = []string{"base_path", "content_guard", "hidden", "pulp_labels", "name", "repository", "publication", "checkpoint", "repository_version"}

// applyDist applies a create or update body to a distribution of kind k, validating it.
func applyDist(ctx context.Context, q meta.Querier, cur meta.Distribution, k rest.DistKind, raw map[string]json.RawMessage, partial bool) (meta.Distribution, error) {
	body := k.Body()
	in := body.Dist()
	if partial {
		json.Unmarshal(cur.Attrs, body)
		*in = rest.DistIn{BasePath: cur.BasePath, Name: cur.Name, Hidden: cur.Hidden, Checkpoint: cur.Checkpoint}
		if cur.ContentGuard != nil && cur.GuardType != nil {
			h := guardHref(*cur.GuardType, *cur.ContentGuard)
			in.ContentGuard = &h
		}
		if cur.RepoPulpID != nil {
			h := href.Repository(*cur.RepoType, *cur.RepoPulpID)
			in.Repository = &h
		}
		if cur.PubPulpID != nil {
			h := href.Publication(*cur.PubType, *cur.PubPulpID)
			in.Publication = &h
		}
	} else if err := rest.Require(raw, "name", "base_path"); err != nil {
		return cur, err
	}
	if err := rest.Decode(raw, body); err != nil {
		return cur, err
	}
	version := in.RepositoryVersion
	if vb, ok := body.(rest.VersionBody); ok && k.Versions {
		version = vb.VersionHref()
		if partial && !rest.Has(raw, "repository_version") && cur.VersionRepo != nil {
			h := href.Version(*cur.VersionType, *cur.VersionRepo, *cur.VersionNumber)
			version = &h
		}
	}
	// Setting one of repository, publication and repository_version clears the others,
	// as Pulp does.
	if partial {
		set := func(f string, v *string) bool { return rest.Has(raw, f) && v != nil }
		switch {
		case set("repository", in.Repository) && !rest.Has(raw, "publication") && !rest.Has(raw, "repository_version"):
			in.Publication, version = nil, nil
		case set("publication", in.Publication) && !rest.Has(raw, "repository") && !rest.Has(raw, "repository_version"):
			in.Repository, version = nil, nil
		case set("repository_version", version) && !rest.Has(raw, "repository") && !rest.Has(raw, "publication"):
			in.Repository, in.Publication = nil, nil
		}
	}
	if in.Name == "" {
		return cur, rest.BadField("name", "This field may not be blank.")
	}
	bp := strings.Trim(in.BasePath, "/")
	if _, err := content.CleanRelativePath(bp); err != nil {
		return cur, rest.BadField("base_path", "%v", err)
	}
	if in.Repository != nil && in.Publication != nil {
		return cur, rest.NonField("Only one of the attributes 'repository' and 'publication' may be used simultaneously.")
	}
	if version != nil && in.Repository != nil {
		return cur, rest.NonField("Only one of the attributes 'repository' and 'repository_version' may be used simultaneously.")
	}
	if version != nil && in.Publication != nil {
		return cur, rest.NonField("Only one of the attributes 'publication' and 'repository_version' may be used simultaneously.")
	}
	if in.Checkpoint && in.Repository == nil {
		return cur, rest.NonField("The 'checkpoint' attribute may only be used with the 'repository' attribute.")
	}
	if version != nil && !k.Versions {
		return cur, rest.BadField("repository_version", "Distributions of a fixed repository version are not supported by this server yet; "+
			"distribute a publication of it.")
	}
	out := cur
	if v, ok := body.(rest.Validator); ok {
		if err := v.Validate(); err != nil {
			return cur, err
		}
	}
	out.Type, out.Name, out.BasePath, out.Hidden, out.Checkpoint, out.ContentGuard = k.Type, in.Name, bp, in.Hidden, in.Checkpoint, nil
	if in.ContentGuard != nil {
		p, ok := href.Parse(*in.ContentGuard)
		if !ok || p.Rest != "" || !strings.HasPrefix(p.Collection, "contentguards/") {
			return cur, rest.BadField("content_guard", "Invalid hyperlink - No URL match for %q.", *in.ContentGuard)
		}
		g, err := meta.GuardByPulpID(ctx, q, p.ID)
		if err != nil || "contentguards/"+href.Segment(g.Type)+"/" != p.Collection {
			return cur, rest.BadField("content_guard", "Invalid hyperlink - Object does not exist.")
		}
		out.ContentGuard, out.GuardType = &g.PulpID, &g.Type
	}
	out.RepositoryID, out.PublicationID, out.VersionID = nil, nil, nil
	if version != nil {
		repoID, n, err := rest.VersionOf("repository_version", *version, "repositories/"+href.Segment(k.Repositories)+"/")
		if err != nil {
			return cur, err
		}
		r, err := meta.RepositoryByPulpID(ctx, q, repoID)
		var v meta.Version
		if err == nil {
			v, err = meta.VersionByNumber(ctx, q, r.ID, n)
		}
		if err != nil {
			return cur, rest.BadField("repository_version", "Invalid hyperlink - Object does not exist.")
		}
		out.VersionID = &v.ID
	}
	if in.Repository != nil {
		id, err := rest.HrefOf("repository", *in.Repository, "repositories/"+href.Segment(k.Repositories)+"/")
		if err != nil {
			return cur, err
		}
		r, err := meta.RepositoryByPulpID(ctx, q, id)
		if err != nil {
			return cur, rest.BadField("repository", "Invalid hyperlink - Object does not exist.")
		}
		out.RepositoryID = &r.ID
	}
	if in.Publication != nil {
		if k.Publications == "" {
			return cur, rest.BadField("publication", "This distribution type serves repositories; it has no publications.")
		}
		id, err := rest.HrefOf("publication", *in.Publication, "publications/"+href.Segment(k.Publications)+"/")
		if err != nil {
			return cur, err
		}
		p, err := meta.PublicationByPulpID(ctx, q, id)
		if err != nil {
			return cur, rest.BadField("publication", "Invalid hyperlink - Object does not exist.")
		}
		out.PublicationID = &p.ID
	}
	if rest.Has(raw, "pulp_labels") || !partial {
		l, err := rest.SetLabels(in.PulpLabels)
		if err != nil {
			return cur, err
		}
		out.Labels = l
	}
	var err error
	out.Attrs, err = attrsWithout(body, distColumns...)
	return out, err
}

func (s *Server) renderDist(r *http.Request, d meta.Distribution) any {
	kind, _ := s.core.Table().DistKind(d.Type)
	v := kind.View()
	json.Unmarshal(d.Attrs, v)
	out := v.Dist()
	*out = rest.DistResponse{
		PulpHref: href.Distribution(d.Type, d.PulpID), Prn: href.PRN(kind.PRN, d.PulpID), PulpCreated: rest.Time(d.Created), PulpLastUpdated: rest.Time(d.Updated),
		BasePath: d.BasePath, BaseURL: strings.TrimSuffix(s.cfg.ContentOrigin, "/") + "/pulp/content/" + d.BasePath + "/",
		Hidden: d.Hidden, Checkpoint: d.Checkpoint, PulpLabels: d.Labels, Name: d.Name,
	}
	if d.RepoPulpID != nil {
		h := href.Repository(*d.RepoType, *d.RepoPulpID)
		out.Repository = &h
	}
	if d.PubPulpID != nil {
		h := href.Publication(*d.PubType, *d.PubPulpID)
		out.Publication = &h
	}
	if d.ContentGuard != nil && d.GuardType != nil {
		h := guardHref(*d.GuardType, *d.ContentGuard)
		out.ContentGuard = &h
	}
	if f, ok := v.(rest.DistFinisher); ok {
		f.FinishDist(d, rest.Origin(r))
	}
	return v
}

// distList lists distributions of a kind, or of every kind (nil).
func (s *Server) distList(k *rest.DistKind) rest.HandlerFunc {
	typ := ""
	if k != nil {
		typ = k.Type
	}
	return lister(s, distListSpec(k), s.scope(kindScoping("distributions", typ, "d"), ofType("d.type", typ)), meta.ListDistributions, func(r *http.Request, ds []meta.Distribution) ([]any, error) {
		items := make([]any, len(ds))
		for i, d := range ds {
			items[i] = s.renderDist(r, d)
		}
		return items, nil
	})
}

func (s *Server) distRead(w http.ResponseWriter, r *http.Request) error {
	d, err := meta.DistributionByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, s.renderDist(r, d))
}

// distCreate validates a distribution (creating it in a transaction that is rolled
// back, so conflicts are refused now rather than in a failed task) and queues the general
// create task.
func (s *Server) distCreate(k rest.DistKind) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		raw, err := rest.ReadBody(r, k.Body(), nil)
		if err != nil {
			return err
		}
		d, err := applyDist(r.Context(), s.db, meta.Distribution{}, k, raw, false)
		if err != nil {
			return err
		}
		err = s.db.Tx(r.Context(), func(tx *meta.Tx) error {
			if _, err := meta.CreateDistribution(r.Context(), tx, d); err != nil {
				return err
			}
			return errDryRun
		})
		if !errors.Is(err, errDryRun) {
			return distError(err)
		}
		return s.env.Dispatch(w, r, task.Spec{Name: rest.CreateTask, Args: rest.CreateArgs{Kind: kindDistribution, Type: k.Type, Body: raw},
			Exclusive: []string{"/api/v3/distributions/"}})
	}
}
