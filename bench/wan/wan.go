package wan

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// StatsPath is the path at which the server reports its Stats as JSON. Requests to it
// are neither shaped nor counted.
const StatsPath = "/_wan/stats"

// Config is the network a Server simulates. The zero Config serves files unshaped.
type Config struct {
	// Latency is added before each response's headers (round trip plus server think
	// time). It also applies to 429 answers.
	Latency time.Duration
	// Jitter spreads Latency uniformly over [Latency-Jitter, Latency+Jitter], never
	// below zero. Zero means no jitter.
	Jitter time.Duration
	// PerConnBps caps each response body's rate in bytes per second; 0 is unlimited.
	// An HTTP/1.1 connection carries one response at a time, so this is also the cap
	// per TCP connection.
	PerConnBps int64
	// TotalBps caps all response bodies together in bytes per second; 0 is unlimited.
	TotalBps int64
	// MaxConcurrent is the number of requests served at once; beyond it the server
	// answers 429 Too Many Requests. 0 is unlimited.
	MaxConcurrent int
	// RetryAfter is sent in the Retry-After header of 429 answers, rounded up to whole
	// seconds and at least 1.
	RetryAfter time.Duration
}

// delay returns the latency to impose on one request, with jitter applied.
func (c Config) delay() time.Duration {
	d := c.Latency
	if c.Jitter > 0 {
		d += time.Duration(rand.Int64N(2*int64(c.Jitter)+1)) - c.Jitter
	}
	return max(d, 0)
}

// retryAfterSeconds is the Retry-After value for d: whole seconds, rounded up, at least 1.
func retryAfterSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

// Stats are a Server's counters.
type Stats struct {
	// Requests counts file requests received, including those answered 429.
	Requests int64 `json:"requests"`
	// Bytes counts response body bytes written.
	Bytes int64 `json:"bytes"`
	// TooMany counts 429 answers.
	TooMany int64 `json:"too_many"`
	// PeakConcurrent is the most requests admitted at once.
	PeakConcurrent int `json:"peak_concurrent"`
	// InFlight is the number of requests admitted and not yet finished.
	InFlight int `json:"in_flight"`
}

// Server is an http.Handler serving files from an fs.FS through a simulated WAN.
// Create it with New or Listen.
type Server struct {
	root  fs.FS
	cfgMu sync.Mutex // serialises SetConfig
	cfg   atomic.Pointer[Config]
	total *bucket

	requests atomic.Int64
	bytes    atomic.Int64
	tooMany  atomic.Int64
	inFlight atomic.Int64
	peak     atomic.Int64
}

// New returns a Server serving the files of root (for example os.DirFS(dir) or an
// fstest.MapFS) shaped by cfg. A request path /a/b names the file "a/b" in root;
// directories are not listed (404). Only GET and HEAD are served; Range and conditional
// requests are handled by http.ServeContent.
func New(root fs.FS, cfg Config) *Server {
	s := &Server{root: root, total: newBucket(cfg.TotalBps)}
	s.cfg.Store(&cfg)
	return s
}

// Listen serves root shaped by cfg on a new listener at 127.0.0.1:0. It returns the base
// URL (http://127.0.0.1:port, no trailing slash), a stop function that closes the
// listener and all connections (safe to call more than once), and the Server.
func Listen(root fs.FS, cfg Config) (url string, stop func(), s *Server, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, nil, err
	}
	s = New(root, cfg)
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second}
	go srv.Serve(ln)
	stop = sync.OnceFunc(func() { srv.Close() })
	return "http://" + ln.Addr().String(), stop, s, nil
}

// SetConfig changes the shaping. It is safe while serving: requests already admitted
// keep their per-connection cap, the shared total cap changes at once, and later requests
// see the new latency and concurrency limit. Counters are not reset (see ResetStats).
func (s *Server) SetConfig(cfg Config) {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	s.cfg.Store(&cfg)
	s.total.setRate(cfg.TotalBps)
}

// Config returns the shaping in force.
func (s *Server) Config() Config { return *s.cfg.Load() }

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	return Stats{
		Requests:       s.requests.Load(),
		Bytes:          s.bytes.Load(),
		TooMany:        s.tooMany.Load(),
		PeakConcurrent: int(s.peak.Load()),
		InFlight:       int(s.inFlight.Load()),
	}
}

// ResetStats zeroes the counters between runs; the peak restarts from the requests
// currently in flight.
func (s *Server) ResetStats() {
	s.requests.Store(0)
	s.bytes.Store(0)
	s.tooMany.Store(0)
	s.peak.Store(s.inFlight.Load())
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == StatsPath {
		s.serveStats(w, r)
		return
	}
	cfg := s.Config()
	s.requests.Add(1)
	if !s.acquire(cfg.MaxConcurrent) {
		s.refuse(w, r, cfg)
		return
	}
	defer s.inFlight.Add(-1)
	if sleepCtx(r.Context(), cfg.delay()) != nil {
		return
	}
	pw := &pacedWriter{
		ResponseWriter: w,
		ctx:            r.Context(),
		total:          s.total,
		sent:           &s.bytes,
	}
	if cfg.PerConnBps > 0 {
		pw.conn = newBucket(cfg.PerConnBps)
	}
	s.serveFile(pw, r)
}

// acquire takes a concurrency slot, reporting false when limit (if positive) slots are
// already taken.
func (s *Server) acquire(limit int) bool {
	for {
		cur := s.inFlight.Load()
		if limit > 0 && cur >= int64(limit) {
			return false
		}
		if s.inFlight.CompareAndSwap(cur, cur+1) {
			s.notePeak(cur + 1)
			return true
		}
	}
}

// notePeak raises the peak concurrency to n if it is higher.
func (s *Server) notePeak(n int64) {
	for {
		p := s.peak.Load()
		if n <= p || s.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

// refuse answers 429 with Retry-After, after the configured latency.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, cfg Config) {
	s.tooMany.Add(1)
	if sleepCtx(r.Context(), cfg.delay()) != nil {
		return
	}
	w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(cfg.RetryAfter)))
	http.Error(w, "too many concurrent requests", http.StatusTooManyRequests)
}

// serveFile answers a GET or HEAD for the file named by the request path.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	f, err := s.root.Open(fileName(r.URL.Path))
	if err != nil {
		httpError(w, err)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		httpError(w, err)
		return
	}
	if info.IsDir() {
		http.NotFound(w, r)
		return
	}
	content, err := seeker(f)
	if err != nil {
		httpError(w, err)
		return
	}
	http.ServeContent(w, r, info.Name(), info.ModTime(), content)
}

// fileName maps a URL path to a name in the served fs.FS.
func fileName(urlPath string) string {
	name := strings.TrimPrefix(path.Clean("/"+urlPath), "/")
	if name == "" {
		return "."
	}
	return name
}

// seeker returns f as an io.ReadSeeker, reading it into memory if it cannot seek.
func seeker(f fs.File) (io.ReadSeeker, error) {
	if rs, ok := f.(io.ReadSeeker); ok {
		return rs, nil
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	return bytes.NewReader(b), nil
}

// httpError answers with the status matching an fs error.
func httpError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrInvalid):
		http.Error(w, "404 page not found", http.StatusNotFound)
	case errors.Is(err, fs.ErrPermission):
		http.Error(w, "403 forbidden", http.StatusForbidden)
	default:
		http.Error(w, "500 internal server error", http.StatusInternalServerError)
	}
}

// serveStats answers StatsPath with the counters as JSON.
func (s *Server) serveStats(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(s.Stats())
}
