package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"pith/meta"
)

// Shared is a path-resolution cache in Redis, shared by every content process. Keys
// carry a generation number that any process bumps when what is served changes (a
// distribution, publication, repository version or remote), so stale entries are never
// read again and expire on their own. When Redis is unreachable, content is served
// uncached: errors are logged (at most once a minute) and counted, never returned.
type Shared struct {
	rdb    *redis.Client
	log    *slog.Logger
	gen    atomic.Int64
	ttl    time.Duration
	errors atomic.Int64 // Redis operations that failed (exposed in status)

	mu      sync.Mutex
	lastLog time.Time
}

const genKey = "pith:content:gen"

// NewShared connects to Redis at a redis://host:port/db URL. It does not fail when
// Redis is down: the cache stays empty until Redis answers.
func NewShared(ctx context.Context, rawURL string, log *slog.Logger) (*Shared, error) {
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("cache %q: %w", rawURL, err)
	}
	redis.SetLogger(quiet{}) // failures are logged by failed, rate-limited
	opt.MaxRetries = 1
	opt.DialTimeout = time.Second
	opt.ReadTimeout = 500 * time.Millisecond
	opt.WriteTimeout = 500 * time.Millisecond
	if log == nil {
		log = slog.Default()
	}
	s := &Shared{rdb: redis.NewClient(opt), log: log, ttl: 10 * time.Minute}
	s.Refresh(ctx)
	return s, nil
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

// Refresh reads the current generation (after another process changed it).
func (s *Shared) Refresh(ctx context.Context) {
	v, err := s.rdb.Get(ctx, genKey).Int64()
	if err != nil && err != redis.Nil {
		s.failed("get generation", err)
		return
	}
	s.gen.Store(v)
}

// Bump starts a new generation: every cached resolution is forgotten by every process.
func (s *Shared) Bump(ctx context.Context) {
	v, err := s.rdb.Incr(ctx, genKey).Result()
	if err != nil {
		s.failed("bump generation", err)
		return
	}
	s.gen.Store(v)
}

// Close closes the connection pool.
func (s *Shared) Close() error { return s.rdb.Close() }

func (s *Shared) key(k resolutionKey) string {
	return "pith:content:" + strconv.FormatInt(s.gen.Load(), 10) + ":" + strconv.FormatInt(k.dist, 10) + ":" + k.path
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
