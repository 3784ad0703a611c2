package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"pith/blob"
	"pith/content/download"
	"pith/meta"
)

// Options tune the content app.
type Options struct {
	Prefix            string        // URL prefix, default /pulp/content/
	GracePeriod       time.Duration // superseded publications stay servable this long
	Logger            *slog.Logger
	CacheSize         int  // path resolutions kept (default 10,000)
	RedirectToStorage bool // answer with a redirect when the blob driver can make URLs
}

// Server is the content app.
type Server struct {
	db    *meta.DB
	store *blob.Store
	opt   Options

	gen    atomic.Uint64 // bumped by Invalidate
	mu     sync.Mutex
	table  *distTable
	cache  map[string]resolution
	flight map[int64]*flight // on-demand fetches in progress, by content artifact

	dmu         sync.Mutex
	downloaders map[string]*download.Downloader // by remote id + last update

	small smallCache
}

// distTable is the in-memory base path → distribution table.
type distTable struct {
	gen    uint64
	loaded time.Time
	byPath map[string]meta.Distribution
}

// tableTTL bounds how stale the table may be when another process changed things.
const tableTTL = 3 * time.Second

// New returns a content app over the store.
func New(db *meta.DB, store *blob.Store, opt Options) *Server {
	if opt.Prefix == "" {
		opt.Prefix = "/pulp/content/"
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.CacheSize <= 0 {
		opt.CacheSize = 10_000
	}
	return &Server{db: db, store: store, opt: opt, cache: map[string]resolution{}, flight: map[int64]*flight{}, downloaders: map[string]*download.Downloader{}}
}

// Invalidate is called when distributions, publications, repository versions or remotes
// change: the next request reloads the table and forgets cached resolutions.
func (s *Server) Invalidate() {
	s.gen.Add(1)
	s.mu.Lock()
	clear(s.cache)
	s.mu.Unlock()
}

func (s *Server) distributions(ctx context.Context) (*distTable, error) {
	gen := s.gen.Load()
	s.mu.Lock()
	t := s.table
	s.mu.Unlock()
	if t != nil && t.gen == gen && time.Since(t.loaded) < tableTTL {
		return t, nil
	}
	ds, _, err := meta.ListDistributions(ctx, s.db, meta.List{})
	if err != nil {
		return nil, err
	}
	nt := &distTable{gen: gen, loaded: time.Now(), byPath: make(map[string]meta.Distribution, len(ds))}
	for _, d := range ds {
		nt.byPath[d.BasePath] = d
	}
	s.mu.Lock()
	if t != nil && time.Since(t.loaded) >= tableTTL {
		clear(s.cache) // another process may have changed what paths resolve to
	}
	s.table = nt
	s.mu.Unlock()
	return nt, nil
}

// match finds the distribution whose base path is the longest prefix of p at a segment
// boundary, and the path below it.
func (t *distTable) match(p string) (meta.Distribution, string, bool) {
	for cut := len(p); cut > 0; cut = strings.LastIndexByte(p[:cut], '/') {
		if d, ok := t.byPath[p[:cut]]; ok {
			rest := strings.TrimPrefix(p[cut:], "/")
			if cut == len(p) {
				rest = ""
			}
			return d, rest, true
		}
	}
	return meta.Distribution{}, "", false
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := strings.TrimPrefix(r.URL.Path, s.opt.Prefix)
	if p == r.URL.Path && r.URL.Path+"/" != s.opt.Prefix {
		http.NotFound(w, r)
		return
	}
	ctx := r.Context()
	t, err := s.distributions(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if p == "" || p == "/" {
		s.listDistributions(w, r, t)
		return
	}
	d, rel, ok := t.match(strings.TrimSuffix(p, "/"))
	if !ok {
		s.listBasePaths(w, r, t, p)
		return
	}
	if strings.HasSuffix(p, "/") && rel != "" {
		rel += "/"
	}
	if rel == "" && !strings.HasSuffix(p, "/") {
		http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
		return
	}
	res, err := s.resolve(ctx, d, rel)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	switch res.kind {
	case kindMiss:
		http.Error(w, fmt.Sprintf("%s not found in distribution %s", rel, d.BasePath), http.StatusNotFound)
	case kindRedirectDir:
		http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
	case kindDir:
		s.listDir(w, r, res)
	case kindFile:
		s.serveFile(w, r, d, rel, res)
	}
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	s.opt.Logger.Error("content request failed", "path", r.URL.Path, "err", err)
	http.Error(w, "internal error serving "+r.URL.Path, http.StatusInternalServerError)
}

type kind int

const (
	kindMiss kind = iota
	kindFile
	kindDir
	kindRedirectDir
)

// resolution is what a (distribution, path) resolves to.
type resolution struct {
	kind    kind
	file    meta.FileRef
	entries []string // directory: the paths under it
	prefix  string
}

// source is where a distribution's content comes from right now.
type source struct {
	pubs   []int64 // current publication first, then superseded ones in their grace period
	repo   int64
	number int64
	none   bool
}

func (s *Server) source(ctx context.Context, d meta.Distribution) (source, error) {
	var src source
	switch {
	case d.PublicationID != nil:
		src.pubs = []int64{*d.PublicationID}
	case d.RepositoryID != nil:
		pub, err := meta.LatestPublication(ctx, s.db, *d.RepositoryID)
		if err != nil {
			return src, err
		}
		if pub != nil {
			src.pubs = []int64{pub.ID}
		} else {
			repo, err := meta.RepositoryByID(ctx, s.db, *d.RepositoryID)
			if err != nil {
				return src, err
			}
			src.repo, src.number = repo.ID, repo.LatestVersion
		}
	default:
		src.none = true
	}
	if s.opt.GracePeriod > 0 {
		old, err := meta.SupersededPublications(ctx, s.db, d.ID, meta.Now())
		if err != nil {
			return src, err
		}
		src.pubs = append(src.pubs, old...)
	}
	return src, nil
}

func (s *Server) resolve(ctx context.Context, d meta.Distribution, rel string) (resolution, error) {
	key := fmt.Sprintf("%d\x00%s", d.ID, rel)
	s.mu.Lock()
	res, ok := s.cache[key]
	s.mu.Unlock()
	if ok {
		return res, nil
	}
	res, err := s.lookup(ctx, d, rel)
	if err != nil {
		return res, err
	}
	// On-demand files are not cached: once fetched they have an artifact.
	if res.kind != kindFile || res.file.Artifact != nil {
		s.mu.Lock()
		if len(s.cache) >= s.opt.CacheSize {
			clear(s.cache)
		}
		s.cache[key] = res
		s.mu.Unlock()
	}
	return res, nil
}

func (s *Server) lookup(ctx context.Context, d meta.Distribution, rel string) (resolution, error) {
	src, err := s.source(ctx, d)
	if err != nil || src.none {
		return resolution{}, err
	}
	if rel == "" || strings.HasSuffix(rel, "/") {
		paths, err := s.paths(ctx, src, rel)
		if err != nil {
			return resolution{}, err
		}
		if len(paths) == 0 && rel != "" {
			return resolution{kind: kindMiss}, nil
		}
		return resolution{kind: kindDir, entries: paths, prefix: rel}, nil
	}
	for _, pub := range src.pubs {
		f, err := meta.PublishedFileRef(ctx, s.db, pub, rel)
		if err == nil {
			return resolution{kind: kindFile, file: f}, nil
		}
		if !errors.Is(err, meta.ErrNotFound) {
			return resolution{}, err
		}
	}
	if src.pubs == nil {
		f, err := meta.VersionFileRef(ctx, s.db, src.repo, src.number, rel)
		if err == nil {
			return resolution{kind: kindFile, file: f}, nil
		}
		if !errors.Is(err, meta.ErrNotFound) {
			return resolution{}, err
		}
	}
	// A directory named without its trailing slash.
	paths, err := s.paths(ctx, src, rel+"/")
	if err != nil {
		return resolution{}, err
	}
	if len(paths) > 0 {
		return resolution{kind: kindRedirectDir}, nil
	}
	return resolution{kind: kindMiss}, nil
}

func (s *Server) paths(ctx context.Context, src source, prefix string) ([]string, error) {
	if src.pubs != nil {
		return meta.PublishedPaths(ctx, s.db, src.pubs[0], prefix)
	}
	return meta.VersionPaths(ctx, s.db, src.repo, src.number, prefix)
}

var noCache = map[string]bool{"repomd.xml": true, "repomd.xml.asc": true, "repomd.xml.key": true}

func contentType(name string) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// serveFile sends a resolved file: from the store, by redirect, or fetched on demand.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, d meta.Distribution, rel string, res resolution) {
	name := path.Base(rel)
	h := w.Header()
	if noCache[name] {
		h.Set("Cache-Control", "no-cache")
	}
	f := res.file
	if f.Artifact == nil {
		s.serveOnDemand(w, r, d, rel, f)
		return
	}
	s.serveArtifact(w, r, name, *f.Artifact)
}

func (s *Server) serveArtifact(w http.ResponseWriter, r *http.Request, name string, a meta.Artifact) {
	h := w.Header()
	h.Set("X-PULP-ARTIFACT-SIZE", fmt.Sprint(a.Size))
	if rd, ok := s.store.Driver().(blob.Redirector); ok && s.opt.RedirectToStorage {
		u, err := rd.URL(r.Context(), a.SHA256, blob.URLOptions{ContentType: contentType(name),
			ContentDisposition: "attachment;filename=" + name, Expires: time.Hour})
		if err != nil {
			s.fail(w, r, err)
			return
		}
		http.Redirect(w, r, u, http.StatusFound)
		return
	}
	if sf := s.small.get(a.SHA256); sf != nil {
		sf.serve(w, r, name, a)
		return
	}
	f, err := s.store.Open(r.Context(), a.SHA256)
	if err != nil {
		if errors.Is(err, blob.ErrNotFound) {
			s.opt.Logger.Error("artifact blob is missing; run a repair", "sha256", a.SHA256, "path", r.URL.Path)
			http.Error(w, "the file is missing from storage; an administrator can repair it", http.StatusBadGateway)
			return
		}
		s.fail(w, r, err)
		return
	}
	defer f.Close()
	if a.Size <= smallMax {
		if data, err := readSmall(f, a.Size); err == nil {
			s.small.put(a, contentType(name), data).serve(w, r, name, a)
			return
		}
		f.Seek(0, io.SeekStart)
	}
	h.Set("Content-Type", contentType(name))
	h.Set("ETag", `"`+a.SHA256+`"`)
	http.ServeContent(w, r, name, meta.Time(a.Created), f)
}
