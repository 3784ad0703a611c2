package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"pith/bench/load"
	"pith/secret"
)

// ClusterConfig is a pith installation a scenario starts for itself: one `pith serve`
// (API, content app and task workers) and, with Content > 1, that many `pith content`
// processes sharing one address (SO_REUSEPORT; the kernel spreads connections). More
// than one process needs PostgreSQL.
type ClusterConfig struct {
	Binary string // pith executable (default: this one)
	Dir    string // data directory
	// Fresh empties Dir first, so that a study's kept --dir starts a new installation
	// (an installation's admin password is the one it was first started with).
	Fresh    bool
	Database string // "" = SQLite in Dir; else a postgres:// URL (shared by the processes)
	Storage  string // "" = files in Dir; else as --storage (s3://…)
	Cache    string // "" = memory; "off"; redis://…
	Redirect bool   // --redirect-to-object-storage
	Content  int    // content processes (0 or 1: the serve process answers content too)
	Password string
	Workers  int // task workers of the serve process (0 = pith's default)
	Logs     string
	// Args are more arguments of every process (--tls-cert …, --pprof-listen …).
	Args []string
	// Roots, when set, are the CAs of the certificate the processes serve HTTPS with
	// (Args name it): the origins are then https:// and trusted through Roots.
	Roots *x509.CertPool
}

// Cluster is a started installation.
type Cluster struct {
	API, Content string         // origins
	Password     string         // of admin
	Roots        *x509.CertPool // of the origins' certificate, over HTTPS
	Serve        int            // PID of the serve process
	ContentPIDs  []int          // the processes that answer content requests
	cmds         []*exec.Cmd
	log          *os.File
}

// StartCluster starts the processes and waits until they answer.
func StartCluster(ctx context.Context, cfg ClusterConfig) (*Cluster, error) {
	if cfg.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cfg.Binary = exe
	}
	if cfg.Content > 1 && cfg.Database == "" {
		return nil, fmt.Errorf("%d content processes need PostgreSQL (--pg): an SQLite database belongs to one process", cfg.Content)
	}
	logPath := cfg.Logs
	if logPath == "" {
		logPath = filepath.Join(cfg.Dir, "pith.log")
	}
	if cfg.Fresh {
		if err := os.RemoveAll(cfg.Dir); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	if cfg.Database != "" {
		// Over PostgreSQL pith makes no key file of its own: its processes must share one.
		keyFile := filepath.Join(cfg.Dir, "encryption.key")
		_, err := secret.Load(keyFile)
		if errors.Is(err, secret.ErrNoKeyFile) {
			_, err = secret.Create(keyFile)
		}
		if err != nil {
			return nil, err
		}
	}
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	c := &Cluster{log: lf, Password: cfg.Password, Roots: cfg.Roots}
	scheme := "http://"
	if cfg.Roots != nil {
		scheme = "https://"
	}
	apiAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	c.API, c.Content = scheme+apiAddr, scheme+apiAddr
	contentAddr := apiAddr
	if cfg.Content > 1 {
		if contentAddr, err = freeAddr(); err != nil {
			return nil, err
		}
		c.Content = scheme + contentAddr
	}
	common := append([]string{"--data", cfg.Dir, "--content-origin", c.Content}, cfg.Args...)
	for flag, v := range map[string]string{"--database": cfg.Database, "--storage": cfg.Storage, "--cache": cfg.Cache} {
		if v != "" {
			common = append(common, flag, v)
		}
	}
	if cfg.Redirect {
		common = append(common, "--redirect-to-object-storage", "true")
	}
	serveArgs := append([]string{"serve", "--listen", apiAddr}, common...)
	if cfg.Workers > 0 {
		serveArgs = append(serveArgs, "--workers", fmt.Sprint(cfg.Workers))
	}
	serve, err := c.start(cfg, serveArgs...)
	if err != nil {
		return nil, err
	}
	c.Serve = serve.Process.Pid
	if err := waitHTTP(ctx, c.API+"/pulp/api/v3/status/", logPath, cfg.Roots); err != nil {
		c.Stop()
		return nil, err
	}
	if cfg.Content <= 1 {
		c.ContentPIDs = []int{c.Serve}
		return c, nil
	}
	for i := 0; i < cfg.Content; i++ {
		cmd, err := c.start(cfg, append([]string{"content", "--listen", contentAddr}, common...)...)
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.ContentPIDs = append(c.ContentPIDs, cmd.Process.Pid)
	}
	if err := waitHTTP(ctx, c.Content+"/pulp/content/", logPath, cfg.Roots); err != nil {
		c.Stop()
		return nil, err
	}
	time.Sleep(200 * time.Millisecond) // the last ones to bind the address
	return c, nil
}

func (c *Cluster) start(cfg ClusterConfig, args ...string) (*exec.Cmd, error) {
	cmd := exec.Command(cfg.Binary, args...)
	cmd.Env = append(os.Environ(), "PITH_ADMIN_PASSWORD="+cfg.Password)
	cmd.Stdout, cmd.Stderr = c.log, c.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start pith %s: %w", args[0], err)
	}
	c.cmds = append(c.cmds, cmd)
	return cmd, nil
}

// Target is the cluster as a scenario's target, named "pith".
func (c *Cluster) Target() Target {
	return Target{Name: "pith", URL: c.API, Content: c.Content, User: "admin", Password: c.Password, Procs: c.Procs(), Roots: c.Roots}
}

// Procs selects the cluster's processes.
func (c *Cluster) Procs() load.Selector {
	var pids []int
	for _, cmd := range c.cmds {
		pids = append(pids, cmd.Process.Pid)
	}
	return load.Selector{PIDs: pids}
}

// Stop interrupts every process and waits for them.
func (c *Cluster) Stop() {
	for _, cmd := range c.cmds {
		cmd.Process.Signal(os.Interrupt)
	}
	for _, cmd := range c.cmds {
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	c.cmds = nil
	c.log.Close()
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// waitHTTP waits up to a minute for url to answer 200 (over HTTPS, trusting roots).
func waitHTTP(ctx context.Context, url, logPath string, roots *x509.CertPool) error {
	deadline := time.Now().Add(time.Minute)
	client := httpClient(roots, 10*time.Second)
	defer client.CloseIdleConnections()
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			b, _ := os.ReadFile(logPath)
			return fmt.Errorf("pith did not answer at %s: %v\n%s", url, err, lastLines(string(b), 20))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// httpClient is a client that trusts roots over HTTPS (nil: the system's).
func httpClient(roots *x509.CertPool, timeout time.Duration) *http.Client {
	if roots == nil {
		return &http.Client{Timeout: timeout}
	}
	return &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
}
