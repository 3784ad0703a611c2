package serve

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"pith/meta"
)

// checkpointLayout is how a checkpoint publication's creation time names it under a
// checkpoint distribution (Pulp's CHECKPOINT_TS_FORMAT): UTC, to the second.
const checkpointLayout = "20060102T150405Z"

// checkpointName is the path segment of a checkpoint publication created at µs.
func checkpointName(created int64) string {
	return time.UnixMicro(created).UTC().Format(checkpointLayout)
}

// parseCheckpoint reads a path segment as a checkpoint time: exactly Pulp's
// ^\d{8}T\d{6}Z$, a real date, and not after now. It returns the last µs of that second
// (a publication made during the second is at or before it).
func parseCheckpoint(seg string, now time.Time) (int64, bool) {
	if len(seg) != len(checkpointLayout) || seg[8] != 'T' || seg[15] != 'Z' {
		return 0, false
	}
	for i, c := range seg {
		if i != 8 && i != 15 && (c < '0' || c > '9') {
			return 0, false
		}
	}
	at, err := time.Parse(checkpointLayout, seg)
	if err != nil || at.After(now) {
		return 0, false
	}
	return at.UnixMicro() + int64(time.Second/time.Microsecond) - 1, true
}

// checkpoint answers what a checkpoint distribution serves at rel (below its base path):
// the list of its checkpoints at its root; else rel is <timestamp>/<path>, and it finds
// the newest checkpoint publication of the repository made at or before that time. It
// returns what to serve <path> from, or false when it has answered the request itself
// (listing, redirect or 404).
func (s *Server) checkpoint(w http.ResponseWriter, r *http.Request, t *distTable, d meta.Distribution, rel string) (meta.Serving, string, bool) {
	var cps []meta.Checkpoint
	if d.RepositoryID != nil {
		cps = t.checkpoints[*d.RepositoryID]
	}
	if rel == "" {
		names := make([]string, 0, len(cps))
		for _, c := range cps {
			if n := checkpointName(c.Created) + "/"; len(names) == 0 || names[len(names)-1] != n {
				names = append(names, n)
			}
		}
		writeIndex(w, r, names)
		return meta.Serving{}, "", false
	}
	seg, rest, dir := strings.Cut(rel, "/")
	if !dir {
		// As Pulp: a checkpoint's root, valid or not, first gets its trailing slash.
		http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
		return meta.Serving{}, "", false
	}
	end, ok := parseCheckpoint(seg, time.Now())
	i := sort.Search(len(cps), func(i int) bool { return cps[i].Created > end })
	if !ok || i == 0 {
		http.Error(w, r.URL.Path+" not found", http.StatusNotFound)
		return meta.Serving{}, "", false
	}
	c := cps[i-1]
	if name := checkpointName(c.Created); name != seg {
		// The checkpoint current at that time, under its own name, so that what a client
		// fetches next is relative to a name that always means the same publication.
		to := url.URL{Path: s.opt.Prefix + d.BasePath + "/" + name + "/" + rest}
		http.Redirect(w, r, to.EscapedPath(), http.StatusMovedPermanently)
		return meta.Serving{}, "", false
	}
	src := t.serving[d.ID] // its repository's last reclaim
	src.PubID, src.PubPulpID = c.PubID, c.PubPulpID
	return src, rest, true
}
