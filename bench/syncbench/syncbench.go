// Package syncbench reproduces Pulp's "sync and download concurrency" study: CentOS 7
// os synced with policy immediate at download_concurrency 20, 15, 10, 7, 5 and 3 took
// 10:39 at 20 and 29:12 at 3, with a knee below 5.
//
// Here the upstream is a local wan.Server simulating a wide-area network, serving a
// generated repository shaped like CentOS 7 os (10,000 valid .rpm packages with
// realistic metadata, their byte sizes drawn from a long-tailed log-normal distribution
// and scaled down so that a run takes minutes). Each target (pith, upstream Pulp) syncs it
// with policy immediate at each concurrency in turn; before every setting the previous
// repository and remote are deleted and orphans cleaned up with protection time 0, and
// after it the upstream's counters must show that all package bytes were downloaded
// again, or the row fails. Sync time is compared with wan.Ideal, the lower bound set by
// the latency and the per-connection and total bandwidth caps; the aim is to be
// within 15% of it at every setting.
//
// Setting Config.WAN.MaxConcurrent makes the upstream answer 429 Too Many Requests (with
// Retry-After) beyond that many requests at once; each row reports how many 429s were
// sent and whether the sync still completed.
//
// TODO(adaptive-concurrency): an "adaptive" row — the target finding the knee by itself,
// raising its concurrency while throughput grows and backing off on 429/Retry-After — is
// wanted, but pith has no adaptive downloader yet (download_concurrency is fixed per
// remote). Add the row when it has one; it is not faked here.
package syncbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pith/bench"
	"pith/bench/load"
	"pith/bench/plot"
	"pith/bench/wan"
)

// Defaults. The WAN default puts a per-connection cap (4 MiB/s) well below the total cap
// (40 MiB/s): one stream cannot fill the link, so sync time falls with concurrency until
// TotalBps/PerConnBps = 10 streams fill it, and stays flat beyond — the knee of the
// study sits where the total cap is reached. The 40 ms latency per request (a round trip
// to a mirror plus its think time) is what makes many small packages slow at low
// concurrency, whatever the bandwidth.
var (
	DefaultConcurrency = []int{20, 15, 10, 7, 5, 3}
	DefaultWAN         = wan.Config{Latency: 40 * time.Millisecond, PerConnBps: 4 << 20, TotalBps: 40 << 20}
)

const (
	DefaultPackages = 10000     // CentOS 7 os has about 10,000 packages
	DefaultMeanSize = 200 << 10 // full shape: about 2 GiB of packages
)

// Config is one sweep.
type Config struct {
	Targets  []bench.Target
	Packages int   // default 10000 (the full shape)
	MeanSize int64 // mean .rpm payload bytes (log-normal, deterministic seed); default 200 KiB
	// Concurrency lists the download_concurrency settings, in the order run; default
	// 20, 15, 10, 7, 5, 3 (the study's).
	Concurrency []int
	// WAN shapes the upstream; the zero value means DefaultWAN (see there for why).
	WAN wan.Config
	// Dir holds the generated repository; it is reused when it already holds one of the
	// same Packages and MeanSize. "" means a temporary directory, removed afterwards.
	Dir string
	// PlotPath and TablePath are where the PNG and the markdown table go ("" = none).
	PlotPath, TablePath string
	// Log, if set, gets a line of progress per step.
	Log io.Writer
}

// Row is one target at one concurrency.
type Row struct {
	Target      string
	Concurrency int
	Wall        time.Duration // POST sync to task completed, polled every 100 ms
	Ideal       time.Duration // wan.Ideal over the package files (at min(Concurrency, WAN.MaxConcurrent))
	OverIdeal   float64       // Wall/Ideal - 1
	Bytes       int64         // body bytes the upstream sent during the sync
	Requests    int64         // requests the upstream received, 429s included
	TooMany     int64         // 429 answers the upstream sent
	PeakConc    int           // most requests the upstream served at once
	Packages    int           // rpm.package in the synced repository version
	PeakRSSMiB  float64       // largest single process of the target during the sync
	Completed   bool          // the sync task completed and everything was downloaded
	Err         error
}

