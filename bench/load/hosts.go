package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of HostsConfig, chosen to behave like dnf with its stock configuration.
const (
	// DefaultParallel is dnf's max_parallel_downloads default: each host downloads
	// packages over up to 3 connections.
	DefaultParallel = 3
	// DefaultTimeout is dnf's timeout default. As in librepo it bounds connecting,
	// waiting for the response and any stall while reading the body, not the whole
	// download of a large file.
	DefaultTimeout = 30 * time.Second
	// DefaultRetries is how many times a failed request is retried. dnf's own
	// "retries" (10) is a budget shared by all of a transaction's downloads; 3 per
	// request is a per-request stand-in that still lets a flaky server pass.
	DefaultRetries = 3
)

// HostsConfig describes a crowd of hosts that all update from one repository at once.
type HostsConfig struct {
	// Base is the repository URL; it must end with "/". Metadata and Paths are
	// relative to it.
	Base string
	// Mirrors are more URLs of the same repository (a replica's), of the same form and
	// layout as Base: the hosts are spread over Base and them in turn, host i using the
	// (i mod (1+len(Mirrors)))th of Base, Mirrors[0], ….
	Mirrors []string
	// Hosts is how many hosts run at once; all start together.
	Hosts int
	// Metadata is fetched first, one after the other, by every host (for example
	// "repodata/repomd.xml" then the primary path). A host whose metadata fails stops
	// there, as dnf would, and downloads none of Paths.
	Metadata []string
	// Paths are what each host downloads after the metadata, every host all of them,
	// over Parallel connections.
	Paths []string
	// Parallel is the connections (and concurrent downloads) per host; default
	// DefaultParallel. Each host has its own http.Transport with keep-alive, so a host
	// reuses its connections like librepo does.
	Parallel int
	// Timeout bounds connecting, the wait for response headers and each stall in the
	// body (default DefaultTimeout).
	Timeout time.Duration
	// Retries is how many times a request is retried after a transport error or a 5xx
	// or 429 status; 0 means DefaultRetries and a negative value means no retries.
	// Other 4xx answers are not retried.
	Retries int
	// RetryDelay is the pause before a retry (default none, as librepo).
	RetryDelay time.Duration
	// Limit, when positive, ends the run after that long: hosts start no new download
	// and the ones in flight finish (a server too slow to serve the whole crowd in
	// reasonable time is measured over that window; HostsResult.Stopped says so).
	Limit time.Duration
}

// HostsResult is what a Hosts run measured. Redirects are followed (dnf follows them)
// and a redirected download counts as one request.
type HostsResult struct {
	Hosts       int
	HostsFailed int   // hosts that stopped because their metadata failed
	Requests    int64 // downloads attempted (metadata and paths), retries not counted
	Planned     int64 // downloads the hosts would make: Hosts × (Metadata + Paths)
	Stopped     bool  // Limit ended the run before every host was done
	Retries     int64 // extra attempts made
	Failures    int64 // downloads that failed after their retries
	Bytes       int64 // body bytes read, over all attempts
	Wall        time.Duration
	// Per-package download time (Paths only, successful ones, retries included).
	PerPackageP50, PerPackageP95, PerPackageMax time.Duration
	MBps                                        float64  // Bytes / Wall in 10^6 bytes per second
	RPS                                         float64  // Requests / Wall
	FirstErrors                                 []string // up to 5 distinct error messages
}

