package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"pith/meta"
)

// Shared is a path-resolution cache in Redis, shared by every content process. Keys name
// what a distribution serves (an immutable publication or repository version), so an
// entry is never stale: a change to a distribution, publication, repository version or
// remote moves the distributions it touches to new keys, and the old entries expire on
// their own. When Redis is unreachable, content is served uncached: errors are logged
// (at most once a minute) and counted, never returned.
type Shared struct {
	rdb    *redis.Client
	log    *slog.Logger
	ttl    time.Duration
	errors atomic.Int64 // Redis operations that failed (exposed in status)

	mu      sync.Mutex
	lastLog time.Time
}

// NewShared connects to Redis at a redis://host:port/db URL, or over TLS at a
// rediss:// URL (see redisTLS). It does not fail when Redis is down: the cache stays
// empty until Redis answers.
func NewShared(ctx context.Context, rawURL string, log *slog.Logger) (*Shared, error) {
	rawURL, files, err := redisTLSFiles(rawURL)
	if err != nil {
		return nil, err
	}
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("cache %q: %w", rawURL, err)
	}
	if err := files.apply(opt.TLSConfig); err != nil {
		return nil, err
	}
	redis.SetLogger(quiet{}) // failures are logged by failed, rate-limited
	opt.MaxRetries = 1
	opt.DialTimeout = time.Second
	opt.ReadTimeout = 500 * time.Millisecond
	opt.WriteTimeout = 500 * time.Millisecond
	if log == nil {
		log = slog.Default()
	}
	return &Shared{rdb: redis.NewClient(opt), log: log, ttl: 10 * time.Minute}, nil
}

func (s *Shared) failed(op string, err error) {
	s.errors.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Since(s.lastLog) > time.Minute {
		s.lastLog = time.Now()
		s.log.Warn("redis content cache unavailable; serving uncached", "op", op, "err", err, "failures", s.errors.Load())
	}
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// Errors is how many Redis operations have failed since start.
func (s *Shared) Errors() int64 { return s.errors.Load() }

// Connected pings Redis.
func (s *Shared) Connected(ctx context.Context) bool { return s.rdb.Ping(ctx).Err() == nil }

// Close closes the connection pool.
func (s *Shared) Close() error { return s.rdb.Close() }

func (s *Shared) key(k resolutionKey) string {
	return "pith:content:" + k.dist + ":" + k.pub + ":" + k.repo + ":" + strconv.FormatInt(k.number, 10) + ":" + strconv.FormatInt(k.reclaimed, 10) + ":" + k.path
}

// sharedResolution is a resolution as stored in Redis.
type sharedResolution struct {
	Kind    kind         `json:"k"`
	File    meta.FileRef `json:"f"`
	Entries []string     `json:"e,omitempty"`
	Prefix  string       `json:"p,omitempty"`
}

func (s *Shared) get(ctx context.Context, k resolutionKey) (resolution, bool) {
	b, err := s.rdb.Get(ctx, s.key(k)).Bytes()
	if err == redis.Nil {
		return resolution{}, false
	}
	if err != nil {
		s.failed("get", err)
		return resolution{}, false
	}
	var sr sharedResolution
	if json.Unmarshal(b, &sr) != nil {
		return resolution{}, false
	}
	return resolution{kind: sr.Kind, file: sr.File, entries: sr.Entries, prefix: sr.Prefix}, true
}

func (s *Shared) put(ctx context.Context, k resolutionKey, r resolution) {
	b, err := json.Marshal(sharedResolution{Kind: r.kind, File: r.file, Entries: r.entries, Prefix: r.prefix})
	if err != nil {
		return
	}
	if err := s.rdb.Set(ctx, s.key(k), b, s.ttl).Err(); err != nil {
		s.failed("set", err)
	}
}

// WriteMetrics writes the content app's metrics in the Prometheus text format: for now
// the state of the shared cache, so an operator sees Redis trouble without reading logs.
func (s *Server) WriteMetrics(ctx context.Context, w io.Writer) {
	if s.opt.Shared == nil {
		return
	}
	up := 0
	if s.opt.Shared.Connected(ctx) {
		up = 1
	}
	fmt.Fprintf(w, "# HELP pith_content_cache_redis_errors_total Redis operations of the shared content cache that failed (content was served uncached).\n")
	fmt.Fprintf(w, "# TYPE pith_content_cache_redis_errors_total counter\npith_content_cache_redis_errors_total %d\n", s.opt.Shared.Errors())
	fmt.Fprintf(w, "# HELP pith_content_cache_redis_up Whether Redis answers the shared content cache (1) or not (0).\n")
	fmt.Fprintf(w, "# TYPE pith_content_cache_redis_up gauge\npith_content_cache_redis_up %d\n", up)
}
