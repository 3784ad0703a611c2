package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
	"pith/meta"
	"pith/task"
)

// Upstream Pulps (/upstream-pulps/): where a replica copies distributions from, and
// replicate, which does it (replicate.go). Create, update and delete are synchronous,
// as in Pulp.

// upstreamModel is the PRN model of an upstream Pulp.
const upstreamModel = "core.upstreampulp"

// Replication policies (Pulp's UpstreamPulp.policy): which local objects a replication
// manages.
const (
	policyAll      = "all"      // every local object of a replicated type
	policyLabeled  = "labeled"  // only what replications made (the UpstreamPulp label)
	policyNoDelete = "nodelete" // nothing is deleted
)

// Bounds of an upstream Pulp's settings.
const (
	maxUpstreamText = 2000      // name, base_url, api_root, domain
	maxQSelect      = 4000      // q_select
	maxPEM          = 256 << 10 // ca_cert, client_cert, client_key
)

// upstreamIn is an upstream Pulp's body; all but name and base_url are kept in attrs,
// under the same names.
type upstreamIn struct {
	Name          string  `json:"name" openapi:"required,minLength=1"`
	BaseURL       string  `json:"base_url" openapi:"required,minLength=1"`
	APIRoot       string  `json:"api_root" openapi:"required,minLength=1"`
	Domain        *string `json:"domain" openapi:"nullable,minLength=1"`
	CACert        *string `json:"ca_cert" openapi:"nullable,minLength=1"`
	ClientCert    *string `json:"client_cert" openapi:"nullable,minLength=1"`
	ClientKey     *string `json:"client_key" openapi:"nullable,minLength=1,writeOnly"`
	TLSValidation bool    `json:"tls_validation" openapi:"optional"`
	Username      *string `json:"username" openapi:"nullable,minLength=1,writeOnly"`
	Password      *string `json:"password" openapi:"nullable,minLength=1,writeOnly"`
	QSelect       *string `json:"q_select" openapi:"nullable"`
	Policy        string  `json:"policy" openapi:"enum=all|labeled|nodelete,optional"`
	// Newer Pulp's download settings of the remotes a replication makes.
	RemotePolicy        *string  `json:"remote_policy" openapi:"newer"`
	DownloadConcurrency *int64   `json:"download_concurrency" openapi:"newer"`
	MaxRetries          *int64   `json:"max_retries" openapi:"newer"`
	TotalTimeout        *float64 `json:"total_timeout" openapi:"newer"`
	ConnectTimeout      *float64 `json:"connect_timeout" openapi:"newer"`
	SockConnectTimeout  *float64 `json:"sock_connect_timeout" openapi:"newer"`
	SockReadTimeout     *float64 `json:"sock_read_timeout" openapi:"newer"`
}

