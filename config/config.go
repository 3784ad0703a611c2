package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is every setting of a pith process.
type Config struct {
	Listen   string `json:"listen"`   // API and content address, host:port
	Data     string `json:"data"`     // data directory: blobs, uploads, the SQLite file
	Database string `json:"database"` // SQLite file path or postgres:// URL
	Storage  string `json:"storage"`  // blob storage: a directory, "database" or s3://…
	Cache    string `json:"cache"`    // content cache: "memory", "off" or redis://host:port/db
	// ContentListen serves the content app of `pith serve` on an address of its own, an
	// origin apart from the API's; "" serves it on Listen.
	ContentListen string `json:"content_listen"`
	// RedirectToObjectStorage answers content requests for S3 blobs with a redirect to a
	// presigned URL instead of streaming them.
	RedirectToObjectStorage bool   `json:"redirect_to_object_storage"`
	ContentOrigin           string `json:"content_origin"` // scheme://host:port clients use for content
	Tuning                  string `json:"tuning"`         // small, medium, large, xlarge or auto
	Workers                 int    `json:"workers"`        // task workers in this process (0 = from tuning)
	LogLevel                string `json:"log_level"`      // debug, info, warn, error

	AllowedChecksums []string `json:"allowed_checksums"`
	// AllowedExportPaths are the directories exporters may write below (Pulp's
	// ALLOWED_EXPORT_PATHS); none refuses every export.
	AllowedExportPaths []string `json:"allowed_export_paths"`
	// AllowedImportPaths are the directories imports may read from (Pulp's
	// ALLOWED_IMPORT_PATHS); none refuses every import.
	AllowedImportPaths []string `json:"allowed_import_paths"`
	// ExportVersions are the component versions an export's versions.json names instead
	// of those pith claims ("core=3.123.1"), for a Pulp that imports only exports of its
	// own X.Y.
	ExportVersions []string `json:"export_versions"`
	// OrphanProtectionMinutes keeps new unreferenced content from orphan cleanup.
	OrphanProtectionMinutes int `json:"orphan_protection_minutes"`
	// PublicationGraceMinutes keeps a superseded publication servable.
	PublicationGraceMinutes int `json:"publication_grace_minutes"`
	// TaskLeaseSeconds is how long a running task survives its worker's silence before
	// it is failed and its locks are freed.
	TaskLeaseSeconds int `json:"task_lease_seconds"`
	// UploadProtectionMinutes is how long an unfinished chunked upload is kept after its
	// last change; 0 keeps them until deleted.
	UploadProtectionMinutes int `json:"upload_protection_minutes"`
	// TaskProtectionMinutes is how long finished tasks are kept; 0 keeps them until purged.
	TaskProtectionMinutes int `json:"task_protection_minutes"`
	// OrphanCleanupIntervalMinutes runs orphan cleanup on a schedule; 0 runs it only when asked.
	OrphanCleanupIntervalMinutes int `json:"orphan_cleanup_interval_minutes"`
	// MetadataSigningKey is an armored OpenPGP private key (no passphrase) that signs
	// repository metadata, offered as the signing service "pith-metadata".
	MetadataSigningKey string `json:"metadata_signing_key"`
	// RoleArchiveOrigin is where ansible role syncs fetch role archives
	// (<origin>/<github_user>/<github_repo>/archive/<version>.tar.gz): GitHub, or a
	// mirror of it.
	RoleArchiveOrigin string `json:"role_archive_origin"`
	// PprofListen serves Go's profiler (/debug/pprof/) on its own address; "" = off.
	PprofListen string `json:"pprof_listen"`
	// BodyTimeoutSeconds is how long a client has to send a request body, uploads aside.
	BodyTimeoutSeconds int `json:"body_timeout_seconds"`
	// UploadTimeoutSeconds is how long an authenticated client has to send a file
	// (an upload chunk, an artifact, a package).
	UploadTimeoutSeconds int `json:"upload_timeout_seconds"`
	// MaxConnectionsPerClient caps the connections one client IP address holds open at
	// once; 0 = no cap.
	MaxConnectionsPerClient int `json:"max_connections_per_client"`
	// MaxMetadataMiB bounds a metadata file a sync stages in a temporary file.
	MaxMetadataMiB int `json:"max_metadata_mib"`
	// DBEncryptionKey is the key file that seals the secrets stored in the database
	// (Pulp's DB_ENCRYPTION_KEY).
	DBEncryptionKey string `json:"db_encryption_key"`
	// TLSCert and TLSKey are PEM files of a certificate chain and its key: every
	// listener serves HTTPS with them, reloaded when the files change.
	TLSCert string `json:"tls_cert"`
	TLSKey  string `json:"tls_key"`
	// TLSClientCA is a PEM bundle of the CAs whose client certificates are verified.
	TLSClientCA string `json:"tls_client_ca"`
	// TLSClientCertUser is what of a verified client certificate names its user: cn,
	// email or none.
	TLSClientCertUser string `json:"tls_client_cert_user"`
	// AuthHeader names the header a trusted reverse proxy puts the user it authenticated
	// in (Pulp's REMOTE_USER setups); "" = off.
	AuthHeader string `json:"auth_header"`
	// AuthTrustedProxies are the addresses (CIDR prefixes) AuthHeader is believed from.
	AuthTrustedProxies []string `json:"auth_trusted_proxies"`
	// TaskDiagnostics are the profilers a task may ask for with X-Task-Diagnostics
	// (Pulp's TASK_DIAGNOSTICS); empty runs none.
	TaskDiagnostics []string `json:"task_diagnostics"`
}