// Result is a sweep.
type Result struct {
	Packages   int
	TotalBytes int64 // .rpm files
	MetaBytes  int64 // repomd.xml + compressed primary, filelists, other
	WAN        wan.Config
	Rows       []Row
}

func (cfg Config) withDefaults() Config {
	if cfg.Packages <= 0 {
		cfg.Packages = DefaultPackages
	}
	if cfg.MeanSize <= 0 {
		cfg.MeanSize = DefaultMeanSize
	}
	if len(cfg.Concurrency) == 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.WAN == (wan.Config{}) {
		cfg.WAN = DefaultWAN
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	return cfg
}

// Run generates (or reuses) the repository, serves it through the simulated WAN and
// sweeps each target over the concurrency settings. Rows that failed carry their error;
// Run returns them joined as well, with the result filled in as far as it got.
func Run(ctx context.Context, cfg Config) (Result, error) {
	cfg = cfg.withDefaults()
	res := Result{Packages: cfg.Packages, WAN: cfg.WAN}
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "syncbench-repo")
		if err != nil {
			return res, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	t0 := time.Now()
	r, err := generate(dir, cfg.Packages, cfg.MeanSize)
	if err != nil {
		return res, fmt.Errorf("generating the repository: %w", err)
	}
	res.TotalBytes, res.MetaBytes = r.TotalBytes(), r.MetaBytes
	fmt.Fprintf(cfg.Log, "repository: %d packages, %.1f MiB of .rpm, %.1f MiB of metadata, ready in %s\n",
		r.Packages, mib(res.TotalBytes), mib(res.MetaBytes), time.Since(t0).Round(time.Millisecond))

	url, stop, srv, err := wan.Listen(os.DirFS(dir), cfg.WAN)
	if err != nil {
		return res, err
	}
	defer stop()

	var errs []error
	for _, t := range cfg.Targets {
		c := newClient(t.URL, t.User, t.Password)
		if err := c.call(ctx, "POST", "/pulp/api/v3/orphans/cleanup/", map[string]any{"orphan_protection_time": 0}); err != nil {
			errs = append(errs, fmt.Errorf("%s: orphan cleanup: %w", t.Name, err))
			continue
		}
		for _, conc := range cfg.Concurrency {
			row, cleanErr := runOne(ctx, cfg, t, c, srv, url+"/", r, conc)
			res.Rows = append(res.Rows, row)
			status := "ok"
			if row.Err != nil {
				status = "FAILED: " + row.Err.Error()
				errs = append(errs, fmt.Errorf("%s at concurrency %d: %w", t.Name, conc, row.Err))
			}
			fmt.Fprintf(cfg.Log, "%s c=%d: %s (ideal %s, %+.0f%%), %.1f MiB, %d requests, %d×429 — %s\n", t.Name, conc,
				row.Wall.Round(10*time.Millisecond), row.Ideal.Round(10*time.Millisecond), 100*row.OverIdeal, mib(row.Bytes), row.Requests, row.TooMany, status)
			if cleanErr != nil {
				// The next setting would find the artifacts still there.
				errs = append(errs, fmt.Errorf("%s: cleanup after concurrency %d: %w (target's remaining settings skipped)", t.Name, conc, cleanErr))
				break
			}
			if ctx.Err() != nil {
				break
			}
		}
	}
	if cfg.TablePath != "" {
		if err := writeTable(cfg.TablePath, res); err != nil {
			errs = append(errs, err)
		}
	}
	if cfg.PlotPath != "" {
		if err := Plot(res).WriteFile(cfg.PlotPath); err != nil {
			errs = append(errs, fmt.Errorf("plot: %w", err))
		}
	}
	return res, errors.Join(errs...)
}

// runOne syncs at one concurrency and cleans up afterwards. cleanErr reports a failed
// cleanup, after which later settings cannot be trusted.
func runOne(ctx context.Context, cfg Config, t bench.Target, c *client, srv *wan.Server, upstream string, r *repo, conc int) (row Row, cleanErr error) {
	row = Row{Target: t.Name, Concurrency: conc, Ideal: ideal(cfg.WAN, r.Sizes, conc)}
	name := fmt.Sprintf("syncbench-c%d-%s", conc, strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "-"))
	var remote, repository struct {
		Href string `json:"pulp_href"`
	}
	defer func() {
		// Delete what was created, then remove the artifacts, whatever happened above.
		cctx := context.WithoutCancel(ctx)
		if repository.Href != "" {
			cleanErr = errors.Join(cleanErr, c.call(cctx, "DELETE", repository.Href, nil))
		}
		if remote.Href != "" {
			cleanErr = errors.Join(cleanErr, c.call(cctx, "DELETE", remote.Href, nil))
		}
		cleanErr = errors.Join(cleanErr, c.call(cctx, "POST", "/pulp/api/v3/orphans/cleanup/", map[string]any{"orphan_protection_time": 0}))
	}()
	if _, row.Err = c.do(ctx, "POST", "/pulp/api/v3/remotes/rpm/rpm/", map[string]any{"name": name, "url": upstream,
		"policy": "immediate", "download_concurrency": conc}, &remote); row.Err != nil {
		return row, nil
	}
	if _, row.Err = c.do(ctx, "POST", "/pulp/api/v3/repositories/rpm/rpm/", map[string]any{"name": name, "remote": remote.Href}, &repository); row.Err != nil {
		return row, nil
	}
	srv.ResetStats()
	sampler := load.StartSampler(100*time.Millisecond, t.Procs)
	start := time.Now()
	row.Err = c.call(ctx, "POST", repository.Href+"sync/", map[string]any{})
	row.Wall = time.Since(start)
	u := sampler.Stop()
	row.PeakRSSMiB = u.MaxProcRSSMiB
	st := srv.Stats()
	row.Bytes, row.Requests, row.TooMany, row.PeakConc = st.Bytes, st.Requests, st.TooMany, st.PeakConcurrent
	if row.Ideal > 0 {
		row.OverIdeal = row.Wall.Seconds()/row.Ideal.Seconds() - 1
	}
	if row.Err != nil {
		return row, nil
	}
	if st.Bytes < r.TotalBytes() {
		row.Err = fmt.Errorf("the upstream sent %d bytes but the packages are %d bytes: the target did not download everything "+
			"(artifacts left from an earlier sync?), so this time is not a full immediate sync", st.Bytes, r.TotalBytes())
		return row, nil
	}
	row.Packages, row.Err = packageCount(ctx, c, repository.Href)
	if row.Err == nil && row.Packages != r.Packages {
		row.Err = fmt.Errorf("the synced repository version has %d packages, want %d", row.Packages, r.Packages)
	}
	row.Completed = row.Err == nil
	return row, nil
}

