package bench

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"pith/bench/load"
)

// InstallConfig is scenario (b) of the Ansible study: `ansible-galaxy collection install`
// of collections (and their dependencies) from a Galaxy distribution, timed whole, with
// every Galaxy API answer timed on the way by a proxy on loopback in front of the server.
type InstallConfig struct {
	Target   Target
	BasePath string   // the distribution ansible-galaxy installs from
	Specs    []string // what it installs: "cisco.iosxr"
	Galaxy   string   // the ansible-galaxy executable
	Rounds   int
}

// InstallRow is a server's line of the install table.
type InstallRow struct {
	Server                      string
	Rounds                      int
	WallMedian, WallMin         time.Duration
	Requests                    int // Galaxy API requests per install
	APIMedian, APIP95, APIMax   time.Duration
	Downloads                   int // artifact downloads per install
	DownloadMedian, DownloadP95 time.Duration
}

// Install runs the scenario on one target.
func Install(ctx context.Context, cfg InstallConfig) (InstallRow, error) {
	row := InstallRow{Server: cfg.Target.Name, Rounds: cfg.Rounds}
	p, err := newTimingProxy(cfg.Target)
	if err != nil {
		return row, err
	}
	defer p.close()
	home, err := os.MkdirTemp("", "pith-bench-install-")
	if err != nil {
		return row, err
	}
	defer os.RemoveAll(home)
	var walls []time.Duration
	var api, downloads []time.Duration
	for i := range cfg.Rounds {
		dir := filepath.Join(home, fmt.Sprint(i))
		env, err := galaxyHome(dir, p.url+"/pulp_ansible/galaxy/"+strings.Trim(cfg.BasePath, "/")+"/api/", cfg.Target)
		if err != nil {
			return row, err
		}
		p.reset()
		cmd := exec.CommandContext(ctx, cfg.Galaxy, append([]string{"collection", "install", "--no-cache", "-p", filepath.Join(dir, "collections")}, cfg.Specs...)...)
		cmd.Env, cmd.Dir = env, dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return row, fmt.Errorf("ansible-galaxy collection install %s: %w\n%s", strings.Join(cfg.Specs, " "), err, out.String())
		}
		walls = append(walls, time.Since(start))
		a, d := p.times()
		api, downloads = append(api, a...), append(downloads, d...)
		row.Requests, row.Downloads = len(a), len(d)
	}
	slices.Sort(walls)
	row.WallMedian, row.WallMin = walls[len(walls)/2], walls[0]
	row.APIMedian, row.APIP95, row.APIMax = quantiles(api)
	row.DownloadMedian, row.DownloadP95, _ = quantiles(downloads)
	return row, nil
}

// quantiles are the median, the 95th percentile and the maximum of ds.
func quantiles(ds []time.Duration) (p50, p95, max time.Duration) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2], s[(len(s)*95+99)/100-1], s[len(s)-1]
}

// galaxyHome writes an ansible.cfg naming one Galaxy server at api under dir and returns
// the environment that makes ansible-galaxy use it and nothing of the caller's.
func galaxyHome(dir, api string, t Target) ([]string, error) {
	for _, d := range []string{"collections", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if strings.ContainsAny(t.User+t.Password, "\r\n;%") {
		return nil, fmt.Errorf("%s: credentials ansible.cfg cannot hold", t.Name)
	}
	cfg := fmt.Sprintf("[defaults]\nhome = %s\nlocal_tmp = %s\n\n[galaxy]\nserver_list = bench\ncache_dir = %s\ndisplay_progress = false\n\n"+
		"[galaxy_server.bench]\nurl = %s\ntimeout = 120\nusername = %s\npassword = %s\n",
		filepath.Join(dir, ".ansible"), filepath.Join(dir, "tmp"), filepath.Join(dir, "cache"), api, t.User, t.Password)
	file := filepath.Join(dir, "ansible.cfg")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANSIBLE_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+dir, "ANSIBLE_CONFIG="+file, "ANSIBLE_NOCOLOR=1"), nil
}

// timingProxy forwards to a target and times each answer from the request sent on to the
// last byte of the answer read back: the server's time plus a loopback hop. Redirects
// are rewritten to come back through it, so the artifact downloads are timed too.
type timingProxy struct {
	url  string
	srv  *http.Server
	mu   sync.Mutex
	api  []time.Duration
	down []time.Duration
}

func newTimingProxy(t Target) (*timingProxy, error) {
	up, err := url.Parse(t.URL)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &timingProxy{url: "http://" + l.Addr().String()}
	rp := httputil.NewSingleHostReverseProxy(up)
	rp.Transport = &timedTransport{p: p, next: http.DefaultTransport, origin: strings.TrimSuffix(t.URL, "/"), content: strings.TrimSuffix(t.ContentOrigin(), "/")}
	rp.ErrorLog = nil
	p.srv = &http.Server{Handler: rp, ReadHeaderTimeout: time.Minute}
	go p.srv.Serve(l)
	return p, nil
}

func (p *timingProxy) close() { p.srv.Close() }

func (p *timingProxy) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.api, p.down = nil, nil
}