// TaskProfilers are the profilers TaskDiagnostics may name.
var TaskProfilers = []string{"memory", "pprof", "heap"}

// Defaults are the embedded single-machine settings.
func Defaults() Config {
	return Config{
		Listen:                  "127.0.0.1:24817",
		Data:                    "./pith-data",
		Tuning:                  "auto",
		LogLevel:                "info",
		AllowedChecksums:        []string{"sha224", "sha256", "sha384", "sha512"},
		OrphanProtectionMinutes: 1440,
		PublicationGraceMinutes: 3 * 24 * 60,
		TaskLeaseSeconds:        30,
		UploadProtectionMinutes: 1440,
		RedirectToObjectStorage: true,
		Cache:                   "memory",
		BodyTimeoutSeconds:      60,
		UploadTimeoutSeconds:    3600,
		MaxConnectionsPerClient: 4096,
		MaxMetadataMiB:          1024,
		TLSClientCertUser:       "cn",
	}
}

// setting binds one field to its flag, environment variable and description.
type setting struct {
	name  string // flag name; the env var is PITH_ + upper(name with - → _)
	usage string
	set   func(c *Config, v string) error
}

func str(p func(c *Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *p(c) = v; return nil }
}

func num(name string, p func(c *Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%s: %q is not a whole number", name, v)
		}
		*p(c) = n
		return nil
	}
}

func boolean(name string, p func(c *Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s: %q is not a boolean", name, v)
		}
		*p(c) = b
		return nil
	}
}

