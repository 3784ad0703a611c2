package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"pith/blob"
	"pith/content"
	"pith/internal/lru"
	"pith/meta"
	"pith/serve/guard"
)

// Options tune the content app.
type Options struct {
	Prefix            string        // URL prefix, default /pulp/content/
	ContentOrigin     string        // scheme://host[:port] clients reach content at (config.repo); default: the request's
	GracePeriod       time.Duration // 0: superseded publications are not consulted (the API records their expiry)
	Logger            *slog.Logger
	CacheSize         int  // path resolutions kept, misses included (default 10,000)
	RedirectToStorage bool // answer with a redirect when the blob driver can make URLs
	// Shared, when set, is a Redis cache of path resolutions shared by all content
	// processes, consulted after this process's own cache.
	Shared *Shared
	// NoCache resolves every request in the database and reads every file from storage:
	// no resolution cache, local or shared, and no small-file cache.
	NoCache bool
	// SharedOnly keeps path resolutions in the shared cache only, not in this process's
	// memory as well (every request then asks Redis).
	SharedOnly bool
	// Guards is what content guards need of the process (who a request runs as, …).
	Guards guard.Env
	// Types finds the content type of a distribution type, for the paths types answer
	// themselves (content.DistributionFiles); nil: none.
	Types func(kind string) (content.Type, bool)
}

// Server is the content app.
type Server struct {
	db    *meta.DB
	store *blob.Store
	opt   Options

	gen       atomic.Uint64 // bumped by Invalidate: the table is reloaded
	table     atomic.Pointer[distTable]
	loadMu    sync.Mutex                            // one table reload at a time
	cache     *lru.Cache[resolutionKey, resolution] // misses included; never stale: keys name immutable content
	presigned *lru.Cache[signedKey, signedURL]      // presigned URLs, reused for most of their lifetime

	mu     sync.Mutex
	flight map[int64]*flight // on-demand fetches in progress, by content artifact

	dmu         sync.Mutex
	downloaders map[int64]remoteDownloader // by remote; rebuilt when the remote changes
	// acsFailed are the URLs of alternate content sources that failed a fetch, and
	// when: they are passed over for acsRetry (guarded by dmu).
	acsFailed map[string]time.Time

	small smallCache
}

// distTable is the in-memory base path → distribution table.
type distTable struct {
	gen     uint64
	loaded  time.Time
	byPath  map[string]meta.Distribution
	depth   int                    // segments of the deepest base path
	serving map[int64]meta.Serving // by distribution ID
	// checkpoints are the checkpoint publications of the repositories checkpoint
	// distributions serve, by repository ID, oldest first.
	checkpoints map[int64][]meta.Checkpoint
	guards      *guard.Set // the content guards, compiled
}

func (t *distTable) add(d meta.Distribution) {
	t.byPath[d.BasePath] = d
	t.depth = max(t.depth, strings.Count(d.BasePath, "/")+1)
}

// Bounds of the paths the content app looks at: far above any path it can serve (a base
// path and a relative path are each at most content.MaxRelativePath bytes; a yum
// repository's deepest path is Packages/<letter>/<file>, a kickstart tree's a few more),
// so that a path made to be costly is refused before any work.
const (
	maxPath     = 2*content.MaxRelativePath + 2 // base path, "/", relative path, "/"
	maxSegments = 256
)

// tableTTL bounds how stale the table may be when another process changed things.
const tableTTL = 3 * time.Second

