package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path"
	"strings"
	"time"
)

// Upstream serves a directory on 127.0.0.1 for the servers under test to sync from.
type Upstream struct {
	URL string
	srv *http.Server
}

// ServeDir starts an upstream for dir.
func ServeDir(dir string) (*Upstream, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir))}
	go srv.Serve(l)
	return &Upstream{URL: "http://" + l.Addr().String() + "/", srv: srv}, nil
}

// Close stops the upstream.
func (u *Upstream) Close() { u.srv.Close() }

// Distributed is an rpm repository synced, published and distributed on a target.
type Distributed struct {
	BaseURL  string // the distribution's base_url as the server reports it
	BasePath string
	Sync     time.Duration
}

// SyncPublishDistribute syncs the yum repository at url into a new repository with the
// given policy, publishes it and distributes it at a new base path.
func SyncPublishDistribute(ctx context.Context, t Target, url, policy string) (Distributed, error) {
	c := NewClient(t)
	stamp := strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "-")
	var d Distributed
	var remote, repo struct {
		Href    string `json:"pulp_href"`
		BaseURL string `json:"base_url"`
	}
	var task struct {
		Task string `json:"task"`
	}
	if err := c.JSON(ctx, "POST", "/pulp/api/v3/remotes/rpm/rpm/", map[string]any{"name": "bench-" + stamp, "url": url, "policy": policy}, &remote); err != nil {
		return d, err
	}
	if err := c.JSON(ctx, "POST", "/pulp/api/v3/repositories/rpm/rpm/", map[string]any{"name": "bench-" + stamp, "remote": remote.Href}, &repo); err != nil {
		return d, err
	}
	t0 := time.Now()
	if err := c.JSON(ctx, "POST", repo.Href+"sync/", map[string]any{}, &task); err != nil {
		return d, err
	}
	if err := c.Wait(ctx, task.Task); err != nil {
		return d, err
	}
	d.Sync = time.Since(t0)
	if err := c.JSON(ctx, "POST", "/pulp/api/v3/publications/rpm/rpm/", map[string]any{"repository": repo.Href}, &task); err != nil {
		return d, err
	}
	if err := c.Wait(ctx, task.Task); err != nil {
		return d, err
	}
	d.BasePath = "bench-" + stamp
	if err := c.JSON(ctx, "POST", "/pulp/api/v3/distributions/rpm/rpm/", map[string]any{"name": d.BasePath, "base_path": d.BasePath, "repository": repo.Href}, &task); err != nil {
		return d, err
	}
	if err := c.Wait(ctx, task.Task); err != nil {
		return d, err
	}
	var list struct {
		Results []struct {
			BaseURL string `json:"base_url"`
		} `json:"results"`
	}
	if err := c.Do(ctx, "GET", "/pulp/api/v3/distributions/rpm/rpm/?base_path="+d.BasePath, "", nil, &list); err != nil {
		return d, err
	}
	if len(list.Results) != 1 {
		return d, fmt.Errorf("distribution %s: %d found", d.BasePath, len(list.Results))
	}
	d.BaseURL = strings.TrimSuffix(list.Results[0].BaseURL, "/") + "/"
	return d, nil
}

// PackageURLs are the URLs of the packages of WriteYumRepo(…, n, …) in a publication
// with the nested_alphabetically layout (Packages/<first letter>/<file>) under base.
func PackageURLs(base string, locations []string) []string {
	urls := make([]string, len(locations))
	for i, l := range locations {
		name := path.Base(l)
		urls[i] = base + "Packages/" + strings.ToLower(name[:1]) + "/" + name
	}
	return urls
}
