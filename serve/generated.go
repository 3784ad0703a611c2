package serve

import (
	"context"
	"net/http"
	"strings"

	"pith/content"
	"pith/meta"
)

// generated answers a path that the distribution's type makes from the distribution's
// settings (content.DistributionFiles: rpm's config.repo) rather than from what it
// serves. It reports whether it answered.
func (s *Server) generated(w http.ResponseWriter, r *http.Request, t *distTable, d meta.Distribution, rel string) bool {
	if s.opt.Types == nil || rel == "" {
		return false
	}
	typ, ok := s.opt.Types(d.Type)
	if !ok {
		return false
	}
	df, ok := typ.(content.DistributionFiles)
	if !ok || !df.Generates(rel) {
		return false
	}
	return s.generate(w, r, t, d, df, rel)
}

// generate answers a path df generates, apart from generated so that what it captures
// (d, for has) is not moved to the heap on every request.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, t *distTable, d meta.Distribution, df content.DistributionFiles, rel string) bool {
	origin := s.opt.ContentOrigin
	if origin == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		origin = scheme + "://" + r.Host
	}
	base := strings.TrimSuffix(origin, "/") + s.opt.Prefix + d.BasePath + "/"
	has := func(path string) bool { return s.serves(r.Context(), t, d, path) }
	var pub *meta.Publication
	if src := t.serving[d.ID]; src.PubID != 0 {
		p, err := meta.PublicationByID(r.Context(), s.db, src.PubID)
		if err == nil {
			pub = &p
		}
	}
	body, ctype, ok := df.DistributionFile(r.Context(), d, pub, rel, base, has)
	if !ok {
		return false
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-cache")
	if r.Method != http.MethodHead {
		w.Write(body)
	}
	return true
}

// serves reports whether what d serves has a file at path.
func (s *Server) serves(ctx context.Context, t *distTable, d meta.Distribution, path string) bool {
	res, err := s.resolve(ctx, d, t.serving[d.ID], path)
	return err == nil && res.kind == kindFile
}