// ideal is wan.Ideal at concurrency c, or at the upstream's MaxConcurrent when that is
// lower: streams beyond it are refused with 429, so they cannot shorten the sync.
func ideal(w wan.Config, sizes []int64, c int) time.Duration {
	if w.MaxConcurrent > 0 {
		c = min(c, w.MaxConcurrent)
	}
	return wan.Ideal(w, sizes, c)
}

// packageCount reads rpm.package from the content summary of a repository's latest
// version.
func packageCount(ctx context.Context, c *client, repoHref string) (int, error) {
	var repository struct {
		Latest string `json:"latest_version_href"`
	}
	if _, err := c.do(ctx, "GET", repoHref, nil, &repository); err != nil {
		return 0, err
	}
	var version struct {
		Summary struct {
			Present map[string]struct {
				Count int `json:"count"`
			} `json:"present"`
		} `json:"content_summary"`
	}
	if _, err := c.do(ctx, "GET", repository.Latest, nil, &version); err != nil {
		return 0, err
	}
	return version.Summary.Present["rpm.package"].Count, nil
}

// Markdown renders a result as a table, one row per target and concurrency.
func Markdown(w io.Writer, r Result) {
	fmt.Fprintf(w, "\n%d packages, %.1f MiB of .rpm files (+ %.1f MiB of metadata); upstream: latency %s, jitter %s, %.1f MiB/s per connection, %.1f MiB/s total",
		r.Packages, mib(r.TotalBytes), mib(r.MetaBytes), r.WAN.Latency, r.WAN.Jitter, mib(r.WAN.PerConnBps), mib(r.WAN.TotalBps))
	if r.WAN.MaxConcurrent > 0 {
		fmt.Fprintf(w, ", 429 beyond %d requests at once (Retry-After %s)", r.WAN.MaxConcurrent, r.WAN.RetryAfter)
	}
	fmt.Fprintf(w, ".\n\n| server | concurrency | sync | ideal | over ideal | downloaded | requests | 429s | peak upstream conc. | peak RSS | completed |\n")
	fmt.Fprintf(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, row := range r.Rows {
		done := "yes"
		if !row.Completed {
			done = "no: " + strings.ReplaceAll(fmt.Sprint(row.Err), "|", "/")
		}
		fmt.Fprintf(w, "| %s | %d | %.2f s | %.2f s | %+.0f%% | %.1f MiB | %d | %d | %d | %.0f MiB | %s |\n", row.Target, row.Concurrency,
			row.Wall.Seconds(), row.Ideal.Seconds(), 100*row.OverIdeal, mib(row.Bytes), row.Requests, row.TooMany, row.PeakConc, row.PeakRSSMiB, done)
	}
	fmt.Fprintf(w, "\nAim: within +15%% of the ideal at every setting. Ideal = wan.Ideal over the .rpm files only (metadata adds a little). An adaptive row is not measured: pith has no adaptive downloader yet.\n")
}

func writeTable(path string, r Result) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	Markdown(f, r)
	return f.Close()
}

