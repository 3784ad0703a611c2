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
	"pith/auth"
	"pith/blob"
	"pith/blob/driver/fs"
	"pith/blob/driver/s3"
	"pith/blob/driver/sqlblob"
	"pith/config"
	"pith/content"
	"pith/content/ansible"
	"pith/content/file"
	"pith/content/rpm"
	"pith/edge"
	"pith/meta"
	"pith/secret"
	"pith/serve"
	"pith/serve/guard"
	"pith/serve/guard/cert"
	"pith/sign"
	"pith/task"

	"golang.org/x/sys/unix"
)

// logger is the process's logger, also made the default (which the API's error path
// uses): no line it writes shows a URL's credentials.
func logger(cfg config.Config) *slog.Logger {
	var lvl slog.Level
	lvl.UnmarshalText([]byte(cfg.LogLevel))
	l := slog.New(secret.Handler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})))
	slog.SetDefault(l)
	return l
}

// openDB opens and migrates the metadata store with its encryption keys, creating the
// data directory for SQLite; every stored secret must open with the keys.
func openDB(ctx context.Context, cfg config.Config) (*meta.DB, error) {
	return openStore(ctx, cfg, false)
}

// openStore is openDB; with lostKey (pith admin forget-secrets) the secrets no key
// opens are emptied instead, and an embedded installation's missing key file is made
// anew.
func openStore(ctx context.Context, cfg config.Config, lostKey bool) (*meta.DB, error) {
	if err := os.MkdirAll(cfg.Data, 0o750); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	db, err := meta.Open(ctx, cfg.Database)
	if err != nil {
		return nil, err
	}
	db.SetMaxConns(config.Profile(cfg.Tuning).DBConns)
	keys, err := encryptionKeys(ctx, cfg.DBEncryptionKey, db, lostKey)
	if err != nil {
		db.Close()
		return nil, err
	}
	db.SetKeys(keys)
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	check := db.CheckSecrets
	if lostKey {
		check = func(ctx context.Context) error {
			n, err := db.ForgetSecrets(ctx)
			if err == nil {
				fmt.Printf("emptied the secrets no key of %s opens, in %d stored records: set the credentials of the remotes again\n", keys.Path(), n)
			}
			return err
		}
	}
	if err := check(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("%w (if that key is lost, pith admin forget-secrets empties what it sealed)", err)
	}
	return db, nil
}

