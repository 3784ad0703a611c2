// Package guard enforces content guards in the content app: whether a request may fetch
// a file of a guarded distribution. Pulp's kinds: rbac (the authenticated user holds
// core.download_rbaccontentguard on the guard or on every guard), content_redirect (a
// URL signed by the guard's secret, not expired), header (a header whose base64 value,
// optionally through a jq filter, equals the guard's), composite (any of its guards),
// and certguard's x509 and rhsm (a client certificate, from the TLS handshake or from a
// trusted proxy's X-Client-Cert header; see serve/guard/cert).
//
// A Set is compiled from the stored guards when the content app reloads its table of
// distributions, so a changed guard applies as soon as the table does; every request
// to a guarded distribution is checked, before any cached resolution is used.
package guard

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/itchyny/gojq"

	"pith/auth"
	"pith/meta"
	"pith/serve/guard/cert"
)

// Env is what guards need of the process.
type Env struct {
	// Auth names the user a request runs as (rbac guards); nil: nobody is anyone.
	Auth *auth.Authenticator
	// Permitted reports whether a user holds perm on every object or on the guard o.
	Permitted func(ctx context.Context, userID int64, perm string, o meta.Object) (bool, error)
	// FromProxy reports whether a request comes from a proxy trusted to set the
	// X-Client-Cert header (nil: none is).
	FromProxy func(r *http.Request) bool
	Certs     *cert.Cache
	Now       func() time.Time
}

// Denied is a refusal: the status to answer (401 when credentials could change it, else
// 403) and the reason.
type Denied struct {
	Status int
	Reason string
}

func (d *Denied) Error() string { return d.Reason }

func deny(format string, args ...any) error {
	return &Denied{Status: http.StatusForbidden, Reason: fmt.Sprintf(format, args...)}
}

// guard is one compiled content guard.
type guard interface {
	permit(s *Set, r *http.Request, path string) error
}

// Set is the compiled guards of a content app, by pulp_id.
type Set struct {
	env    Env
	byID   map[string]guard
	stamps map[string]int64 // the updated time each was compiled from
}

// Compile compiles guards, reusing those of prev (nil for none) that have not changed. A
// guard that does not compile (a CA bundle stored before it was checked, say) refuses
// every request, with the reason.
func Compile(env Env, guards []meta.ContentGuard, prev *Set) *Set {
	if env.Now == nil {
		env.Now = time.Now
	}
	s := &Set{env: env, byID: make(map[string]guard, len(guards)), stamps: make(map[string]int64, len(guards))}
	for _, g := range guards {
		s.stamps[g.PulpID] = g.Updated
		if prev != nil && prev.stamps[g.PulpID] == g.Updated && g.Type != "core.composite" {
			if old, ok := prev.byID[g.PulpID]; ok {
				s.byID[g.PulpID] = old
				continue
			}
		}
		s.byID[g.PulpID] = compile(g)
	}
	return s
}

// broken is a guard that did not compile: it refuses everyone.
type broken struct{ reason string }

func (b broken) permit(*Set, *http.Request, string) error { return deny("%s", b.reason) }

