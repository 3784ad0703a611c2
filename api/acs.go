package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
	"pith/content"
	"pith/meta"
	"pith/task"
)

// Alternate content sources (Pulp's acs/<plugin>/<type>/): CRUD through the general
// tasks like remotes, the roles of every object, and refresh, a task group of one task
// per path that the type runs (rest.ACSKind.Refresh).

// kindACS is the general tasks' kind of alternate content sources (crudKind.one).
const kindACS = "alternate_content_source"

// maxACSPaths bounds the paths of one alternate content source.
const maxACSPaths = 100

type acsIn struct {
	Name          string   `json:"name" openapi:"minLength=1,desc=Name of Alternate Content Source."`
	LastRefreshed *string  `json:"last_refreshed" openapi:"format=date-time,nullable,desc=Date of last refresh of AlternateContentSource."`
	Paths         []string `json:"paths" openapi:"desc=List of paths that will be appended to the Remote url when searching for content."`
	Remote        string   `json:"remote" openapi:"format=uri,desc=The remote to provide alternate content source."`
}

type acsResponse struct {
	PulpHref        string   `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string   `json:"prn" openapi:"readOnly,desc=The Pulp Resource Name (PRN)."`
	PulpCreated     string   `json:"pulp_created" openapi:"format=date-time,readOnly,desc=Timestamp of creation."`
	PulpLastUpdated string   `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	Name            string   `json:"name" openapi:"desc=Name of Alternate Content Source."`
	LastRefreshed   any      `json:"last_refreshed" openapi:"type=string,format=date-time,nullable,desc=Date of last refresh of AlternateContentSource."`
	Paths           []string `json:"paths" openapi:"desc=List of paths that will be appended to the Remote url when searching for content."`
	Remote          string   `json:"remote" openapi:"format=uri,desc=The remote to provide alternate content source."`
}

func acsListSpec() rest.ListSpec {
	fs := []rest.Filter{{Name: "name", Col: "a.name", Lookups: rest.NameLookups}}
	fs = append(fs, rest.IdentityFilters("a.pulp_id")...)
	return rest.ListSpec{Filters: fs, Ordering: rest.Ordering("a", map[string]string{
		"pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated", "name": "name", "last_refreshed": "last_refreshed",
	})}
}

// acsOps are an alternate content source type's operations.
func (s *Server) acsOps(t *rest.Table, k rest.ACSKind) []rest.Op {
	l := acsListSpec()
	coll := "acs/" + href.Segment(k.Type) + "/"
	_, h, ops := s.crudOps(t, crudKind{collection: "acs", one: "alternate_content_source", typ: k.Type, title: k.Title, schema: k.Schema,
		body: func() any { return &acsIn{} }, view: acsResponse{}, list: &l,
		listH:   lister(s, l, s.scope(kindScoping("acs", k.Type, "a"), ofType("a.type", k.Type)), meta.ListACS, each(func(x meta.ACS) any { return s.renderACS(k, x) })),
		createH: s.acsCreate(k), readH: s.acsRead(k), createCode: 201})
	pat := href.Root + coll
	tg := t.Schema("TaskGroupOperationResponse", rest.TaskGroupRef{})
	return append(ops, rest.Op{ID: "acs_" + strings.ReplaceAll(href.Segment(k.Type), "/", "_") + "_refresh", Viewset: viewsetOf(pat), Action: "refresh",
		Method: "POST", Path: h + "refresh/", Pattern: pat + "{id}/refresh/{$}", Tag: "Acs: " + k.Title,
		Responses: []openapi.Response{rest.Resp(202, tg)}, Handler: s.acsRefresh(k)})
}

func (s *Server) renderACS(k rest.ACSKind, x meta.ACS) any {
	paths := x.Paths
	if paths == nil {
		paths = []string{}
	}
	return acsResponse{PulpHref: href.ACS(x.Type, x.PulpID), Prn: href.PRN(k.PRN, x.PulpID),
		PulpCreated: rest.Time(x.Created), PulpLastUpdated: rest.Time(x.Updated), Name: x.Name, LastRefreshed: rest.TimePtr(x.LastRefreshed),
		Paths: paths, Remote: href.Remote(x.RemoteType, x.RemotePulpID)}
}

