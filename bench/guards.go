package bench

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pith/bench/load"
	"pith/bench/plot"
	"pith/internal/certgen"
)

// GuardsConfig is the content-guard study: one published file repository of many small
// files, distributed once per configuration — no guard; an x509 and an rhsm certificate
// guard, each with the client certificate in the TLS handshake and in a trusted proxy's
// X-Client-Cert header — and the same closed-loop HTTPS load (load.Loop) against each,
// the configurations taking turns.
type GuardsConfig struct {
	Files       int   // files in the repository
	Size        int64 // bytes each
	Connections int
	Duration    time.Duration // per configuration and round
	Rounds      int
	// ContentSets is how many paths the rhsm client's entitlement grants (one of them
	// the distributions'), as a Katello organisation's certificate grants its
	// products' content sets.
	ContentSets int
	Dir         string
	Password    string    // of pith's admin
	Pprof       string    // host:port for pith's --pprof-listen ("" for none)
	Log         io.Writer // progress (nil: none)
}

// GuardsRow is one configuration's measurement.
type GuardsRow struct {
	Slug        string // short name, the distribution's last path segment
	HeaderBytes int    // of the X-Client-Cert header sent with each request (0: none)
	*load.ArmResult
}

// GuardsResult is the study's table; the first row is the unguarded one.
type GuardsResult struct {
	Cfg  GuardsConfig
	Rows []GuardsRow
}

// guardsBase is the distributions' base path: an rhsm guard checks it against the
// entitlement, as Katello lays out its repositories.
const guardsBase = "ACME/Library/content/dist/bench/"

// Guards runs the study on a pith of its own (embedded SQLite and files) serving HTTPS.
func Guards(ctx context.Context, cfg GuardsConfig) (GuardsResult, error) {
	res := GuardsResult{Cfg: cfg}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	pki, err := newGuardsPKI(filepath.Join(cfg.Dir, "certs"), cfg.ContentSets)
	if err != nil {
		return res, err
	}
	args := []string{"--tls-cert", pki.serverCert, "--tls-key", pki.serverKey, "--tls-client-ca", pki.hostCAFile,
		"--auth-trusted-proxies", "127.0.0.1/32"}
	if cfg.Pprof != "" {
		args = append(args, "--pprof-listen", cfg.Pprof)
	}
	cl, err := StartCluster(ctx, ClusterConfig{Dir: filepath.Join(cfg.Dir, "pith"), Fresh: true, Password: cfg.Password,
		Args: args, Roots: pki.serverCA.Pool()})
	if err != nil {
		return res, err
	}
	defer cl.Stop()
	c := NewClient(cl.Target())
	fmt.Fprintf(cfg.Log, "loading %d files of %d bytes\n", cfg.Files, cfg.Size)
	names, err := loadFiles(ctx, c, cfg.Files, cfg.Size)
	if err != nil {
		return res, err
	}
	configs := pki.configs()
	guards := map[string]string{} // type -> href
	for _, typ := range []string{"x509", "rhsm"} {
		var g struct {
			Href string `json:"pulp_href"`
		}
		if err := c.JSON(ctx, "POST", "/pulp/api/v3/contentguards/certguard/"+typ+"/", map[string]any{"name": "bench-" + typ,
			"ca_certificate": string(pki.hostCA.PEM)}, &g); err != nil {
			return res, err
		}
		guards[typ] = g.Href
	}
	var arms []load.Arm
	for _, gc := range configs {
		base := guardsBase + gc.slug
		body := map[string]any{"name": gc.slug, "base_path": base, "repository": names.repo}
		if gc.guard != "" {
			body["content_guard"] = guards[gc.guard]
		}
		if err := c.Call(ctx, "POST", "/pulp/api/v3/distributions/file/file/", body); err != nil {
			return res, fmt.Errorf("distribution %s: %w", base, err)
		}
		arm := load.Arm{Name: gc.name, TLS: gc.tls, Header: gc.header}
		for _, n := range names.files {
			arm.URLs = append(arm.URLs, cl.Content+"/pulp/content/"+base+"/"+n)
		}
		if err := checkGuarded(ctx, pki.serverCA.Pool(), arm, gc.guard != ""); err != nil {
			return res, err
		}
		arms = append(arms, arm)
	}
	fmt.Fprintf(cfg.Log, "%d configurations × %d rounds of %v, %d connections\n", len(arms), cfg.Rounds, cfg.Duration, cfg.Connections)
	got, err := load.Loop(ctx, load.LoopConfig{Arms: arms, Connections: cfg.Connections, Duration: cfg.Duration, Rounds: cfg.Rounds,
		PIDs: cl.ContentPIDs})
	for i, r := range got {
		res.Rows = append(res.Rows, GuardsRow{Slug: configs[i].slug, HeaderBytes: len(configs[i].header.Get("X-Client-Cert")), ArmResult: r})
	}
	return res, err
}