func settings() []setting {
	return []setting{
		{"listen", "address to listen on (host:port)", str(func(c *Config) *string { return &c.Listen })},
		{"content-listen", "pith serve: serve the content app on this host:port, an origin apart from the API's (default: on --listen)",
			str(func(c *Config) *string { return &c.ContentListen })},
		{"data", "data directory (blobs, uploads, SQLite database)", str(func(c *Config) *string { return &c.Data })},
		{"database", "SQLite file path or postgres://user:pass@host:port/db (default: <data>/pith.db)", str(func(c *Config) *string { return &c.Database })},
		{"db-encryption-key", "file of the keys that seal stored secrets (remote passwords, client keys, tokens); made on first start with SQLite, required with PostgreSQL (default: <data>/encryption.key)",
			str(func(c *Config) *string { return &c.DBEncryptionKey })},
		{"storage", "blob storage: a directory path, \"database\" for blobs in the metadata database, or s3://key:secret@host:port/bucket?region=…&path_style=true&insecure=true (default: <data>/blobs)",
			str(func(c *Config) *string { return &c.Storage })},
		{"cache", "content cache: memory (this process only), redis://host:port/db or rediss://… over TLS (shared by content processes; ?local=off: in Redis only, not also in each process) or off (every request resolved in the database)", str(func(c *Config) *string { return &c.Cache })},
		{"redirect-to-object-storage", "redirect content requests to presigned S3 URLs (true) or stream them (false)",
			boolean("redirect-to-object-storage", func(c *Config) *bool { return &c.RedirectToObjectStorage })},
		{"content-origin", "origin clients use to reach content (default: http://<content-listen, else listen>, https:// with --tls-cert)", str(func(c *Config) *string { return &c.ContentOrigin })},
		{"tuning", "tuning profile: small, medium, large, xlarge or auto", str(func(c *Config) *string { return &c.Tuning })},
		{"workers", "task workers in this process (0 = from the tuning profile)", num("workers", func(c *Config) *int { return &c.Workers })},
		{"log-level", "debug, info, warn or error", str(func(c *Config) *string { return &c.LogLevel })},
		{"pprof-listen", "serve Go's profiler (/debug/pprof/) on this host:port, apart from the API (default: off)", str(func(c *Config) *string { return &c.PprofListen })},
		{"allowed-checksums", "comma-separated digests to record (sha256 always)",
			func(c *Config, v string) error { c.AllowedChecksums = strings.Split(v, ","); return nil }},
		{"allowed-export-paths", "comma-separated directories exporters may write below (default: none, every export refused)",
			func(c *Config, v string) error { c.AllowedExportPaths = paths(v); return nil }},
		{"allowed-import-paths", "comma-separated directories imports may read from (default: none, every import refused)",
			func(c *Config, v string) error { c.AllowedImportPaths = paths(v); return nil }},
		{"export-versions", "comma-separated component=version pairs an export's versions.json names instead of pith's own (e.g. core=3.123.1,file=3.123.1,rpm=3.39.4, for a Pulp of those releases to import it)",
			func(c *Config, v string) error { c.ExportVersions = paths(v); return nil }},
		{"orphan-protection-minutes", "minutes new unreferenced content is safe from orphan cleanup",
			num("orphan-protection-minutes", func(c *Config) *int { return &c.OrphanProtectionMinutes })},
		{"publication-grace-minutes", "minutes a superseded publication stays servable",
			num("publication-grace-minutes", func(c *Config) *int { return &c.PublicationGraceMinutes })},
		{"task-lease-seconds", "seconds a running task outlives a silent worker before it is failed",
			num("task-lease-seconds", func(c *Config) *int { return &c.TaskLeaseSeconds })},
		{"upload-protection-minutes", "minutes an unfinished upload is kept after its last chunk (0 = until deleted)",
			num("upload-protection-minutes", func(c *Config) *int { return &c.UploadProtectionMinutes })},
		{"task-protection-minutes", "minutes finished tasks are kept before they are purged (0 = until purged by hand)",
			num("task-protection-minutes", func(c *Config) *int { return &c.TaskProtectionMinutes })},
		{"orphan-cleanup-interval-minutes", "run orphan cleanup every so many minutes (0 = only when asked)",
			num("orphan-cleanup-interval-minutes", func(c *Config) *int { return &c.OrphanCleanupIntervalMinutes })},
		{"metadata-signing-key", "armored OpenPGP private key (no passphrase) for the signing service pith-metadata",
			str(func(c *Config) *string { return &c.MetadataSigningKey })},
		{"role-archive-origin", "where ansible role syncs fetch role archives: GitHub, or a GitHub Enterprise or mirror of its archive URLs",
			str(func(c *Config) *string { return &c.RoleArchiveOrigin })},
		{"body-timeout-seconds", "seconds a client has to send a request body (uploads aside)",
			num("body-timeout-seconds", func(c *Config) *int { return &c.BodyTimeoutSeconds })},
		{"upload-timeout-seconds", "seconds an authenticated client has to send the body of an upload (chunk, artifact, package)",
			num("upload-timeout-seconds", func(c *Config) *int { return &c.UploadTimeoutSeconds })},
		{"max-connections-per-client", "connections one client IP address may hold open at once; more are closed as accepted (0 = no cap)",
			num("max-connections-per-client", func(c *Config) *int { return &c.MaxConnectionsPerClient })},
		{"max-metadata-mib", "MiB a metadata file a sync downloads (repomd.xml, primary.xml.gz, a manifest) may have",
			num("max-metadata-mib", func(c *Config) *int { return &c.MaxMetadataMiB })},
		{"tls-cert", "PEM certificate chain (leaf first): every listener serves HTTPS, reloaded when the file changes (with --tls-key)",
			str(func(c *Config) *string { return &c.TLSCert })},
		{"tls-key", "PEM private key of --tls-cert", str(func(c *Config) *string { return &c.TLSKey })},
		{"tls-client-ca", "PEM bundle of the CAs whose client certificates are verified (a client without one is still served)",
			str(func(c *Config) *string { return &c.TLSClientCA })},
		{"tls-client-cert-user", "what of a verified client certificate names its user: cn, email (its first email address) or none",
			str(func(c *Config) *string { return &c.TLSClientCertUser })},
		{"auth-header", "header a trusted reverse proxy names the authenticated user in, e.g. X-Remote-User (default: off)",
			str(func(c *Config) *string { return &c.AuthHeader })},
		{"auth-trusted-proxies", "comma-separated addresses or CIDR prefixes of the proxies --auth-header is believed from",
			func(c *Config, v string) error { c.AuthTrustedProxies = strings.Split(v, ","); return nil }},
		{"task-diagnostics", "comma-separated profilers a task may ask for with X-Task-Diagnostics: memory, pprof, heap (default: none)",
			func(c *Config, v string) error { c.TaskDiagnostics = strings.Split(v, ","); return nil }},
	}
}

