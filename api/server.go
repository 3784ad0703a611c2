package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
	"pith/auth"
	"pith/content"
	"pith/edge"
	"pith/meta"
)

// CoreVersions are the components of pulpcore pith claims to be, from the reference
// release set; each type that is a plugin of its own claims it beside them
// (content.Claimer).
var CoreVersions = []content.Component{
	{Component: "core", Version: "3.105.25", Package: "pulpcore", Module: "pulpcore.app"},
	{Component: "file", Version: "3.105.25", Package: "pulpcore", Module: "pulp_file.app"},
	{Component: "certguard", Version: "3.105.25", Package: "pulpcore", Module: "pulp_certguard.app"},
}

// Versions are the components a process serving types claims: the core's and each
// Claimer's.
func Versions(types []content.Type) []content.Component {
	out := slices.Clone(CoreVersions)
	for _, t := range types {
		if c, ok := t.(content.Claimer); ok {
			out = append(out, c.Claims())
		}
	}
	return out
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
	// Auth authenticates requests (the process's, shared with its content app); nil:
	// passwords and sessions only.
	Auth *auth.Authenticator
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
	cache  func(context.Context) bool

	authn    *auth.Authenticator
	policies *policyCache
	conds    map[string]rest.Condition
	versions []content.Component // what status and the document claim
}

// SetCacheStatus tells status how to check the shared content cache (Redis).
func (s *Server) SetCacheStatus(connected func(context.Context) bool) { s.cache = connected }

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
		crud:  &crud{core: cfg.Core, gracePeriod: cfg.GracePeriod},
		authn: cfg.Auth}
	if s.authn == nil {
		s.authn = auth.New(cfg.Core.DB, auth.Config{})
	}
	t := cfg.Core.Table()
	pc, err := newPolicyCache(t)
	if err != nil {
		return nil, err
	}
	s.policies, s.conds = pc, t.Conditions()
	ops := s.coreOps(t)
	ops = append(ops, s.kindOps(t)...)
	ops = append(ops, t.Ops()...)
	s.routes = routes(t, ops)
	docOps := make([]openapi.Operation, 0, len(s.routes))
	s.byPat = map[string]string{}
	for i := range s.routes {
		s.routes[i].guard = s.guardOf(s.routes[i].def)
	}
	for i, rt := range s.routes {
		if rt.guard.viewset == "" && !rt.op.Anonymous {
			return nil, fmt.Errorf("operation %s names no access policy (rest.Op.Viewset)", rt.op.ID)
		}
		docOps = append(docOps, rt.op)
		for _, p := range append([]string{rt.pattern}, rt.def.Also...) {
			s.byPat[rt.op.Method+" "+p] = rt.op.ID
			s.mux.HandleFunc(rt.op.Method+" "+p, s.wrap(s.routes[i]))
		}
	}
	for _, rt := range s.extensions() {
		s.mux.HandleFunc(rt.op.Method+" "+rt.pattern, s.wrap(rt))
	}
	if err := s.syncAccess(context.Background()); err != nil {
		return nil, err
	}
	s.versions = Versions(s.core.Types())
	versions := s.versionMap()
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

// Roots are the paths outside /pulp/api/v3/ that the API serves, each the first segment
// of an operation's path ("/ansible/", "/pulp_ansible/"): the process mounts them beside
// /pulp/api/v3/.
func (s *Server) Roots() []string {
	var out []string
	for _, rt := range s.routes {
		for _, p := range append([]string{rt.pattern}, rt.def.Also...) {
			if strings.HasPrefix(p, href.Root) {
				continue
			}
			if i := strings.Index(p[1:], "/"); i >= 0 {
				p = p[:i+2]
			}
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
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
	r = r.WithContext(rest.WithOrigin(rest.WithPRNs(rest.WithCorrelationID(r.Context(), cid), s.env), rest.Origin(r)))
	s.mux.ServeHTTP(w, r)
}

// maxDrain bounds what of a refused request's body is read so that its client reads the
// answer.
const maxDrain = 64 << 20

// wrap serves an operation: the client is authenticated and authorized before anything
// of the body is read (a decision that depends on the body waits for the handler to read
// it, rest.WithGate), so an unknown or refused client is answered at once and never gets
// more than the listener's short body deadline (edge.Bodies); a known one sending a file
// gets UploadTimeout.
func (s *Server) wrap(rt route) http.HandlerFunc {
	upload := rt.op.Body != nil && slices.Equal(rt.op.Body.MediaTypes, rest.FileForms)
	return func(w http.ResponseWriter, r *http.Request) {
		sub, err := s.authn.Authenticate(r)
		var ae *auth.Error
		if errors.As(err, &ae) {
			err = rest.Status(ae.Status, "%s", ae.Detail)
		}
		if err == nil {
			ctx := rest.WithSubject(r.Context(), sub)
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				ctx = meta.ReadsOnly(ctx) // one commit token for its counts and grants
			}
			r = r.WithContext(ctx)
			if !rt.op.Anonymous {
				var ctx context.Context
				ctx, err = s.authorize(r, rt.guard)
				r = r.WithContext(ctx)
			}
		}
		if err == nil {
			if upload && s.cfg.UploadTimeout > 0 && !rest.SubjectOf(r.Context()).Anonymous() {
				edge.ExtendBody(w, r, s.cfg.UploadTimeout)
			}
			err = rt.h(w, r)
			if c := callerFrom(r.Context()); err == nil && c != nil && c.decision != nil && c.decision.pending {
				// The handler answered without reading the body its access decision waits
				// for: a handler that must be fixed, whatever it answered.
				s.cfg.Logger.Error("an access decision waiting for the request body was never taken", "operation", rt.op.ID)
			}
		}
		if err != nil {
			if rest.IsStatus(err, http.StatusUnauthorized) {
				w.Header().Set("WWW-Authenticate", `Basic realm="api"`)
			}
			// A known client refused partway through its body (a chunk that filled the
			// disk) gets the answer rather than a reset connection: what it still sends,
			// up to maxDrain, is read and dropped first. Unknown clients are not waited for.
			if !rest.SubjectOf(r.Context()).Anonymous() {
				io.Copy(io.Discard, io.LimitReader(r.Body, maxDrain))
			}
			if rt.def.WriteError != nil {
				rt.def.WriteError(w, r, err)
				return
			}
			rest.WriteError(w, r, err)
		}
	}
}
