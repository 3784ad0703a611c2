package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"pith/bench"
	"pith/bench/load"
	"pith/bench/promote"
	"pith/bench/syncbench"
)

// benchCmd runs a `pith bench` scenario against a running pith.
func benchCmd(ctx context.Context, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "rpm":
			return benchRpm(ctx, args[1:])
		case "serve":
			return benchServe(ctx, args[1:])
		case "hosts":
			return benchHosts(ctx, args[1:])
		case "promote":
			return benchPromote(ctx, args[1:])
		case "sync":
			return benchSync(ctx, args[1:])
		case "guards":
			return benchGuards(ctx, args[1:])
		case "authz":
			return benchAuthz(ctx, args[1:])
		case "galaxy-publish":
			return benchGalaxyPublish(ctx, args[1:])
		case "galaxy-install":
			return benchGalaxyInstall(ctx, args[1:])
		case "export":
			return benchExport(ctx, args[1:])
		case "replicate":
			return benchReplicate(ctx, args[1:])
		}
	}
	if len(args) == 0 || args[0] != "upload" {
		return fmt.Errorf("usage: pith bench upload|rpm|serve|hosts|promote|sync|guards|authz|galaxy-publish|galaxy-install|export|replicate [flags]")
	}
	return benchUpload(ctx, args[1:])
}