// Hosts runs the simulation: cfg.Hosts hosts each fetch Metadata in order and then all
// of Paths, and it returns once every host has finished or ctx is done. It needs about
// Hosts × Parallel open sockets (plus the server's, if it runs in this process) and
// lifts RLIMIT_NOFILE's soft limit to the hard limit to get them.
func Hosts(ctx context.Context, cfg HostsConfig) (HostsResult, error) {
	cfg = cfg.withDefaults()
	for _, b := range append([]string{cfg.Base}, cfg.Mirrors...) {
		u, err := url.Parse(b)
		if err != nil || u.Scheme == "" || u.Host == "" || !strings.HasSuffix(u.Path, "/") {
			return HostsResult{}, fmt.Errorf("hosts: base URL %q must be an absolute URL ending with /", b)
		}
	}
	if cfg.Hosts <= 0 {
		return HostsResult{}, fmt.Errorf("hosts: need at least one host, got %d", cfg.Hosts)
	}
	if err := raiseNoFile(uint64(cfg.Hosts*cfg.Parallel) + 64); err != nil {
		return HostsResult{}, fmt.Errorf("hosts: %d hosts × %d connections: %w", cfg.Hosts, cfg.Parallel, err)
	}
	run := &hostsRun{cfg: cfg, errs: map[string]bool{}}
	start := time.Now()
	if cfg.Limit > 0 {
		t := time.AfterFunc(cfg.Limit, func() { run.stop.Store(true) })
		defer t.Stop()
	}
	var wg sync.WaitGroup
	for i := range cfg.Hosts {
		wg.Go(func() { run.host(ctx, i) })
	}
	wg.Wait()
	return run.result(time.Since(start)), ctx.Err()
}

func (cfg HostsConfig) withDefaults() HostsConfig {
	if cfg.Parallel <= 0 {
		cfg.Parallel = DefaultParallel
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Retries == 0 {
		cfg.Retries = DefaultRetries
	}
	cfg.Retries = max(cfg.Retries, 0)
	return cfg
}

// hostsRun is the state shared by all hosts of one run.
type hostsRun struct {
	cfg                                HostsConfig
	requests, retries, failures, bytes atomic.Int64
	hostsFailed                        atomic.Int64
	stop                               atomic.Bool // Limit passed
	stopped                            atomic.Bool // a host left downloads undone because of it
	perPackage                         histogram
	mu                                 sync.Mutex
	errs                               map[string]bool
	firstErrors                        []string
}

// bufPool holds the 32 KiB buffers bodies are read into and discarded from.
var bufPool = sync.Pool{New: func() any { return new([32 << 10]byte) }}

// host is one simulated host: metadata in order, then Paths over Parallel workers.
func (r *hostsRun) host(ctx context.Context, id int) {
	base := r.cfg.Base
	if k := id % (1 + len(r.cfg.Mirrors)); k > 0 {
		base = r.cfg.Mirrors[k-1]
	}
	c := &hostClient{run: r, base: base, ua: "pith-bench-host/" + strconv.Itoa(id), client: newHostClient(r.cfg)}
	defer c.client.CloseIdleConnections()
	for _, p := range r.cfg.Metadata {
		if r.stop.Load() {
			r.stopped.Store(true)
			return
		}
		if _, err := c.fetch(ctx, p); err != nil {
			r.hostsFailed.Add(1)
			return
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(r.cfg.Parallel, len(r.cfg.Paths)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(r.cfg.Paths) || ctx.Err() != nil {
					return
				}
				if r.stop.Load() {
					r.stopped.Store(true)
					return
				}
				start := time.Now()
				if _, err := c.fetch(ctx, r.cfg.Paths[i]); err == nil {
					r.perPackage.add(time.Since(start))
				}
			}
		})
	}
	wg.Wait()
}

// newHostClient builds one host's client: its own keep-alive connection pool of at most
// Parallel connections, no proxy, no compression negotiation (dnf asks for none).
func newHostClient(cfg HostsConfig) *http.Client {
	dialer := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}
	t := &http.Transport{
		DialContext:           dialer.DialContext,
		MaxConnsPerHost:       cfg.Parallel,
		MaxIdleConns:          cfg.Parallel,
		MaxIdleConnsPerHost:   cfg.Parallel,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   cfg.Timeout,
		ResponseHeaderTimeout: cfg.Timeout,
		DisableCompression:    true,
	}
	return &http.Client{Transport: t}
}

type hostClient struct {
	run    *hostsRun
	base   string // Base or one of Mirrors
	ua     string
	client *http.Client
}

