package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"pith/api/openapi"
	"pith/api/rest"
	"pith/content"
	"pith/edge"
	"pith/meta"
)

// Versions are the Pulp components pith claims to be, from the reference release set.
var Versions = []struct{ Component, Version, Package, Module string }{
	{"core", "3.105.25", "pulpcore", "pulpcore.app"},
	{"file", "3.105.25", "pulpcore", "pulp_file.app"},
	{"certguard", "3.105.25", "pulpcore", "pulp_certguard.app"},
	{"rpm", "3.35.6", "pulp-rpm", "pulp_rpm.app"},
}

// Config is what the API needs from its process.
type Config struct {
	// Core holds the stores, the task queue and the content types the API serves.
	Core          *content.Core
	ContentOrigin string // e.g. http://127.0.0.1:24817
	Logger        *slog.Logger
	// OrphanProtection is how long new content and artifacts are safe from orphan cleanup.
	OrphanProtection time.Duration
	// GracePeriod keeps superseded publications servable.
	GracePeriod time.Duration
	// UploadTimeout is how long an authenticated client has to send the body of an
	// operation that takes files, in place of the listener's shorter deadline
	// (edge.ExtendBody); 0 leaves that deadline.
	UploadTimeout time.Duration
}

// Server is the REST API.
type Server struct {
	cfg    Config
	core   *content.Core
	env    *rest.Env
	crud   *crud
	db     *meta.DB
	mux    *http.ServeMux
	routes []route
	byPat  map[string]string // "METHOD pattern" → operationId
	doc    []byte
	creds  sync.Map // username → cachedCred
	cache  func(context.Context) bool
}

// SetCacheStatus tells status how to check the shared content cache (Redis).
func (s *Server) SetCacheStatus(connected func(context.Context) bool) { s.cache = connected }

type cachedCred struct {
	hash string
	sum  [32]byte
}

// New builds the API and its OpenAPI document.
func New(cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.GracePeriod == 0 {
		cfg.GracePeriod = 3 * 24 * time.Hour
	}
	if cfg.OrphanProtection == 0 {
		cfg.OrphanProtection = 24 * time.Hour
	}
	s := &Server{cfg: cfg, core: cfg.Core, env: cfg.Core.Env(), db: cfg.Core.DB, mux: http.NewServeMux(),
		crud: &crud{core: cfg.Core, gracePeriod: cfg.GracePeriod}}
	t := cfg.Core.Table()
	ops := s.coreOps(t)
	ops = append(ops, s.kindOps(t)...)
	ops = append(ops, t.Ops()...)
	s.routes = routes(t, ops)
	docOps := make([]openapi.Operation, 0, len(s.routes))
	s.byPat = map[string]string{}
	for _, rt := range s.routes {
		s.byPat[rt.op.Method+" "+rt.pattern] = rt.op.ID
		docOps = append(docOps, rt.op)
		s.mux.HandleFunc(rt.op.Method+" "+rt.pattern, s.wrap(rt))
	}
	for _, rt := range s.extensions() {
		s.mux.HandleFunc(rt.op.Method+" "+rt.pattern, s.wrap(rt))
	}
	versions := map[string]string{}
	for _, v := range Versions {
		versions[v.Component] = v.Version
	}
	doc, err := openapi.Document(openapi.Info{
		Title:       "Pulp 3 API",
		Version:     "v3",
		Description: "Fetch, Upload, Organize, and Distribute Software Packages (served by pith)",
		AppVersions: versions,
	}, docOps, t.Reg)
	if err != nil {
		return nil, err
	}
	s.doc = doc
	return s, nil
}

// Operations lists the operations the API implements, for tests and docs.
func (s *Server) Operations() []openapi.Operation {
	ops := make([]openapi.Operation, len(s.routes))
	for i, rt := range s.routes {
		ops[i] = rt.op
	}
	return ops
}

// RequestFields are the body fields an operation accepts (those of newer Pulp releases
// included); ok is false for an operation pith does not implement or that takes no body.
func (s *Server) RequestFields(opID string) (fields []string, ok bool) {
	for _, rt := range s.routes {
		if rt.op.ID == opID && rt.body != nil {
			return rest.Fields(rt.body), true
		}
	}
	return nil, false
}

// OperationFor is the operation that serves a request; ok is false for none (or a pith
// extension, which has no operationId in the document).
func (s *Server) OperationFor(r *http.Request) (string, bool) {
	_, pattern := s.mux.Handler(r)
	id, ok := s.byPat[pattern]
	return id, ok
}

// Document is the served OpenAPI document.
func (s *Server) Document() []byte { return s.doc }

// ServeHTTP serves the API, echoing or minting the Correlation-ID.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cid := r.Header.Get("Correlation-ID")
	if _, err := uuid.Parse(cid); err != nil || cid == "" {
		cid = strings.ReplaceAll(uuid.NewString(), "-", "")
	}
	// Set directly: Header().Set would canonicalise the name to Correlation-Id.
	w.Header()["Correlation-ID"] = []string{cid}
	r = r.WithContext(rest.WithPRNs(rest.WithCorrelationID(r.Context(), cid), s.env))
	s.mux.ServeHTTP(w, r)
}

// wrap serves an operation: the client is authenticated before anything of the body is
// read, so an unknown client is answered at once and never gets more than the listener's
// short body deadline (edge.Bodies); a known one sending a file gets UploadTimeout.
func (s *Server) wrap(rt route) http.HandlerFunc {
	upload := rt.op.Body != nil && slices.Equal(rt.op.Body.MediaTypes, rest.FileForms)
	return func(w http.ResponseWriter, r *http.Request) {
		if !rt.op.Anonymous && !s.authenticate(r) {
			w.Header().Set("WWW-Authenticate", `Basic realm="api"`)
			rest.WriteJSON(w, http.StatusUnauthorized, map[string]string{"detail": "Authentication credentials were not provided."})
			return
		}
		if upload && s.cfg.UploadTimeout > 0 {
			edge.ExtendBody(w, r, s.cfg.UploadTimeout)
		}
		if err := rt.h(w, r); err != nil {
			rest.WriteError(w, r, err)
		}
	}
}

// authenticate checks HTTP Basic credentials. A verified password is remembered as a
// SHA-256 against the stored hash, so the slow key derivation runs once per password
// change, not once per request.
func (s *Server) authenticate(r *http.Request) bool {
	user, pw, ok := r.BasicAuth()
	if !ok {
		return false
	}
	hash, err := meta.PasswordHash(r.Context(), s.db, user)
	if err != nil || hash == "" {
		return false
	}
	sum := sha256.Sum256([]byte(pw))
	if c, ok := s.creds.Load(user); ok {
		cc := c.(cachedCred)
		if cc.hash == hash {
			return subtle.ConstantTimeCompare(cc.sum[:], sum[:]) == 1
		}
	}
	if !meta.CheckPassword(hash, pw) {
		return false
	}
	s.creds.Store(user, cachedCred{hash: hash, sum: sum})
	return true
}
