package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/itchyny/gojq"

	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
	"pith/meta"
	"pith/serve/guard/cert"
)

// Content guards (/contentguards/): pulpcore's rbac, content_redirect, header and
// composite guards and certguard's x509 and rhsm ones. The API stores them; the
// content app (serve/guard) enforces them.

// guardKind is one type of content guard.
type guardKind struct {
	typ    string // "core.rbac": hrefs contentguards/core/rbac/, operations contentguards_core_rbac_*
	model  string // PRN model: "core.rbaccontentguard"
	schema string // body schema: "RBACContentGuard"
	href   string // detail href template
	title  string
	roles  bool // the kind has add_role, remove_role, list_roles and my_permissions
	body   func() guardBody
	view   any
}

// guardKinds are the content guards pith serves.
var guardKinds = []guardKind{
	{typ: "core.rbac", model: "core.rbaccontentguard", schema: "RBACContentGuard", href: "{r_b_a_c_content_guard_href}", title: "Rbac", roles: true,
		body: func() guardBody { return &guardIn{} }, view: rbacGuardResponse{}},
	{typ: "core.content_redirect", model: "core.contentredirectcontentguard", schema: "ContentRedirectContentGuard", href: "{content_redirect_content_guard_href}",
		title: "Content_Redirect", roles: true, body: func() guardBody { return &guardIn{} }, view: guardResponse{}},
	{typ: "core.header", model: "core.headercontentguard", schema: "HeaderContentGuard", href: "{header_content_guard_href}", title: "Header", roles: true,
		body: func() guardBody { return &headerGuardIn{} }, view: headerGuardResponse{}},
	{typ: "core.composite", model: "core.compositecontentguard", schema: "CompositeContentGuard", href: "{composite_content_guard_href}", title: "Composite", roles: true,
		body: func() guardBody { return &compositeGuardIn{} }, view: compositeGuardResponse{}},
	{typ: "certguard.x509", model: "certguard.x509certguard", schema: "certguard.X509CertGuard", href: "{certguard_x509_cert_guard_href}", title: "X509",
		body: func() guardBody { return &certGuardIn{} }, view: certGuardResponse{}},
	{typ: "certguard.rhsm", model: "certguard.rhsmcertguard", schema: "certguard.RHSMCertGuard", href: "{certguard_r_h_s_m_cert_guard_href}", title: "Rhsm",
		body: func() guardBody { return &certGuardIn{} }, view: certGuardResponse{}},
}

func guardKindOf(typ string) (guardKind, bool) {
	for _, k := range guardKinds {
		if k.typ == typ {
			return k, true
		}
	}
	return guardKind{}, false
}

// guardHref is the href of a guard of type typ.
func guardHref(typ, id string) string {
	return href.Root + "contentguards/" + href.Segment(typ) + "/" + id + "/"
}

// guardBody is a guard's request shape: it applies itself to a guard, checking what it
// holds.
type guardBody interface {
	common() *guardIn
	apply(s *Server, r *http.Request, raw map[string]json.RawMessage, g *meta.ContentGuard) error
	required() []string
}

type guardIn struct {
	Name        string  `json:"name" openapi:"required,minLength=1"`
	Description *string `json:"description" openapi:"nullable,minLength=1"`
}

func (in *guardIn) common() *guardIn   { return in }
func (in *guardIn) required() []string { return []string{"name"} }
func (in *guardIn) apply(_ *Server, _ *http.Request, _ map[string]json.RawMessage, g *meta.ContentGuard) error {
	if g.Type == "core.content_redirect" && g.PulpID == "" {
		// A new redirect guard's secret signs the URLs it lets through (Pulp's
		// shared_secret); it never leaves the server.
		secret := make([]byte, 32)
		rand.Read(secret)
		g.Attrs = attrsJSON(map[string]any{"shared_secret": hex.EncodeToString(secret)})
	}
	return nil
}

type headerGuardIn struct {
	guardIn
	HeaderName  string  `json:"header_name" openapi:"required,minLength=1"`
	HeaderValue string  `json:"header_value" openapi:"required,minLength=1"`
	JQFilter    *string `json:"jq_filter" openapi:"nullable,minLength=1"`
}

