package api

import (
	"encoding/json"
	"errors"
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

func (s *Server) applyFileRemote(cur meta.Remote, raw map[string]json.RawMessage, partial bool) (meta.Remote, error) {
	in := fileRemoteIn{Policy: "immediate", TLSValidation: true}
	if partial {
		var a fileRemoteAttrs
		json.Unmarshal(cur.Attrs, &a)
		in = fileRemoteIn{Name: cur.Name, URL: cur.URL, Policy: cur.Policy, CACert: a.CACert, ClientCert: a.ClientCert, ClientKey: a.ClientKey,
			TLSValidation: a.TLSValidation, ProxyURL: a.ProxyURL, ProxyUsername: a.ProxyUsername, ProxyPassword: a.ProxyPassword,
			Username: a.Username, Password: a.Password, MaxRetries: a.MaxRetries, TotalTimeout: a.TotalTimeout, ConnectTimeout: a.ConnectTimeout,
			SockConnectTimeout: a.SockConnectTimeout, SockReadTimeout: a.SockReadTimeout, Headers: a.Headers,
			DownloadConcurrency: a.DownloadConcurrency, RateLimit: a.RateLimit}
	} else if err := requireFields(raw, "name", "url"); err != nil {
		return cur, err
	}
	if err := decode(raw, &in); err != nil {
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
	out.Type, out.Name, out.URL, out.Policy = fileType, in.Name, in.URL, in.Policy
	if has(raw, "pulp_labels") || !partial {
		l, err := setLabels(in.PulpLabels)
		if err != nil {
			return cur, err
		}
		out.Labels = l
	}
	b, _ := json.Marshal(fileRemoteAttrs{CACert: in.CACert, ClientCert: in.ClientCert, ClientKey: in.ClientKey, TLSValidation: in.TLSValidation,
		ProxyURL: in.ProxyURL, ProxyUsername: in.ProxyUsername, ProxyPassword: in.ProxyPassword, Username: in.Username, Password: in.Password,
		MaxRetries: in.MaxRetries, TotalTimeout: in.TotalTimeout, ConnectTimeout: in.ConnectTimeout, SockConnectTimeout: in.SockConnectTimeout,
		SockReadTimeout: in.SockReadTimeout, Headers: in.Headers, DownloadConcurrency: in.DownloadConcurrency, RateLimit: in.RateLimit})
	out.Attrs = b
	return out, nil
}

func renderFileRemote(m meta.Remote) fileRemoteResponse {
	var a fileRemoteAttrs
	json.Unmarshal(m.Attrs, &a)
	headers := a.Headers
	if headers == nil {
		headers = []map[string]string{}
	}
	hidden := []hiddenField{}
	for _, h := range []struct {
		name string
		v    *string
	}{{"client_key", a.ClientKey}, {"proxy_username", a.ProxyUsername}, {"proxy_password", a.ProxyPassword}, {"username", a.Username}, {"password", a.Password}} {
		hidden = append(hidden, hiddenField{Name: h.name, IsSet: h.v != nil && *h.v != ""})
	}
	return fileRemoteResponse{
		PulpHref: remoteHref(m.Type, m.PulpID), Prn: prn("file.fileremote", m.PulpID), PulpCreated: ts(m.Created), PulpLastUpdated: ts(m.Updated),
		Name: m.Name, URL: m.URL, PulpLabels: m.Labels, Policy: m.Policy, CACert: a.CACert, ClientCert: a.ClientCert, TLSValidation: a.TLSValidation,
		ProxyURL: a.ProxyURL, MaxRetries: a.MaxRetries, TotalTimeout: a.TotalTimeout, ConnectTimeout: a.ConnectTimeout,
		SockConnectTimeout: a.SockConnectTimeout, SockReadTimeout: a.SockReadTimeout, Headers: headers,
		DownloadConcurrency: a.DownloadConcurrency, RateLimit: a.RateLimit, HiddenFields: hidden,
	}
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
			items[i] = renderFileRemote(m)
		}
		return writePage(w, r, q, total, items)
	}
}

func (s *Server) remoteCreate(w http.ResponseWriter, r *http.Request) error {
	raw, err := readBody(r, &fileRemoteIn{}, nil)
	if err != nil {
		return err
	}
	m, err := s.applyFileRemote(meta.Remote{}, raw, false)
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
	return writeOne(w, r, http.StatusCreated, renderFileRemote(m))
}

func (s *Server) remoteRead(w http.ResponseWriter, r *http.Request) error {
	m, err := meta.RemoteByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusOK, renderFileRemote(m))
}
