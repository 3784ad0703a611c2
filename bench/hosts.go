package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"pith/bench/load"
	"pith/bench/plot"
)

// HostsConfig is the orcharhino study: a repository of Packages downloaded at once by N
// hosts, each fetching repomd.xml, primary, then every package (as dnf does after a
// cache clean), through pith, nginx serving the same files (the ceiling), and peers.
// With Replica, the hosts are also split between pith and a second pith on the same
// machine that replicated it on_demand (upstream-pulp and replicate), so the replica
// fetches each package from pith when its first host asks.
type HostsConfig struct {
	Packages int
	Payload  int64
	Hosts    []int
	Dir      string
	Password string
	Peers    []Target
	Nginx    bool
	PlotPath string
	Limit    time.Duration // per server and host count; see load.HostsConfig.Limit
	Replica  bool
}

// HostsRow is one server at one host count.
type HostsRow struct {
	Server string
	load.HostsResult
	RSS []ProcsRSS // peak RSS of the server's processes during the run
}

// ProcsRSS is the peak RSS of a named set of processes (all of them together).
type ProcsRSS struct {
	Name string
	MiB  float64
}

// hostsServer is one server of the study: where its hosts download from (Base, and
// the Mirrors the hosts are spread over with it) and its processes, by name.
type hostsServer struct {
	name    string
	base    string
	mirrors []string
	procs   []namedProcs
}

type namedProcs struct {
	name string
	sel  load.Selector
}

// HostsResult is the study's table.
type HostsResult struct {
	Packages int
	Bytes    int64 // of one host's download
	Rows     []HostsRow
}

// Hosts runs the study.
func Hosts(ctx context.Context, cfg HostsConfig) (HostsResult, error) {
	res := HostsResult{Packages: cfg.Packages}
	repoDir := filepath.Join(cfg.Dir, "upstream")
	written, err := WriteYumRepo(repoDir, cfg.Packages, cfg.Payload)
	if err != nil {
		return res, err
	}
	var paths []string
	for _, w := range written {
		res.Bytes += w.Size
		rel, _ := filepath.Rel(repoDir, w.Path)
		paths = append(paths, filepath.ToSlash(rel))
	}
	up, err := ServeDir(repoDir)
	if err != nil {
		return res, err
	}
	defer up.Close()
	var servers []hostsServer
	cl, err := StartCluster(ctx, ClusterConfig{Dir: filepath.Join(cfg.Dir, "pith"), Fresh: true, Password: cfg.Password})
	if err != nil {
		return res, err
	}
	defer cl.Stop()
	d, err := SyncPublishDistribute(ctx, cl.Target(), up.URL, "immediate")
	if err != nil {
		return res, fmt.Errorf("pith: load the repository: %w", err)
	}
	servers = append(servers, hostsServer{name: "pith", base: d.BaseURL, procs: []namedProcs{{"pith", cl.Procs()}}})
	if cfg.Replica {
		rc, err := StartCluster(ctx, ClusterConfig{Dir: filepath.Join(cfg.Dir, "replica"), Fresh: true, Password: cfg.Password})
		if err != nil {
			return res, err
		}
		defer rc.Stop()
		if _, err := ReplicateFrom(ctx, rc.Target(), cl.Target(), "main", ""); err != nil {
			return res, fmt.Errorf("replica: replicate pith: %w", err)
		}
		servers = append(servers, hostsServer{name: "pith + replica", base: d.BaseURL, mirrors: []string{rc.Content + "/pulp/content/" + d.BasePath + "/"},
			procs: []namedProcs{{"pith", cl.Procs()}, {"replica", rc.Procs()}}})
	}
	if cfg.Nginx {
		ng, err := startNginx(filepath.Join(cfg.Dir, "nginx"), repoDir)
		if err != nil {
			return res, err
		}
		defer ng.stop()
		servers = append(servers, hostsServer{name: "nginx", base: ng.url, procs: []namedProcs{{"nginx", load.Selector{PIDs: []int{ng.cmd.Process.Pid}, Children: true}}}})
	}
	for _, p := range cfg.Peers {
		d, err := SyncPublishDistribute(ctx, p, up.URL, "immediate")
		if err != nil {
			return res, fmt.Errorf("%s: load the repository: %w", p.Name, err)
		}
		servers = append(servers, hostsServer{name: p.Name, base: d.BaseURL, procs: []namedProcs{{p.Name, p.Procs}}})
	}
	for _, n := range cfg.Hosts {
		for _, s := range servers {
			primary, err := primaryHref(ctx, s.base)
			if err != nil {
				return res, fmt.Errorf("%s: %w", s.name, err)
			}
			for _, m := range s.mirrors {
				// One list of paths serves every origin of the row.
				if p, err := primaryHref(ctx, m); err != nil || p != primary {
					return res, fmt.Errorf("%s: %s does not have primary at %s as %s has: %q, %v", s.name, m, primary, s.base, p, err)
				}
			}
			var samplers []*load.Sampler
			for _, p := range s.procs {
				samplers = append(samplers, load.StartSampler(250*time.Millisecond, p.sel))
			}
			r, err := load.Hosts(ctx, load.HostsConfig{Base: s.base, Mirrors: s.mirrors, Hosts: n, Metadata: []string{"repodata/repomd.xml", primary},
				Paths: publishedPaths(s.name, paths), Limit: cfg.Limit})
			row := HostsRow{Server: s.name, HostsResult: r}
			for i, sm := range samplers {
				row.RSS = append(row.RSS, ProcsRSS{Name: s.procs[i].name, MiB: sm.Stop().PeakRSSMiB})
			}
			res.Rows = append(res.Rows, row)
			if err != nil {
				return res, fmt.Errorf("%s, %d hosts: %w", s.name, n, err)
			}
		}
	}
	return res, nil
}