// fetch downloads the host's base+path with retries and records the outcome.
func (c *hostClient) fetch(ctx context.Context, path string) (int64, error) {
	r := c.run
	r.requests.Add(1)
	var total int64
	for attempt := 0; ; attempt++ {
		n, retry, err := c.once(ctx, c.base+path)
		total += n
		if err == nil {
			return total, nil
		}
		if !retry || attempt >= r.cfg.Retries || ctx.Err() != nil {
			r.failures.Add(1)
			r.noteError(err)
			return total, err
		}
		r.retries.Add(1)
		if r.cfg.RetryDelay > 0 {
			select {
			case <-time.After(r.cfg.RetryDelay):
			case <-ctx.Done():
			}
		}
	}
}

// errStalled marks a download that made no progress for the timeout.
var errStalled = errors.New("stalled")

// once makes one attempt. It returns the body bytes read, whether a failure is worth
// retrying, and the failure.
func (c *hostClient) once(ctx context.Context, u string) (n int64, retry bool, err error) {
	timeout := c.run.cfg.Timeout
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stall := time.AfterFunc(timeout, func() { cancel(fmt.Errorf("%w: no progress for %v", errStalled, timeout)) })
	defer stall.Stop()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, false, &fetchError{u, err.Error()}
	}
	req.Header.Set("User-Agent", c.ua)
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, true, &fetchError{u, transportMessage(ctx, err)}
	}
	defer resp.Body.Close()
	n, err = discard(resp.Body, func() { stall.Reset(timeout) })
	c.run.bytes.Add(n)
	if resp.StatusCode >= 400 {
		retry = resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests
		return n, retry, &fetchError{u, "HTTP " + resp.Status}
	}
	if err != nil {
		return n, true, &fetchError{u, "reading body: " + transportMessage(ctx, err)}
	}
	return n, false, nil
}

// discard reads r to the end through a pooled buffer, calling progress after each read
// that returned data, and returns the bytes read.
func discard(r io.Reader, progress func()) (int64, error) {
	buf := bufPool.Get().(*[32 << 10]byte)
	defer bufPool.Put(buf)
	var n int64
	for {
		m, err := r.Read(buf[:])
		if m > 0 {
			n += int64(m)
			progress()
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// transportMessage describes a transport error without the URL (fetchError adds it),
// naming a stall rather than a bare "context canceled".
func transportMessage(ctx context.Context, err error) string {
	if cause := context.Cause(ctx); errors.Is(cause, errStalled) {
		return cause.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// fetchError is a failed download: msg says what went wrong, independent of the URL, so
// that distinct errors can be told apart across thousands of URLs.
type fetchError struct {
	url, msg string
}

func (e *fetchError) Error() string { return "GET " + e.url + ": " + e.msg }

// noteError keeps the first five distinct error messages.
func (r *hostsRun) noteError(err error) {
	key := err.Error()
	var fe *fetchError
	if errors.As(err, &fe) {
		key = fe.msg
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.firstErrors) < 5 && !r.errs[key] {
		r.errs[key] = true
		r.firstErrors = append(r.firstErrors, err.Error())
	}
}

func (r *hostsRun) result(wall time.Duration) HostsResult {
	res := HostsResult{
		Hosts:         r.cfg.Hosts,
		HostsFailed:   int(r.hostsFailed.Load()),
		Requests:      r.requests.Load(),
		Planned:       int64(r.cfg.Hosts * (len(r.cfg.Metadata) + len(r.cfg.Paths))),
		Stopped:       r.stopped.Load(),
		Retries:       r.retries.Load(),
		Failures:      r.failures.Load(),
		Bytes:         r.bytes.Load(),
		Wall:          wall,
		PerPackageP50: r.perPackage.quantile(0.50),
		PerPackageP95: r.perPackage.quantile(0.95),
		PerPackageMax: time.Duration(r.perPackage.max.Load()),
	}
	if s := wall.Seconds(); s > 0 {
		res.MBps = float64(res.Bytes) / 1e6 / s
		res.RPS = float64(res.Requests) / s
	}
	r.mu.Lock()
	res.FirstErrors = append([]string(nil), r.firstErrors...)
	r.mu.Unlock()
	return res
}