// Diagnostics parses TaskDiagnostics: the profilers named, each once.
func (c Config) Diagnostics() ([]string, error) {
	var out []string
	for _, s := range c.TaskDiagnostics {
		s = strings.TrimSpace(s)
		if s == "" || slices.Contains(out, s) {
			continue
		}
		if !slices.Contains(TaskProfilers, s) {
			return nil, fmt.Errorf("task-diagnostics: %q is not a profiler; pith has %s", s, strings.Join(TaskProfilers, ", "))
		}
		out = append(out, s)
	}
	return out, nil
}

// ExportVersionMap parses ExportVersions: component → version.
func (c Config) ExportVersionMap() (map[string]string, error) {
	out := map[string]string{}
	for _, p := range c.ExportVersions {
		comp, v, ok := strings.Cut(p, "=")
		parts := strings.Split(v, ".")
		if !ok || comp == "" || len(parts) < 2 || len(comp) > 64 || len(v) > 64 {
			return nil, fmt.Errorf("export-versions: %q is not component=X.Y[.Z]", p)
		}
		for _, n := range parts {
			if _, err := strconv.Atoi(n); err != nil {
				return nil, fmt.Errorf("export-versions: %q is not component=X.Y[.Z]", p)
			}
		}
		out[comp] = v
	}
	return out, nil
}