func compile(g meta.ContentGuard) guard {
	var attrs struct {
		HeaderName    string  `json:"header_name"`
		HeaderValue   string  `json:"header_value"`
		JQFilter      *string `json:"jq_filter"`
		CACertificate string  `json:"ca_certificate"`
		SharedSecret  string  `json:"shared_secret"`
	}
	if len(g.Attrs) == 0 {
		g.Attrs = json.RawMessage("{}")
	}
	if err := json.Unmarshal(g.Attrs, &attrs); err != nil {
		return broken{fmt.Sprintf("content guard %s does not load: %v", g.Name, err)}
	}
	switch g.Type {
	case "core.rbac":
		return rbac{id: g.PulpID}
	case "core.content_redirect":
		secret, err := hex.DecodeString(attrs.SharedSecret)
		if err != nil || len(secret) == 0 {
			return broken{fmt.Sprintf("content guard %s has no secret", g.Name)}
		}
		return redirect{secret: secret}
	case "core.header":
		h := header{name: attrs.HeaderName, value: attrs.HeaderValue}
		if attrs.JQFilter != nil {
			q, err := gojq.Parse(*attrs.JQFilter)
			if err != nil {
				return broken{fmt.Sprintf("content guard %s: jq filter: %v", g.Name, err)}
			}
			if h.jq, err = gojq.Compile(q); err != nil {
				return broken{fmt.Sprintf("content guard %s: jq filter: %v", g.Name, err)}
			}
		}
		return h
	case "core.composite":
		return composite{members: g.Members}
	case "certguard.x509", "certguard.rhsm":
		kind := cert.X509
		if g.Type == "certguard.rhsm" {
			kind = cert.RHSM
		}
		c, err := cert.Compile(kind, attrs.CACertificate)
		if err != nil {
			return broken{fmt.Sprintf("content guard %s: %v", g.Name, err)}
		}
		return certGuard{c}
	}
	return broken{fmt.Sprintf("content guard %s is of an unknown type %q", g.Name, g.Type)}
}

// Permit decides whether a request may fetch path (the request's path below the content
// app's prefix, with a leading "/") of a distribution guarded by the guard id. A refusal
// is a *Denied.
func (s *Set) Permit(r *http.Request, id, path string) error {
	g, ok := s.byID[id]
	if !ok {
		return deny("the distribution's content guard no longer exists")
	}
	return g.permit(s, r, path)
}

// rbac admits the users holding core.download_rbaccontentguard.
type rbac struct{ id string }

func (g rbac) permit(s *Set, r *http.Request, _ string) error {
	if s.env.Auth == nil {
		return deny("no user can be authenticated here")
	}
	sub, err := s.env.Auth.Authenticate(r)
	var ae *auth.Error
	if errors.As(err, &ae) {
		return &Denied{Status: ae.Status, Reason: ae.Detail}
	}
	if err != nil {
		return err
	}
	if sub.Anonymous() {
		return &Denied{Status: http.StatusUnauthorized, Reason: "Authentication credentials were not provided."}
	}
	if sub.Superuser {
		return nil
	}
	ok, err := s.env.Permitted(r.Context(), sub.ID, "core.download_rbaccontentguard", meta.Object{Type: "core.rbaccontentguard", ID: g.id})
	if err != nil {
		return err
	}
	if !ok {
		return deny("You do not have permission to perform this action.")
	}
	return nil
}

// redirect admits URLs signed with the guard's secret that have not expired (Pulp's
// preauthenticated URLs: ?expires=<unix time>&validate_token=<salt hex>:<digest hex>).
type redirect struct{ secret []byte }

func (g redirect) permit(s *Set, r *http.Request, _ string) error {
	q := r.URL.Query()
	expires, err := strconv.ParseInt(q.Get("expires"), 10, 64)
	if err != nil || s.env.Now().Unix() > expires {
		return deny("Authentication expired")
	}
	salt, digest, ok := strings.Cut(q.Get("validate_token"), ":")
	sb, err1 := hex.DecodeString(salt)
	db, err2 := hex.DecodeString(digest)
	if !ok || err1 != nil || err2 != nil {
		return deny("Access not authenticated")
	}
	raw := r.URL.RawQuery
	if i := strings.Index(raw, "&validate_token="); i >= 0 {
		raw = raw[:i]
	}
	if !hmac.Equal(db, g.digest(sb, r.URL.EscapedPath(), raw)) {
		return deny("Access not authenticated")
	}
	return nil
}

func (g redirect) digest(salt []byte, path, query string) []byte {
	h := sha256.New()
	h.Write(salt)
	h.Write([]byte(path))
	h.Write([]byte("?"))
	h.Write([]byte(query))
	h.Write(g.secret)
	return h.Sum(nil)
}

