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
// Setting Config.Adaptive adds an "adaptive" row after the fixed settings: the remote is
// created without download_concurrency (null), which pith takes as adaptive concurrency
// bounded by 32 — the target finds the knee by itself, raising its concurrency while
// throughput grows and backing off on 429/Retry-After. The row has Concurrency 0; its
// ideal is the best over the fixed settings and the bound.
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

// AdaptiveBound is the most requests pith's adaptive downloader has in flight, the
// concurrency of a remote whose download_concurrency is null.
const AdaptiveBound = 32

// Config is one sweep.
type Config struct {
	Targets  []bench.Target
	Packages int   // default 10000 (the full shape)
	MeanSize int64 // mean .rpm payload bytes (log-normal, deterministic seed); default 200 KiB
	// Concurrency lists the download_concurrency settings, in the order run; default
	// 20, 15, 10, 7, 5, 3 (the study's).
	Concurrency []int
	// Adaptive adds a row for the first target (the pith under study) after the fixed
	// settings, with download_concurrency left null, so that it chooses its own
	// concurrency. Peers get no such row: upstream Pulp's null means 10.
	Adaptive bool
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
	Concurrency int           // 0 for the adaptive row (download_concurrency null)
	Wall        time.Duration // POST sync to task completed, polled every 50 ms
	Ideal       time.Duration // wan.Ideal over the package files (at min(Concurrency, WAN.MaxConcurrent); adaptive: the best)
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
	for i, t := range cfg.Targets {
		c := bench.NewClient(t)
		if err := c.Call(ctx, "POST", "/pulp/api/v3/orphans/cleanup/", map[string]any{"orphan_protection_time": 0}); err != nil {
			errs = append(errs, fmt.Errorf("%s: orphan cleanup: %w", t.Name, err))
			continue
		}
		settings := cfg.Concurrency
		if cfg.Adaptive && i == 0 { // peers have no adaptive mode: Pulp's null means 10
			settings = append(slices.Clip(settings), 0)
		}
		for _, conc := range settings {
			row, cleanErr := runOne(ctx, cfg, t, c, srv, url+"/", r, conc)
			res.Rows = append(res.Rows, row)
			status := "ok"
			if row.Err != nil {
				status = "FAILED: " + row.Err.Error()
				errs = append(errs, fmt.Errorf("%s at concurrency %s: %w", t.Name, concName(conc), row.Err))
			}
			fmt.Fprintf(cfg.Log, "%s c=%s: %s (ideal %s, %+.0f%%), %.1f MiB, %d requests, %d×429 — %s\n", t.Name, concName(conc),
				row.Wall.Round(10*time.Millisecond), row.Ideal.Round(10*time.Millisecond), 100*row.OverIdeal, mib(row.Bytes), row.Requests, row.TooMany, status)
			if cleanErr != nil {
				// The next setting would find the artifacts still there.
				errs = append(errs, fmt.Errorf("%s: cleanup after concurrency %s: %w (target's remaining settings skipped)", t.Name, concName(conc), cleanErr))
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

// concName is a concurrency setting as shown: the number, or "adaptive" for 0.
func concName(conc int) string {
	if conc == 0 {
		return "adaptive"
	}
	return fmt.Sprint(conc)
}

// runOne syncs at one concurrency (0: adaptive) and cleans up afterwards. cleanErr
// reports a failed cleanup, after which later settings cannot be trusted.
func runOne(ctx context.Context, cfg Config, t bench.Target, c *bench.Client, srv *wan.Server, upstream string, r *repo, conc int) (row Row, cleanErr error) {
	row = Row{Target: t.Name, Concurrency: conc}
	remoteBody := map[string]any{"url": upstream, "policy": "immediate"}
	if conc > 0 {
		row.Ideal = ideal(cfg.WAN, r.Sizes, conc)
		remoteBody["download_concurrency"] = conc
	} else {
		row.Ideal = bestIdeal(cfg.WAN, r.Sizes, cfg.Concurrency)
	}
	name := fmt.Sprintf("syncbench-c%s-%s", concName(conc), strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "-"))
	remoteBody["name"] = name
	var remote, repository struct {
		Href string `json:"pulp_href"`
	}
	defer func() {
		// Delete what was created, then remove the artifacts, whatever happened above.
		cctx := context.WithoutCancel(ctx)
		if repository.Href != "" {
			cleanErr = errors.Join(cleanErr, c.Call(cctx, "DELETE", repository.Href, nil))
		}
		if remote.Href != "" {
			cleanErr = errors.Join(cleanErr, c.Call(cctx, "DELETE", remote.Href, nil))
		}
		cleanErr = errors.Join(cleanErr, c.Call(cctx, "POST", "/pulp/api/v3/orphans/cleanup/", map[string]any{"orphan_protection_time": 0}))
	}()
	if row.Err = c.JSON(ctx, "POST", "/pulp/api/v3/remotes/rpm/rpm/", remoteBody, &remote); row.Err != nil {
		return row, nil
	}
	if row.Err = c.JSON(ctx, "POST", "/pulp/api/v3/repositories/rpm/rpm/", map[string]any{"name": name, "remote": remote.Href}, &repository); row.Err != nil {
		return row, nil
	}
	srv.ResetStats()
	sampler := load.StartSampler(100*time.Millisecond, t.Procs)
	start := time.Now()
	row.Err = c.Call(ctx, "POST", repository.Href+"sync/", map[string]any{})
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
	row.Packages, row.Err = c.Count(ctx, repository.Href, "rpm.package")
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

// bestIdeal is the ideal of the adaptive row: the least over the fixed settings and
// AdaptiveBound, any of which an adaptive target may choose. With latency this is often
// beyond TotalBps/PerConnBps streams: more streams hide more round trips.
func bestIdeal(w wan.Config, sizes []int64, settings []int) time.Duration {
	best := ideal(w, sizes, AdaptiveBound)
	for _, c := range settings {
		best = min(best, ideal(w, sizes, c))
	}
	return best
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
		fmt.Fprintf(w, "| %s | %s | %.2f s | %.2f s | %+.0f%% | %.1f MiB | %d | %d | %d | %.0f MiB | %s |\n", row.Target, concName(row.Concurrency),
			row.Wall.Seconds(), row.Ideal.Seconds(), 100*row.OverIdeal, mib(row.Bytes), row.Requests, row.TooMany, row.PeakConc, row.PeakRSSMiB, done)
	}
	fmt.Fprintf(w, "\nAim: within +15%% of the ideal at every setting. Ideal = wan.Ideal over the .rpm files only (metadata adds a little).")
	if slices.ContainsFunc(r.Rows, func(row Row) bool { return row.Concurrency == 0 }) {
		fmt.Fprintf(w, " The adaptive row's remote has no download_concurrency (the target chooses, up to %d); its ideal is the best over the settings and %d.", AdaptiveBound, AdaptiveBound)
	}
	fmt.Fprintln(w)
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
// and the ideal dashed. A target's adaptive row is a dashed horizontal line at its sync
// time across the range of settings.
func Plot(r Result) plot.Line {
	l := plot.Line{Title: fmt.Sprintf("Immediate sync of %d packages (%.0f MiB) through a simulated WAN", r.Packages, mib(r.TotalBytes)),
		XLabel: "download_concurrency", YLabel: "sync time (s)", YFromZero: true}
	var targets []string
	ideal := map[int]time.Duration{}
	lo, hi := 0, 0 // the range of fixed settings
	for _, row := range r.Rows {
		if !slices.Contains(targets, row.Target) {
			targets = append(targets, row.Target)
		}
		if row.Concurrency == 0 {
			continue
		}
		ideal[row.Concurrency] = row.Ideal
		if lo == 0 || row.Concurrency < lo {
			lo = row.Concurrency
		}
		hi = max(hi, row.Concurrency)
	}
	var adaptive []plot.Series
	for _, t := range targets {
		var rows []Row
		for _, row := range r.Rows {
			if row.Target != t || !row.Completed {
				continue
			}
			if row.Concurrency == 0 {
				if lo == 0 {
					lo, hi = 1, AdaptiveBound
				}
				if hi == lo {
					hi = lo + 1 // a line, not a point
				}
				y := row.Wall.Seconds()
				adaptive = append(adaptive, plot.Series{Name: t + " adaptive", X: []float64{float64(lo), float64(hi)}, Y: []float64{y, y}, Dashed: true})
				continue
			}
			rows = append(rows, row)
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
	l.Series = append(l.Series, adaptive...)
	return l
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