// applyACS applies a create or update body to an alternate content source of kind k,
// validating it as Pulp does: the remote is one of the kind's remote type with the
// on_demand policy; each path is relative, below the remote's URL.
func applyACS(ctx context.Context, q meta.Querier, cur meta.ACS, k rest.ACSKind, raw map[string]json.RawMessage, partial bool) (meta.ACS, error) {
	if !partial {
		if err := rest.Require(raw, "name", "remote"); err != nil {
			return cur, err
		}
	}
	var in acsIn
	if err := rest.Decode(raw, &in); err != nil {
		return cur, err
	}
	out := cur
	out.Type = k.Type
	if rest.Has(raw, "name") || !partial {
		if in.Name == "" {
			return cur, rest.BadField("name", "This field may not be blank.")
		}
		out.Name = in.Name
	}
	if rest.Has(raw, "remote") || !partial {
		id, err := rest.HrefOf("remote", in.Remote, "remotes/"+href.Segment(k.Remote)+"/")
		if err != nil {
			return cur, err
		}
		m, err := meta.RemoteByPulpID(ctx, q, id)
		if errors.Is(err, meta.ErrNotFound) {
			return cur, rest.BadField("remote", "Invalid hyperlink - Object does not exist.")
		} else if err != nil {
			return cur, err
		}
		if m.Policy != "on_demand" {
			return cur, rest.BadField("remote", "Remote used with alternate content source must have the 'on_demand' policy.")
		}
		out.RemoteID = m.ID
	}
	if rest.Has(raw, "paths") || !partial {
		paths, err := checkACSPaths(k, in.Paths)
		if err != nil {
			return cur, err
		}
		out.Paths = paths
	}
	if rest.Has(raw, "last_refreshed") {
		out.LastRefreshed = nil
		if in.LastRefreshed != nil {
			t, err := rest.ParseTime(*in.LastRefreshed)
			if err != nil {
				return cur, rest.BadField("last_refreshed", "Datetime has wrong format.")
			}
			us := t.UnixMicro()
			out.LastRefreshed = &us
		}
	}
	return out, nil
}

// checkACSPaths checks the paths of a body: each is a relative path without "." or ".."
// segments (a trailing slash allowed), checked further by the kind; duplicates count
// once, as in Pulp's set.
func checkACSPaths(k rest.ACSKind, paths []string) ([]string, error) {
	if len(paths) > maxACSPaths {
		return nil, rest.BadField("paths", "Ensure this field has no more than %d elements.", maxACSPaths)
	}
	out := []string{}
	for _, p := range paths {
		if p == "" {
			return nil, rest.BadField("paths", "This field may not be blank.")
		}
		if strings.HasPrefix(p, "/") {
			return nil, rest.BadField("paths", "Path cannot start with a slash.")
		}
		if _, err := content.CleanRelativePath(strings.TrimSuffix(p, "/")); err != nil {
			return nil, rest.BadField("paths", "%v", err)
		}
		if k.CheckPath != nil {
			if why := k.CheckPath(p); why != "" {
				return nil, rest.BadField("paths", "%s", why)
			}
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

func (s *Server) acsCreate(k rest.ACSKind) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		raw, err := rest.ReadBody(r, &acsIn{}, nil)
		if err != nil {
			return err
		}
		x, err := applyACS(r.Context(), s.db, meta.ACS{}, k, raw, false)
		if err != nil {
			return err
		}
		x, err = meta.CreateACS(r.Context(), s.db, x)
		if errors.Is(err, meta.ErrConflict) {
			return rest.BadField("name", "This field must be unique.")
		}
		if err != nil {
			return err
		}
		if err := s.created(r.Context(), "acs/"+href.Segment(k.Type), meta.Object{Type: k.PRN, ID: x.PulpID}); err != nil {
			return err
		}
		return rest.WriteOne(w, r, http.StatusCreated, s.renderACS(k, x))
	}
}

// acsByPath is the alternate content source of kind k the request's {id} names.
func (s *Server) acsByPath(r *http.Request, k rest.ACSKind) (meta.ACS, error) {
	x, err := meta.ACSByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err == nil && x.Type != k.Type {
		err = rest.ErrNotFound
	}
	return x, err
}

func (s *Server) acsRead(k rest.ACSKind) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		x, err := s.acsByPath(r, k)
		if err != nil {
			return err
		}
		return rest.WriteOne(w, r, http.StatusOK, s.renderACS(k, x))
	}
}

// acsRefresh dispatches a task group: one refresh task per path (the remote's URL
// itself when there are none), sharing the source and its remote, so that an update or
// a delete of either waits for them.
func (s *Server) acsRefresh(k rest.ACSKind) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		x, err := s.acsByPath(r, k)
		if err != nil {
			return err
		}
		paths := x.Paths
		if len(paths) == 0 {
			paths = []string{""}
		}
		g, err := task.CreateGroup(r.Context(), s.db, fmt.Sprintf("Refreshing %d alternate content source paths.", len(paths)))
		if err != nil {
			return err
		}
		shared := []string{href.ACS(x.Type, x.PulpID), href.Remote(x.RemoteType, x.RemotePulpID)}
		for _, p := range paths {
			if _, err := s.env.Enqueue(r, task.Spec{Name: k.Refresh, Args: content.RefreshArgs{ACS: x.PulpID, Path: p}, Shared: shared, GroupID: &g.ID}); err != nil {
				return err
			}
		}
		return rest.WriteOne(w, r, http.StatusAccepted, rest.TaskGroupRef{TaskGroup: href.Group(g.PulpID)})
	}
}