// paths splits a comma-separated list of values, dropping empty entries (an empty
// value is an empty list).
func paths(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// TrustedProxies parses AuthTrustedProxies.
func (c Config) TrustedProxies() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range c.AuthTrustedProxies {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return nil, fmt.Errorf("auth-trusted-proxies: %q is neither an address nor a CIDR prefix", s)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// EnvName is the environment variable of a setting.
func EnvName(flagName string) string {
	return "PITH_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// Load builds the configuration from defaults, the config file (--config or
// PITH_CONFIG), the environment and the flags in args. Flags may come before, between
// or after positional arguments (everything after "--" is positional); it returns the
// positional arguments.
func Load(name string, args []string, getenv func(string) string) (Config, []string, error) {
	c := Defaults()
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	configFile := fs.String("config", getenv("PITH_CONFIG"), "JSON config file (env PITH_CONFIG)")
	flagged := map[string]*string{}
	for _, st := range settings() {
		flagged[st.name] = fs.String(st.name, "", st.usage+" (env "+EnvName(st.name)+")")
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return c, nil, err
	}
	if *configFile != "" {
		b, err := os.ReadFile(*configFile)
		if err != nil {
			return c, nil, fmt.Errorf("config file: %w", err)
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		if err := d.Decode(&c); err != nil {
			return c, nil, fmt.Errorf("config file %s: %w", *configFile, err)
		}
	}
	for _, st := range settings() {
		if v := getenv(EnvName(st.name)); v != "" {
			if err := st.set(&c, v); err != nil {
				return c, nil, fmt.Errorf("environment %s: %w", EnvName(st.name), err)
			}
		}
	}
	var ferr error
	fs.Visit(func(f *flag.Flag) {
		for _, st := range settings() {
			if st.name == f.Name {
				if err := st.set(&c, *flagged[st.name]); err != nil && ferr == nil {
					ferr = fmt.Errorf("flag --%s: %w", f.Name, err)
				}
			}
		}
	})
	if ferr != nil {
		return c, nil, ferr
	}
	c.fill()
	return c, pos, c.Validate()
}

// parseInterleaved parses flags wherever they are in args and returns the positional
// arguments in order. A flag.FlagSet stops at the first positional argument, which made
// `pith admin password NEW --data DIR` ignore --data.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

func (c *Config) fill() {
	if c.Database == "" {
		c.Database = filepath.Join(c.Data, "pith.db")
	}
	scheme := "http://"
	if c.TLSCert != "" {
		scheme = "https://"
	}
	if c.ContentOrigin == "" && c.ContentListen != "" {
		c.ContentOrigin = scheme + c.ContentListen
	}
	if c.DBEncryptionKey == "" {
		c.DBEncryptionKey = filepath.Join(c.Data, "encryption.key")
	}
	if c.ContentOrigin == "" {
		c.ContentOrigin = scheme + c.Listen
	}
	if c.Storage == "" {
		c.Storage = filepath.Join(c.Data, "blobs")
	}
	c.ContentOrigin = strings.TrimSuffix(c.ContentOrigin, "/")
	if c.Workers == 0 {
		c.Workers = Profile(c.Tuning).Workers
	}
}

// Validate checks every setting and names the first bad one.
func (c Config) Validate() error {
	proxies, err := c.TrustedProxies()
	if err != nil {
		return err
	}
	if _, err := c.Diagnostics(); err != nil {
		return err
	}
	if _, err := c.ExportVersionMap(); err != nil {
		return err
	}
	for _, f := range []struct {
		name  string
		paths []string
	}{{"allowed-export-paths", c.AllowedExportPaths}, {"allowed-import-paths", c.AllowedImportPaths}} {
		for _, p := range f.paths {
			if !filepath.IsAbs(p) {
				return fmt.Errorf("%s: %q is not an absolute path", f.name, p)
			}
		}
	}
	if c.AuthHeader != "" && len(proxies) == 0 {
		return errors.New("auth-header: needs --auth-trusted-proxies, the addresses of the proxies that set it (anyone else could name any user)")
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("listen: %q is not host:port: %w", c.Listen, err)
	}
	if c.ContentListen != "" {
		if _, _, err := net.SplitHostPort(c.ContentListen); err != nil {
			return fmt.Errorf("content-listen: %q is not host:port: %w", c.ContentListen, err)
		}
		if c.ContentListen == c.Listen {
			// Both listeners would bind it (SO_REUSEPORT) and share its connections at random.
			return fmt.Errorf("content-listen: %q is the listen address; leave it empty to serve content there", c.ContentListen)
		}
	}
	if c.Data == "" {
		return errors.New("data: must not be empty")
	}
	if strings.Contains(c.Database, "://") && !strings.HasPrefix(c.Database, "postgres://") && !strings.HasPrefix(c.Database, "postgresql://") {
		return fmt.Errorf("database: %q is neither a file path nor a postgres:// URL", c.Database)
	}
	if c.Cache != "memory" && c.Cache != "off" && !strings.HasPrefix(c.Cache, "redis://") && !strings.HasPrefix(c.Cache, "rediss://") {
		return fmt.Errorf("cache: %q is neither memory, off nor a redis:// or rediss:// URL", c.Cache)
	}
	if strings.Contains(c.Storage, "://") && !strings.HasPrefix(c.Storage, "s3://") {
		return fmt.Errorf("storage: only a directory path, \"database\" or an s3:// URL is supported")
	}
	if u, err := url.Parse(c.ContentOrigin); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("content-origin: %q is not an http(s) origin", c.ContentOrigin)
	}
	if err := c.validateTLS(); err != nil {
		return err
	}
	if _, ok := profiles[c.Tuning]; !ok && c.Tuning != "auto" {
		return fmt.Errorf("tuning: %q is not one of small, medium, large, xlarge, auto", c.Tuning)
	}
	if c.Workers < 0 {
		return fmt.Errorf("workers: %d must not be negative", c.Workers)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("log-level: %q is not one of debug, info, warn, error", c.LogLevel)
	}
	for _, m := range []struct {
		name string
		v    int
	}{{"task-lease-seconds", c.TaskLeaseSeconds}, {"body-timeout-seconds", c.BodyTimeoutSeconds}, {"upload-timeout-seconds", c.UploadTimeoutSeconds}} {
		if m.v < 1 {
			return fmt.Errorf("%s: %d must be at least 1", m.name, m.v)
		}
	}
	if c.MaxMetadataMiB < 1 || c.MaxMetadataMiB > 1<<20 {
		return fmt.Errorf("max-metadata-mib: %d must be between 1 and %d", c.MaxMetadataMiB, 1<<20)
	}
	for _, m := range []struct {
		name string
		v    int
	}{{"orphan-protection-minutes", c.OrphanProtectionMinutes}, {"publication-grace-minutes", c.PublicationGraceMinutes},
		{"upload-protection-minutes", c.UploadProtectionMinutes}, {"task-protection-minutes", c.TaskProtectionMinutes},
		{"orphan-cleanup-interval-minutes", c.OrphanCleanupIntervalMinutes}, {"max-connections-per-client", c.MaxConnectionsPerClient}} {
		if m.v < 0 {
			return fmt.Errorf("%s: %d must not be negative", m.name, m.v)
		}
	}
	return nil
}

func (c Config) validateTLS() error {
	switch {
	case c.TLSCert != "" && c.TLSKey == "":
		return errors.New("tls-cert: needs tls-key, the certificate's private key")
	case c.TLSKey != "" && c.TLSCert == "":
		return errors.New("tls-key: needs tls-cert, the certificate of the key")
	case c.TLSClientCA != "" && c.TLSCert == "":
		return errors.New("tls-client-ca: needs tls-cert and tls-key: client certificates come only over HTTPS")
	}
	switch c.TLSClientCertUser {
	case "cn", "email", "none":
	default:
		return fmt.Errorf("tls-client-cert-user: %q is not one of cn, email, none", c.TLSClientCertUser)
	}
	return nil
}

// OrphanProtection is the orphan protection time.
func (c Config) OrphanProtection() time.Duration {
	return time.Duration(c.OrphanProtectionMinutes) * time.Minute
}

// GracePeriod is how long superseded publications stay servable.
func (c Config) GracePeriod() time.Duration {
	return time.Duration(c.PublicationGraceMinutes) * time.Minute
}

// BodyTimeout is how long a client has to send a request body, uploads aside.
func (c Config) BodyTimeout() time.Duration { return time.Duration(c.BodyTimeoutSeconds) * time.Second }

// UploadTimeout is how long an authenticated client has to send an upload's body.
func (c Config) UploadTimeout() time.Duration {
	return time.Duration(c.UploadTimeoutSeconds) * time.Second
}

// TaskLease is the lease of a running task.
func (c Config) TaskLease() time.Duration { return time.Duration(c.TaskLeaseSeconds) * time.Second }

// Tuning is one profile's numbers.
type Tuning struct {
	Name      string
	Workers   int // task workers per process
	DBConns   int // database connections per process
	CacheSize int // content-app path cache entries
}

var profiles = map[string]Tuning{
	"small":  {"small", 2, 8, 10_000},
	"medium": {"medium", 4, 16, 100_000},
	"large":  {"large", 8, 32, 500_000},
	"xlarge": {"xlarge", 16, 64, 1_000_000},
}

// Profile returns a tuning profile by name; "auto" picks by CPU count.
func Profile(name string) Tuning {
	if p, ok := profiles[name]; ok {
		return p
	}
	switch n := runtime.NumCPU(); {
	case n <= 2:
		return profiles["small"]
	case n <= 8:
		return profiles["medium"]
	case n <= 32:
		return profiles["large"]
	}
	return profiles["xlarge"]
}

// Usage lists the settings for --help output and docs.
func Usage() string {
	var b strings.Builder
	b.WriteString("  --config FILE  JSON config file (env PITH_CONFIG)\n")
	for _, st := range settings() {
		fmt.Fprintf(&b, "  --%s  %s (env %s)\n", st.name, st.usage, EnvName(st.name))
	}
	return b.String()
}