func (p *timingProxy) times() (api, downloads []time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.api), slices.Clone(p.down)
}

// timedTransport reads each answer whole before handing it on, so its time is the
// server's, and points redirects to the server's origins back at the proxy.
type timedTransport struct {
	p               *timingProxy
	next            http.RoundTripper
	origin, content string
}

func (t *timedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	d := time.Since(start)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if loc := resp.Header.Get("Location"); loc != "" {
		for _, o := range []string{t.origin, t.content} {
			if strings.HasPrefix(loc, o+"/") {
				resp.Header.Set("Location", t.p.url+strings.TrimPrefix(loc, o))
			}
		}
	}
	t.p.mu.Lock()
	defer t.p.mu.Unlock()
	if strings.HasPrefix(r.URL.Path, "/pulp_ansible/galaxy/") {
		t.p.api = append(t.p.api, d)
	} else {
		t.p.down = append(t.p.down, d)
	}
	return resp, nil
}

// InstallMarkdown renders the rows as a table.
func InstallMarkdown(w io.Writer, title string, rows []InstallRow) {
	fmt.Fprintf(w, "\n%s\n\n| server | rounds | install, median | min | Galaxy requests | their median | p95 | max | downloads | their median | p95 |\n", title)
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %d | %s | %s | %s | %d | %s | %s |\n", r.Server, r.Rounds, ms(r.WallMedian), ms(r.WallMin),
			r.Requests, ms(r.APIMedian), ms(r.APIP95), ms(r.APIMax), r.Downloads, ms(r.DownloadMedian), ms(r.DownloadP95))
	}
}

// GalaxyLoadConfig is scenario (d) of the Ansible study: the Galaxy reads ansible-galaxy
// pages through on every install, under load (wrk), one endpoint at a time.
type GalaxyLoadConfig struct {
	Target      Target
	BasePath    string
	Collection  string // "namespace/name", whose versions are listed
	Connections int
	Duration    time.Duration
}

// GalaxyLoadRow is one endpoint of one server under load.
type GalaxyLoadRow struct {
	Server, Endpoint string
	RPS              float64
	P50, P95, P99    time.Duration
	Errors           int64
	CPU              float64 // the server's processes, cores
	// Failed says why the endpoint was not put under load: it did not answer one request
	// with 200 within a minute.
	Failed string
}

// GalaxyLoad runs the scenario on one target.
func GalaxyLoad(ctx context.Context, cfg GalaxyLoadConfig) ([]GalaxyLoadRow, error) {
	api := strings.TrimSuffix(cfg.Target.URL, "/") + "/pulp_ansible/galaxy/" + strings.Trim(cfg.BasePath, "/") + "/api/v3/"
	index := api + "plugin/ansible/content/" + strings.Trim(cfg.BasePath, "/") + "/collections/index/"
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(cfg.Target.User+":"+cfg.Target.Password))
	var rows []GalaxyLoadRow
	for _, e := range []struct{ name, url string }{
		{"collections index, 100 a page", index + "?limit=100"},
		{"versions of " + cfg.Collection + ", 100 a page", index + cfg.Collection + "/versions/?limit=100"},
	} {
		// wrk counts a redirect as an answer: each endpoint must answer 200 itself.
		if err := answers200(ctx, e.url, auth); err != nil {
			rows = append(rows, GalaxyLoadRow{Server: cfg.Target.Name, Endpoint: e.name, Failed: err.Error()})
			continue
		}
		s := load.StartSampler(200*time.Millisecond, cfg.Target.Procs)
		w, err := load.Wrk(ctx, load.WrkConfig{URLs: []string{e.url}, Connections: cfg.Connections, Duration: cfg.Duration,
			Timeout: 10 * time.Second, Headers: map[string]string{"Authorization": auth}})
		u := s.Stop()
		if err != nil {
			return rows, fmt.Errorf("%s: %w", e.name, err)
		}
		rows = append(rows, GalaxyLoadRow{Server: cfg.Target.Name, Endpoint: e.name, RPS: w.RPS, P50: w.P50, P95: w.P95, P99: w.P99,
			Errors: w.Non2xx3xx + w.SocketErrors, CPU: u.TotalCPU})
	}
	return rows, nil
}

// answers200 checks that u answers 200 itself, not through a redirect, within a minute.
func answers200(ctx context.Context, u, auth string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", auth)
	c := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s, want 200 OK", u, resp.Status)
	}
	return nil
}

// GalaxyLoadMarkdown renders the rows as a table.
func GalaxyLoadMarkdown(w io.Writer, title string, rows []GalaxyLoadRow) {
	fmt.Fprintf(w, "\n%s\n\n| server | endpoint | req/s | p50 | p95 | p99 | errors | server CPU (cores) |\n", title)
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range rows {
		if r.Failed != "" {
			fmt.Fprintf(w, "| %s | %s | not run: %s | | | | | |\n", r.Server, r.Endpoint, r.Failed)
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %.0f | %s | %s | %s | %d | %.2f |\n", r.Server, r.Endpoint, r.RPS, ms(r.P50), ms(r.P95), ms(r.P99), r.Errors, r.CPU)
	}
}
