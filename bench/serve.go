package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pith/bench/load"
	"pith/bench/plot"
)

// ServeConfig is the content-serving study (pulp_rpm's content app behind 302 redirects
// to MinIO, Locust without following redirects, random package URLs): every package URL
// of a distribution requested at random by wrk, for each configuration, raising the
// concurrent connections until req/s stops growing.
type ServeConfig struct {
	Packages  int
	Payload   int64         // bytes of file content per package
	Duration  time.Duration // per load level
	Users     []int         // load levels to try, in order; the sweep stops when req/s stops growing
	Processes []int         // content processes (more than 1 needs PG)
	PG        string        // postgres:// URL: the database of the multi-process configurations
	S3        string        // s3:// URL: adds configurations storing in S3 and answering with redirects
	Redis     string        // redis:// URL: the cache of the multi-process configurations
	Dir       string
	Password  string
	Peers     []Target // upstream Pulp: its API; PeerContent its content origin (same order)
	// PeerProcs selects each peer's content processes, for CPU and memory.
	PeerProcs           []load.Selector
	PlotPath, TablePath string
}

// ServeLevel is one load level of one configuration.
type ServeLevel struct {
	Users         int
	RPS           float64
	P50, P95, P99 time.Duration
	Errors        int64   // socket errors and non-2xx/3xx answers
	CPU           float64 // cores busy in the content processes
	RSSMiB        float64 // largest content process
	DBCPU         float64 // cores busy in PostgreSQL and Redis
	MachineCPU    float64 // cores busy on the whole machine (wrk included)
}

// ServeRow is one configuration's sweep.
type ServeRow struct {
	Name   string
	Peer   bool // another server (upstream Pulp), not a pith configuration
	Levels []ServeLevel
	Err    error
}

// Peak is the level with the most req/s.
func (r ServeRow) Peak() ServeLevel {
	var best ServeLevel
	for _, l := range r.Levels {
		if l.RPS > best.RPS {
			best = l
		}
	}
	return best
}

// At80 is the level closest below 80% of the peak rate among those before the peak (the
// latency a server offers with headroom; levels past the peak are overloaded), or the
// lowest level.
func (r ServeRow) At80() ServeLevel {
	peak := r.Peak()
	var best ServeLevel
	for _, l := range r.Levels {
		if l.Users <= peak.Users && l.RPS <= 0.8*peak.RPS && l.RPS > best.RPS {
			best = l
		}
	}
	if best.Users == 0 && len(r.Levels) > 0 {
		best = r.Levels[0]
	}
	return best
}

// ServeResult is the study's table.
type ServeResult struct {
	Packages int
	Payload  int64
	Rows     []ServeRow
}

type serveSetup struct {
	name     string
	storage  string // "" or S3 URL
	redirect bool
	cache    string
	procs    int
	database string
}

// setups lists the configurations the settings allow: the embedded installation (SQLite,
// files, one process), and with PG an installation storing in S3 (answering with
// redirects) when S3 is given, else in files, with each number of content processes.
// Each comes with its cache on and off.
func (cfg ServeConfig) setups() []serveSetup {
	var out []serveSetup
	add := func(kind, db, storage, cacheOn string, procs int) {
		caches := []string{cacheOn, "off"}
		if strings.HasPrefix(cacheOn, "redis://") && procs == 1 {
			// Resolutions in Redis only: every request asks Redis, where with a local cache
			// too a warm process answers from its own memory and Redis sits idle.
			caches = []string{cacheOn, cacheOn + "?local=off", "off"}
		}
		for _, cache := range caches {
			label := "cache"
			switch {
			case cache == "off":
				label = "no cache"
			case strings.HasSuffix(cache, "?local=off"):
				label = "Redis cache only (none in the process)"
			case strings.HasPrefix(cache, "redis://"):
				label = "Redis cache (and one in the process)"
			}
			out = append(out, serveSetup{name: fmt.Sprintf("%s, %s, %d proc", kind, label, procs), storage: storage, redirect: storage != "",
				cache: cache, procs: procs, database: db})
		}
	}
	if slices.Contains(cfg.Processes, 1) {
		add("SQLite+files", "", "", "memory", 1)
	}
	if cfg.PG == "" {
		return out
	}
	kind, cacheOn := "PostgreSQL+files", "memory"
	if cfg.S3 != "" {
		kind = "PostgreSQL+S3 redirect"
	}
	if cfg.Redis != "" {
		cacheOn = cfg.Redis
	}
	for _, n := range cfg.Processes {
		add(kind, cfg.PG, cfg.S3, cacheOn, n)
	}
	return out
}