// Preauthenticate signs a URL (of the content app) for a content_redirect guard's
// secret, valid for an hour, as Pulp's preauthenticate_url does.
func Preauthenticate(secretHex, rawURL string, salt []byte, now time.Time) (string, error) {
	secret, err := hex.DecodeString(secretHex)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	sep := "?"
	if u.RawQuery != "" {
		sep = "&"
	}
	signed := rawURL + sep + "expires=" + strconv.FormatInt(now.Add(time.Hour).Unix(), 10)
	su, _ := url.Parse(signed)
	d := redirect{secret: secret}.digest(salt, su.EscapedPath(), su.RawQuery)
	return signed + "&validate_token=" + hex.EncodeToString(salt) + ":" + hex.EncodeToString(d), nil
}

// header admits a request whose header, base64-decoded (and passed through the jq
// filter), equals the guard's value.
type header struct {
	name, value string
	jq          *gojq.Code
}

// maxHeaderValue bounds the decoded header a jq filter reads.
const maxHeaderValue = 64 << 10

func (g header) permit(_ *Set, r *http.Request, _ string) error {
	v := r.Header.Get(g.name)
	if v == "" {
		return deny("Access denied.")
	}
	if len(v) > maxHeaderValue*4/3+4 {
		return deny("Access denied.")
	}
	decoded, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return deny("Access denied.")
	}
	got := string(decoded)
	if g.jq != nil {
		var doc any
		if err := json.Unmarshal(decoded, &doc); err != nil {
			return deny("Access denied.")
		}
		ctx, cancel := context.WithTimeout(r.Context(), 100*time.Millisecond)
		defer cancel()
		out, ok := g.jq.RunWithContext(ctx, doc).Next()
		if !ok {
			return deny("Access denied.")
		}
		s, isString := out.(string)
		if !isString {
			return deny("Access denied.")
		}
		got = s
	}
	if got != g.value {
		return deny("Access denied.")
	}
	return nil
}

// composite admits what any of its guards admits; one with none admits everyone, as
// Pulp's does.
type composite struct{ members []string }

func (g composite) permit(s *Set, r *http.Request, path string) error {
	if len(g.members) == 0 {
		return nil
	}
	var reasons []string
	status := http.StatusForbidden
	for _, m := range g.members {
		err := s.Permit(r, m, path)
		if err == nil {
			return nil
		}
		var d *Denied
		if !errors.As(err, &d) {
			return err
		}
		if d.Status == http.StatusUnauthorized {
			status = d.Status // credentials could still get the client in
		}
		reasons = append(reasons, d.Reason)
	}
	return &Denied{Status: status, Reason: "Access forbidden. Refusals: " + strings.Join(reasons, "; ")}
}

// certGuard admits a client certificate the guard trusts (and, rhsm, whose entitlement
// grants the path).
type certGuard struct{ g *cert.Guard }

func (g certGuard) permit(s *Set, r *http.Request, path string) error {
	c, err := s.clientCert(r)
	if err != nil {
		return deny("%v", err)
	}
	if err := g.g.Permit(c, path, s.env.Now()); err != nil {
		return deny("%v", err)
	}
	return nil
}

// clientCert is the request's client certificate: the chain of its TLS handshake, else
// the X-Client-Cert header of a trusted proxy.
func (s *Set) clientCert(r *http.Request) (*cert.Cert, error) {
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		return s.env.Certs.Chain(r.TLS.PeerCertificates)
	}
	if v := r.Header.Get(cert.Header); v != "" {
		if s.env.FromProxy == nil || !s.env.FromProxy(r) {
			return nil, errors.New("the X-Client-Cert header is believed only from a trusted proxy")
		}
		return s.env.Certs.Header(v)
	}
	return nil, cert.ErrNoCert
}

// Permissions is Env.Permitted over the roles stored in db: the user holds perm on every
// object, or on o.
func Permissions(db *meta.DB) func(ctx context.Context, userID int64, perm string, o meta.Object) (bool, error) {
	return func(ctx context.Context, userID int64, perm string, o meta.Object) (bool, error) {
		for _, on := range []meta.Object{{}, o} {
			ps, err := meta.Permissions(ctx, db, userID, on)
			if err != nil || ps[perm] {
				return ps[perm], err
			}
		}
		return false, nil
	}
}