// checkGuarded makes sure an arm's first URL answers 200 to the arm and, if guarded,
// 403 to a client with no certificate: the guard is on and admits the arm.
func checkGuarded(ctx context.Context, roots *x509.CertPool, a load.Arm, guarded bool) error {
	for _, tc := range []struct {
		arm  load.Arm
		want int
	}{{a, http.StatusOK}, {load.Arm{TLS: &tls.Config{RootCAs: roots}}, http.StatusForbidden}} {
		if tc.want == http.StatusForbidden && !guarded {
			continue
		}
		client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: tc.arm.TLS}}
		req, _ := http.NewRequestWithContext(ctx, "GET", a.URLs[0], nil)
		for k, v := range tc.arm.Header {
			req.Header[k] = v
		}
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("%s: %w", a.Name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		client.CloseIdleConnections()
		if resp.StatusCode != tc.want {
			return fmt.Errorf("%s: GET %s: %s (%s), want %d", a.Name, a.URLs[0], resp.Status, strings.TrimSpace(string(b)), tc.want)
		}
	}
	return nil
}

// loaded is a published file repository.
type loaded struct {
	repo  string   // its href
	files []string // the files' relative paths
}

// loadFiles uploads n random files of size bytes into a new file repository and
// publishes it.
func loadFiles(ctx context.Context, c *Client, n int, size int64) (loaded, error) {
	var l loaded
	var repo struct {
		Href string `json:"pulp_href"`
	}
	if err := c.JSON(ctx, "POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": "bench-files"}, &repo); err != nil {
		return l, err
	}
	l.repo = repo.Href
	hrefs := make([]string, n)
	l.files = make([]string, n)
	_, _, err := parallel(n, 4, func(i int) (time.Duration, error) {
		data := make([]byte, size)
		rand.Read(data)
		l.files[i] = fmt.Sprintf("f%05d.bin", i)
		var err error
		hrefs[i], err = c.Upload(ctx, l.files[i], data)
		return 0, err
	})
	if err != nil {
		return l, err
	}
	if err := c.Call(ctx, "POST", repo.Href+"modify/", map[string]any{"add_content_units": hrefs}); err != nil {
		return l, err
	}
	return l, c.Call(ctx, "POST", "/pulp/api/v3/publications/file/file/", map[string]any{"repository": repo.Href})
}

// guardsPKI is the study's certificates: pith's server certificate, and the CA that
// signs the hosts' certificates (Candlepin's, in Katello) with a plain client
// certificate and an entitlement certificate.
type guardsPKI struct {
	serverCA              *certgen.CA
	serverCert, serverKey string
	hostCA                *certgen.CA
	hostCAFile            string
	client, entitlement   certgen.Leaf
	clientTLS, entitlTLS  tls.Certificate
}

func newGuardsPKI(dir string, contentSets int) (*guardsPKI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &guardsPKI{}
	var err error
	if p.serverCA, err = certgen.NewCA("pith bench CA"); err != nil {
		return nil, err
	}
	server, err := p.serverCA.Server("127.0.0.1")
	if err != nil {
		return nil, err
	}
	if p.serverCert, p.serverKey, err = server.Write(dir, "server"); err != nil {
		return nil, err
	}
	if p.hostCA, err = certgen.NewCA("Candlepin bench CA"); err != nil {
		return nil, err
	}
	if p.hostCAFile, err = p.hostCA.Write(dir, "hosts-ca.pem"); err != nil {
		return nil, err
	}
	if p.client, err = p.hostCA.Client("host-1"); err != nil {
		return nil, err
	}
	// A Katello organisation's content sets, one of which covers the distributions.
	paths := []string{"/" + guardsBase + "$releasever"}
	for i := 1; i < contentSets; i++ {
		paths = append(paths, fmt.Sprintf("/ACME/Library/content/dist/rhel/server/%d/$releasever/$basearch/repo%d/os", 7+i%3, i))
	}
	if p.entitlement, err = p.hostCA.Entitlement("host-2", paths...); err != nil {
		return nil, err
	}
	if p.clientTLS, err = p.client.TLS(); err != nil {
		return nil, err
	}
	if p.entitlTLS, err = p.entitlement.TLS(); err != nil {
		return nil, err
	}
	return p, nil
}

