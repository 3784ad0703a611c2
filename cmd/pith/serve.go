package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"pith/api"
	"pith/blob"
	"pith/blob/driver/fs"
	"pith/blob/driver/s3"
	"pith/blob/driver/sqlblob"
	"pith/config"
	"pith/content"
	"pith/content/file"
	"pith/content/rpm"
	"pith/meta"
	"pith/serve"
	"pith/sign"
	"pith/task"

	"golang.org/x/sys/unix"
)

func logger(cfg config.Config) *slog.Logger {
	var lvl slog.Level
	lvl.UnmarshalText([]byte(cfg.LogLevel))
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
}

// openDB opens and migrates the metadata store, creating the data directory for SQLite.
func openDB(ctx context.Context, cfg config.Config) (*meta.DB, error) {
	if err := os.MkdirAll(cfg.Data, 0o750); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	db, err := meta.Open(ctx, cfg.Database)
	if err != nil {
		return nil, err
	}
	db.SetMaxConns(config.Profile(cfg.Tuning).DBConns)
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func randomPassword() string {
	b := make([]byte, 18)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// ensureAdmin creates the admin user on first start, with PITH_ADMIN_PASSWORD or a
// generated password printed once.
func ensureAdmin(ctx context.Context, db *meta.DB, log *slog.Logger) error {
	ok, err := meta.UserExists(ctx, db, "admin")
	if err != nil || ok {
		return err
	}
	pw := os.Getenv("PITH_ADMIN_PASSWORD")
	generated := pw == ""
	if generated {
		pw = randomPassword()
	}
	if err := meta.SetPassword(ctx, db, "admin", pw, true); err != nil {
		return err
	}
	if generated {
		fmt.Fprintf(os.Stderr, "\n  created user \"admin\" with password: %s\n  (shown once; reset with `pith admin password`)\n\n", pw)
	} else {
		log.Info("created user admin with the password from PITH_ADMIN_PASSWORD")
	}
	return nil
}

func adminPassword(ctx context.Context, cfg config.Config, args []string) error {
	db, err := openDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	pw := ""
	if len(args) > 0 {
		pw = args[0]
	} else if v := os.Getenv("PITH_ADMIN_PASSWORD"); v != "" {
		pw = v
	}
	generated := pw == ""
	if generated {
		pw = randomPassword()
	}
	if err := meta.SetPassword(ctx, db, "admin", pw, true); err != nil {
		return err
	}
	if generated {
		fmt.Printf("new password for admin: %s\n", pw)
	} else {
		fmt.Println("password for admin updated")
	}
	return nil
}

func printVersions() error {
	for _, v := range api.Versions {
		fmt.Printf("%s %s\n", v.Component, v.Version)
	}
	return nil
}

// node is everything one process runs.
type node struct {
	db      *meta.DB
	store   *blob.Store
	queue   *task.Queue
	core    *content.Core
	api     *api.Server   // nil without the api role
	content *serve.Server // nil without the content role
	log     *slog.Logger
}

// types are the content types this build serves, in the order they are registered.
func types(ctx context.Context, core *content.Core, cfg config.Config) ([]content.Type, error) {
	rp := rpm.New(core)
	if cfg.MetadataSigningKey != "" {
		signer, err := sign.Load(cfg.MetadataSigningKey)
		if err != nil {
			return nil, fmt.Errorf("metadata-signing-key: %w", err)
		}
		svc, err := meta.PutSigningService(ctx, core.DB, meta.SigningService{Name: "pith-metadata", PublicKey: signer.PublicKey(),
			Fingerprint: signer.Fingerprint(), Script: "pith: OpenPGP key " + cfg.MetadataSigningKey})
		if err != nil {
			return nil, err
		}
		rp.SetSigner(svc.PulpID, signer)
	}
	return []content.Type{file.New(core), rp}, nil
}

// build makes what a process with roles r runs: the stores, the task queue with every
// task function (a worker needs no API to run them), the API and the content app.
func build(ctx context.Context, cfg config.Config, r roles) (*node, error) {
	log := logger(cfg)
	db, err := openDB(ctx, cfg)
	if err != nil {
		return nil, err
	}
	n, err := buildOn(ctx, cfg, r, db, log)
	if err != nil {
		db.Close()
		return nil, err
	}
	return n, nil
}

func buildOn(ctx context.Context, cfg config.Config, r roles, db *meta.DB, log *slog.Logger) (*node, error) {
	var drv blob.Driver
	var err error
	switch {
	case cfg.Storage == "database":
		drv, err = sqlblob.New(ctx, db)
	case strings.HasPrefix(cfg.Storage, "s3://"):
		var sc s3.Config
		if sc, err = s3.ParseURL(cfg.Storage); err == nil {
			drv, err = s3.New(ctx, sc)
		}
	default:
		drv, err = fs.New(cfg.Storage)
	}
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	store, err := blob.New(drv, cfg.AllowedChecksums)
	if err != nil {
		return nil, fmt.Errorf("allowed-checksums: %w", err)
	}
	funcs := map[string]task.Func{}
	q := task.New(db, funcs, task.Options{Workers: cfg.Workers, Logger: log, Lease: cfg.TaskLease()})
	n := &node{db: db, store: store, queue: q, log: log}
	inv := &invalidator{db: db}
	core := content.NewCore(content.Config{DB: db, Store: store, Queue: q, Log: log, Invalidate: inv.Invalidate})
	ts, err := types(ctx, core, cfg)
	if err != nil {
		return nil, err
	}
	if err := core.Register(ts...); err != nil {
		return nil, err
	}
	n.core = core
	maps.Copy(funcs, core.Tasks())
	maps.Copy(funcs, api.Tasks(core, cfg.GracePeriod()))
	// The shared cache: content processes keep resolutions in it, and status reports it.
	var shared *serve.Shared
	sharedOnly := false
	if (r.content || r.api) && strings.HasPrefix(cfg.Cache, "redis://") {
		// redis://…?local=off: resolutions live in Redis only, not in each process too.
		u, err := url.Parse(cfg.Cache)
		if err != nil {
			return nil, fmt.Errorf("cache: %w", err)
		}
		q := u.Query()
		sharedOnly = q.Get("local") == "off"
		q.Del("local")
		u.RawQuery = q.Encode()
		if shared, err = serve.NewShared(ctx, u.String(), log); err != nil {
			return nil, err
		}
	}
	if r.content {
		n.content = serve.New(db, store, serve.Options{GracePeriod: cfg.GracePeriod(), Logger: log, ContentOrigin: cfg.ContentOrigin,
			CacheSize: config.Profile(cfg.Tuning).CacheSize, RedirectToStorage: cfg.RedirectToObjectStorage, Shared: shared,
			NoCache: cfg.Cache == "off", SharedOnly: sharedOnly, Types: core.TypeOf})
		inv.local = n.content
	}
	if r.api {
		if n.api, err = api.New(api.Config{Core: core, ContentOrigin: cfg.ContentOrigin, Logger: log,
			OrphanProtection: cfg.OrphanProtection(), GracePeriod: cfg.GracePeriod()}); err != nil {
			return nil, err
		}
		if shared != nil {
			n.api.SetCacheStatus(shared.Connected)
		}
	}
	return n, nil
}

// contentChannel carries "what is served changed" between processes over PostgreSQL.
const contentChannel = "pith_content"

// invalidator tells this process's content app, and the content apps of other
// processes, that what they serve may have changed.
type invalidator struct {
	db    *meta.DB
	local *serve.Server // nil without the content role
}

func (i *invalidator) Invalidate() {
	if i.local != nil {
		i.local.Invalidate()
	}
	i.db.Notify(context.Background(), contentChannel, "")
}

// Roles a process can run.
type roles struct{ api, content, worker bool }

// handler routes the API and the content app, as the roles ask.
func (n *node) handler(r roles) http.Handler {
	mux := http.NewServeMux()
	if r.api {
		mux.Handle("/pulp/api/v3/", n.api)
		// The protocols of the content types that speak one of their own (content.Router).
		for _, t := range n.core.Types() {
			if rt, ok := t.(content.Router); ok {
				for _, route := range rt.Routes() {
					mux.Handle(route.Pattern, route.Handler)
				}
			}
		}
	}
	if r.content {
		mux.Handle("/pulp/content/", n.content)
		mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			n.content.WriteMetrics(r.Context(), w)
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" || r.URL.Path == "/pulp/" || r.URL.Path == "/pulp/api/v3" {
			http.Redirect(w, r, "/pulp/api/v3/status/", http.StatusFound)
			return
		}
		http.NotFound(w, r)
	})
	return mux
}