// publishedPaths are where a server has the packages: the upstream's own layout for
// nginx, the nested_alphabetically layout of a publication otherwise.
func publishedPaths(server string, paths []string) []string {
	if server == "nginx" {
		return paths
	}
	urls := PackageURLs("", paths)
	return urls
}

var primaryLocation = regexp.MustCompile(`<location href="([^"]*primary[^"]*)"`)

// primaryHref reads where repomd.xml says primary is.
func primaryHref(ctx context.Context, base string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"repodata/repomd.xml", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := primaryLocation.FindSubmatch(b)
	if resp.StatusCode != 200 || m == nil {
		return "", fmt.Errorf("GET %srepodata/repomd.xml: %s, no primary in it", base, resp.Status)
	}
	return string(m[1]), nil
}

type nginx struct {
	url string
	cmd *exec.Cmd
}

// startNginx serves root with nginx tuned as a static file server (2 workers,
// sendfile, long keep-alive), on a free loopback port.
func startNginx(dir, root string) (*nginx, error) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		return nil, fmt.Errorf("nginx is not installed: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	user := "" // as root, nginx's workers would run as nobody and not read a private work directory
	if os.Geteuid() == 0 {
		user = "user root;"
	}
	conf := fmt.Sprintf(`%[4]s
worker_processes 2;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 8192; }
worker_rlimit_nofile 65536;
http {
  access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000; keepalive_timeout 65;
  client_body_temp_path %[1]s/tmp; proxy_temp_path %[1]s/tmp; fastcgi_temp_path %[1]s/tmp;
  uwsgi_temp_path %[1]s/tmp; scgi_temp_path %[1]s/tmp;
  types { application/x-rpm rpm; text/xml xml; }
  server { listen %[2]s; root %[3]s; }
}
`, dir, addr, root, user)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-c", confPath, "-p", dir, "-g", "daemon off;")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	n := &nginx{url: "http://" + addr + "/", cmd: cmd}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if resp, err := http.Get(n.url + "repodata/repomd.xml"); err == nil {
			resp.Body.Close()
			return n, nil
		}
		if time.Now().After(deadline) {
			n.stop()
			return nil, fmt.Errorf("nginx did not start: %s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (n *nginx) stop() {
	n.cmd.Process.Signal(syscall.SIGQUIT)
	done := make(chan struct{})
	go func() { n.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		n.cmd.Process.Kill()
		<-done
	}
}

// HostsMarkdown renders the table.
func HostsMarkdown(w io.Writer, r HostsResult) {
	fmt.Fprintf(w, "\n%d packages, %s per host; each host fetches repomd.xml, primary, then every package over 3 connections (dnf's max_parallel_downloads).\n",
		r.Packages, human(r.Bytes))
	fmt.Fprintf(w, "\n| server | hosts | wall | downloads done | per-package p50 | p95 | max | failed requests | failed hosts | MB/s | req/s | ÷ nginx | peak RSS |\n")
	fmt.Fprintf(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	ceiling := map[int]float64{}
	for _, row := range r.Rows {
		if row.Server == "nginx" {
			ceiling[row.Hosts] = row.MBps
		}
	}
	for _, row := range r.Rows {
		vs := ""
		if c := ceiling[row.Hosts]; c > 0 && row.Server != "nginx" {
			vs = fmt.Sprintf("%.2f", row.MBps/c)
		}
		done := "all"
		if row.Requests < row.Planned {
			done = fmt.Sprintf("%.1f%%", 100*float64(row.Requests)/float64(max(row.Planned, 1)))
		}
		if row.Stopped {
			done += " (stopped)"
		}
		var rss []string
		for _, p := range row.RSS {
			rss = append(rss, fmt.Sprintf("%s %.0f MiB", p.Name, p.MiB))
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %d | %d | %.1f | %.0f | %s | %s |\n", row.Server, row.Hosts, secs(row.Wall), done,
			ms(row.PerPackageP50), ms(row.PerPackageP95), ms(row.PerPackageMax), row.Failures, row.HostsFailed, row.MBps, row.RPS, vs, strings.Join(rss, ", "))
	}
	for _, row := range r.Rows {
		if len(row.FirstErrors) > 0 {
			fmt.Fprintf(w, "\n%s, %d hosts, first errors:\n", row.Server, row.Hosts)
			for _, e := range row.FirstErrors {
				fmt.Fprintf(w, "- %s\n", e)
			}
		}
	}
}

// HostsPlot draws throughput against the number of hosts for each server.
func HostsPlot(path string, r HostsResult) error {
	l := plot.Line{Title: fmt.Sprintf("Up to %d hosts at once, %d packages each", maxHosts(r), r.Packages), XLabel: "hosts downloading at once",
		YLabel: "MB/s served", YFromZero: true}
	idx := map[string]int{}
	for _, row := range r.Rows {
		i, ok := idx[row.Server]
		if !ok {
			i = len(l.Series)
			idx[row.Server] = i
			l.Series = append(l.Series, plot.Series{Name: row.Server, Dashed: row.Server == "nginx"})
		}
		l.Series[i].X = append(l.Series[i].X, float64(row.Hosts))
		l.Series[i].Y = append(l.Series[i].Y, row.MBps)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return l.WriteFile(path)
}

func maxHosts(r HostsResult) int {
	m := 0
	for _, row := range r.Rows {
		m = max(m, row.Hosts)
	}
	return m
}
