package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"pith/content"
	"pith/meta"
	"pith/task"
)

func distListSpec(typ string) listSpec {
	fs := []filter{
		{name: "base_path", col: "d.base_path", lookups: []string{"exact", "contains", "icontains", "in"}},
		{name: "checkpoint", kind: kCustom, boolean: true, lookups: []string{"exact"}, apply: func(l *meta.List, d meta.Dialect, v string) error {
			if strings.EqualFold(v, "true") {
				l.And("1 = 0")
			}
			return nil
		}},
		{name: "name", col: "d.name", lookups: nameLookups},
		labelSelect("d.labels"),
		hrefFilter("repository", "(SELECT r.pulp_id FROM repositories r WHERE r.id = d.repository_id)", ""),
		{name: "repository__in", kind: kCustom, lookups: []string{"exact"}, apply: func(l *meta.List, d meta.Dialect, v string) error {
			var ids []any
			for _, h := range splitComma([]string{v}) {
				p, ok := parseHref(h)
				if !ok {
					return badField("repository__in", "Invalid hyperlink - No URL match for %q.", h)
				}
				ids = append(ids, p.id)
			}
			if len(ids) == 0 {
				l.And("1 = 0")
				return nil
			}
			l.And("d.repository_id IN (SELECT r.id FROM repositories r WHERE r.pulp_id IN ("+strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+"))", ids...)
			return nil
		}},
		{name: "with_content", kind: kCustom, lookups: []string{"exact"}, apply: func(l *meta.List, d meta.Dialect, v string) error {
			p, ok := parseHref(v)
			if !ok {
				return badField("with_content", "Invalid hyperlink - No URL match for %q.", v)
			}
			l.And(`(EXISTS (SELECT 1 FROM repository_content rc JOIN contents c ON c.id = rc.content_id WHERE rc.repository_id = d.repository_id
				AND rc.version_removed IS NULL AND c.pulp_id = ?) OR EXISTS (SELECT 1 FROM publications p JOIN repository_content rc ON rc.repository_id = p.repository_id
				JOIN contents c ON c.id = rc.content_id WHERE p.id = d.publication_id AND c.pulp_id = ? AND rc.version_added <= p.version_number
				AND (rc.version_removed IS NULL OR rc.version_removed > p.version_number)))`, p.id, p.id)
			return nil
		}},
	}
	if typ == "" {
		fs = append(fs, filter{name: "pulp_type", col: "d.type", lookups: []string{"exact", "in"}})
	}
	fs = append(fs, identityFilters("d.pulp_id")...)
	return listSpec{filters: fs, ordering: ordering("d", map[string]string{
		"pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated", "name": "name", "base_path": "base_path",
	})}
}

func distError(err error) error {
	if errors.Is(err, meta.ErrConflict) {
		if strings.Contains(err.Error(), "base_path") {
			return badField("base_path", "%v", strings.TrimSuffix(err.Error(), ": "+meta.ErrConflict.Error()))
		}
		return badField("name", "This field must be unique.")
	}
	return err
}

// distKind is one distribution type: its body and response (embedding distIn and
// distResponse), what it may serve, and its PRN model.
type distKind struct {
	prn          string // e.g. "file.filedistribution"
	repositories string // collection it serves repositories of, e.g. "repositories/file/file/"
	publications string
	body         func() distBody
	view         func() distView
}

type distBody interface{ common() *distIn }

func (d *distIn) common() *distIn { return d }

type distView interface{ common() *distResponse }

func (d *distResponse) common() *distResponse { return d }

var distKinds = map[string]distKind{
	fileType: {prn: "file.filedistribution", repositories: "repositories/file/file/", publications: "publications/file/file/",
		body: func() distBody { return &distIn{} }, view: func() distView { return &distResponse{} }},
	rpmType: {prn: "rpm.rpmdistribution", repositories: "repositories/rpm/rpm/", publications: "publications/rpm/rpm/",
		body: func() distBody { return &rpmDistributionIn{} }, view: func() distView { return &rpmDistributionResponse{} }},
}

// distColumns are the body fields kept in columns rather than in attrs.
var distColumns = []string{"base_path", "content_guard", "hidden", "pulp_labels", "name", "repository", "publication", "checkpoint"}