// New returns a content app over the store.
func New(db *meta.DB, store *blob.Store, opt Options) *Server {
	if opt.Prefix == "" {
		opt.Prefix = "/pulp/content/"
	}
	if !strings.HasSuffix(opt.Prefix, "/") {
		opt.Prefix += "/"
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if opt.CacheSize <= 0 {
		opt.CacheSize = 10_000
	}
	return &Server{db: db, store: store, opt: opt, cache: lru.New[resolutionKey, resolution](opt.CacheSize),
		presigned: lru.New[signedKey, signedURL](opt.CacheSize), flight: map[int64]*flight{},
		downloaders: map[int64]remoteDownloader{}, acsFailed: map[string]time.Time{}}
}

// Invalidate is called when distributions, publications, repository versions or remotes
// change, here or in another process: the next request reloads the table of what each
// distribution serves. Cached resolutions are keyed by what is served (an immutable
// publication or repository version), so a change moves exactly the distributions it
// touches to new keys; nothing else is forgotten, here or in the shared cache.
func (s *Server) Invalidate() { s.gen.Add(1) }

func (s *Server) distributions(ctx context.Context) (*distTable, error) {
	if t := s.table.Load(); t != nil && t.gen == s.gen.Load() && time.Since(t.loaded) < tableTTL {
		return t, nil
	}
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	t := s.table.Load()
	gen := s.gen.Load()
	if t != nil && t.gen == gen && time.Since(t.loaded) < tableTTL {
		return t, nil // another request reloaded it while this one waited
	}
	ds, _, err := meta.ListDistributions(ctx, s.db, meta.List{})
	if err != nil {
		return nil, fmt.Errorf("load distributions: %w", err)
	}
	serving, err := meta.DistributionServing(ctx, s.db)
	if err != nil {
		return nil, err
	}
	checkpoints, err := meta.CheckpointPublications(ctx, s.db)
	if err != nil {
		return nil, err
	}
	gs, _, err := meta.ListGuards(ctx, s.db, meta.List{})
	if err != nil {
		return nil, fmt.Errorf("load content guards: %w", err)
	}
	var prev *guard.Set
	if t != nil {
		prev = t.guards
	}
	nt := &distTable{gen: gen, loaded: time.Now(), byPath: make(map[string]meta.Distribution, len(ds)), serving: serving,
		checkpoints: checkpoints, guards: guard.Compile(s.opt.Guards, gs, prev)}
	for _, d := range ds {
		nt.add(d)
	}
	s.table.Store(nt)
	return nt, nil
}

// match finds the distribution whose base path is the longest prefix of p at a segment
// boundary, and the path below it. It looks up p's prefixes from the first segment on,
// no deeper than the deepest base path: at most t.depth lookups of at most that much of
// p, however long p is. (Base paths do not nest, so at most one prefix matches.)
func (t *distTable) match(p string) (meta.Distribution, string, bool) {
	var found meta.Distribution
	at := -1
	for i, start := 0, 0; i < t.depth; i++ {
		cut := len(p)
		if j := strings.IndexByte(p[start:], '/'); j >= 0 {
			cut = start + j
		}
		if d, ok := t.byPath[p[:cut]]; ok {
			found, at = d, cut
		}
		if cut == len(p) {
			break
		}
		start = cut + 1
	}
	switch {
	case at < 0:
		return meta.Distribution{}, "", false
	case at == len(p):
		return found, "", true
	}
	return found, p[at+1:], true
}

// Headers of every answer of the content app, shared read-only (no allocation per
// request). What it serves comes from upstreams and uploads, HTML and SVG included, and
// may be on the API's origin: a browser must neither guess a type (nosniff) nor run
// anything in it, script or plugin, nor let it act as the origin (sandbox). dnf, curl
// and the pulp clients ignore both.
var (
	nosniff = []string{"nosniff"}
	sandbox = []string{"default-src 'none'; sandbox"}
	// private keeps what a guard let through out of shared caches (proxies, CDNs).
	private = []string{"private"}
)

// refuse answers a request a content guard refused: 401 (with a challenge) where
// credentials could let the client in, else 403, with the guard's reason.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, err error) {
	var d *guard.Denied
	if !errors.As(err, &d) {
		s.fail(w, r, err)
		return
	}
	if d.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="content"`)
	}
	http.Error(w, d.Reason, d.Status)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h["X-Content-Type-Options"] = nosniff
	h["Content-Security-Policy"] = sandbox
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path+"/" == s.opt.Prefix {
		http.Redirect(w, r, s.opt.Prefix, http.StatusMovedPermanently)
		return
	}
	p, ok := strings.CutPrefix(r.URL.Path, s.opt.Prefix)
	if !ok {
		http.Error(w, r.URL.Path+" is outside "+s.opt.Prefix, http.StatusNotFound)
		return
	}
	// 414 rather than 404: the path is refused unread, not looked for.
	if len(p) > maxPath {
		http.Error(w, fmt.Sprintf("the path is longer than %d bytes", maxPath), http.StatusRequestURITooLong)
		return
	}
	if strings.Count(p, "/") >= maxSegments {
		http.Error(w, fmt.Sprintf("the path has more than %d segments", maxSegments), http.StatusRequestURITooLong)
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
	// A guarded distribution answers nothing its guard refuses, every time: the guard is
	// asked before any resolution is looked up, cached or not.
	if d.ContentGuard != nil {
		if err := t.guards.Permit(r, *d.ContentGuard, "/"+p); err != nil {
			s.refuse(w, r, err)
			return
		}
		h["Cache-Control"] = private
	}
	var src meta.Serving
	if d.Checkpoint {
		if src, rel, ok = s.checkpoint(w, r, t, d, rel); !ok {
			return
		}
	} else {
		if s.generated(w, r, t, d, rel) {
			return
		}
		src = t.serving[d.ID]
	}
	res, err := s.resolve(ctx, d, src, rel)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	switch res.kind {
	case kindMiss:
		http.Error(w, r.URL.Path+" not found", http.StatusNotFound)
	case kindRedirectDir:
		http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
	case kindDir:
		s.listDir(w, r, res)
	case kindFile:
		s.serveFile(w, r, rel, res)
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
	grace   bool // found in a superseded publication
}

// resolve finds what rel is in src, which d serves.
func (s *Server) resolve(ctx context.Context, d meta.Distribution, src meta.Serving, rel string) (resolution, error) {
	if s.opt.NoCache {
		return s.lookup(ctx, d, src, rel)
	}
	key := resolutionKey{dist: d.PulpID, pub: src.PubPulpID, repo: src.RepoPulpID, number: src.Number, reclaimed: src.Reclaimed, path: rel}
	local := s.opt.Shared == nil || !s.opt.SharedOnly
	if local {
		if res, ok := s.cache.Get(key); ok {
			return res, nil
		}
	}
	if s.opt.Shared != nil {
		if res, ok := s.opt.Shared.get(ctx, key); ok {
			if local {
				s.cache.Put(key, res)
			}
			return res, nil
		}
	}
	res, err := s.lookup(ctx, d, src, rel)
	if err != nil {
		return res, err
	}
	// On-demand files are not cached (once fetched they have an artifact), nor files found
	// in a superseded publication (their grace period ends).
	if !res.grace && (res.kind != kindFile || res.file.Artifact != nil) {
		if local {
			s.cache.Put(key, res)
		}
		if s.opt.Shared != nil {
			s.opt.Shared.put(ctx, key, res)
		}
	}
	return res, nil
}

func (s *Server) lookup(ctx context.Context, d meta.Distribution, src meta.Serving, rel string) (resolution, error) {
	if src.PubID == 0 && src.RepoID == 0 {
		return resolution{kind: kindMiss}, nil
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
	var f meta.FileRef
	var err error
	if src.PubID != 0 {
		f, err = meta.PublishedFileRef(ctx, s.db, src.PubID, rel)
	} else {
		f, err = meta.VersionFileRef(ctx, s.db, src.RepoID, src.Number, rel)
	}
	if err == nil {
		return resolution{kind: kindFile, file: f}, nil
	}
	if !errors.Is(err, meta.ErrNotFound) {
		return resolution{}, fmt.Errorf("look up %s in distribution %s: %w", rel, d.BasePath, err)
	}
	// A directory named without its trailing slash.
	paths, err := s.paths(ctx, src, rel+"/")
	if err != nil {
		return resolution{}, err
	}
	if len(paths) > 0 {
		return resolution{kind: kindRedirectDir}, nil
	}
	// Clients that fetched metadata just before the distribution moved on still find the
	// files it listed. (A checkpoint never moves on.)
	if s.opt.GracePeriod > 0 && !d.Checkpoint {
		old, err := meta.SupersededPublications(ctx, s.db, d.ID, meta.Now())
		if err != nil {
			return resolution{}, fmt.Errorf("superseded publications of distribution %s: %w", d.BasePath, err)
		}
		for _, pub := range old {
			f, err := meta.PublishedFileRef(ctx, s.db, pub, rel)
			if err == nil {
				return resolution{kind: kindFile, file: f, grace: true}, nil
			}
			if !errors.Is(err, meta.ErrNotFound) {
				return resolution{}, err
			}
		}
	}
	return resolution{kind: kindMiss}, nil
}

func (s *Server) paths(ctx context.Context, src meta.Serving, prefix string) ([]string, error) {
	if src.PubID != 0 {
		return meta.PublishedPaths(ctx, s.db, src.PubID, prefix)
	}
	return meta.VersionPaths(ctx, s.db, src.RepoID, src.Number, prefix)
}

// noCache are the file names clients must revalidate every time (Pulp's NOCACHE_LIST):
// repository metadata that changes under the same name.
var noCache = map[string]bool{"repomd.xml": true, "repomd.xml.asc": true, "repomd.xml.key": true}

// contentType guesses from the extension, without parameters: a file is sent as stored,
// so a charset would be a claim pith cannot back.
func contentType(name string) string {
	t := mime.TypeByExtension(path.Ext(name))
	if t == "" {
		return "application/octet-stream"
	}
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	return t
}

// serveFile sends a resolved file: from the store, by redirect, or fetched on demand.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, rel string, res resolution) {
	name := path.Base(rel)
	h := w.Header()
	if noCache[name] {
		if len(h["Cache-Control"]) > 0 {
			h.Set("Cache-Control", "private, no-cache") // guarded
		} else {
			h.Set("Cache-Control", "no-cache")
		}
	}
	f := res.file
	if f.Artifact == nil {
		s.serveOnDemand(w, r, rel, f)
		return
	}
	s.serveArtifact(w, r, name, *f.Artifact)
}

func (s *Server) serveArtifact(w http.ResponseWriter, r *http.Request, name string, a meta.Artifact) {
	h := w.Header()
	h.Set("X-PULP-ARTIFACT-SIZE", strconv.FormatInt(a.Size, 10))
	if rd, ok := s.store.Driver().(blob.Redirector); ok && s.opt.RedirectToStorage {
		u, err := s.presign(r.Context(), rd, r.Method, a.SHA256, name)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		// Not http.Redirect: it parses the URL again and repeats it, escaped, in an HTML
		// body, which doubled the bytes of a cached answer and cost a tenth of its CPU.
		h.Set("Location", u)
		w.WriteHeader(http.StatusFound)
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
		var de *blob.DriverError
		if errors.As(err, &de) {
			s.opt.Logger.Error("blob storage unavailable", "driver", de.Driver, "path", r.URL.Path, "err", err)
			http.Error(w, "the "+de.Driver+" blob storage is unavailable; try again later", http.StatusServiceUnavailable)
			return
		}
		s.fail(w, r, err)
		return
	}
	defer f.Close()
	if a.Size <= smallMax && !s.opt.NoCache {
		if data, err := readSmall(f, a.Size); err == nil {
			// Kept in memory only as its digest says: a corrupt blob would outlive its
			// repair there.
			if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != a.SHA256 {
				s.opt.Logger.Error("artifact blob is corrupt; run a repair", "sha256", a.SHA256, "path", r.URL.Path)
				http.Error(w, "the file is corrupt in storage; an administrator can repair it", http.StatusBadGateway)
				return
			}
			s.small.put(a, contentType(name), data).serve(w, r, name, a)
			return
		}
		f.Seek(0, io.SeekStart)
	}
	h.Set("Content-Type", contentType(name))
	h.Set("ETag", `"`+a.SHA256+`"`)
	http.ServeContent(w, r, name, meta.Time(a.Created), f)
}

// Presigned URLs live for signedLife and are handed out again until signedReuse has
// passed, so that a client always gets at least signedLife-signedReuse to use one.
// Signing costs more than the rest of a cached request (HMACs over the canonical
// request); a URL is the same for every client of a file.
const (
	signedLife  = time.Hour
	signedReuse = 45 * time.Minute
)

type signedKey struct{ method, sha256, name string }

type signedURL struct {
	url    string
	signed time.Time
}

// presign returns a presigned URL of a blob served under name, for the request's method
// (a HEAD gets a URL signed for HEAD, which is all S3 accepts for it), signed anew only
// when the last one is older than signedReuse (or with the cache off).
func (s *Server) presign(ctx context.Context, rd blob.Redirector, method, sha, name string) (string, error) {
	if method != http.MethodHead {
		method = http.MethodGet
	}
	k := signedKey{method, sha, name}
	now := time.Now()
	if !s.opt.NoCache {
		if u, ok := s.presigned.Get(k); ok && now.Sub(u.signed) < signedReuse {
			return u.url, nil
		}
	}
	u, err := rd.URL(ctx, sha, blob.URLOptions{Method: method, ContentType: contentType(name), ContentDisposition: "attachment;filename=" + name, Expires: signedLife})
	if err != nil {
		return "", err
	}
	if !s.opt.NoCache {
		s.presigned.Put(k, signedURL{url: u, signed: now})
	}
	return u, nil
}