// Serve runs the study.
func Serve(ctx context.Context, cfg ServeConfig) (ServeResult, error) {
	res := ServeResult{Packages: cfg.Packages, Payload: cfg.Payload}
	repoDir := filepath.Join(cfg.Dir, "upstream")
	written, err := WriteYumRepo(repoDir, cfg.Packages, cfg.Payload)
	if err != nil {
		return res, err
	}
	var locations []string
	for _, w := range written {
		locations = append(locations, w.Path)
	}
	up, err := ServeDir(repoDir)
	if err != nil {
		return res, err
	}
	defer up.Close()
	// One installation per database and storage, loaded once; the configurations
	// restart its processes with their own content settings.
	loaded := map[string]string{} // data dir + database + storage -> base path
	for i, s := range cfg.setups() {
		dir := filepath.Join(cfg.Dir, fmt.Sprintf("pith-%t", s.database != ""))
		key := dir
		row := ServeRow{Name: "pith, " + s.name}
		cl, err := StartCluster(ctx, ClusterConfig{Dir: dir, Database: s.database, Storage: s.storage, Cache: s.cache, Redirect: s.redirect,
			Content: s.procs, Password: cfg.Password, Logs: filepath.Join(cfg.Dir, fmt.Sprintf("pith-%d.log", i))})
		if err != nil {
			return res, fmt.Errorf("%s: %w", row.Name, err)
		}
		if loaded[key] == "" {
			d, err := SyncPublishDistribute(ctx, cl.Target(), up.URL, "immediate")
			if err != nil {
				cl.Stop()
				return res, fmt.Errorf("%s: load the repository: %w", row.Name, err)
			}
			loaded[key] = d.BasePath
		}
		urls := PackageURLs(cl.Content+"/pulp/content/"+loaded[key]+"/", locations)
		var extra load.Selector // the services this configuration uses
		if s.database != "" {   // PostgreSQL's backends ("postgres: user db host state"), not pith's own --database postgres://
			extra.CmdlineContains = append(extra.CmdlineContains, "postgres: ")
		}
		if strings.HasPrefix(s.cache, "redis://") {
			extra.CmdlineContains = append(extra.CmdlineContains, "redis-server")
		}
		row.Levels, row.Err = sweep(ctx, cfg, urls, load.Selector{PIDs: cl.ContentPIDs}, extra)
		cl.Stop()
		res.Rows = append(res.Rows, row)
		if row.Err != nil {
			return res, fmt.Errorf("%s: %w", row.Name, row.Err)
		}
	}
	for i, p := range cfg.Peers {
		row := ServeRow{Name: p.Name, Peer: true}
		d, err := SyncPublishDistribute(ctx, p, up.URL, "immediate")
		if err != nil {
			return res, fmt.Errorf("%s: load the repository: %w", p.Name, err)
		}
		var procs load.Selector
		if i < len(cfg.PeerProcs) {
			procs = cfg.PeerProcs[i]
		}
		row.Levels, row.Err = sweep(ctx, cfg, PackageURLs(d.BaseURL, locations), procs, load.Selector{CmdlineContains: []string{"redis-server", "postgres: "}})
		res.Rows = append(res.Rows, row)
		if row.Err != nil {
			return res, fmt.Errorf("%s: %w", row.Name, row.Err)
		}
	}
	return res, nil
}

