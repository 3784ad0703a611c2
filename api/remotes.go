package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"pith/api/href"
	"pith/api/rest"
	"pith/meta"
	"pith/secret"
)

// remoteListSpec is the remote list of a kind, or of every kind (nil).
func remoteListSpec(k *rest.RemoteKind) rest.ListSpec {
	fs := []rest.Filter{
		{Name: "name", Col: "m.name", Lookups: rest.NameLookups},
		rest.LabelSelect("m.labels"),
		rest.TimeFilter("pulp_last_updated", "m.updated"),
	}
	if k == nil {
		fs = append(fs, rest.Filter{Name: "pulp_type", Col: "m.type", Lookups: []string{"exact", "in"}})
	} else {
		fs = append(fs, k.Filters...)
	}
	fs = append(fs, rest.IdentityFilters("m.pulp_id")...)
	return rest.ListSpec{Filters: fs, Ordering: rest.Ordering("m", map[string]string{
		"pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated", "name": "name", "url": "url", "policy": "policy",
	})}
}

// checkHTTPURL refuses, as field, what is not an http or https URL with a host, and a
// URL that carries credentials (withCredentials says where they go instead: there they
// are sealed, and never shown).
func checkHTTPURL(field, s, withCredentials string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return rest.BadField(field, "Enter a valid http or https URL, not %q.", secret.Redact(s))
	}
	if u.User != nil {
		if pw, _ := u.User.Password(); u.User.Username() != "" || pw != "" {
			return rest.BadField(field, "%s", withCredentials)
		}
	}
	return nil
}

// checkDownloads checks the download settings remotes and upstream Pulps share.
func checkDownloads(concurrency, retries *int64, total, connect, sockConnect, sockRead *float64) error {
	if concurrency != nil && *concurrency < 1 {
		return rest.BadField("download_concurrency", "Ensure this value is greater than or equal to 1.")
	}
	if retries != nil && *retries < 0 {
		return rest.BadField("max_retries", "Ensure this value is greater than or equal to 0.")
	}
	for name, v := range map[string]*float64{"total_timeout": total, "connect_timeout": connect, "sock_connect_timeout": sockConnect, "sock_read_timeout": sockRead} {
		if v != nil && *v < 0 {
			return rest.BadField(name, "Ensure this value is greater than or equal to 0.")
		}
	}
	return nil
}

var policies = map[string]bool{"immediate": true, "on_demand": true, "streamed": true}

// remoteColumns are the body fields kept in columns rather than in attrs.
var remoteColumns = []string{"name", "url", "policy", "pulp_labels"}

// applyRemote applies a create or update body to a remote of kind k, validating it.
// With partial, fields not sent keep their values; otherwise they reset to defaults.
func applyRemote(cur meta.Remote, k rest.RemoteKind, raw map[string]json.RawMessage, partial bool) (meta.Remote, error) {
	body := k.Body()
	in := body.Remote()
	*in = rest.RemoteIn{Policy: "immediate", TLSValidation: true}
	if partial {
		json.Unmarshal(cur.Attrs, body)
		in.Name, in.URL, in.Policy = cur.Name, cur.URL, cur.Policy
	} else if err := rest.Require(raw, "name", "url"); err != nil {
		return cur, err
	}
	if err := rest.Decode(raw, body); err != nil {
		return cur, err
	}
	if in.Name == "" {
		return cur, rest.BadField("name", "This field may not be blank.")
	}
	if k.URLScheme != "" {
		if u, err := url.Parse(in.URL); err != nil || u.Scheme != k.URLScheme || u.Host == "" || u.User != nil {
			return cur, rest.BadField("url", "The url %q is not valid. It must start with: %s://", secret.Redact(in.URL), k.URLScheme)
		}
	} else if err := checkHTTPURL("url", in.URL, "The remote url contains username or password. Please use remote username or password instead."); err != nil {
		return cur, err
	}
	if !policies[in.Policy] {
		return cur, rest.BadField("policy", "%q is not a valid choice (immediate, on_demand, streamed).", in.Policy)
	}
	if err := checkDownloads(in.DownloadConcurrency, in.MaxRetries, in.TotalTimeout, in.ConnectTimeout, in.SockConnectTimeout, in.SockReadTimeout); err != nil {
		return cur, err
	}
	for name, v := range map[string]*string{"ca_cert": in.CACert, "client_cert": in.ClientCert, "client_key": in.ClientKey} {
		if v != nil && !strings.Contains(*v, "-----BEGIN") {
			return cur, rest.BadField(name, "Expected a PEM-encoded value.")
		}
	}
	if in.ProxyURL != nil {
		if strings.Contains(*in.ProxyURL, "@") {
			return cur, rest.BadField("proxy_url", "proxy_url must not contain credentials")
		}
		if p, err := url.Parse(*in.ProxyURL); err != nil || p.Host == "" {
			return cur, rest.BadField("proxy_url", "Enter a valid URL, not %q.", *in.ProxyURL)
		}
	}
	// Pulp's checks, with a partial update's unsent fields at their stored values.
	proxyUser, proxyPassword := in.ProxyUsername != nil && *in.ProxyUsername != "", in.ProxyPassword != nil && *in.ProxyPassword != ""
	if (proxyUser || proxyPassword) && (in.ProxyURL == nil || *in.ProxyURL == "") {
		return cur, rest.NonField("proxy credentials cannot be specified without a proxy")
	}
	if proxyUser != proxyPassword {
		return cur, rest.NonField("proxy username and password can only be specified together")
	}
	if v, ok := body.(rest.Validator); ok {
		if err := v.Validate(); err != nil {
			return cur, err
		}
	}
	out := cur
	out.Type, out.Name, out.URL, out.Policy = k.Type, in.Name, in.URL, in.Policy
	if rest.Has(raw, "pulp_labels") || !partial {
		l, err := rest.SetLabels(in.PulpLabels)
		if err != nil {
			return cur, err
		}
		out.Labels = l
	}
	var err error
	out.Attrs, err = attrsWithout(body, remoteColumns...)
	return out, err
}