func (in *headerGuardIn) required() []string { return []string{"name", "header_name", "header_value"} }
func (in *headerGuardIn) apply(_ *Server, _ *http.Request, _ map[string]json.RawMessage, g *meta.ContentGuard) error {
	if in.JQFilter != nil {
		if _, err := gojq.Parse(*in.JQFilter); err != nil {
			return rest.BadField("jq_filter", "Not a valid jq filter: %v.", err)
		}
	}
	if strings.ContainsAny(in.HeaderName, " \t\r\n:") {
		return rest.BadField("header_name", "Not a valid header name: %q.", in.HeaderName)
	}
	g.Attrs = attrsJSON(map[string]any{"header_name": in.HeaderName, "header_value": in.HeaderValue, "jq_filter": in.JQFilter})
	return nil
}

type compositeGuardIn struct {
	guardIn
	Guards []*string `json:"guards" openapi:"format=uri"`
}

func (in *compositeGuardIn) apply(s *Server, r *http.Request, raw map[string]json.RawMessage, g *meta.ContentGuard) error {
	if !rest.Has(raw, "guards") {
		return nil
	}
	g.Members = []string{}
	for _, h := range in.Guards {
		if h == nil {
			continue
		}
		p, ok := href.Parse(*h)
		if !ok || p.Rest != "" || !strings.HasPrefix(p.Collection, "contentguards/") {
			return rest.BadField("guards", "Invalid hyperlink - No URL match for %q.", *h)
		}
		m, err := meta.GuardByPulpID(r.Context(), s.db, p.ID)
		if err != nil {
			return rest.BadField("guards", "Invalid hyperlink - Object does not exist.")
		}
		if m.Type == "core.composite" || m.PulpID == g.PulpID {
			return rest.BadField("guards", "A composite guard asks other guards, not composites: %s.", *h)
		}
		g.Members = append(g.Members, m.PulpID)
	}
	return nil
}

type certGuardIn struct {
	guardIn
	CACertificate string `json:"ca_certificate" openapi:"required,minLength=1"`
}

func (in *certGuardIn) required() []string { return []string{"name", "ca_certificate"} }
func (in *certGuardIn) apply(_ *Server, _ *http.Request, _ map[string]json.RawMessage, g *meta.ContentGuard) error {
	kind := cert.X509
	if g.Type == "certguard.rhsm" {
		kind = cert.RHSM
	}
	if _, err := cert.Compile(kind, in.CACertificate); err != nil {
		return rest.BadField("ca_certificate", "%v", err)
	}
	g.Attrs = attrsJSON(map[string]any{"ca_certificate": in.CACertificate})
	return nil
}