// guardsConfig is one row: a distribution (guarded by guard, "" for none) and how the
// client shows its certificate.
type guardsConfig struct {
	name, slug, guard string
	tls               *tls.Config
	header            http.Header
}

// configs are the study's rows, the unguarded first. Every client is the same HTTPS
// client; only its certificate, at the handshake or in the header, differs.
func (p *guardsPKI) configs() []guardsConfig {
	roots := p.serverCA.Pool()
	plain := &tls.Config{RootCAs: roots}
	withCert := func(c tls.Certificate) *tls.Config {
		return &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{c}}
	}
	hdr := func(l certgen.Leaf) http.Header { return http.Header{"X-Client-Cert": {escapeCert(l.CertPEM)}} }
	return []guardsConfig{
		{name: "no guard", slug: "none", tls: plain},
		// The cost of carrying the header, apart from checking it.
		{name: "no guard, X-Client-Cert sent all the same", slug: "none-header", tls: plain, header: hdr(p.entitlement)},
		{name: "x509, certificate in the TLS handshake", slug: "x509-tls", guard: "x509", tls: withCert(p.clientTLS)},
		{name: "x509, certificate in X-Client-Cert", slug: "x509-header", guard: "x509", tls: plain, header: hdr(p.client)},
		{name: "rhsm, certificate in the TLS handshake", slug: "rhsm-tls", guard: "rhsm", tls: withCert(p.entitlTLS)},
		{name: "rhsm, certificate in X-Client-Cert", slug: "rhsm-header", guard: "rhsm", tls: plain, header: hdr(p.entitlement)},
	}
}

// escapeCert URL-encodes PEM as nginx's $ssl_client_escaped_cert does: every byte but
// letters, digits and -._~ as %XX.
func escapeCert(pem []byte) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for _, c := range pem {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// GuardsMarkdown renders the table: each configuration's rate next to the unguarded one.
func GuardsMarkdown(w io.Writer, r GuardsResult) {
	c := r.Cfg
	fmt.Fprintf(w, "\n%d files of %d bytes; %d keep-alive HTTPS/1.1 connections (Go client, closed loop, random files); "+
		"%d rounds of %v per configuration, taking turns; rhsm entitlement of %d content sets.\n",
		c.Files, c.Size, c.Connections, c.Rounds, c.Duration, c.ContentSets)
	fmt.Fprintf(w, "\n| configuration | req/s | of unguarded | of unguarded, median of rounds | p50 | p90 | p99 | pith CPU per request | load generator CPU per request | machine busy cores | req/s by round | header bytes |\n")
	fmt.Fprintf(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	base := r.Rows[0]
	for i, row := range r.Rows {
		of, ofRounds := "—", "—"
		if i > 0 && base.RPS > 0 {
			of = fmt.Sprintf("%.0f%%", 100*row.RPS/base.RPS)
			var ratios []float64
			for k, v := range row.RoundRPS {
				if k < len(base.RoundRPS) && base.RoundRPS[k] > 0 {
					ratios = append(ratios, v/base.RoundRPS[k])
				}
			}
			if n := len(ratios); n > 0 {
				slices.Sort(ratios)
				ofRounds = fmt.Sprintf("%.0f%%", 100*(ratios[(n-1)/2]+ratios[n/2])/2)
			}
		}
		var rounds []string
		for _, v := range row.RoundRPS {
			rounds = append(rounds, fmt.Sprintf("%.0f", v))
		}
		hdr := "—"
		if row.HeaderBytes > 0 {
			hdr = fmt.Sprint(row.HeaderBytes)
		}
		fmt.Fprintf(w, "| %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %.2f | %s | %s |\n", row.Name, row.RPS, of, ofRounds, msFine(row.P50), msFine(row.P90),
			msFine(row.P99), us(row.PerRequest(row.ServerCPU)), us(row.PerRequest(row.ClientCPU)), row.MachineCores, strings.Join(rounds, " / "), hdr)
	}
}

// GuardsPlot draws each configuration's req/s.
func GuardsPlot(path string, r GuardsResult) error {
	b := plot.Bars{Title: "Content guards: req/s per configuration", YLabel: "req/s"}
	s := plot.BarSeries{Name: "pith"}
	for _, row := range r.Rows {
		b.Groups = append(b.Groups, row.Slug)
		s.Values = append(s.Values, row.RPS)
	}
	b.Series = []plot.BarSeries{s}
	return b.WriteFile(path)
}

func us(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d.Nanoseconds())/1000) }

func msFine(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
