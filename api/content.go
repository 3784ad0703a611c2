package api

import (
	"context"
	"net/http"

	"pith/api/href"
	"pith/api/rest"
	"pith/meta"
)

// unitListSpec is the unit list of a kind (its own filters and ordering beside the
// common ones), or of every kind (nil).
func unitListSpec(k *rest.UnitKind) rest.ListSpec {
	fs := rest.UnitFilters()
	if k == nil {
		fs = append(fs, rest.Filter{Name: "pulp_type", Col: "c.type", Lookups: []string{"exact", "in"}})
		return rest.ListSpec{Filters: append(fs, rest.IdentityFilters("c.pulp_id")...), Ordering: map[string]string{"pk": "c.id"}}
	}
	fs = append(fs, k.Filters...)
	return rest.ListSpec{Filters: append(fs, rest.IdentityFilters("c.pulp_id")...), Ordering: k.Ordering}
}

// contentResponse is the generic content list's item: the unit's head and its artifacts
// by relative path.
type contentResponse struct {
	rest.UnitHead
	Artifacts map[string]*string `json:"artifacts"`
}

// contentList lists units of a kind, rendered by the kind, or of every kind (nil).
func (s *Server) contentList(k *rest.UnitKind) rest.HandlerFunc {
	if k == nil {
		return lister(s, unitListSpec(nil), s.scope(scoping{viewset: "content", content: "c.id"}, nil), meta.ListContent, func(r *http.Request, cs []meta.Content) ([]any, error) {
			return s.renderGeneric(r.Context(), cs)
		})
	}
	return lister(s, unitListSpec(k), s.contentOfType(k.Type, scoping{viewset: "content/" + k.Segment, content: "c.id"}), meta.ListContent, func(r *http.Request, cs []meta.Content) ([]any, error) {
		return k.Render(r.Context(), cs)
	})
}

// renderGeneric renders units of any kinds as the generic content list shows them.
func (s *Server) renderGeneric(ctx context.Context, cs []meta.Content) ([]any, error) {
	ids := make([]int64, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	files, err := meta.ContentArtifactsOf(ctx, s.db, ids)
	if err != nil {
		return nil, err
	}
	items := make([]any, len(cs))
	for i, c := range cs {
		k, _ := s.core.Table().UnitKind(c.Type)
		arts := map[string]*string{}
		for _, f := range files[c.ID] {
			var h *string
			if f.ArtifactPulpID != nil {
				a := href.Artifact(*f.ArtifactPulpID)
				h = &a
			}
			arts[f.RelativePath] = h
		}
		items[i] = contentResponse{UnitHead: rest.NewUnitHead(c, k.Segment, k.PRN), Artifacts: arts}
	}
	return items, nil
}

// unitRead shows one unit of kind k.
func (s *Server) unitRead(k rest.UnitKind) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := meta.ContentByPulpID(r.Context(), s.db, r.PathValue("id"))
		if err != nil {
			return err
		}
		if c.Type != k.Type {
			return rest.ErrNotFound
		}
		items, err := k.Render(r.Context(), []meta.Content{c})
		if err != nil {
			return err
		}
		return rest.WriteOne(w, r, http.StatusOK, items[0])
	}
}
