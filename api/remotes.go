package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"pith/meta"
)

func remoteListSpec(typ string) listSpec {
	fs := []filter{
		{name: "name", col: "m.name", lookups: nameLookups},
		labelSelect("m.labels"),
		timeFilter("pulp_last_updated", "m.updated"),
	}
	if typ == "" {
		fs = append(fs, filter{name: "pulp_type", col: "m.type", lookups: []string{"exact", "in"}})
	}
	fs = append(fs, identityFilters("m.pulp_id")...)
	return listSpec{filters: fs, ordering: ordering("m", map[string]string{
		"pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated", "name": "name", "url": "url", "policy": "policy",
	})}
}

var policies = map[string]bool{"immediate": true, "on_demand": true, "streamed": true}

// remoteKind is one remote type: its body and its response, which embed remoteIn and
// remoteResponse and add the type's own fields.
type remoteKind struct {
	prn  string // PRN model, e.g. "file.fileremote"
	body func() remoteBody
	view func() remoteView
}

type remoteBody interface{ common() *remoteIn }

func (r *remoteIn) common() *remoteIn { return r }

type remoteView interface{ common() *remoteResponse }

func (r *remoteResponse) common() *remoteResponse { return r }

var remoteKinds = map[string]remoteKind{
	fileType: {prn: "file.fileremote", body: func() remoteBody { return &remoteIn{} }, view: func() remoteView { return &remoteResponse{} }},
	rpmType:  {prn: "rpm.rpmremote", body: func() remoteBody { return &rpmRemoteIn{} }, view: func() remoteView { return &rpmRemoteResponse{} }},
}

// remoteColumns are the body fields kept in columns rather than in attrs.
var remoteColumns = []string{"name", "url", "policy", "pulp_labels"}

// applyRemote applies a create or update body to a remote of type typ, validating it.
// With partial, fields not sent keep their values; otherwise they reset to defaults.
func (s *Server) applyRemote(cur meta.Remote, typ string, raw map[string]json.RawMessage, partial bool) (meta.Remote, error) {
	kind, ok := remoteKinds[typ]
	if !ok {
		return cur, fmt.Errorf("remote %s: unknown type %q", cur.PulpID, typ)
	}
	body := kind.body()
	in := body.common()
	*in = remoteIn{Policy: "immediate", TLSValidation: true}
	if partial {
		json.Unmarshal(cur.Attrs, body)
		in.Name, in.URL, in.Policy = cur.Name, cur.URL, cur.Policy
	} else if err := requireFields(raw, "name", "url"); err != nil {
		return cur, err
	}
	if err := decode(raw, body); err != nil {
		return cur, err
	}
	if in.Name == "" {
		return cur, badField("name", "This field may not be blank.")
	}
	u, err := url.Parse(in.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cur, badField("url", "Enter a valid http or https URL, not %q.", in.URL)
	}
	if !policies[in.Policy] {
		return cur, badField("policy", "%q is not a valid choice (immediate, on_demand, streamed).", in.Policy)
	}
	if in.DownloadConcurrency != nil && *in.DownloadConcurrency < 1 {
		return cur, badField("download_concurrency", "Ensure this value is greater than or equal to 1.")
	}
	if in.MaxRetries != nil && *in.MaxRetries < 0 {
		return cur, badField("max_retries", "Ensure this value is greater than or equal to 0.")
	}
	for name, v := range map[string]*float64{"total_timeout": in.TotalTimeout, "connect_timeout": in.ConnectTimeout,
		"sock_connect_timeout": in.SockConnectTimeout, "sock_read_timeout": in.SockReadTimeout} {
		if v != nil && *v < 0 {
			return cur, badField(name, "Ensure this value is greater than or equal to 0.")
		}
	}
	for name, v := range map[string]*string{"ca_cert": in.CACert, "client_cert": in.ClientCert, "client_key": in.ClientKey} {
		if v != nil && !strings.Contains(*v, "-----BEGIN") {
			return cur, badField(name, "Expected a PEM-encoded value.")
		}
	}
	if in.ProxyURL != nil {
		if p, err := url.Parse(*in.ProxyURL); err != nil || p.Host == "" {
			return cur, badField("proxy_url", "Enter a valid URL, not %q.", *in.ProxyURL)
		}
	}
	out := cur
	out.Type, out.Name, out.URL, out.Policy = typ, in.Name, in.URL, in.Policy
	if has(raw, "pulp_labels") || !partial {
		l, err := setLabels(in.PulpLabels)
		if err != nil {
			return cur, err
		}
		out.Labels = l
	}
	out.Attrs, err = attrsWithout(body, remoteColumns...)
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

// renderRemote shows a remote as its type's response; secrets stay hidden.
func renderRemote(m meta.Remote) any {
	kind, ok := remoteKinds[m.Type]
	if !ok {
		kind = remoteKinds[fileType]
	}
	v := kind.view()
	json.Unmarshal(m.Attrs, v)
	out := v.common()
	var secrets map[string]*string
	json.Unmarshal(m.Attrs, &secrets)
	out.HiddenFields = []hiddenField{}
	for _, name := range []string{"client_key", "proxy_username", "proxy_password", "username", "password"} {
		p := secrets[name]
		out.HiddenFields = append(out.HiddenFields, hiddenField{Name: name, IsSet: p != nil && *p != ""})
	}
	if out.Headers == nil {
		out.Headers = []map[string]string{}
	}
	out.PulpHref, out.Prn, out.PulpCreated, out.PulpLastUpdated = remoteHref(m.Type, m.PulpID), prn(kind.prn, m.PulpID), ts(m.Created), ts(m.Updated)
	out.Name, out.URL, out.PulpLabels, out.Policy = m.Name, m.URL, m.Labels, m.Policy
	return v
}

func (s *Server) remoteList(typ string) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		q, err := parseList(r, s.db.Dialect(), remoteListSpec(typ))
		if err != nil {
			return err
		}
		if typ != "" {
			q.list.And("m.type = ?", typ)
		}
		ms, total, err := meta.ListRemotes(r.Context(), s.db, q.list)
		if err != nil {
			return err
		}
		items := make([]any, len(ms))
		for i, m := range ms {
			items[i] = renderRemote(m)
		}
		return writePage(w, r, q, total, items)
	}
}

func (s *Server) remoteCreate(typ string) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error { return s.createRemote(w, r, typ) }
}

func (s *Server) createRemote(w http.ResponseWriter, r *http.Request, typ string) error {
	raw, err := readBody(r, remoteKinds[typ].body(), nil)
	if err != nil {
		return err
	}
	m, err := s.applyRemote(meta.Remote{}, typ, raw, false)
	if err != nil {
		return err
	}
	m, err = meta.CreateRemote(r.Context(), s.db, m)
	if errors.Is(err, meta.ErrConflict) {
		return badField("name", "This field must be unique.")
	}
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusCreated, renderRemote(m))
}

func (s *Server) remoteRead(w http.ResponseWriter, r *http.Request) error {
	m, err := meta.RemoteByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusOK, renderRemote(m))
}