// applyDist applies a create or update body to a distribution of type typ, validating it.
func (s *Server) applyDist(ctx context.Context, q meta.Querier, cur meta.Distribution, typ string, raw map[string]json.RawMessage, partial bool) (meta.Distribution, error) {
	kind, ok := distKinds[typ]
	if !ok {
		return cur, fmt.Errorf("distribution %s: unknown type %q", cur.PulpID, typ)
	}
	body := kind.body()
	in := body.common()
	if partial {
		json.Unmarshal(cur.Attrs, body)
		*in = distIn{BasePath: cur.BasePath, Name: cur.Name, Hidden: cur.Hidden, ContentGuard: cur.ContentGuard}
		if cur.RepoPulpID != nil {
			h := repoHref(*cur.RepoType, *cur.RepoPulpID)
			in.Repository = &h
		}
		if cur.PubPulpID != nil {
			h := pubHref(*cur.PubType, *cur.PubPulpID)
			in.Publication = &h
		}
	} else if err := requireFields(raw, "name", "base_path"); err != nil {
		return cur, err
	}
	if err := decode(raw, body); err != nil {
		return cur, err
	}
	// Setting one of repository/publication clears the other, as Pulp does.
	if partial && has(raw, "repository") && !has(raw, "publication") && in.Repository != nil {
		in.Publication = nil
	}
	if partial && has(raw, "publication") && !has(raw, "repository") && in.Publication != nil {
		in.Repository = nil
	}
	if in.Name == "" {
		return cur, badField("name", "This field may not be blank.")
	}
	bp := strings.Trim(in.BasePath, "/")
	if _, err := content.CleanRelativePath(bp); err != nil {
		return cur, badField("base_path", "%v", err)
	}
	if in.Repository != nil && in.Publication != nil {
		return cur, fieldError{"non_field_errors": {"Only one of the attributes 'repository' and 'publication' may be used simultaneously."}}
	}
	if in.ContentGuard != nil {
		return cur, badField("content_guard", "Content guards are not supported by this server yet.")
	}
	if in.Checkpoint {
		return cur, badField("checkpoint", "Checkpoint distributions are not supported by this server yet.")
	}
	out := cur
	if v, ok := body.(validator); ok {
		if err := v.validate(); err != nil {
			return cur, err
		}
	}
	out.Type, out.Name, out.BasePath, out.Hidden, out.ContentGuard = typ, in.Name, bp, in.Hidden, nil
	out.RepositoryID, out.PublicationID = nil, nil
	if in.Repository != nil {
		r, err := repositoryOf(ctx, q, "repository", *in.Repository, kind.repositories)
		if err != nil {
			return cur, err
		}
		out.RepositoryID = &r.ID
	}
	if in.Publication != nil {
		id, err := hrefOf("publication", *in.Publication, kind.publications)
		if err != nil {
			return cur, err
		}
		p, err := meta.PublicationByPulpID(ctx, q, id)
		if err != nil {
			return cur, badField("publication", "Invalid hyperlink - Object does not exist.")
		}
		out.PublicationID = &p.ID
	}
	if has(raw, "pulp_labels") || !partial {
		l, err := setLabels(in.PulpLabels)
		if err != nil {
			return cur, err
		}
		out.Labels = l
	}
	var err error
	out.Attrs, err = attrsWithout(body, distColumns...)
	return out, err
}

func (s *Server) renderDist(d meta.Distribution) any {
	kind, ok := distKinds[d.Type]
	if !ok {
		kind = distKinds[fileType]
	}
	v := kind.view()
	json.Unmarshal(d.Attrs, v)
	out := v.common()
	*out = distResponse{
		PulpHref: distHref(d.Type, d.PulpID), Prn: prn(kind.prn, d.PulpID), PulpCreated: ts(d.Created), PulpLastUpdated: ts(d.Updated),
		BasePath: d.BasePath, BaseURL: strings.TrimSuffix(s.cfg.ContentOrigin, "/") + "/pulp/content/" + d.BasePath + "/",
		Hidden: d.Hidden, PulpLabels: d.Labels, Name: d.Name,
	}
	if d.RepoPulpID != nil {
		h := repoHref(*d.RepoType, *d.RepoPulpID)
		out.Repository = &h
	}
	if d.PubPulpID != nil {
		h := pubHref(*d.PubType, *d.PubPulpID)
		out.Publication = &h
	}
	return v
}

func (s *Server) distList(typ string) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		q, err := parseList(r, s.db.Dialect(), distListSpec(typ))
		if err != nil {
			return err
		}
		if typ != "" {
			q.list.And("d.type = ?", typ)
		}
		ds, total, err := meta.ListDistributions(r.Context(), s.db, q.list)
		if err != nil {
			return err
		}
		items := make([]any, len(ds))
		for i, d := range ds {
			items[i] = s.renderDist(d)
		}
		return writePage(w, r, q, total, items)
	}
}

func (s *Server) distRead(w http.ResponseWriter, r *http.Request) error {
	d, err := meta.DistributionByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusOK, s.renderDist(d))
}

// createArgs are the arguments of the general create task.
type createArgs struct {
	Kind string                     `json:"kind"`
	Type string                     `json:"type,omitempty"` // e.g. "file.file"; empty means file
	Body map[string]json.RawMessage `json:"body"`
}

func (s *Server) distCreate(typ string) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error { return s.createDist(w, r, typ) }
}

func (s *Server) createDist(w http.ResponseWriter, r *http.Request, typ string) error {
	raw, err := readBody(r, distKinds[typ].body(), nil)
	if err != nil {
		return err
	}
	d, err := s.applyDist(r.Context(), s.db, meta.Distribution{}, typ, raw, false)
	if err != nil {
		return err
	}
	// Refuse conflicts now rather than in a failed task.
	err = s.db.Tx(r.Context(), func(tx *meta.Tx) error {
		if _, err := meta.CreateDistribution(r.Context(), tx, d); err != nil {
			return err
		}
		return errDryRun
	})
	if !errors.Is(err, errDryRun) {
		return distError(err)
	}
	t, err := s.dispatch(r, task.Spec{Name: "pulpcore.app.tasks.base.general_create", Args: createArgs{Kind: "distribution", Type: typ, Body: raw},
		Exclusive: []string{"/api/v3/distributions/"}})
	if err != nil {
		return err
	}
	return accepted(w, t)
}

// applyCreate is the body of the general create task; it returns the new href.
func (s *Server) applyCreate(ctx context.Context, tx *meta.Tx, a createArgs) (string, error) {
	switch a.Kind {
	case "distribution":
		typ := a.Type
		if typ == "" {
			typ = fileType
		}
		d, err := s.applyDist(ctx, tx, meta.Distribution{}, typ, a.Body, false)
		if err != nil {
			return "", err
		}
		d, err = meta.CreateDistribution(ctx, tx, d)
		if err != nil {
			return "", distError(err)
		}
		tx.AfterCommit(s.cfg.Content.Invalidate)
		return distHref(d.Type, d.PulpID), nil
	}
	return "", errors.New("create of unknown kind " + a.Kind)
}
