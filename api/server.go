package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"pith/api/openapi"
	"pith/blob"
	"pith/meta"
	"pith/task"
)

// Versions are the Pulp components pith claims to be, from the reference release set.
var Versions = []struct{ Component, Version, Package, Module string }{
	{"core", "3.105.25", "pulpcore", "pulpcore.app"},
	{"file", "3.105.25", "pulpcore", "pulp_file.app"},
	{"certguard", "3.105.25", "pulpcore", "pulp_certguard.app"},
	{"rpm", "3.35.6", "pulp-rpm", "pulp_rpm.app"},
}

// Invalidator is told when what the content app serves may have changed.
type Invalidator interface{ Invalidate() }

// Config is what the API needs from its process.
type Config struct {
	DB            *meta.DB
	Store         *blob.Store
	Queue         *task.Queue
	Content       Invalidator
	ContentOrigin string // e.g. http://127.0.0.1:24817
	Logger        *slog.Logger
	// OrphanProtection is how long new content and artifacts are safe from orphan cleanup.
	OrphanProtection time.Duration
	// AfterVersion runs after a task made a repository version (autopublish,
	// retention); Refetch repairs a missing or corrupt file from its remote; FetchURL
	// downloads a URL into an artifact (content create with file_url).
	AfterVersion func(ctx context.Context, r *task.Run, repo meta.Repository, v meta.Version) error
	Refetch      func(ctx context.Context, f meta.FileRef) error
	FetchURL     func(ctx context.Context, url string) (meta.Artifact, error)
	// GracePeriod keeps superseded publications servable.
	GracePeriod time.Duration
	// UploadProtection, TaskProtection and OrphanCleanupInterval set the maintenance
	// schedules (0 = none); see SetSchedules.
	UploadProtection, TaskProtection, OrphanCleanupInterval time.Duration
}

// Server is the REST API.
type Server struct {
	cfg    Config
	db     *meta.DB
	mux    *http.ServeMux
	routes []route
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

// route is one operation: its document entry, mux pattern and handler.
type route struct {
	op      openapi.Operation
	pattern string
	h       func(w http.ResponseWriter, r *http.Request) error
}

// New builds the API and its OpenAPI document.
func New(cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Content == nil {
		cfg.Content = nopInvalidator{}
	}
	if cfg.GracePeriod == 0 {
		cfg.GracePeriod = 3 * 24 * time.Hour
	}
	if cfg.OrphanProtection == 0 {
		cfg.OrphanProtection = 24 * time.Hour
	}
	s := &Server{cfg: cfg, db: cfg.DB, mux: http.NewServeMux()}
	reg := openapi.NewRegistry()
	s.routes = s.table(reg)
	ops := make([]openapi.Operation, 0, len(s.routes))
	for _, rt := range s.routes {
		ops = append(ops, rt.op)
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
	}, ops, reg)
	if err != nil {
		return nil, err
	}
	s.doc = doc
	return s, nil
}

type nopInvalidator struct{}

func (nopInvalidator) Invalidate() {}

// Operations lists the operations the API implements, for tests and docs.
func (s *Server) Operations() []openapi.Operation {
	ops := make([]openapi.Operation, len(s.routes))
	for i, rt := range s.routes {
		ops[i] = rt.op
	}
	return ops
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
	r = r.WithContext(context.WithValue(r.Context(), cidKey{}, cid))
	s.mux.ServeHTTP(w, r)
}

type cidKey struct{}

func correlationID(ctx context.Context) string {
	s, _ := ctx.Value(cidKey{}).(string)
	return s
}

func (s *Server) wrap(rt route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !rt.op.Anonymous && !s.authenticate(r) {
			w.Header().Set("WWW-Authenticate", `Basic realm="api"`)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"detail": "Authentication credentials were not provided."})
			return
		}
		if err := rt.h(w, r); err != nil {
			writeError(w, r, err)
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

// accepted answers 202 with exactly {"task": href}.
func accepted(w http.ResponseWriter, t task.Task) error {
	writeJSON(w, http.StatusAccepted, map[string]string{"task": taskHref(t.PulpID)})
	return nil
}

// quickTask is how long a dispatching request waits for its task: short tasks then
// finish before the client's first read, sparing it the CLI's one-second poll.
const quickTask = 500 * time.Millisecond

// dispatch queues a task with the request's correlation ID.
func (s *Server) dispatch(r *http.Request, spec task.Spec) (task.Task, error) {
	spec.LoggingCID = correlationID(r.Context())
	t, err := s.cfg.Queue.Dispatch(r.Context(), spec)
	if err == nil {
		s.cfg.Queue.WaitBriefly(r.Context(), t.ID, quickTask)
	}
	return t, err
}