// encryptionKeys loads the key file that seals the database's secrets. The embedded
// installation (SQLite, one process) makes it on first start. Over PostgreSQL every
// process must hold the same keys, so a missing file is an error: a key made by one
// process would be one the others lack, and what it sealed they could not open.
func encryptionKeys(ctx context.Context, path string, db *meta.DB, lostKey bool) (*secret.Keys, error) {
	k, err := secret.Load(path)
	if !errors.Is(err, secret.ErrNoKeyFile) {
		return k, err
	}
	if db.Dialect() == meta.Postgres {
		return nil, fmt.Errorf("db-encryption-key: %s does not exist; every pith process over one PostgreSQL database "+
			"needs the same key file: make it once (umask 077; openssl rand -base64 32 > %s), give it to every process, "+
			"and keep it with the database's backups", path, path)
	}
	sealed, err := db.Sealed(ctx)
	if err != nil {
		return nil, err
	}
	if sealed && !lostKey {
		return nil, fmt.Errorf("db-encryption-key: %s does not exist, but the database holds secrets sealed with a key: "+
			"restore the key file it was used with (or, the key lost, empty those secrets: pith admin forget-secrets)", path)
	}
	if k, err = secret.Create(path); err != nil {
		return nil, fmt.Errorf("db-encryption-key: %w", err)
	}
	slog.Info("created the database encryption key file; keep it with the database's backups", "file", path)
	return k, nil
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

// adminReseal seals every stored secret with the first key of the key file, after
// writing a new key there first when newKey (Pulp's rotate-db-key, with the new key).
func adminReseal(ctx context.Context, cfg config.Config, newKey bool) error {
	db, err := openDB(ctx, cfg) // every secret opens with the file as it is
	if err != nil {
		return err
	}
	defer db.Close()
	keys := db.Keys()
	if newKey {
		if keys, err = secret.AddKey(keys.Path()); err != nil {
			return fmt.Errorf("db-encryption-key: %w", err)
		}
		db.SetKeys(keys)
		fmt.Printf("added key %s at the top of %s\n", keys.IDs()[0], keys.Path())
	}
	n, err := db.Reseal(ctx)
	if err != nil {
		return err
	}
	ids := keys.IDs()
	fmt.Printf("sealed the secrets of %d stored records again with key %s\n", n, ids[0])
	if len(ids) > 1 {
		fmt.Printf("the database no longer needs keys %s of %s: remove them from the file once every pith process "+
			"runs with key %s, keeping a copy as long as you keep backups of the database made before now\n",
			strings.Join(ids[1:], ", "), keys.Path(), ids[0])
	}
	return nil
}

func printVersions(ctx context.Context) error {
	ts, err := types(ctx, &content.Core{}, config.Config{}) // a type claims what it is without its stores
	if err != nil {
		return err
	}
	for _, v := range api.Versions(ts) {
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
	tls     *edge.TLS     // nil without --tls-cert or without a listener
	log     *slog.Logger
}

// types are the content types this build serves, in the order they are registered.
func types(ctx context.Context, core *content.Core, cfg config.Config) ([]content.Type, error) {
	rp, ap := rpm.New(core), ansible.New(core)
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
		ap.SetSigner(svc.PulpID, signer)
	}
	ap.SetContentOrigin(cfg.ContentOrigin)
	if cfg.RoleArchiveOrigin != "" {
		ap.SetRoleArchiveOrigin(cfg.RoleArchiveOrigin)
	}
	return []content.Type{file.New(core), rp, ap}, nil
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
	var srvTLS *edge.TLS // only a process that listens needs the files
	var err error
	if (r.api || r.content) && cfg.TLSCert != "" {
		if srvTLS, err = edge.NewTLS(edge.TLSFiles{Cert: cfg.TLSCert, Key: cfg.TLSKey, ClientCA: cfg.TLSClientCA}, log); err != nil {
			return nil, fmt.Errorf("tls: %w", err)
		}
	}
	var drv blob.Driver
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
	diagnostics, _ := cfg.Diagnostics() // checked by Validate
	q := task.New(db, funcs, task.Options{Workers: cfg.Workers, Logger: log, Lease: cfg.TaskLease(), Diagnostics: diagnostics})
	n := &node{db: db, store: store, queue: q, tls: srvTLS, log: log}
	inv := &invalidator{db: db}
	stamps, _ := cfg.ExportVersionMap() // checked by Validate
	core := content.NewCore(content.Config{DB: db, Store: store, Queue: q, Log: log, Invalidate: inv.Invalidate,
		MaxMetadataSize: int64(cfg.MaxMetadataMiB) << 20, AllowedExportPaths: cfg.AllowedExportPaths, AllowedImportPaths: cfg.AllowedImportPaths,
		ExportVersions: stamps})
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
	hooks, err := api.TaskHooks(core)
	if err != nil {
		return nil, err
	}
	q.SetHooks(hooks)
	// The shared cache: content processes keep resolutions in it, and status reports it.
	var shared *serve.Shared
	sharedOnly := false
	if (r.content || r.api) && (strings.HasPrefix(cfg.Cache, "redis://") || strings.HasPrefix(cfg.Cache, "rediss://")) {
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
	proxies, _ := cfg.TrustedProxies() // checked by Validate
	authn := auth.New(db, auth.Config{Header: cfg.AuthHeader, TrustedProxies: proxies, CertUser: edge.CertUser(cfg.TLSClientCertUser)})
	if r.content {
		guards := guard.Env{Auth: authn, Permitted: guard.Permissions(db), FromProxy: authn.FromProxy,
			Certs: cert.NewCache(config.Profile(cfg.Tuning).CacheSize)}
		n.content = serve.New(db, store, serve.Options{Guards: guards, GracePeriod: cfg.GracePeriod(), Logger: log, ContentOrigin: cfg.ContentOrigin,
			CacheSize: config.Profile(cfg.Tuning).CacheSize, RedirectToStorage: cfg.RedirectToObjectStorage, Shared: shared,
			NoCache: cfg.Cache == "off", SharedOnly: sharedOnly, Types: core.TypeOf})
		inv.local = n.content
	}
	if r.api {
		if n.api, err = api.New(api.Config{Core: core, ContentOrigin: cfg.ContentOrigin, Logger: log,
			OrphanProtection: cfg.OrphanProtection(), GracePeriod: cfg.GracePeriod(), UploadTimeout: cfg.UploadTimeout(),
			Auth: authn}); err != nil {
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
		for _, root := range n.api.Roots() {
			mux.Handle(root, n.api)
		}
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
	apiRole := r.api
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if apiRole && (r.URL.Path == "/" || r.URL.Path == "/pulp/" || r.URL.Path == "/pulp/api/v3") {
			http.Redirect(w, r, "/pulp/api/v3/status/", http.StatusFound)
			return
		}
		http.NotFound(w, r)
	})
	return mux
}

// endpoint is an address and the roles served there.
type endpoint struct {
	addr    string
	roles   roles
	ln      net.Listener // opened by runNode
	handler http.Handler // the roles' routes (node.handler), set by runNode
}

// endpoints are where the roles r are served: all on --listen, or, for a process with
// both the API and the content app and --content-listen set, the content app on an
// address of its own, so that content and the API are different origins (a file served
// as content can then never act on the API with a browser's credentials for it).
func endpoints(cfg config.Config, r roles) []endpoint {
	if r.api && r.content && cfg.ContentListen != "" {
		return []endpoint{{addr: cfg.Listen, roles: roles{api: true}}, {addr: cfg.ContentListen, roles: roles{content: true}}}
	}
	return []endpoint{{addr: cfg.Listen, roles: r}}
}

// serveHTTP serves each endpoint on its listener until ctx ends or one of them fails.
// Every listener is bounded alike: 30 s for a request's headers (and for a TLS
// handshake), --body-timeout-seconds for its body (edge.Bodies; uploads get more from
// the API), 120 s for an idle connection, --max-connections-per-client connections per
// client address (edge.Conns, counted before any handshake); with --tls-cert every one
// serves HTTPS (edge.TLS).
func (n *node) serveHTTP(ctx context.Context, cfg config.Config, eps []endpoint) error {
	errc := make(chan error, len(eps))
	srvs := make([]*http.Server, len(eps))
	for i, ep := range eps {
		srvs[i] = &http.Server{Handler: edge.Bodies(ep.handler, cfg.BodyTimeout()),
			ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second}
		ln := edge.Conns(ep.ln, cfg.MaxConnectionsPerClient, n.log)
		if n.tls != nil {
			ln = n.tls.Listener(ln)
		}
		go func() { errc <- srvs[i].Serve(ln) }()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for _, srv := range srvs {
		srv.Shutdown(sctx)
	}
	return err
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
		if err := servePprof(ctx, cfg.PprofListen, n.tls, n.log); err != nil {
			return err
		}
	}
	eps := endpoints(cfg, r)
	for i := range eps {
		ln, err := listen(ctx, eps[i].addr)
		if err != nil {
			for _, ep := range eps[:i] {
				ep.ln.Close()
			}
			return fmt.Errorf("listen on %s: %w", eps[i].addr, err)
		}
		eps[i].ln, eps[i].handler = ln, n.handler(eps[i].roles)
		n.log.Info("pith serving", "listen", ln.Addr().String(), "api", eps[i].roles.api, "content", eps[i].roles.content,
			"https", n.tls != nil, "workers", r.worker, "database", n.db.Dialect().String(), "data", cfg.Data)
	}
	return n.serveHTTP(ctx, cfg, eps)
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

// servePprof serves the profiler on its own listener until ctx ends, over TLS with t
// when t is not nil.
func servePprof(ctx context.Context, addr string, t *edge.TLS, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("pprof-listen %s: %w", addr, err)
	}
	if t != nil {
		ln = t.Listener(ln)
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