func attrsJSON(v map[string]any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

type guardResponse struct {
	PulpHref        string  `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string  `json:"prn" openapi:"readOnly"`
	PulpCreated     string  `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated string  `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	Name            string  `json:"name" openapi:"required"`
	Description     *string `json:"description" openapi:"nullable"`
}

type rbacGuardResponse struct {
	guardResponse
	Users  []groupUserResponse `json:"users" openapi:"readOnly"`
	Groups []groupResponse     `json:"groups" openapi:"readOnly"`
}

type headerGuardResponse struct {
	guardResponse
	HeaderName  string  `json:"header_name" openapi:"required"`
	HeaderValue string  `json:"header_value" openapi:"required"`
	JQFilter    *string `json:"jq_filter" openapi:"nullable"`
}

type compositeGuardResponse struct {
	guardResponse
	Guards []string `json:"guards"`
}

type certGuardResponse struct {
	guardResponse
	CACertificate string `json:"ca_certificate" openapi:"required"`
}

// renderGuard shows a guard as its kind does.
func (s *Server) renderGuard(ctx context.Context, g meta.ContentGuard) (any, error) {
	k, _ := guardKindOf(g.Type)
	base := guardResponse{PulpHref: guardHref(g.Type, g.PulpID), Prn: href.PRN(k.model, g.PulpID), PulpCreated: rest.Time(g.Created),
		PulpLastUpdated: rest.Time(g.Updated), Name: g.Name, Description: g.Description}
	var attrs struct {
		HeaderName    string  `json:"header_name"`
		HeaderValue   string  `json:"header_value"`
		JQFilter      *string `json:"jq_filter"`
		CACertificate string  `json:"ca_certificate"`
	}
	json.Unmarshal(g.Attrs, &attrs)
	switch g.Type {
	case "core.rbac":
		// Who may download: the holders of the downloader role on the guard.
		out := rbacGuardResponse{guardResponse: base, Users: []groupUserResponse{}, Groups: []groupResponse{}}
		roles, err := meta.ObjectRoles(ctx, s.db, meta.Object{Type: k.model, ID: g.PulpID})
		if err != nil {
			return nil, err
		}
		for _, or := range roles {
			if or.Role != "core.rbaccontentguard_downloader" {
				continue
			}
			for _, name := range or.Users {
				if u, err := meta.UserByName(ctx, s.db, name); err == nil {
					out.Users = append(out.Users, renderGroupUser(u))
				}
			}
			for _, name := range or.Groups {
				if grp, err := meta.GroupByName(ctx, s.db, name); err == nil {
					out.Groups = append(out.Groups, renderUserGroup(grp))
				}
			}
		}
		return out, nil
	case "core.header":
		return headerGuardResponse{guardResponse: base, HeaderName: attrs.HeaderName, HeaderValue: attrs.HeaderValue, JQFilter: attrs.JQFilter}, nil
	case "core.composite":
		out := compositeGuardResponse{guardResponse: base, Guards: []string{}}
		for _, m := range g.Members {
			if mg, err := meta.GuardByPulpID(ctx, s.db, m); err == nil {
				out.Guards = append(out.Guards, guardHref(mg.Type, mg.PulpID))
			}
		}
		return out, nil
	case "certguard.x509", "certguard.rhsm":
		return certGuardResponse{guardResponse: base, CACertificate: attrs.CACertificate}, nil
	}
	return base, nil
}

func guardListSpec(all bool) rest.ListSpec {
	fs := []rest.Filter{{Name: "name", Col: "cg.name", Lookups: rest.NameLookups}}
	if all {
		fs = append(fs, rest.Filter{Name: "pulp_type", Col: "cg.type", Lookups: []string{"exact", "in"}})
	}
	fs = append(fs, rest.IdentityFilters("cg.pulp_id")...)
	order := map[string]string{"pk": "id", "pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated",
		"name": "name", "description": "description"}
	if all {
		order["pulp_type"] = "type"
	}
	return rest.ListSpec{Filters: fs, Ordering: rest.Ordering("cg", order)}
}

func (s *Server) guardList(typ string) rest.HandlerFunc {
	sc := scoping{viewset: "contentguards", id: "cg.pulp_id", typ: "cg.type"}
	if typ != "" {
		sc = scoping{viewset: "contentguards/" + href.Segment(typ), id: "cg.pulp_id"}
	}
	return lister(s, guardListSpec(typ == ""), s.scope(sc, ofType("cg.type", typ)), meta.ListGuards,
		func(r *http.Request, gs []meta.ContentGuard) ([]any, error) {
			out := make([]any, len(gs))
			for i, g := range gs {
				var err error
				if out[i], err = s.renderGuard(r.Context(), g); err != nil {
					return nil, err
				}
			}
			return out, nil
		})
}

// guardOfPath is the guard of type typ the request's {id} names.
func (s *Server) guardOfPath(r *http.Request, typ string) (meta.ContentGuard, error) {
	g, err := meta.GuardByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err == nil && g.Type != typ {
		err = meta.ErrNotFound
	}
	return g, err
}

func (s *Server) guardRead(typ string) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		g, err := s.guardOfPath(r, typ)
		if err != nil {
			return err
		}
		return s.writeGuard(w, r, http.StatusOK, g)
	}
}

func (s *Server) writeGuard(w http.ResponseWriter, r *http.Request, status int, g meta.ContentGuard) error {
	out, err := s.renderGuard(r.Context(), g)
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, status, out)
}

// guardWrite creates a guard (create) or changes one (partial: only what the body sends).
func (s *Server) guardWrite(k guardKind, create, partial bool) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		g := meta.ContentGuard{Type: k.typ, Attrs: json.RawMessage("{}")}
		body := k.body()
		if !create {
			var err error
			if g, err = s.guardOfPath(r, k.typ); err != nil {
				return err
			}
			// The stored settings are the starting point of a partial update.
			json.Unmarshal(g.Attrs, body)
			body.common().Name, body.common().Description = g.Name, g.Description
			if cg, ok := body.(*compositeGuardIn); ok {
				for _, m := range g.Members {
					if mg, err := meta.GuardByPulpID(r.Context(), s.db, m); err == nil {
						h := guardHref(mg.Type, mg.PulpID)
						cg.Guards = append(cg.Guards, &h)
					}
				}
			}
		}
		raw, err := rest.DecodeBody(r, body)
		if err != nil {
			return err
		}
		if !partial {
			if err := rest.Require(raw, body.required()...); err != nil {
				return err
			}
		}
		c := body.common()
		g.Name, g.Description = c.Name, c.Description
		if err := body.apply(s, r, raw, &g); err != nil {
			return err
		}
		err = s.db.Tx(r.Context(), func(tx *meta.Tx) error {
			if create {
				var err error
				g, err = meta.CreateGuard(r.Context(), tx, g)
				return err
			}
			if err := meta.UpdateGuard(r.Context(), tx, g); err != nil {
				return err
			}
			g, err = meta.GuardByPulpID(r.Context(), tx, g.PulpID)
			return err
		})
		if errors.Is(err, meta.ErrConflict) {
			return rest.BadField("name", "This field must be unique.")
		}
		if err != nil {
			return err
		}
		s.core.Invalidate() // the content app enforces the guard as it is now
		status := http.StatusOK
		if create {
			status = http.StatusCreated
			if err := s.created(r.Context(), "contentguards/"+href.Segment(k.typ), meta.Object{Type: k.model, ID: g.PulpID}); err != nil {
				return err
			}
		}
		return s.writeGuard(w, r, status, g)
	}
}

func (s *Server) guardDelete(typ string) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		g, err := s.guardOfPath(r, typ)
		if err != nil {
			return err
		}
		if err := s.db.Tx(r.Context(), func(tx *meta.Tx) error { return meta.DeleteGuard(r.Context(), tx, g) }); err != nil {
			return err
		}
		s.core.Invalidate()
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// guardOps are the operations of every kind of content guard and the list of all.
func (s *Server) guardOps(t *rest.Table) []rest.Op {
	root := href.Root
	r := func(code int, schema string) []openapi.Response { return []openapi.Response{rest.Resp(code, schema)} }
	all := guardListSpec(true)
	ops := []rest.Op{{ID: "contentguards_list", Viewset: "contentguards", Method: "GET", Path: root + "contentguards/", Pattern: root + "contentguards/{$}",
		Tag: "Contentguards", List: &all, Responses: r(200, t.Paginated(t.Schema("ContentGuardResponse", guardResponse{}))), Handler: s.guardList("")}}
	for _, k := range guardKinds {
		seg := href.Segment(k.typ)
		pat := root + "contentguards/" + seg + "/"
		vs := "contentguards/" + seg
		id := "contentguards_" + strings.ReplaceAll(seg, "/", "_")
		tag := "Contentguards: " + k.title
		view := t.Schema(k.schema+"Response", k.view)
		list := guardListSpec(false)
		ops = append(ops,
			rest.Op{ID: id + "_list", Viewset: vs, Method: "GET", Path: pat, Pattern: pat + "{$}", Tag: tag, List: &list,
				Responses: r(200, t.Paginated(view)), Handler: s.guardList(k.typ)},
			rest.Op{ID: id + "_create", Viewset: vs, Method: "POST", Path: pat, Pattern: pat + "{$}", Tag: tag,
				Body: k.body(), BodyName: k.schema, Media: rest.JSONForms, Responses: r(201, view), Handler: s.guardWrite(k, true, false)},
			rest.Op{ID: id + "_read", Viewset: vs, Method: "GET", Path: k.href, Pattern: pat + "{id}/{$}", Tag: tag, Detail: true,
				Responses: r(200, view), Handler: s.guardRead(k.typ)},
			rest.Op{ID: id + "_update", Viewset: vs, Method: "PUT", Path: k.href, Pattern: pat + "{id}/{$}", Tag: tag,
				Body: k.body(), BodyName: k.schema, Media: rest.JSONForms, Responses: r(200, view), Handler: s.guardWrite(k, false, false)},
			rest.Op{ID: id + "_partial_update", Viewset: vs, Method: "PATCH", Path: k.href, Pattern: pat + "{id}/{$}", Tag: tag,
				Body: k.body(), BodyName: "Patched" + k.schema, Media: rest.JSONForms, Responses: r(200, view), Handler: s.guardWrite(k, false, true)},
			rest.Op{ID: id + "_delete", Viewset: vs, Method: "DELETE", Path: k.href, Pattern: pat + "{id}/{$}", Tag: tag,
				Responses: r(204, ""), Handler: s.guardDelete(k.typ)})
		if k.roles {
			ops = append(ops, s.objectRoleOps(t, vs, id, k.href, pat+"{id}/", tag)...)
		}
	}
	return ops
}
