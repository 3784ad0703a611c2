package serve

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"

	"pith/meta"
)

// Small files are kept in memory: blobs are content-addressed, so a cached copy can
// never be stale, and serving from memory spares the open, stat, sendfile and close a
// file costs. Metadata files (repomd.xml, PULP_MANIFEST) and small packages are most of
// what clients ask for.
const (
	smallMax    = 64 << 10 // files up to this size are cached
	smallBudget = 64 << 20 // bytes of cached files
)

type smallFile struct {
	data    []byte
	headers http.Header // precomputed, shared read-only
}

type smallCache struct {
	mu    sync.RWMutex
	files map[string]*smallFile
	bytes int
}

func (c *smallCache) get(sha string) *smallFile {
	c.mu.RLock()
	f := c.files[sha]
	c.mu.RUnlock()
	return f
}

func (c *smallCache) put(a meta.Artifact, contentType string, data []byte) *smallFile {
	f := &smallFile{data: data, headers: http.Header{
		"Content-Type":         {contentType},
		"Content-Length":       {strconv.Itoa(len(data))},
		"Etag":                 {`"` + a.SHA256 + `"`},
		"Last-Modified":        {meta.Time(a.Created).Format(http.TimeFormat)},
		"Accept-Ranges":        {"bytes"},
		"X-Pulp-Artifact-Size": {strconv.Itoa(len(data))},
	}}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.files == nil || c.bytes+len(data) > smallBudget {
		c.files, c.bytes = map[string]*smallFile{}, 0
	}
	c.files[a.SHA256] = f
	c.bytes += len(data)
	return f
}

// readSmall reads a whole small blob.
func readSmall(r io.Reader, size int64) ([]byte, error) {
	b := make([]byte, size)
	_, err := io.ReadFull(r, b)
	return b, err
}

// serve sends a cached file. Plain GETs and HEADs take the fast path; anything
// conditional or ranged goes through http.ServeContent.
func (f *smallFile) serve(w http.ResponseWriter, r *http.Request, name string, a meta.Artifact) {
	h := w.Header()
	if r.Header.Get("Range") != "" || r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "" ||
		r.Header.Get("If-Match") != "" || r.Header.Get("If-Unmodified-Since") != "" {
		h["Content-Type"] = f.headers["Content-Type"]
		h["Etag"] = f.headers["Etag"]
		h["X-Pulp-Artifact-Size"] = f.headers["X-Pulp-Artifact-Size"]
		http.ServeContent(w, r, name, meta.Time(a.Created), bytes.NewReader(f.data))
		return
	}
	for k, v := range f.headers {
		h[k] = v
	}
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(f.data)
	}
}