// Plot is sync time against concurrency, one series per target (completed rows only),
// and the ideal dashed.
func Plot(r Result) plot.Line {
	l := plot.Line{Title: fmt.Sprintf("Immediate sync of %d packages (%.0f MiB) through a simulated WAN", r.Packages, mib(r.TotalBytes)),
		XLabel: "download_concurrency", YLabel: "sync time (s)", YFromZero: true}
	var targets []string
	ideal := map[int]time.Duration{}
	for _, row := range r.Rows {
		if !slices.Contains(targets, row.Target) {
			targets = append(targets, row.Target)
		}
		ideal[row.Concurrency] = row.Ideal
	}
	for _, t := range targets {
		var rows []Row
		for _, row := range r.Rows {
			if row.Target == t && row.Completed {
				rows = append(rows, row)
			}
		}
		slices.SortFunc(rows, func(a, b Row) int { return a.Concurrency - b.Concurrency })
		s := plot.Series{Name: t}
		for _, row := range rows {
			s.X = append(s.X, float64(row.Concurrency))
			s.Y = append(s.Y, row.Wall.Seconds())
		}
		l.Series = append(l.Series, s)
	}
	cs := make([]int, 0, len(ideal))
	for c := range ideal {
		cs = append(cs, c)
	}
	slices.Sort(cs)
	s := plot.Series{Name: "ideal (bandwidth + latency bound)", Dashed: true}
	for _, c := range cs {
		s.X = append(s.X, float64(c))
		s.Y = append(s.Y, ideal[c].Seconds())
	}
	l.Series = append(l.Series, s)
	return l
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