// benchUpload runs the FOLIO upload/download study against a pith of its own (or the
// one at --url) and any peers.
func benchUpload(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench upload", flag.ContinueOnError)
	sf := addScenarioFlags(fs, "upload")
	url := fs.String("url", "", "a running pith to measure (default: start one on the embedded defaults)")
	user := fs.String("user", "admin", "user of --url")
	password := fs.String("password", os.Getenv("PITH_ADMIN_PASSWORD"), "password of --url (env PITH_ADMIN_PASSWORD)")
	pid := fs.Int("pid", 0, "process id of --url, to report its peak RSS")
	sizes := fs.String("sizes", "100000,3600000,5000000,10000000", "file sizes in bytes, comma-separated")
	n := fs.Int("n", 0, "uploads (and downloads) per size and user count (default 10; --full 100)")
	users := fs.String("users", "1,3", "concurrent users, comma-separated")
	title := fs.String("title", "Upload and download", "table title")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg := bench.UploadConfig{N: 10}
	if *sf.full {
		cfg.N = 100
	}
	if *n > 0 {
		cfg.N = *n
	}
	for _, s := range strings.Split(*sizes, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || v <= 0 {
			return fmt.Errorf("--sizes: %q is not a positive byte count", s)
		}
		cfg.Sizes = append(cfg.Sizes, v)
	}
	var err error
	if cfg.Users, err = ints("users", *users); err != nil {
		return err
	}
	pith, stop, err := sf.pith(ctx, "upload", *url, *user, *password, *pid)
	if err != nil {
		return err
	}
	defer stop()
	var rows []bench.Row
	for _, t := range append([]bench.Target{pith}, sf.peers...) {
		cfg.Target = t
		got, err := bench.Upload(ctx, cfg)
		rows = append(rows, got...)
		if err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	return sf.write("upload", func(w io.Writer) { bench.Markdown(w, *title, rows) }, func(p string) error { return bench.UploadPlot(p, rows) })
}

// benchRpm runs the rpm scenario: sync on demand and publish a generated repository,
// on pith and on any peers, and createrepo_c over the same packages.
func benchRpm(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench rpm", flag.ContinueOnError)
	url := fs.String("url", "http://127.0.0.1:24817", "pith origin")
	user := fs.String("user", "admin", "user")
	password := fs.String("password", os.Getenv("PITH_ADMIN_PASSWORD"), "password (env PITH_ADMIN_PASSWORD)")
	packages := fs.Int("packages", 20000, "packages in the generated repository")
	dir := fs.String("dir", "", "where to generate the repository (default: a temporary directory)")
	pid := fs.Int("pid", 0, "pith's process id, to report its peak RSS")
	createrepo := fs.Bool("createrepo", false, "also write the packages as .rpm files and time createrepo_c over them")
	var peers []bench.Target
	fs.Func("peer", "another server to measure the same way, name=URL[,user=U][,password=P][,procs=a|b] (repeatable; "+
		"e.g. Pulp=http://127.0.0.1:24817,procs=pulpcore-worker, password from PASSWORD_PULP)", func(v string) error {
		t, err := bench.ParseTarget(v)
		peers = append(peers, t)
		return err
	})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *packages <= 0 {
		return fmt.Errorf("--packages: %d must be positive", *packages)
	}
	d := *dir
	if d == "" {
		tmp, err := os.MkdirTemp("", "pith-bench-rpm-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		d = tmp
	}
	pith := bench.Target{Name: "pith", URL: strings.TrimSuffix(*url, "/"), User: *user, Password: *password}
	if *pid != 0 {
		pith.Procs.PIDs = []int{*pid}
	}
	res, err := bench.Rpm(ctx, bench.RpmConfig{Targets: append([]bench.Target{pith}, peers...), Packages: *packages, Dir: d, Createrepo: *createrepo})
	bench.RpmMarkdown(os.Stdout, res)
	return err
}

// scenarioFlags are the flags the study scenarios share.
type scenarioFlags struct {
	full     *bool
	dir      *string
	out      *string
	peers    []bench.Target
	peerProc []load.Selector
}

func addScenarioFlags(fs *flag.FlagSet, name string) *scenarioFlags {
	sf := &scenarioFlags{
		full: fs.Bool("full", false, "the study's full size (takes long)"),
		dir:  fs.String("dir", "", "work directory (default: a temporary directory)"),
		out:  fs.String("out", "docs/benchmarks", "where the table ("+name+".md) and the plot ("+name+".png) go; empty: print only"),
	}
	fs.Func("peer", "upstream Pulp (or another server) to measure the same way: name=URL[,user=U][,password=P][,procs=a|b][,content=URL][,db=URL] "+
		"(repeatable; password from PASSWORD_<NAME>; promote needs db=, the peer's postgres:// database)", func(v string) error {
		t, err := bench.ParseTarget(v)
		sf.peers = append(sf.peers, t)
		sf.peerProc = append(sf.peerProc, t.Procs)
		return err
	})
	return sf
}

// pith is the pith a scenario measures: the one at url, whose process pid (0: unknown)
// is sampled, or one of its own on the embedded defaults in the work directory. stop
// stops and removes what it started.
func (sf *scenarioFlags) pith(ctx context.Context, scenario, url, user, password string, pid int) (t bench.Target, stop func(), err error) {
	t = bench.Target{Name: "pith", URL: strings.TrimSuffix(url, "/"), User: user, Password: password}
	if pid != 0 {
		t.Procs.PIDs = []int{pid}
	}
	if url != "" {
		return t, func() {}, nil
	}
	dir, cleanup, err := sf.workdir("pith-bench-" + scenario + "-")
	if err != nil {
		return t, nil, err
	}
	t.Password = randomPassword()
	cl, err := bench.StartCluster(ctx, bench.ClusterConfig{Dir: filepath.Join(dir, "pith"), Fresh: true, Password: t.Password})
	if err != nil {
		cleanup()
		return t, nil, err
	}
	t.URL, t.Procs = cl.API, cl.Procs()
	return t, func() { cl.Stop(); cleanup() }, nil
}

// workdir returns the work directory and what removes it.
func (sf *scenarioFlags) workdir(prefix string) (string, func(), error) {
	if *sf.dir != "" {
		return *sf.dir, func() {}, os.MkdirAll(*sf.dir, 0o755)
	}
	d, err := os.MkdirTemp("", prefix)
	return d, func() { os.RemoveAll(d) }, err
}

// write prints the table and saves it with the plot (if any) under --out.
func (sf *scenarioFlags) write(name string, table func(io.Writer), plotTo func(string) error) error {
	var b strings.Builder
	table(&b)
	fmt.Print(b.String())
	if *sf.out == "" {
		return nil
	}
	if err := os.MkdirAll(*sf.out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*sf.out, name+".md"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	if plotTo == nil {
		fmt.Printf("\nwrote %s\n", filepath.Join(*sf.out, name+".md"))
		return nil
	}
	png := filepath.Join(*sf.out, name+".png")
	if err := plotTo(png); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	fmt.Printf("\nwrote %s and %s\n", filepath.Join(*sf.out, name+".md"), png)
	return nil
}

func ints(flagName, v string) ([]int, error) {
	var out []int
	for _, s := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("--%s: %q is not a positive number", flagName, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// benchServe runs the content-serving study.
func benchServe(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench serve", flag.ContinueOnError)
	sf := addScenarioFlags(fs, "serve")
	packages := fs.Int("packages", 0, "packages in the repository (default 1000; --full 5000)")
	payload := fs.Int64("payload", 2048, "bytes of file content per package")
	users := fs.String("users", "", "load levels (concurrent connections) to try in order (default 4,16,64,256; --full 1,4,16,64,256,1024)")
	procs := fs.String("processes", "1,2,4", "content processes (more than 1 needs --pg)")
	duration := fs.Duration("duration", 0, "per load level (default 3s; --full 15s)")
	pg := fs.String("pg", os.Getenv("PITH_BENCH_PG"), "postgres:// URL for the multi-process configurations (env PITH_BENCH_PG)")
	s3 := fs.String("s3", os.Getenv("PITH_BENCH_S3"), "s3:// URL: store in S3 and answer with redirects (env PITH_BENCH_S3)")
	redis := fs.String("redis", os.Getenv("PITH_BENCH_REDIS"), "redis:// URL: the shared cache (env PITH_BENCH_REDIS)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg := bench.ServeConfig{Packages: 1000, Payload: *payload, Duration: 3 * time.Second, PG: *pg, S3: *s3, Redis: *redis,
		Password: randomPassword(), Peers: sf.peers, PeerProcs: sf.peerProc}
	levels := "4,16,64,256"
	if *sf.full {
		cfg.Packages, cfg.Duration, levels = 5000, 15*time.Second, "1,4,16,64,256,1024"
	}
	if *packages > 0 {
		cfg.Packages = *packages
	}
	if *duration > 0 {
		cfg.Duration = *duration
	}
	if *users != "" {
		levels = *users
	}
	var err error
	if cfg.Users, err = ints("users", levels); err != nil {
		return err
	}
	if cfg.Processes, err = ints("processes", *procs); err != nil {
		return err
	}
	dir, cleanup, err := sf.workdir("pith-bench-serve-")
	if err != nil {
		return err
	}
	defer cleanup()
	cfg.Dir = dir
	res, err := bench.Serve(ctx, cfg)
	if werr := sf.write("serve", func(w io.Writer) { bench.ServeMarkdown(w, res) }, func(p string) error { return bench.ServePlot(p, res) }); err == nil {
		err = werr
	}
	return err
}

// benchHosts runs the many-hosts study.
func benchHosts(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench hosts", flag.ContinueOnError)
	sf := addScenarioFlags(fs, "hosts")
	packages := fs.Int("packages", 0, "packages in the repository (default 200; --full 2000, the study's)")
	payload := fs.Int64("payload", 20000, "bytes of file content per package (the study: 40 MB over 2,000 packages)")
	hosts := fs.String("hosts", "", "host counts (default 50,100; --full 100,200,500,1000)")
	nginx := fs.Bool("nginx", true, "measure nginx serving the same files, the ceiling")
	limit := fs.Duration("limit", 0, "end each server's run at each host count after this long (0: when every host is done); for a slow peer")
	replica := fs.Bool("replica", false, "also split the hosts between pith and a second pith that replicated it on_demand")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg := bench.HostsConfig{Packages: 200, Payload: *payload, Password: randomPassword(), Peers: sf.peers, Nginx: *nginx, Limit: *limit, Replica: *replica}
	counts := "50,100"
	if *sf.full {
		cfg.Packages, counts = 2000, "100,200,500,1000"
	}
	if *packages > 0 {
		cfg.Packages = *packages
	}
	if *hosts != "" {
		counts = *hosts
	}
	var err error
	if cfg.Hosts, err = ints("hosts", counts); err != nil {
		return err
	}
	dir, cleanup, err := sf.workdir("pith-bench-hosts-")
	if err != nil {
		return err
	}
	defer cleanup()
	cfg.Dir = dir
	res, err := bench.Hosts(ctx, cfg)
	if werr := sf.write("hosts", func(w io.Writer) { bench.HostsMarkdown(w, res) }, func(p string) error { return bench.HostsPlot(p, res) }); err == nil {
		err = werr
	}
	return err
}

// benchReplicate runs the replication study: a fresh pith and any peers replicate the
// rpm distributions of an upstream pith.
func benchReplicate(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench replicate", flag.ContinueOnError)
	sf := addScenarioFlags(fs, "replicate")
	dists := fs.Int("distributions", 0, "rpm distributions upstream (default 10; --full 100)")
	packages := fs.Int("packages", 1000, "packages per distribution")
	payload := fs.Int64("payload", 2000, "bytes of file content per package")
	workers := fs.Int("workers", 2, "task workers of the downstream pith (upstream Pulp's pulp-peer runs 2)")
	limit := fs.Duration("limit", 40*time.Minute, "end a downstream's replication and serving checks after this long")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg := bench.ReplicateConfig{Distributions: 10, Packages: *packages, Payload: *payload, Workers: *workers, Limit: *limit,
		Password: randomPassword(), Peers: sf.peers}
	if *sf.full {
		cfg.Distributions = 100
	}
	if *dists > 0 {
		cfg.Distributions = *dists
	}
	if cfg.Packages <= 0 || cfg.Payload < 0 || cfg.Workers <= 0 || cfg.Limit <= 0 {
		return fmt.Errorf("bench replicate: --packages, --workers and --limit must be positive, --payload not negative")
	}
	dir, cleanup, err := sf.workdir("pith-bench-replicate-")
	if err != nil {
		return err
	}
	defer cleanup()
	cfg.Dir = dir
	res, err := bench.Replicate(ctx, cfg)
	if werr := sf.write("replicate", func(w io.Writer) { bench.ReplicateMarkdown(w, res) }, nil); err == nil {
		err = werr
	}
	return err
}

// benchPromote runs the promotion study on an installation of its own.
func benchPromote(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench promote", flag.ContinueOnError)
	sf := addScenarioFlags(fs, "promote")
	repos := fs.Int("repos", 0, "repositories (default 1000; --full 27237, the study's)")
	versions := fs.Int("versions", 0, "repository versions in all (default 6000; --full 173311)")
	units := fs.Int("units", 0, "content units (default 500; --full 10000)")
	steps := fs.String("steps", "", "repositories per promotion step (default 100,500,1000; --full 1000,2000,5000,10000)")
	batch := fs.Int("batch", 500, "repositories per task (bulk_modify batch_size)")
	noModify := fs.Bool("no-modify", false, "measure only bulk_modify, not also one modify per repository (the API Pulp has)")
	pg := fs.String("pg", os.Getenv("PITH_BENCH_PG"), "postgres:// URL of an empty database to use instead of SQLite (env PITH_BENCH_PG)")
	typ := fs.String("type", promote.FileType, "what the repositories hold: file (file.file units) or ansible (collection versions: 100 namespaces x 20 names x 5 versions at 10,000 units)")
	pprof := fs.String("pprof", "", "host:port for pith's --pprof-listen, to profile it during the run")
	reuse := fs.Bool("reuse", false, "run the steps on the data set an earlier run left in --dir (same shape flags) instead of loading one")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *reuse && *sf.dir == "" {
		return fmt.Errorf("bench promote: --reuse needs the --dir of an earlier run")
	}
	cfg := promote.Config{Type: *typ, Repos: 1000, Versions: 6000, Units: 500, Steps: []int{100, 500, 1000}, BatchSize: *batch, NoModify: *noModify, Reuse: *reuse,
		User: "admin", Password: randomPassword(), Peers: sf.peers}
	if *sf.full {
		full := promote.Full()
		cfg.Repos, cfg.Versions, cfg.Units, cfg.Steps = full.Repos, full.Versions, full.Units, full.Steps
	}
	for _, o := range []struct {
		v  int
		to *int
	}{{*repos, &cfg.Repos}, {*versions, &cfg.Versions}, {*units, &cfg.Units}} {
		if o.v > 0 {
			*o.to = o.v
		}
	}
	if *steps != "" {
		var err error
		if cfg.Steps, err = ints("steps", *steps); err != nil {
			return err
		}
	}
	dir, cleanup, err := sf.workdir("pith-bench-promote-")
	if err != nil {
		return err
	}
	defer cleanup()
	cfg.DB = *pg
	if cfg.DB == "" {
		cfg.DB = filepath.Join(dir, "pith", "pith.db")
	}
	ccfg := bench.ClusterConfig{Dir: filepath.Join(dir, "pith"), Database: *pg, Password: cfg.Password}
	if *reuse {
		// The installation keeps the admin password it was first started with.
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		args := []string{"admin", "password", cfg.Password, "--data", ccfg.Dir}
		if *pg != "" {
			args = append(args, "--database", *pg)
		}
		if out, err := exec.CommandContext(ctx, exe, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("bench promote --reuse: set the admin password: %v: %s", err, out)
		}
	}
	if *pprof != "" {
		ccfg.Args = []string{"--pprof-listen", *pprof}
	}
	cl, err := bench.StartCluster(ctx, ccfg)
	if err != nil {
		return err
	}
	defer cl.Stop()
	cfg.URL = cl.API
	res, err := promote.Run(ctx, cfg)
	if werr := sf.write("promote", func(w io.Writer) { promote.Markdown(w, res) }, func(p string) error { return promote.Plot(p, res) }); err == nil {
		err = werr
	}
	return err
}

// benchSync runs the download-concurrency study on a pith of its own and any peers.
func benchSync(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench sync", flag.ContinueOnError)
	sf := addScenarioFlags(fs, "sync")
	packages := fs.Int("packages", 0, "packages in the generated repository (default 500; --full 10000, CentOS 7 os)")
	mean := fs.Int64("mean", 0, "mean .rpm size in bytes, log-normal (default 30 KiB; --full 200 KiB)")
	conc := fs.String("concurrency", "20,15,10,7,5,3", "download_concurrency settings, in the order run (the study's)")
	adaptive := fs.Bool("adaptive", true, "add a row where pith's remote has no download_concurrency (its adaptive downloader)")
	w := syncbench.DefaultWAN
	fs.DurationVar(&w.Latency, "latency", w.Latency, "upstream latency per request")
	fs.DurationVar(&w.Jitter, "jitter", w.Jitter, "latency jitter (uniform ±)")
	fs.Int64Var(&w.PerConnBps, "per-conn", w.PerConnBps, "upstream bytes/s per connection (0 = unlimited)")
	fs.Int64Var(&w.TotalBps, "total", w.TotalBps, "upstream bytes/s in all (0 = unlimited)")
	fs.IntVar(&w.MaxConcurrent, "max-concurrent", 0, "upstream answers 429 beyond this many requests at once (0 = never)")
	fs.DurationVar(&w.RetryAfter, "retry-after", time.Second, "Retry-After of the 429 answers")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg := syncbench.Config{Packages: 500, MeanSize: 30 << 10, WAN: w, Adaptive: *adaptive}
	if *sf.full {
		cfg.Packages, cfg.MeanSize = syncbench.DefaultPackages, syncbench.DefaultMeanSize
	}
	if *packages > 0 {
		cfg.Packages = *packages
	}
	if *mean > 0 {
		cfg.MeanSize = *mean
	}
	var err error
	if cfg.Concurrency, err = ints("concurrency", *conc); err != nil {
		return err
	}
	dir, cleanup, err := sf.workdir("pith-bench-sync-")
	if err != nil {
		return err
	}
	defer cleanup()
	cfg.Dir = filepath.Join(dir, "upstream")
	cl, err := bench.StartCluster(ctx, bench.ClusterConfig{Dir: filepath.Join(dir, "pith"), Fresh: true, Password: randomPassword()})
	if err != nil {
		return err
	}
	defer cl.Stop()
	cfg.Targets = append([]bench.Target{cl.Target()}, sf.peers...)
	cfg.Log = os.Stderr
	res, err := syncbench.Run(ctx, cfg)
	if werr := sf.write("sync", func(w io.Writer) { syncbench.Markdown(w, res) }, func(p string) error { return syncbench.Plot(res).WriteFile(p) }); err == nil {
		err = werr
	}
	return err
}

// benchGuards runs the content-guard study on a pith of its own over HTTPS.
func benchGuards(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench guards", flag.ContinueOnError)
	sf := addScenarioFlags(fs, "guards")
	files := fs.Int("files", 1000, "files in the distributed repository")
	size := fs.Int64("size", 1024, "bytes per file")
	conns := fs.Int("connections", 16, "concurrent keep-alive connections")
	duration := fs.Duration("duration", 0, "measured time per configuration and round (default 3s; --full 10s)")
	rounds := fs.Int("rounds", 10, "rounds: the configurations take turns this many times")
	sets := fs.Int("content-sets", 100, "content sets the rhsm client's entitlement grants")
	pprof := fs.String("pprof", "", "host:port for pith's --pprof-listen, to profile it during the run")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg := bench.GuardsConfig{Files: *files, Size: *size, Connections: *conns, Duration: 3 * time.Second, Rounds: *rounds,
		ContentSets: *sets, Password: randomPassword(), Pprof: *pprof, Log: os.Stderr}
	if *sf.full {
		cfg.Duration = 10 * time.Second
	}
	if *duration > 0 {
		cfg.Duration = *duration
	}
	for name, v := range map[string]int64{"files": int64(cfg.Files), "size": cfg.Size, "connections": int64(cfg.Connections),
		"rounds": int64(cfg.Rounds), "content-sets": int64(cfg.ContentSets)} {
		if v <= 0 {
			return fmt.Errorf("--%s: %d must be positive", name, v)
		}
	}
	dir, cleanup, err := sf.workdir("pith-bench-guards-")
	if err != nil {
		return err
	}
	defer cleanup()
	cfg.Dir = dir
	res, err := bench.Guards(ctx, cfg)
	if werr := sf.write("guards", func(w io.Writer) { bench.GuardsMarkdown(w, res) }, func(p string) error { return bench.GuardsPlot(p, res) }); err == nil {
		err = werr
	}
	return err
}

// benchAuthz runs the access-control study: this pith next to one from before access
// control, on the same data.
func benchAuthz(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench authz", flag.ContinueOnError)
	dir := fs.String("dir", "", "work directory (default: a temporary directory)")
	before := fs.String("before", "", "the pith executable from before access control (built from 13dc4e1)")
	repos := fs.Int("repos", 3000, "file repositories")
	tasks := fs.Int("tasks", 1000, "tasks (each adds one content unit to a repository)")
	requests := fs.Int("requests", 600, "requests per endpoint and side")
	rounds := fs.Int("rounds", 600, "rounds: the sides take turns this many times per endpoint (as many as requests: after each request)")
	database := fs.String("database", "", "a postgres:// URL of an empty database for this pith (default: a copy of the old pith's SQLite data)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *before == "" {
		return fmt.Errorf("--before: the pith executable from before access control is needed")
	}
	for name, v := range map[string]int{"repos": *repos, "tasks": *tasks, "requests": *requests, "rounds": *rounds} {
		if v <= 0 {
			return fmt.Errorf("--%s: %d must be positive", name, v)
		}
	}
	sf := &scenarioFlags{dir: dir}
	d, cleanup, err := sf.workdir("pith-bench-authz-")
	if err != nil {
		return err
	}
	defer cleanup()
	res, err := bench.Authz(ctx, bench.AuthzConfig{Before: *before, Repos: *repos, Tasks: *tasks, Requests: *requests, Rounds: *rounds,
		Dir: d, Password: randomPassword(), Log: os.Stderr, Database: *database})
	bench.AuthzMarkdown(os.Stdout, res)
	return err
}

// parseFlags parses a study's flags and refuses positional arguments, which would
// otherwise end the flags silently (`pith bench rpm x --full` would run the small study).
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q (flags are --name value)", fs.Name(), fs.Arg(0))
	}
	return nil
}

// benchGalaxyPublish runs the Ansible study's publish scenario: a collection published
// as ansible-galaxy publishes it, until its import has finished, on a pith of its own (or
// the one at --url) and any peers.
func benchGalaxyPublish(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench galaxy-publish", flag.ContinueOnError)
	sf := addScenarioFlags(fs, "galaxy-publish")
	url := fs.String("url", "", "a running pith to measure (default: start one on the embedded defaults)")
	user := fs.String("user", "admin", "user of --url")
	password := fs.String("password", os.Getenv("PITH_ADMIN_PASSWORD"), "password of --url (env PITH_ADMIN_PASSWORD)")
	pid := fs.Int("pid", 0, "process id of --url, to report its peak RSS")
	artifact := fs.String("artifact", "testdata/ansible-collections/community-general-5.7.0.tar.gz", "the collection tarball to publish")
	rounds := fs.Int("rounds", 5, "publishes per server, each into a fresh repository")
	title := fs.String("title", "Publish and import of a collection", "table title")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *rounds <= 0 {
		return fmt.Errorf("--rounds: %d must be positive", *rounds)
	}
	data, err := os.ReadFile(*artifact)
	if err != nil {
		return fmt.Errorf("--artifact: %w", err)
	}
	pith, stop, err := sf.pith(ctx, "publish", *url, *user, *password, *pid)
	if err != nil {
		return err
	}
	defer stop()
	var rows []bench.PublishRow
	for _, t := range append([]bench.Target{pith}, sf.peers...) {
		row, err := bench.Publish(ctx, bench.PublishConfig{Target: t, Artifact: *artifact, Rounds: *rounds}, data)
		if err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
		rows = append(rows, row)
	}
	return sf.write("galaxy-publish", func(w io.Writer) { bench.PublishMarkdown(w, *title, rows) }, nil)
}

// benchGalaxyInstall runs the Ansible study's install scenario: ansible-galaxy installs
// collections with their dependencies from a distribution of each server, every Galaxy
// answer timed by a proxy in front of it.
func benchGalaxyInstall(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench galaxy-install", flag.ContinueOnError)
	sf := addScenarioFlags(fs, "galaxy-install")
	url := fs.String("url", "", "a running pith to measure (default: start one on the embedded defaults)")
	user := fs.String("user", "admin", "user of --url")
	password := fs.String("password", os.Getenv("PITH_ADMIN_PASSWORD"), "password of --url (env PITH_ADMIN_PASSWORD)")
	basePath := fs.String("base-path", "", "a distribution every server holds already (default: make one on each and publish --artifacts into it)")
	artifacts := fs.String("artifacts", "testdata/ansible-collections/cisco-iosxr-4.0.2.tar.gz,testdata/ansible-collections/ansible-netcommon-4.1.0.tar.gz,testdata/ansible-collections/ansible-utils-2.7.0.tar.gz",
		"collection tarballs published into the distribution made without --base-path, comma-separated")
	specs := fs.String("install", "cisco.iosxr", "what ansible-galaxy installs, comma-separated")
	galaxy := fs.String("ansible-galaxy", os.Getenv("PITH_ANSIBLE_GALAXY"), "the ansible-galaxy executable (env PITH_ANSIBLE_GALAXY)")
	rounds := fs.Int("rounds", 5, "installs per server, each into an empty collections path with no response cache")
	title := fs.String("title", "ansible-galaxy collection install", "table title")
	loadFor := fs.Duration("load", 0, "then put the collections index and a versions list under wrk load this long each (0: not)")
	conns := fs.Int("connections", 16, "wrk connections of --load")
	pid := fs.Int("pid", 0, "process id of --url, for its CPU under --load")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *rounds <= 0 {
		return fmt.Errorf("--rounds: %d must be positive", *rounds)
	}
	if *galaxy == "" {
		return fmt.Errorf("--ansible-galaxy: not set (scripts/test installs ansible-core 2.19.14 into ~/.cache/pith/venv-ansible)")
	}
	pith, stop, err := sf.pith(ctx, "install", *url, *user, *password, *pid)
	if err != nil {
		return err
	}
	defer stop()
	var rows []bench.InstallRow
	var loads []bench.GalaxyLoadRow
	made := "bench-install-" + time.Now().Format("150405") // the same on every server
	for _, t := range append([]bench.Target{pith}, sf.peers...) {
		bp := *basePath
		if bp == "" {
			bp = made
			if err := bench.GalaxyDistribution(ctx, t, bp, strings.Split(*artifacts, ",")); err != nil {
				return fmt.Errorf("%s: %w", t.Name, err)
			}
		}
		row, err := bench.Install(ctx, bench.InstallConfig{Target: t, BasePath: bp, Specs: strings.Split(*specs, ","), Galaxy: *galaxy, Rounds: *rounds})
		if err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
		rows = append(rows, row)
		if *loadFor > 0 {
			coll := strings.ReplaceAll(strings.Split(*specs, ",")[0], ".", "/")
			got, err := bench.GalaxyLoad(ctx, bench.GalaxyLoadConfig{Target: t, BasePath: bp, Collection: coll, Connections: *conns, Duration: *loadFor})
			loads = append(loads, got...)
			if err != nil {
				return fmt.Errorf("%s: %w", t.Name, err)
			}
		}
	}
	return sf.write("galaxy-install", func(w io.Writer) {
		bench.InstallMarkdown(w, *title, rows)
		if len(loads) > 0 {
			bench.GalaxyLoadMarkdown(w, fmt.Sprintf("Galaxy reads under load (wrk, %d connections, %v each)", *conns, *loadFor), loads)
		}
	}, nil)
}

// benchExport runs the export-and-import study: a generated repository synced, exported
// whole by a pulp exporter and imported into a new repository, on a pith of its own at
// each size and on any peers at the largest.
func benchExport(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench export", flag.ContinueOnError)
	sf := addScenarioFlags(fs, "export")
	typ := fs.String("type", "rpm", "repository type: rpm (generated .rpm files) or file (files and a PULP_MANIFEST)")
	sizes := fs.String("packages", "20000", "units in the repository, comma-separated sizes: pith runs at each, peers at the largest")
	payload := fs.Int64("payload", 2000, "bytes of file content per package or file")
	rounds := fs.Int("rounds", 2, "exports and imports per server and size (the last is the warm one)")
	timeout := fs.Duration("timeout", 2*time.Hour, "end the study after this long (what it made on the peers is still removed)")
	peerDir := fs.String("peer-dir", "/tmp/pulp-peer/exports", "where the peers' exporters write: a directory each allows for exports and imports")
	withPith := fs.Bool("pith", true, "measure a pith of its own (false: only the peers)")
	pprof := fs.String("pprof", "", "host:port for pith's --pprof-listen, to profile it during the run")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	counts, err := ints("packages", *sizes)
	if err != nil {
		return err
	}
	if *rounds <= 0 || *payload <= 0 || *timeout <= 0 {
		return fmt.Errorf("bench export: --rounds, --payload and --timeout must be positive")
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	dir, cleanup, err := sf.workdir("pith-bench-export-")
	if err != nil {
		return err
	}
	defer cleanup()
	var rows []bench.ExportRow
	run := func(n int, sides []bench.ExportSide) error {
		url, stop, err := bench.ServeExportRepo(filepath.Join(dir, fmt.Sprintf("repo-%d", n)), *typ, n, *payload)
		if err != nil {
			return err
		}
		defer stop()
		cfg := bench.ExportConfig{Type: *typ, Packages: n, Payload: *payload, URL: url, Rounds: *rounds, Log: os.Stderr}
		for _, side := range sides {
			got, err := bench.Export(ctx, side, cfg)
			rows = append(rows, got...)
			if err != nil {
				return fmt.Errorf("%s, %d units: %w", side.Target.Name, n, err)
			}
		}
		return nil
	}
	largest := slices.Max(counts)
	for _, n := range counts {
		var sides []bench.ExportSide
		stop := func() {}
		if *withPith {
			var side bench.ExportSide
			if side, stop, err = exportPith(ctx, filepath.Join(dir, fmt.Sprintf("pith-%d", n)), *pprof); err != nil {
				break
			}
			sides = append(sides, side)
		}
		if n == largest {
			for _, p := range sf.peers {
				sides = append(sides, bench.ExportSide{Target: p, Dir: *peerDir})
			}
		}
		err = run(n, sides)
		stop()
		if err != nil {
			break
		}
	}
	return errors.Join(err, sf.write("export", func(w io.Writer) { bench.ExportMarkdown(w, rows) }, nil))
}

// exportPith starts a pith of its own in dir that may export and import below
// dir/exports, and restarts it on the same data when asked.
func exportPith(ctx context.Context, dir, pprof string) (bench.ExportSide, func(), error) {
	exports := filepath.Join(dir, "exports")
	ccfg := bench.ClusterConfig{Dir: filepath.Join(dir, "pith"), Fresh: true, Password: randomPassword(),
		Args: []string{"--allowed-export-paths", exports, "--allowed-import-paths", exports}}
	if pprof != "" {
		ccfg.Args = append(ccfg.Args, "--pprof-listen", pprof)
	}
	if err := os.MkdirAll(exports, 0o755); err != nil {
		return bench.ExportSide{}, nil, err
	}
	cl, err := bench.StartCluster(ctx, ccfg)
	if err != nil {
		return bench.ExportSide{}, nil, err
	}
	ccfg.Fresh = false
	side := bench.ExportSide{Target: cl.Target(), Dir: exports, Throwaway: true}
	side.Restart = func(ctx context.Context) (bench.Target, error) {
		cl.Stop()
		next, err := bench.StartCluster(ctx, ccfg)
		if err != nil {
			return bench.Target{}, err
		}
		cl = next
		return cl.Target(), nil
	}
	return side, func() { cl.Stop() }, nil
}
