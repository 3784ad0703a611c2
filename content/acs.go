package content

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"pith/blob"
	"pith/content/download"
	"pith/meta"
	"pith/task"
)

// RefreshArgs are the arguments of the task that refreshes one path of an alternate
// content source (one task of the refresh's task group, as in Pulp).
type RefreshArgs struct {
	ACS  string `json:"acs"` // its pulp_id
	Path string `json:"path"`
}

// ACSURL is where one path of an alternate content source is: the path below the
// remote's URL, joined as Pulp joins them (os.path.join); "" is the URL itself.
func ACSURL(remoteURL, path string) string {
	if path == "" {
		return remoteURL
	}
	if !strings.HasSuffix(remoteURL, "/") {
		remoteURL += "/"
	}
	return remoteURL + path
}

// Refresh is what a refresh task works on: the alternate content source, the path, its
// URL and the downloader of the source's remote.
type Refresh struct {
	ACS    meta.ACS
	Remote meta.Remote
	Path   string
	URL    string
	D      *download.Downloader
}

// StartRefresh reads a refresh task's arguments. A path the source no longer has (an
// update came between the dispatch and the task) is an error that says so.
func (c *Core) StartRefresh(ctx context.Context, r *task.Run) (Refresh, error) {
	var a RefreshArgs
	if err := r.Args(&a); err != nil {
		return Refresh{}, err
	}
	acs, err := meta.ACSByPulpID(ctx, c.DB, a.ACS)
	if err != nil {
		return Refresh{}, err
	}
	if !slices.Contains(acs.Paths, a.Path) && !(a.Path == "" && len(acs.Paths) == 0) {
		return Refresh{}, fmt.Errorf("alternate content source %q no longer has path %q", acs.Name, a.Path)
	}
	remote, err := meta.RemoteByID(ctx, c.DB, acs.RemoteID)
	if err != nil {
		return Refresh{}, err
	}
	d, err := Downloader(remote)
	if err != nil {
		return Refresh{}, err
	}
	return Refresh{ACS: acs, Remote: remote, Path: a.Path, URL: ACSURL(remote.URL, a.Path), D: d}, nil
}

// SaveRefresh records the files a refresh found, replacing what the path listed before.
func (c *Core) SaveRefresh(ctx context.Context, f Refresh, files []meta.ACSFile) error {
	return c.DB.Tx(ctx, func(tx *meta.Tx) error { return meta.SetACSFiles(ctx, tx, f.ACS.ID, f.Path, files) })
}

// Alternates are the alternate content sources a sync consults before its remote, as
// Pulp's ACSArtifactHandler does: a file whose sha256 a refreshed source lists is
// fetched from there first. Bytes that do not match (or a source that fails) are
// thrown away and the file is fetched from the remote; only verified bytes are stored.
type Alternates struct {
	c    *Core
	r    *task.Run
	none bool // no source has been refreshed: nothing to look up

	mu          sync.Mutex
	downloaders map[int64]*download.Downloader // by remote
	used, fell  *task.Progress                 // made on first use
}

// Alternates are the sync's alternate content sources (r reports their use).
func (c *Core) Alternates(ctx context.Context, r *task.Run) (*Alternates, error) {
	has, err := meta.AnyACS(ctx, c.DB)
	if err != nil {
		return nil, err
	}
	return &Alternates{c: c, r: r, none: !has, downloaders: map[int64]*download.Downloader{}}, nil
}

// Lookup finds the sources of files by sha256 (those without one are absent).
func (a *Alternates) Lookup(ctx context.Context, sha256s []string) (map[string][]meta.ACSSource, error) {
	if a.none || len(sha256s) == 0 {
		return nil, nil
	}
	return meta.ACSSources(ctx, a.c.DB, sha256s)
}

// FetchBlob stores a file from its alternate sources srcs, in order, or else from url
// with d (the sync's remote). When the remote fails too, the error names each source
// that failed and why, beside the remote's.
func (a *Alternates) FetchBlob(ctx context.Context, srcs []meta.ACSSource, d *download.Downloader, url string, want download.Expect) (blob.Digests, error) {
	var errs []error
	for _, src := range srcs {
		ad, err := a.downloader(ctx, src.RemoteID)
		if err == nil {
			var dg blob.Digests
			if dg, err = FetchBlob(ctx, a.c.Store, ad, src.URL, want); err == nil {
				a.count(&a.used, "sync.downloading.acs", "Downloading Artifacts from Alternate Content Sources")
				return dg, nil
			}
		}
		if ctx.Err() != nil {
			return blob.Digests{}, err
		}
		a.c.Log.Warn("alternate content source failed; trying the next source", "acs", src.ACSName, "url", src.URL, "err", err)
		errs = append(errs, fmt.Errorf("alternate content source %q: %w", src.ACSName, err))
	}
	dg, err := FetchBlob(ctx, a.c.Store, d, url, want)
	if err != nil {
		return blob.Digests{}, errors.Join(append(errs, err)...)
	}
	if len(errs) > 0 {
		a.count(&a.fell, "sync.acs.fallback", "Artifacts the Alternate Content Sources did not give intact, downloaded from the remote")
	}
	return dg, nil
}

// downloader is the downloader of an alternate source's remote, made once per sync.
func (a *Alternates) downloader(ctx context.Context, remoteID int64) (*download.Downloader, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if d, ok := a.downloaders[remoteID]; ok {
		return d, nil
	}
	m, err := meta.RemoteByID(ctx, a.c.DB, remoteID)
	if err != nil {
		return nil, err
	}
	d, err := Downloader(m)
	if err != nil {
		return nil, err
	}
	a.downloaders[remoteID] = d
	return d, nil
}

func (a *Alternates) count(p **task.Progress, code, message string) {
	a.mu.Lock()
	if *p == nil {
		*p = a.r.Progress(code, message, -1)
	}
	pr := *p
	a.mu.Unlock()
	pr.Add(1)
}

// Finish ends the sync's reports of its alternate sources and closes their idle
// connections.
func (a *Alternates) Finish() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, d := range a.downloaders {
		d.CloseIdleConnections()
	}
	for _, p := range []*task.Progress{a.used, a.fell} {
		if p != nil {
			p.Finish(nil)
		}
	}
}
