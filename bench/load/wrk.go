package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// WrkConfig describes one wrk run. Zero fields take wrk's own defaults except Threads.
type WrkConfig struct {
	// URLs are the request targets; each request picks one at random. They must all be on
	// one origin (scheme, host and port), because a wrk run talks to a single server.
	// The paths are embedded in a generated Lua script as a table; 100,000 paths are
	// fine (LuaJIT parses them in well under a second per wrk thread).
	URLs []string
	// Threads is wrk -t (default 2). It is lowered to Connections if larger, as wrk
	// refuses fewer connections than threads.
	Threads int
	// Connections is wrk -c (default 10).
	Connections int
	// Duration is wrk -d (default 10s). wrk only takes whole seconds; it is rounded up.
	Duration time.Duration
	// Timeout is wrk --timeout (default 2s), whole seconds, rounded up. A request slower
	// than this counts as a timeout error and is not in the latency distribution.
	Timeout time.Duration
	// Headers are sent with every request (wrk -H).
	Headers map[string]string
	// CountStatus adds a Lua response() hook that counts responses by status code into
	// WrkResult.Status. It is off by default because it is not free: with the hook wrk
	// buffers every response's headers and body and hands them to Lua, which measured
	// about half the requests per second for 1 MiB bodies and up to a third less for
	// 10 KiB ones. Non2xx3xx is reported either way.
	CountStatus bool
	// Binary is the wrk executable (default: "wrk" looked up on PATH).
	Binary string
}

// WrkResult is what one wrk run measured. Latencies are over completed requests.
type WrkResult struct {
	Requests int64         // completed requests
	Bytes    int64         // response bytes read
	Duration time.Duration // wall time wrk measured
	RPS      float64       // Requests / Duration
	P50      time.Duration
	P90      time.Duration
	P95      time.Duration
	P99      time.Duration
	Mean     time.Duration
	Max      time.Duration
	// Non2xx3xx counts responses whose status was not 2xx or 3xx. wrk does not follow
	// redirects, so a 302 is a (successful) answer.
	Non2xx3xx int64
	// SocketErrors sums wrk's connect, read, write and timeout errors; the parts are in
	// ConnectErrors, ReadErrors, WriteErrors and Timeouts.
	SocketErrors                                     int64
	ConnectErrors, ReadErrors, WriteErrors, Timeouts int64
	// Status counts responses by HTTP status code; nil unless CountStatus was set.
	Status map[int]int64
}

// wrkMarker starts the machine-readable line the generated done() hook prints.
const wrkMarker = "PITHWRK"

// Wrk runs wrk once as cfg describes and returns what it measured. The context bounds
// the run; wrk is killed if it is cancelled.
func Wrk(ctx context.Context, cfg WrkConfig) (WrkResult, error) {
	cfg = cfg.withDefaults()
	target, paths, err := splitOrigin(cfg.URLs)
	if err != nil {
		return WrkResult{}, err
	}
	bin := cfg.Binary
	if bin == "" {
		bin = "wrk"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return WrkResult{}, fmt.Errorf("wrk: load generator %q not found (install the wrk package): %w", bin, err)
	}
	dir, err := os.MkdirTemp("", "pith-wrk-*")
	if err != nil {
		return WrkResult{}, fmt.Errorf("wrk: temp dir for the Lua script: %w", err)
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "random-urls.lua")
	if err := os.WriteFile(script, wrkScript(paths, cfg.CountStatus), 0o644); err != nil {
		return WrkResult{}, fmt.Errorf("wrk: writing Lua script: %w", err)
	}
	cmd := exec.CommandContext(ctx, path, cfg.args(script, target)...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	res, parseErr := parseWrk(stdout.String())
	if parseErr == nil && runErr == nil {
		if !cfg.CountStatus {
			res.Status = nil
		}
		return res, nil
	}
	if ctx.Err() != nil {
		return WrkResult{}, fmt.Errorf("wrk: %w", ctx.Err())
	}
	detail := strings.TrimSpace(stderr.String())
	if detail == "" {
		detail = strings.TrimSpace(lastLines(stdout.String(), 5))
	}
	if detail == "" {
		detail = "(none, and no output)"
	}
	if runErr != nil {
		return WrkResult{}, fmt.Errorf("wrk %s: %w; stderr: %s", target, runErr, detail)
	}
	return WrkResult{}, fmt.Errorf("wrk %s: %w; stderr: %s", target, parseErr, detail)
}

func (cfg WrkConfig) withDefaults() WrkConfig {
	if cfg.Threads <= 0 {
		cfg.Threads = 2
	}
	if cfg.Connections <= 0 {
		cfg.Connections = 10
	}
	if cfg.Threads > cfg.Connections {
		cfg.Threads = cfg.Connections
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 10 * time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Second
	}
	return cfg
}

// args is wrk's command line. Headers are sorted so runs are reproducible.
func (cfg WrkConfig) args(script, target string) []string {
	a := []string{
		"-t", strconv.Itoa(cfg.Threads),
		"-c", strconv.Itoa(cfg.Connections),
		"-d", wholeSeconds(cfg.Duration),
		"--timeout", wholeSeconds(cfg.Timeout),
		"--latency",
		"-s", script,
	}
	keys := make([]string, 0, len(cfg.Headers))
	for k := range cfg.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a = append(a, "-H", k+": "+cfg.Headers[k])
	}
	return append(a, target)
}