type upstreamResponse struct {
	PulpHref        string             `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string             `json:"prn" openapi:"readOnly"`
	PulpCreated     string             `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated string             `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	Name            string             `json:"name" openapi:"required"`
	BaseURL         string             `json:"base_url" openapi:"required"`
	APIRoot         string             `json:"api_root" openapi:"required"`
	Domain          *string            `json:"domain" openapi:"nullable"`
	CACert          *string            `json:"ca_cert" openapi:"nullable"`
	ClientCert      *string            `json:"client_cert" openapi:"nullable"`
	TLSValidation   bool               `json:"tls_validation" openapi:"optional"`
	HiddenFields    []rest.HiddenField `json:"hidden_fields" openapi:"readOnly"`
	QSelect         *string            `json:"q_select" openapi:"nullable"`
	LastReplication *string            `json:"last_replication" openapi:"format=date-time,readOnly"`
	Policy          string             `json:"policy" openapi:"enum=all|labeled|nodelete,optional"`
	RemotePolicy    *string            `json:"remote_policy" openapi:"newer"`
}

// upstreamHref is the href of an upstream Pulp.
func upstreamHref(id string) string { return href.Root + "upstream-pulps/" + id + "/" }

// settings are an upstream Pulp's stored settings, defaults filled in.
func upstreamSettings(u meta.UpstreamPulp) upstreamIn {
	in := upstreamIn{TLSValidation: true, Policy: policyAll, APIRoot: "/pulp/"}
	json.Unmarshal(u.Attrs, &in)
	in.Name, in.BaseURL = u.Name, u.BaseURL
	return in
}

func renderUpstream(u meta.UpstreamPulp) upstreamResponse {
	in := upstreamSettings(u)
	out := upstreamResponse{PulpHref: upstreamHref(u.PulpID), Prn: href.PRN(upstreamModel, u.PulpID), PulpCreated: rest.Time(u.Created),
		PulpLastUpdated: rest.Time(u.Updated), Name: u.Name, BaseURL: u.BaseURL, APIRoot: in.APIRoot, Domain: in.Domain, CACert: in.CACert,
		ClientCert: in.ClientCert, TLSValidation: in.TLSValidation, QSelect: in.QSelect, Policy: in.Policy, RemotePolicy: in.RemotePolicy}
	for _, f := range []struct {
		name string
		v    *string
	}{{"client_key", in.ClientKey}, {"username", in.Username}, {"password", in.Password}} {
		out.HiddenFields = append(out.HiddenFields, rest.HiddenField{Name: f.name, IsSet: f.v != nil && *f.v != ""})
	}
	if u.LastReplication != nil {
		t := rest.Time(*u.LastReplication)
		out.LastReplication = &t
	}
	return out
}

// applyUpstream applies a create or update body to an upstream Pulp, validating it.
// With partial, fields not sent keep their values; otherwise they reset to defaults.
func (s *Server) applyUpstream(r *http.Request, cur meta.UpstreamPulp, raw map[string]json.RawMessage, partial bool) (meta.UpstreamPulp, error) {
	in := upstreamIn{TLSValidation: true, Policy: policyAll}
	if partial {
		in = upstreamSettings(cur)
	} else if err := rest.Require(raw, "name", "base_url", "api_root"); err != nil {
		return cur, err
	}
	if err := rest.Decode(raw, &in); err != nil {
		return cur, err
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"name", &in.Name}, {"base_url", &in.BaseURL}, {"api_root", &in.APIRoot}, {"domain", in.Domain}} {
		if f.v != nil && *f.v == "" {
			return cur, rest.BadField(f.name, "This field may not be blank.")
		}
		if f.v != nil && len(*f.v) > maxUpstreamText {
			return cur, rest.BadField(f.name, "Ensure this field has no more than %d characters.", maxUpstreamText)
		}
	}
	if err := checkHTTPURL("base_url", in.BaseURL, "The base_url contains username or password. Please use username and password instead."); err != nil {
		return cur, err
	}
	if u, _ := url.Parse(in.BaseURL); u.RawQuery != "" || u.Fragment != "" || strings.Trim(u.Path, "/") != "" {
		return cur, rest.BadField("base_url", "Give the transport, host and port only (e.g. https://example.com), not %q.", in.BaseURL)
	}
	if !strings.HasPrefix(in.APIRoot, "/") || !strings.HasSuffix(in.APIRoot, "/") {
		return cur, rest.BadField("api_root", "The API root begins and ends with a slash (e.g. /pulp/), not %q.", in.APIRoot)
	}
	if in.Domain != nil && strings.ContainsAny(*in.Domain, "/?#") {
		return cur, rest.BadField("domain", "A domain is a name, not %q.", *in.Domain)
	}
	for name, v := range map[string]*string{"ca_cert": in.CACert, "client_cert": in.ClientCert, "client_key": in.ClientKey} {
		if v != nil && (!strings.Contains(*v, "-----BEGIN") || len(*v) > maxPEM) {
			return cur, rest.BadField(name, "Expected a PEM-encoded value (at most %d KiB).", maxPEM>>10)
		}
	}
	if in.QSelect != nil && *in.QSelect != "" {
		if err := s.checkQSelect(r, *in.QSelect); err != nil {
			return cur, err
		}
	}
	switch in.Policy {
	case policyAll, policyLabeled, policyNoDelete:
	default:
		return cur, rest.BadField("policy", "%q is not a valid choice (all, labeled, nodelete).", in.Policy)
	}
	if in.RemotePolicy != nil && !policies[*in.RemotePolicy] {
		return cur, rest.BadField("remote_policy", "%q is not a valid choice (immediate, on_demand, streamed).", *in.RemotePolicy)
	}
	if err := checkDownloads(in.DownloadConcurrency, in.MaxRetries, in.TotalTimeout, in.ConnectTimeout, in.SockConnectTimeout, in.SockReadTimeout); err != nil {
		return cur, err
	}
	out := cur
	out.Name, out.BaseURL = in.Name, in.BaseURL
	var err error
	out.Attrs, err = attrsWithout(in, "name", "base_url")
	return out, err
}

// checkQSelect checks a q_select as the distribution list's q parameter, which it
// becomes upstream.
func (s *Server) checkQSelect(r *http.Request, q string) error {
	if len(q) > maxQSelect {
		return rest.BadField("q_select", "Ensure this field has no more than %d characters.", maxQSelect)
	}
	req, err := http.NewRequestWithContext(r.Context(), "GET", "/?"+url.Values{"q": {q}}.Encode(), nil)
	if err != nil {
		return rest.BadField("q_select", "Not a valid filter expression.")
	}
	if _, err := rest.ParseList(req, s.db.Dialect(), distListSpec(nil)); err != nil {
		var fe rest.FieldErrors
		if errors.As(err, &fe) {
			return rest.FieldErrors{"q_select": fe["q"]}
		}
		return rest.BadField("q_select", "Not a valid filter expression.")
	}
	return nil
}

func upstreamListSpec() rest.ListSpec {
	fs := []rest.Filter{
		{Name: "name", Col: "u.name", Lookups: rest.NameLookups},
		{Name: "base_url", Col: "u.base_url", Lookups: rest.NameLookups},
		rest.TimeFilter("last_replication", "u.last_replication"),
	}
	fs = append(fs, rest.IdentityFilters("u.pulp_id")...)
	return rest.ListSpec{Filters: fs, Ordering: rest.Ordering("u", map[string]string{
		"pk": "id", "pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated", "name": "name", "base_url": "base_url",
		"last_replication": "last_replication",
	})}
}

func (s *Server) upstreamList() rest.HandlerFunc {
	return lister(s, upstreamListSpec(), s.scope(scoping{viewset: "upstream-pulps", id: "u.pulp_id"}, nil), meta.ListUpstreams,
		each(func(u meta.UpstreamPulp) any { return renderUpstream(u) }))
}

func (s *Server) upstreamRead(w http.ResponseWriter, r *http.Request) error {
	u, err := meta.UpstreamByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, renderUpstream(u))
}

// upstreamWrite creates an upstream Pulp (create) or changes one (partial: only what the
// body sends).
func (s *Server) upstreamWrite(create, partial bool) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var cur meta.UpstreamPulp
		if !create {
			var err error
			if cur, err = meta.UpstreamByPulpID(r.Context(), s.db, r.PathValue("id")); err != nil {
				return err
			}
		}
		raw, err := rest.ReadBody(r, &upstreamIn{}, nil)
		if err != nil {
			return err
		}
		u, err := s.applyUpstream(r, cur, raw, partial)
		if err != nil {
			return err
		}
		status := http.StatusOK
		if create {
			status = http.StatusCreated
			u, err = meta.CreateUpstream(r.Context(), s.db, u)
		} else if err = meta.UpdateUpstream(r.Context(), s.db, u); err == nil {
			u, err = meta.UpstreamByPulpID(r.Context(), s.db, u.PulpID)
		}
		if errors.Is(err, meta.ErrConflict) {
			return rest.BadField("name", "This field must be unique.")
		}
		if err != nil {
			return err
		}
		if create {
			if err := s.created(r.Context(), "upstream-pulps", meta.Object{Type: upstreamModel, ID: u.PulpID}); err != nil {
				return err
			}
		}
		return rest.WriteOne(w, r, status, renderUpstream(u))
	}
}

func (s *Server) upstreamDelete(w http.ResponseWriter, r *http.Request) error {
	u, err := meta.UpstreamByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := s.db.Tx(r.Context(), func(tx *meta.Tx) error { return meta.DeleteUpstream(r.Context(), tx, u.ID) }); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// replicateIn is replicate's optional body: newer Pulp's q_select, which replaces the
// upstream's own for this replication (and then deletes nothing).
type replicateIn struct {
	QSelect *string `json:"q_select" openapi:"nullable,desc=Filter distributions on the upstream Pulp for this replication only; nothing is deleted then."`
}

// upstreamReplicate dispatches the replication task in a task group of its own.
func (s *Server) upstreamReplicate(w http.ResponseWriter, r *http.Request) error {
	u, err := meta.UpstreamByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	var in replicateIn
	if _, err := rest.DecodeBody(r, &in); err != nil {
		return err
	}
	if in.QSelect != nil {
		if err := s.checkQSelect(r, *in.QSelect); err != nil {
			return err
		}
	}
	g, err := task.CreateGroup(r.Context(), s.db, "Replication of "+u.Name)
	if err != nil {
		return err
	}
	if _, err := s.env.Enqueue(r, task.Spec{Name: replicateTask, Args: replicateArgs{Upstream: u.PulpID, QSelect: in.QSelect},
		Exclusive: []string{upstreamsLock}, Shared: []string{upstreamHref(u.PulpID)}, GroupID: &g.ID}); err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusAccepted, rest.TaskGroupRef{TaskGroup: href.Group(g.PulpID)})
}

// upstreamOps are the operations of /upstream-pulps/.
func (s *Server) upstreamOps(t *rest.Table) []rest.Op {
	pat := href.Root + "upstream-pulps/"
	const vs, tag, h = "upstream-pulps", "Upstream-Pulps", "{upstream_pulp_href}"
	r := func(code int, schema string) []openapi.Response { return []openapi.Response{rest.Resp(code, schema)} }
	view := t.Schema("UpstreamPulpResponse", upstreamResponse{})
	list := upstreamListSpec()
	ops := []rest.Op{
		{ID: "upstream_pulps_list", Viewset: vs, Method: "GET", Path: pat, Pattern: pat + "{$}", Tag: tag, List: &list,
			Responses: r(200, t.Paginated(view)), Handler: s.upstreamList()},
		{ID: "upstream_pulps_create", Viewset: vs, Method: "POST", Path: pat, Pattern: pat + "{$}", Tag: tag,
			Body: upstreamIn{}, BodyName: "UpstreamPulp", Media: rest.JSONForms, Responses: r(201, view), Handler: s.upstreamWrite(true, false)},
		{ID: "upstream_pulps_read", Viewset: vs, Method: "GET", Path: h, Pattern: pat + "{id}/{$}", Tag: tag, Detail: true,
			Responses: r(200, view), Handler: s.upstreamRead},
		{ID: "upstream_pulps_update", Viewset: vs, Method: "PUT", Path: h, Pattern: pat + "{id}/{$}", Tag: tag,
			Body: upstreamIn{}, BodyName: "UpstreamPulp", Media: rest.JSONForms, Responses: r(200, view), Handler: s.upstreamWrite(false, false)},
		{ID: "upstream_pulps_partial_update", Viewset: vs, Method: "PATCH", Path: h, Pattern: pat + "{id}/{$}", Tag: tag,
			Body: upstreamIn{}, BodyName: "PatchedUpstreamPulp", Media: rest.JSONForms, Responses: r(200, view), Handler: s.upstreamWrite(false, true)},
		{ID: "upstream_pulps_delete", Viewset: vs, Method: "DELETE", Path: h, Pattern: pat + "{id}/{$}", Tag: tag,
			Responses: r(204, ""), Handler: s.upstreamDelete},
		{ID: "upstream_pulps_replicate", Viewset: vs, Action: "replicate", Method: "POST", Path: h + "replicate/", Pattern: pat + "{id}/replicate/{$}", Tag: tag,
			Body: replicateIn{}, BodyName: "UpstreamPulpReplicate", Media: rest.JSONForms, Responses: r(202, t.Schema("TaskGroupOperationResponse", rest.TaskGroupRef{})), Handler: s.upstreamReplicate},
	}
	return append(ops, s.objectRoleOps(t, vs, "upstream_pulps", h, pat+"{id}/", tag)...)
}