// renderRemote shows a remote as its type's response; secrets stay hidden.
func (s *Server) renderRemote(m meta.Remote) any {
	kind, _ := s.core.Table().RemoteKind(m.Type)
	v := kind.View()
	json.Unmarshal(m.Attrs, v)
	out := v.Remote()
	var secrets map[string]*string
	json.Unmarshal(m.Attrs, &secrets)
	out.HiddenFields = []rest.HiddenField{}
	for _, name := range []string{"client_key", "proxy_username", "proxy_password", "username", "password"} {
		p := secrets[name]
		out.HiddenFields = append(out.HiddenFields, rest.HiddenField{Name: name, IsSet: p != nil && *p != ""})
	}
	if out.Headers == nil {
		out.Headers = []map[string]string{}
	}
	out.PulpHref, out.Prn, out.PulpCreated, out.PulpLastUpdated = href.Remote(m.Type, m.PulpID), href.PRN(kind.PRN, m.PulpID), rest.Time(m.Created), rest.Time(m.Updated)
	out.Name, out.URL, out.PulpLabels, out.Policy = m.Name, secret.Redact(m.URL), m.Labels, m.Policy
	if out.ProxyURL != nil {
		// Refused since, but a row stored earlier may carry credentials.
		*out.ProxyURL = secret.Redact(*out.ProxyURL)
	}
	return v
}

// remoteList lists remotes of a kind, or of every kind (nil).
func (s *Server) remoteList(k *rest.RemoteKind) rest.HandlerFunc {
	typ := ""
	if k != nil {
		typ = k.Type
	}
	return lister(s, remoteListSpec(k), s.scope(kindScoping("remotes", typ, "m"), ofType("m.type", typ)), meta.ListRemotes, each(func(m meta.Remote) any { return s.renderRemote(m) }))
}

func (s *Server) remoteCreate(k rest.RemoteKind) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		raw, err := rest.ReadBody(r, k.Body(), nil)
		if err != nil {
			return err
		}
		m, err := applyRemote(meta.Remote{}, k, raw, false)
		if err != nil {
			return err
		}
		m, err = meta.CreateRemote(r.Context(), s.db, m)
		if errors.Is(err, meta.ErrConflict) {
			return rest.BadField("name", "This field must be unique.")
		}
		if err != nil {
			return err
		}
		if err := s.created(r.Context(), "remotes/"+href.Segment(k.Type), meta.Object{Type: k.PRN, ID: m.PulpID}); err != nil {
			return err
		}
		return rest.WriteOne(w, r, http.StatusCreated, s.renderRemote(m))
	}
}

func (s *Server) remoteRead(w http.ResponseWriter, r *http.Request) error {
	m, err := meta.RemoteByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, s.renderRemote(m))
}
