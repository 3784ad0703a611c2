package api

import (
	"net/http"

	"pith/api/href"
	"pith/api/rest"
	"pith/meta"
)

// pubListSpec is the publication list of a kind, or of every kind (nil).
func pubListSpec(k *rest.PubKind) rest.ListSpec {
	content := func(in bool) func(l *meta.List, d meta.Dialect, v string) error {
		return func(l *meta.List, d meta.Dialect, v string) error {
			vals := []string{v}
			if in {
				vals = rest.SplitComma(vals)
			}
			var ids []any
			for _, h := range vals {
				hp, ok := href.Parse(h)
				if !ok {
					return rest.BadField("content", "Invalid hyperlink - No URL match for %q.", h)
				}
				ids = append(ids, hp.ID)
			}
			if len(ids) == 0 {
				l.And("1 = 0")
				return nil
			}
			// IN, not ORs: SQLite nests each OR a level deeper and refuses 1,000 levels.
			l.And(`EXISTS (SELECT 1 FROM repository_content rc JOIN contents c ON c.id = rc.content_id WHERE rc.repository_id = p.repository_id
				AND `+meta.InVersion("rc", "p.version_number")+` AND c.pulp_id IN `+rest.Placeholders(len(ids))+`)`, ids...)
			return nil
		}
	}
	fs := []rest.Filter{
		{Name: "checkpoint", Col: "p.checkpoint", Type: rest.Bool, Lookups: []string{"exact"}},
		{Name: "content", Type: rest.Custom, Lookups: []string{"exact"}, Apply: content(false)},
		{Name: "content__in", Type: rest.Custom, Lookups: []string{"exact"}, Apply: content(true)},
		rest.TimeFilter("pulp_created", "p.created"),
		rest.HrefFilter("repository", "r.pulp_id", ""),
		{Name: "repository_version", Type: rest.Custom, Lookups: []string{"exact"}, Apply: func(l *meta.List, d meta.Dialect, v string) error {
			repo, n, err := rest.VersionFilter(v, "repository_version")
			if err != nil {
				return err
			}
			l.And("r.pulp_id = ? AND p.version_number = ?", repo, n)
			return nil
		}},
	}
	if k == nil {
		fs = append(fs, rest.Filter{Name: "pulp_type", Col: "p.type", Lookups: []string{"exact", "in"}})
	}
	fs = append(fs, rest.IdentityFilters("p.pulp_id")...)
	return rest.ListSpec{Filters: fs, Ordering: rest.Ordering("p", map[string]string{"pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated"})}
}

// renderPublication shows a publication as its type's response.
func (s *Server) renderPublication(p meta.Publication, dists []string) any {
	k, ok := s.core.Table().PubKind(p.Type)
	if !ok {
		return rest.NewPublicationResponse(p, p.Type+"publication")
	}
	return k.Render(p, dists)
}

func (s *Server) pubDists(r *http.Request, p meta.Publication) ([]string, error) {
	ds, _, err := meta.ListDistributions(r.Context(), s.db, meta.List{Where: []string{"d.publication_id = ?"}, Args: []any{p.ID}})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = href.Distribution(d.Type, d.PulpID)
	}
	return out, nil
}

// pubList lists publications of a kind, or of every kind (nil).
func (s *Server) pubList(k *rest.PubKind) rest.HandlerFunc {
	typ := ""
	if k != nil {
		typ = k.Type
	}
	render := func(r *http.Request, ps []meta.Publication) ([]any, error) {
		items := make([]any, len(ps))
		for i, p := range ps {
			dists, err := s.pubDists(r, p)
			if err != nil {
				return nil, err
			}
			items[i] = s.renderPublication(p, dists)
		}
		return items, nil
	}
	return lister(s, pubListSpec(k), s.scope(kindScoping("publications", typ, "p"), ofType("p.type", typ)), meta.ListPublications, render)
}

func (s *Server) pubRead(w http.ResponseWriter, r *http.Request) error {
	p, err := meta.PublicationByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	dists, err := s.pubDists(r, p)
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, s.renderPublication(p, dists))
}

func (s *Server) pubDelete(w http.ResponseWriter, r *http.Request) error {
	p, err := meta.PublicationByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := meta.DeletePublication(r.Context(), s.db, p.ID); err != nil {
		return err
	}
	s.core.Invalidate()
	w.WriteHeader(http.StatusNoContent)
	return nil
}