func runNode(ctx context.Context, cfg config.Config, n *node, r roles) error {
	if err := ensureAdmin(ctx, n.db, n.log); err != nil {
		return err
	}
	// Temporaries of writes that a process which died never ended (the maintenance
	// schedule sweeps them too, hourly).
	if k, err := n.store.SweepTemp(ctx); err != nil {
		n.log.Warn("sweeping temporary blobs failed", "err", err)
	} else if k > 0 {
		n.log.Info("removed temporary blobs of writes that never ended", "count", k)
	}
	if r.worker {
		if err := n.core.SetSchedules(ctx, content.Schedules{OrphanProtection: cfg.OrphanProtection(),
			OrphanCleanupInterval: time.Duration(cfg.OrphanCleanupIntervalMinutes) * time.Minute,
			TaskProtection:        time.Duration(cfg.TaskProtectionMinutes) * time.Minute,
			UploadProtection:      time.Duration(cfg.UploadProtectionMinutes) * time.Minute}); err != nil {
			return err
		}
		if err := startWorkers(ctx, cfg, n); err != nil {
			return err
		}
	}
	if r.content {
		// Changes made by other processes reach this content app.
		go n.db.Listen(ctx, n.log, func(string, string) { n.content.Invalidate() }, contentChannel)
	}
	host, _ := os.Hostname()
	var kinds []string
	if r.api {
		kinds = append(kinds, "api")
	}
	if r.content {
		kinds = append(kinds, "content")
	}
	for _, kind := range kinds {
		app, err := task.RegisterApp(ctx, n.db, fmt.Sprintf("%s-%d@%s", kind, os.Getpid(), host), kind)
		if err != nil {
			return err
		}
		go func() {
			t := time.NewTicker(10 * time.Second)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					task.Heartbeat(ctx, n.db, app.ID)
				}
			}
		}()
	}
	if !r.api && !r.content {
		n.log.Info("pith worker running", "database", n.db.Dialect().String(), "workers", cfg.Workers)
		<-ctx.Done()
		return nil
	}
	if cfg.PprofListen != "" {
		if err := servePprof(ctx, cfg.PprofListen, n.log); err != nil {
			return err
		}
	}
	ln, err := listen(ctx, cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	srv := &http.Server{Handler: n.handler(r), ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second}
	n.log.Info("pith serving", "listen", ln.Addr().String(), "api", r.api, "content", r.content, "workers", r.worker,
		"database", n.db.Dialect().String(), "data", cfg.Data)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		return nil
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// startWorkers starts the task workers in the worker slot this process takes, first
// failing the tasks the slot's previous holder (a process that ended) left running.
// Without a slot (a data directory that takes no locks) they wait for their leases.
func startWorkers(ctx context.Context, cfg config.Config, n *node) error {
	s, err := takeSlot(cfg.Data)
	if err != nil {
		n.log.Warn("no worker slot: tasks a process of this worker left running fail when their lease ends", "err", err)
	} else if s.previous != "" {
		k, err := task.Restarted(ctx, n.db, s.previous)
		if err != nil {
			return fmt.Errorf("fail the tasks of the previous worker %s: %w", s.previous, err)
		}
		if k > 0 {
			n.log.Warn("failed the tasks the previous process of this worker left running", "count", k, "worker", s.previous)
		}
	}
	if err := n.queue.Start(ctx); err != nil {
		return err
	}
	if s != nil {
		if err := s.record(n.queue.Worker()); err != nil {
			return fmt.Errorf("worker slot: %w", err)
		}
	}
	return nil
}

// runRoles runs the given roles in this process. The single roles need PostgreSQL:
// an embedded SQLite database belongs to one process.
func runRoles(ctx context.Context, name string, cfg config.Config, r roles) error {
	if !(r.api && r.content && r.worker) && !strings.HasPrefix(cfg.Database, "postgres://") && !strings.HasPrefix(cfg.Database, "postgresql://") {
		return fmt.Errorf("%s: the %s role runs as a separate process only over PostgreSQL (--database postgres://…); "+
			"with the embedded SQLite database (%s) one process owns it: run `pith serve`", name, name, cfg.Database)
	}
	n, err := build(ctx, cfg, r)
	if err != nil {
		return err
	}
	defer n.db.Close()
	return runNode(ctx, cfg, n, r)
}

// listen opens the address with SO_REUSEPORT, so that several pith processes (content
// processes, say) can share one address and the kernel spreads connections over them.
func listen(ctx context.Context, addr string) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) })
		return errors.Join(err, serr)
	}}
	return lc.Listen(ctx, "tcp", addr)
}

// servePprof serves the profiler on its own listener until ctx ends.
func servePprof(ctx context.Context, addr string, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("pprof-listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	go func() { <-ctx.Done(); srv.Close() }()
	log.Info("profiler serving", "listen", ln.Addr().String())
	return nil
}