// wholeSeconds formats d as wrk's time argument, rounded up to at least one second.
func wholeSeconds(d time.Duration) string {
	s := int64(math.Ceil(d.Seconds()))
	if s < 1 {
		s = 1
	}
	return strconv.FormatInt(s, 10) + "s"
}

// splitOrigin checks that all URLs share one origin and returns that origin (wrk's
// target) and the request paths, query strings included.
func splitOrigin(urls []string) (origin string, paths []string, err error) {
	if len(urls) == 0 {
		return "", nil, errors.New("wrk: no URLs given")
	}
	paths = make([]string, 0, len(urls))
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			return "", nil, fmt.Errorf("wrk: URL %q: %w", raw, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return "", nil, fmt.Errorf("wrk: URL %q is not an absolute http(s) URL", raw)
		}
		o := u.Scheme + "://" + u.Host
		if origin == "" {
			origin = o
		} else if o != origin {
			return "", nil, fmt.Errorf("wrk: URL %q is not on origin %s; one run serves one origin", raw, origin)
		}
		p := u.EscapedPath()
		if p == "" {
			p = "/"
		}
		if u.RawQuery != "" {
			p += "?" + u.RawQuery
		}
		paths = append(paths, p)
	}
	return origin + "/", paths, nil
}

// parseWrk finds the PITHWRK line in wrk's stdout and decodes it.
func parseWrk(out string) (WrkResult, error) {
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, wrkMarker+" ") {
			line = l
		}
	}
	if line == "" {
		return WrkResult{}, errors.New("no " + wrkMarker + " line in wrk's output (did the Lua done() hook run?)")
	}
	f := map[string]string{}
	for _, kv := range strings.Fields(line)[1:] {
		k, v, _ := strings.Cut(kv, "=")
		f[k] = v
	}
	var r WrkResult
	var perr error
	num := func(k string) int64 {
		v, err := strconv.ParseInt(f[k], 10, 64)
		if err != nil && perr == nil {
			perr = fmt.Errorf("wrk output field %s=%q: %w", k, f[k], err)
		}
		return v
	}
	us := func(k string) time.Duration { return time.Duration(num(k)) * time.Microsecond }
	r.Requests, r.Bytes, r.Duration = num("requests"), num("bytes"), us("duration_us")
	r.P50, r.P90, r.P95, r.P99 = us("p50_us"), us("p90_us"), us("p95_us"), us("p99_us")
	r.Mean, r.Max = us("mean_us"), us("max_us")
	r.Non2xx3xx = num("status_errors")
	r.ConnectErrors, r.ReadErrors, r.WriteErrors, r.Timeouts = num("connect"), num("read"), num("write"), num("timeout")
	r.SocketErrors = r.ConnectErrors + r.ReadErrors + r.WriteErrors + r.Timeouts
	if r.Duration > 0 {
		r.RPS = float64(r.Requests) / r.Duration.Seconds()
	}
	status, err := parseStatus(f["status"])
	if perr == nil {
		perr = err
	}
	r.Status = status
	return r, perr
}

// parseStatus decodes "200:123,302:4" (empty is an empty map).
func parseStatus(s string) (map[int]int64, error) {
	m := map[int]int64{}
	if s == "" || s == "-" {
		return m, nil
	}
	for _, part := range strings.Split(s, ",") {
		c, n, ok := strings.Cut(part, ":")
		code, err1 := strconv.Atoi(c)
		count, err2 := strconv.ParseInt(n, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("wrk output status %q: bad entry %q", s, part)
		}
		m[code] += count
	}
	return m, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
