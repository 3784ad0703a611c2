package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strconv"
	"sync/atomic"
	"time"

	"pith/blob"
	"pith/content"
	"pith/content/download"
	"pith/meta"
)

// flight is one upstream fetch of an on-demand file that other requests wait for.
type flight struct {
	done     chan struct{}
	waiters  atomic.Int32   // requests waiting for it (observed by tests)
	artifact *meta.Artifact // set when the file was stored
	err      error
}

// remoteDownloader is a remote's downloader, built from the remote as last updated.
type remoteDownloader struct {
	updated int64
	d       *download.Downloader
}

func (s *Server) downloader(m meta.Remote) (*download.Downloader, error) {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	if c, ok := s.downloaders[m.ID]; ok && c.updated == m.Updated {
		return c.d, nil
	}
	cfg, err := content.DownloadConfig(m)
	if err != nil {
		return nil, err
	}
	d, err := download.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("downloader for remote %q: %w", m.Name, err)
	}
	s.downloaders[m.ID] = remoteDownloader{updated: m.Updated, d: d}
	return d, nil
}

// serveOnDemand fetches a file from its remote. The first request for a file leads: it
// streams the bytes to its client and into the store. Concurrent requests wait for the
// leader and are then served the stored blob, so upstream sees one request. Files of
// streamed remotes are never stored, so there is nothing to share: each request fetches.
func (s *Server) serveOnDemand(w http.ResponseWriter, r *http.Request, rel string, f meta.FileRef) {
	if len(f.Remote) == 0 {
		http.Error(w, r.URL.Path+" is not stored and has no remote to fetch it from", http.StatusNotFound)
		return
	}
	src := f.Remote[0]
	m, err := meta.RemoteByID(r.Context(), s.db, src.RemoteID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if m.Policy == "streamed" {
		s.fetch(w, r, m, src, rel, f, nil)
		return
	}
	s.mu.Lock()
	fl, follower := s.flight[f.ContentArtifactID]
	if !follower {
		fl = &flight{done: make(chan struct{})}
		s.flight[f.ContentArtifactID] = fl
	}
	s.mu.Unlock()
	if follower {
		fl.waiters.Add(1)
		select {
		case <-fl.done:
		case <-r.Context().Done():
			return
		}
		if fl.err != nil {
			http.Error(w, "fetching "+r.URL.Path+" from the remote failed", http.StatusBadGateway)
			return
		}
		s.serveArtifact(w, r, path.Base(rel), *fl.artifact)
		return
	}
	defer func() {
		s.mu.Lock()
		delete(s.flight, f.ContentArtifactID)
		s.mu.Unlock()
		close(fl.done)
	}()
	// This request may have resolved the path just before an earlier leader stored the
	// file and left: look again rather than fetch twice.
	if a, err := s.storedArtifact(r.Context(), f); err != nil || a != nil {
		if err != nil {
			s.failFlight(fl, err)
			s.fail(w, r, err)
			return
		}
		fl.artifact = a
		s.serveArtifact(w, r, path.Base(rel), *a)
		return
	}
	s.fetch(w, r, m, src, rel, f, fl)
}

// storedArtifact returns the artifact of an on-demand file once it has been fetched, or nil.
func (s *Server) storedArtifact(ctx context.Context, f meta.FileRef) (*meta.Artifact, error) {
	files, err := meta.ContentFiles(ctx, s.db, f.ContentID)
	if err != nil {
		return nil, fmt.Errorf("files of content %d: %w", f.ContentID, err)
	}
	for _, cf := range files {
		if cf.ContentArtifactID == f.ContentArtifactID {
			return cf.Artifact, nil
		}
	}
	return nil, nil
}

// fetch streams the file from upstream to the client; with fl set it also stores it and
// records the artifact for the waiting requests.
func (s *Server) fetch(w http.ResponseWriter, r *http.Request, m meta.Remote, src meta.RemoteSource, rel string, f meta.FileRef, fl *flight) {
	dl, err := s.downloader(m)
	if err != nil {
		s.failFlight(fl, err)
		s.fail(w, r, err)
		return
	}
	want := download.Expect{Size: -1}
	if src.Size != nil {
		want.Size = *src.Size
	}
	if src.SHA256 != nil {
		want.SHA256 = *src.SHA256
	}
	// The fetch outlives a client that goes away, so the others still get the file.
	ctx := context.WithoutCancel(r.Context())
	// A file an alternate content source has is taken from it first (Pulp's content app
	// does the same); a source that fails is passed over for a while, the remote used.
	var body io.ReadCloser
	var length int64
	from := "remote " + m.Name
	acsURL := ""
	if fl != nil && want.SHA256 != "" {
		body, length, acsURL, from = s.openAlternate(ctx, want)
	}
	if body == nil {
		from = "remote " + m.Name
		body, length, err = dl.Open(ctx, src.URL, want)
	}
	if err != nil {
		s.failFlight(fl, err)
		s.opt.Logger.Warn("on-demand fetch failed", "path", r.URL.Path, "from", from, "err", err)
		var de *download.Error
		if errors.As(err, &de) && de.Status == http.StatusNotFound {
			http.Error(w, r.URL.Path+" was not found on the remote", http.StatusNotFound)
			return
		}
		// The upstream error stays in the log: its URL may carry credentials.
		http.Error(w, "fetching "+r.URL.Path+" from the remote failed", http.StatusBadGateway)
		return
	}
	defer body.Close()
	var bw *blob.Writer
	if fl != nil {
		if bw, err = s.store.NewWriter(ctx); err != nil {
			s.failFlight(fl, err)
			s.fail(w, r, err)
			return
		}
		defer bw.Cancel(ctx)
	}
	h := w.Header()
	h.Set("Content-Type", contentType(path.Base(rel)))
	if length < 0 {
		length = want.Size // a different length fails verification and aborts the response
	}
	if length >= 0 {
		h.Set("Content-Length", strconv.FormatInt(length, 10))
		h.Set("X-PULP-ARTIFACT-SIZE", strconv.FormatInt(length, 10))
	}
	if want.SHA256 != "" {
		h.Set("ETag", `"`+want.SHA256+`"`)
	}
	w.WriteHeader(http.StatusOK)
	client := io.Writer(w)
	if r.Method == http.MethodHead {
		client = io.Discard
	}
	var dst io.Writer = &lenient{w: client}
	if bw != nil {
		dst = io.MultiWriter(bw, dst)
	}
	if _, err := io.Copy(dst, body); err != nil {
		// The bytes did not verify, or upstream broke off: nothing is stored, and the
		// client must not take a truncated body for the file.
		s.failFlight(fl, err)
		s.opt.Logger.Warn("on-demand fetch failed while streaming", "path", r.URL.Path, "from", from, "err", err)
		if acsURL != "" {
			s.acsFailure(acsURL) // the next request asks the remote
		}
		panic(http.ErrAbortHandler)
	}
	if bw == nil {
		return
	}
	// The client has its bytes; failures from here on only mean nothing is kept (the
	// waiting requests get 502 and the next request fetches again).
	dg, err := bw.Commit(ctx, blob.Expect{Size: want.Size, SHA256: want.SHA256})
	if err != nil {
		s.failFlight(fl, err)
		s.opt.Logger.Warn("on-demand file not stored", "path", r.URL.Path, "err", err)
		return
	}
	a, _, err := meta.PutArtifact(ctx, s.db, meta.ArtifactOf(dg))
	if err == nil {
		err = meta.SetContentArtifact(ctx, s.db, f.ContentArtifactID, a.ID)
	}
	if err != nil {
		s.failFlight(fl, err)
		s.opt.Logger.Error("on-demand file stored but not recorded", "path", r.URL.Path, "sha256", dg.SHA256, "err", err)
		return
	}
	fl.artifact = &a
}

// acsRetry is how long an alternate content source URL that failed is passed over.
const acsRetry = 10 * time.Minute

// maxACSFailed bounds the failed URLs remembered; past it the oldest are forgotten.
const maxACSFailed = 10000

// openAlternate opens a file from the first alternate content source that has it (by
// sha256) and answers; body is nil when none does. from names it for the log, url is
// the URL opened.
func (s *Server) openAlternate(ctx context.Context, want download.Expect) (body io.ReadCloser, length int64, url, from string) {
	srcs, err := meta.ACSSources(ctx, s.db, []string{want.SHA256})
	if err != nil {
		s.opt.Logger.Warn("alternate content sources not consulted", "err", err)
		return nil, 0, "", ""
	}
	for _, src := range srcs[want.SHA256] {
		if s.acsPassed(src.URL) {
			continue
		}
		m, err := meta.RemoteByID(ctx, s.db, src.RemoteID)
		if err == nil {
			var dl *download.Downloader
			if dl, err = s.downloader(m); err == nil {
				w := want
				if w.Size < 0 {
					w.Size = src.Size
				}
				if body, length, err = dl.Open(ctx, src.URL, w); err == nil {
					return body, length, src.URL, "alternate content source " + src.ACSName
				}
			}
		}
		s.opt.Logger.Warn("alternate content source failed; trying the next source", "acs", src.ACSName, "err", err)
		s.acsFailure(src.URL)
	}
	return nil, 0, "", ""
}

// acsPassed reports whether an alternate content source URL failed lately.
func (s *Server) acsPassed(url string) bool {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	at, ok := s.acsFailed[url]
	return ok && time.Since(at) < acsRetry
}

// acsFailure remembers that an alternate content source URL failed.
func (s *Server) acsFailure(url string) {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	if len(s.acsFailed) >= maxACSFailed {
		for u, at := range s.acsFailed {
			if time.Since(at) >= acsRetry || len(s.acsFailed) >= maxACSFailed {
				delete(s.acsFailed, u)
			}
		}
	}
	s.acsFailed[url] = time.Now()
}

func (s *Server) failFlight(fl *flight, err error) {
	if fl != nil && fl.err == nil {
		fl.err = err
	}
}

// lenient keeps copying upstream into the store after the client went away.
type lenient struct {
	w      io.Writer
	failed bool
}

func (l *lenient) Write(p []byte) (int, error) {
	if !l.failed {
		if _, err := l.w.Write(p); err != nil {
			l.failed = true
		}
	}
	return len(p), nil
}