// sweep raises the load until req/s grows by less than 5%.
func sweep(ctx context.Context, cfg ServeConfig, urls []string, procs, extra load.Selector) ([]ServeLevel, error) {
	if err := checkURL(ctx, urls[0]); err != nil {
		return nil, err
	}
	// Warm up: every path once, as the study's long runs do (a server's cache is then
	// warm however slowly it answers).
	if err := warm(ctx, urls, 16); err != nil {
		return nil, err
	}
	var levels []ServeLevel
	best := 0.0
	for _, users := range cfg.Users {
		m0, _ := load.MachineCPU()
		sp, se := load.StartSampler(200*time.Millisecond, procs), load.StartSampler(200*time.Millisecond, extra)
		w, err := load.Wrk(ctx, load.WrkConfig{URLs: urls, Connections: users, Duration: cfg.Duration, Timeout: 10 * time.Second})
		u, ue := sp.Stop(), se.Stop()
		m1, _ := load.MachineCPU()
		if err != nil {
			return levels, err
		}
		l := ServeLevel{Users: users, RPS: w.RPS, P50: w.P50, P95: w.P95, P99: w.P99, Errors: w.Non2xx3xx + w.SocketErrors,
			CPU: u.TotalCPU, RSSMiB: u.MaxProcRSSMiB, DBCPU: ue.TotalCPU, MachineCPU: load.CPUWindow{Start: m0, End: m1}.BusyCores()}
		levels = append(levels, l)
		if l.RPS < best*1.05 {
			break
		}
		best = math.Max(best, l.RPS)
	}
	return levels, nil
}

// warm requests every URL once over n connections, without following redirects.
func warm(ctx context.Context, urls []string, n int) error {
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: n},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	next := make(chan string)
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			var first error
			for u := range next {
				req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
				resp, err := c.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if err != nil && first == nil {
					first = fmt.Errorf("warm up: GET %s: %w", u, err)
				}
			}
			errs <- first
		}()
	}
	for _, u := range urls {
		next <- u
	}
	close(next)
	var err error
	for i := 0; i < n; i++ {
		err = errors.Join(err, <-errs)
	}
	return err
}

// checkURL makes sure a package URL answers (200, or a redirect, not followed).
func checkURL(ctx context.Context, url string) error {
	c := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 && resp.StatusCode != 302 {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// ServeMarkdown renders the table: each configuration's peak and its latency.
func ServeMarkdown(w io.Writer, r ServeResult) {
	fmt.Fprintf(w, "\n%d packages of %s each, random package URLs, wrk (redirects not followed).\n", r.Packages, human(r.Payload))
	fmt.Fprintf(w, "\n| configuration | peak req/s | at users | req/s per busy CPU | req/s per CPU with PostgreSQL+Redis | p50 | p95 | p95 at ≤80%% of peak (req/s) | RSS per process | PostgreSQL+Redis CPU | machine CPU | errors |\n")
	fmt.Fprintf(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, row := range r.Rows {
		p, e := row.Peak(), row.At80()
		perCPU, withDB := "n/a", "n/a"
		if p.CPU > 0 {
			perCPU = fmt.Sprintf("%.0f", p.RPS/p.CPU)
			withDB = fmt.Sprintf("%.0f", p.RPS/(p.CPU+p.DBCPU))
		}
		fmt.Fprintf(w, "| %s | %.0f | %d | %s | %s | %s | %s | %s (%.0f) | %.0f MiB | %.2f | %.2f | %d |\n", row.Name, p.RPS, p.Users, perCPU, withDB,
			ms(p.P50), ms(p.P95), ms(e.P95), e.RPS, p.RSSMiB, p.DBCPU, p.MachineCPU, p.Errors)
	}
}

// ServePlot draws req/s against concurrent users for each configuration.
func ServePlot(path string, r ServeResult) error {
	l := plot.Line{Title: fmt.Sprintf("Content serving: %d random package URLs", r.Packages), XLabel: "concurrent connections (wrk)",
		YLabel: "req/s", LogX: true, YFromZero: true}
	for _, row := range r.Rows {
		// Upstream Pulp serves about a hundredth of pith's rate: on a linear axis its
		// line lies on zero.
		l.LogY = l.LogY || row.Peer
		s := plot.Series{Name: row.Name}
		for _, lv := range row.Levels {
			s.X, s.Y = append(s.X, float64(lv.Users)), append(s.Y, lv.RPS)
		}
		if len(s.X) > 0 {
			l.Series = append(l.Series, s)
		}
	}
	if len(l.Series) == 0 {
		return fmt.Errorf("nothing to plot")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return l.WriteFile(path)
}
