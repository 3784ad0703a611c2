package download

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"pith/secret"
)

// Config are a remote's download settings (Pulp's remote fields).
type Config struct {
	URL                 string // the remote's URL; checked when set, not used to fetch
	CACert              string // PEM
	ClientCert          string // PEM
	ClientKey           string // PEM
	TLSValidation       bool   // false skips certificate verification (Pulp's default is true)
	ProxyURL            string // http, https or socks5; empty uses the environment
	ProxyUsername       string
	ProxyPassword       string
	Username            string // basic auth, sent only to the remote's own host
	Password            string
	Headers             map[string]string // sent with every request to the remote's own host; "Host" sets the host
	DownloadConcurrency int               // requests in flight at once; default 10 (the bound when Adaptive; default 32)
	MaxRetries          int               // retries after the first attempt; 0 = 3, negative = none
	TotalTimeout        float64           // seconds per attempt; 0 = no limit, so big files can finish
	ConnectTimeout      float64           // seconds to connect including TLS; 0 = 30
	SockConnectTimeout  float64           // seconds for the TCP connect alone; 0 = ConnectTimeout
	SockReadTimeout     float64           // seconds without a byte before an attempt fails; 0 = 60
	RateLimit           int               // requests per second; 0 = unlimited
	// Token is a Galaxy API token (pulp_ansible's collection remotes): requests to the
	// remote's own host carry "Authorization: Token <Token>", or, with AuthURL,
	// "Authorization: Bearer <access token>", the access token obtained from AuthURL (an
	// SSO server: Keycloak's refresh-token grant, as Automation Hub wants) with Token as
	// the refresh token, and obtained again when a request is answered 401. Basic auth
	// is not sent when a token is set.
	Token   string
	AuthURL string
	// ULNServer is the base URL of a ULN server (pulp_rpm's ULN remotes): URL is then
	// uln://<channel label>, the downloader logs in to the server's XML-RPC API with
	// Username and Password, fetches uln://<channel>/<path> from
	// <ULNServer>/XMLRPC/GET-REQ/<channel>/<path> with the session key in ULNKeyHeader,
	// and logs in again once when a request with the key is answered 401 or 403.
	// Username and Password are not sent as basic auth then.
	ULNServer string
	// Adaptive makes DownloadConcurrency an upper bound: the number of requests in
	// flight starts at 2 and follows throughput and 429/503 answers (see the package
	// documentation).
	Adaptive bool
}

// Expect is what a download must be. Size -1 is unknown; an empty SHA256 is unchecked.
type Expect struct {
	Size   int64
	SHA256 string // hex, either case
}

// Sink receives one attempt's bytes. A failed attempt's sink is aborted; the caller
// commits the last sink after Fetch succeeds.
type Sink interface {
	io.Writer
	Abort()
}

// Result describes a finished download.
type Result struct {
	Size     int64
	SHA256   string // lower-case hex of the bytes received
	Attempts int
}

// Sentinels for what was wrong with a body, found with errors.Is on an *Error.
var (
	ErrSizeMismatch   = errors.New("size mismatch")
	ErrDigestMismatch = errors.New("sha256 mismatch")
)

// Error is a failed download.
type Error struct {
	URL      string
	Status   int // HTTP status of the last attempt when it got a response other than 200, else 0
	Attempts int
	Err      error
}

// Error says what failed without the credentials a URL may carry.
func (e *Error) Error() string {
	s := "GET " + e.URL + ": " + e.Err.Error()
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return secret.Redact(s)
}

func (e *Error) Unwrap() error { return e.Err }

// Downloader downloads for one remote. It is safe for concurrent use.
type Downloader struct {
	cfg     Config
	host    string // the remote's host, where its headers and credentials go; "" without a URL
	client  *http.Client
	gate    *gate
	limiter *limiter   // nil when unlimited
	cred    credential // the access token obtained from AuthURL, or the ULN session key

	// Knobs for tests.
	backoff       time.Duration // base backoff before the first retry
	maxBackoff    time.Duration
	maxRetryAfter time.Duration
	sleep         func(ctx context.Context, d time.Duration) error
}

// New builds a downloader; a bad certificate, key or URL is an error naming the field.
func New(cfg Config) (*Downloader, error) {
	if cfg.DownloadConcurrency <= 0 {
		cfg.DownloadConcurrency = 10
		if cfg.Adaptive {
			cfg.DownloadConcurrency = adaptiveBound
		}
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 3
	}
	if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	for name, v := range map[string]float64{"total_timeout": cfg.TotalTimeout, "connect_timeout": cfg.ConnectTimeout,
		"sock_connect_timeout": cfg.SockConnectTimeout, "sock_read_timeout": cfg.SockReadTimeout} {
		if v < 0 {
			return nil, fmt.Errorf("%s: %v is negative", name, v)
		}
	}
	if cfg.RateLimit < 0 {
		return nil, fmt.Errorf("rate_limit: %d is negative", cfg.RateLimit)
	}
	switch {
	case cfg.ULNServer != "":
		if err := checkURL(cfg.ULNServer); err != nil {
			return nil, fmt.Errorf("uln_server_base_url: %w", err)
		}
		if cfg.URL != "" && !isULN(cfg.URL) {
			return nil, fmt.Errorf("url: %q is not a ULN URL (uln://<channel label>)", secret.Redact(cfg.URL))
		}
	case cfg.URL != "":
		if err := checkURL(cfg.URL); err != nil {
			return nil, fmt.Errorf("url: %w", err)
		}
	}
	if cfg.AuthURL != "" {
		if cfg.Token == "" {
			return nil, errors.New("auth_url: set without a token")
		}
		if err := checkURL(cfg.AuthURL); err != nil {
			return nil, fmt.Errorf("auth_url: %w", err)
		}
	}
	tlsCfg, err := tlsConfig(cfg)
	if err != nil {
		return nil, err
	}
	connect := orDefault(cfg.ConnectTimeout, 30*time.Second)
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: orDefault(cfg.SockConnectTimeout, connect), KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsCfg,
		TLSHandshakeTimeout:   connect,
		ResponseHeaderTimeout: readTimeout(cfg),
		MaxIdleConns:          cfg.DownloadConcurrency,
		MaxIdleConnsPerHost:   cfg.DownloadConcurrency,
		MaxConnsPerHost:       cfg.DownloadConcurrency,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
		// Digests are of the stored bytes: a .tar.gz served with Content-Encoding: gzip
		// must not be unpacked on the way (Pulp turns aiohttp's auto_decompress off too).
		DisableCompression: true,
	}
	if cfg.ProxyURL != "" {
		pu, err := url.Parse(cfg.ProxyURL)
		if err != nil || pu.Host == "" {
			return nil, fmt.Errorf("proxy_url: %q is not a URL", cfg.ProxyURL)
		}
		switch pu.Scheme {
		case "http", "https", "socks5", "socks5h":
		default:
			return nil, fmt.Errorf("proxy_url: %q: scheme %q is not http, https or socks5", cfg.ProxyURL, pu.Scheme)
		}
		if cfg.ProxyUsername != "" || cfg.ProxyPassword != "" {
			pu.User = url.UserPassword(cfg.ProxyUsername, cfg.ProxyPassword)
		}
		tr.Proxy = http.ProxyURL(pu)
	} else if cfg.ProxyUsername != "" || cfg.ProxyPassword != "" {
		return nil, errors.New("proxy_username: set without a proxy_url")
	}
	d := &Downloader{
		cfg:           cfg,
		client:        &http.Client{Transport: tr},
		gate:          newGate(cfg.DownloadConcurrency, cfg.Adaptive),
		backoff:       200 * time.Millisecond,
		maxBackoff:    30 * time.Second,
		maxRetryAfter: time.Minute,
		sleep:         sleep,
	}
	if cfg.RateLimit > 0 {
		d.limiter = newLimiter(cfg.RateLimit)
	}
	own := cfg.URL
	if cfg.ULNServer != "" {
		own = cfg.ULNServer // where uln:// URLs are fetched from
	}
	if u, err := url.Parse(own); err == nil {
		d.host = u.Hostname()
	}
	d.client.CheckRedirect = d.checkRedirect
	return d, nil
}

// ownHost reports whether u is on the remote's own host, the only one its custom
// headers (often an API key) and credentials go to; first is the URL a request was
// made for, which stands in for the remote's when the downloader has no URL. Ports and
// schemes are not compared (an http to https redirect keeps them), as for cookies.
func (d *Downloader) ownHost(u, first *url.URL) bool {
	host := d.host
	if host == "" {
		host = first.Hostname()
	}
	return strings.EqualFold(u.Hostname(), host)
}

// checkRedirect follows up to 10 redirects, as Go's client does, but takes the
// remote's headers and credentials off a redirect to another host (Go keeps custom
// headers always, and Authorization on a subdomain).
func (d *Downloader) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if !d.ownHost(req.URL, via[0].URL) {
		for k := range d.cfg.Headers {
			req.Header.Del(k)
		}
		req.Header.Del("Authorization")
		req.Header.Del(ULNKeyHeader)
	}
	return nil
}

// Concurrency is the remote's download_concurrency: the most requests ever in flight at
// once (the bound when adaptive).
func (d *Downloader) Concurrency() int { return d.cfg.DownloadConcurrency }

// Limit is the number of requests allowed in flight now: Concurrency when fixed, the
// controller's current limit when adaptive.
func (d *Downloader) Limit() int { return d.gate.current() }

// CloseIdleConnections closes the kept-alive connections of a downloader no longer used.
func (d *Downloader) CloseIdleConnections() { d.client.CloseIdleConnections() }

func tlsConfig(cfg Config) (*tls.Config, error) {
	c := &tls.Config{InsecureSkipVerify: !cfg.TLSValidation, MinVersion: tls.VersionTLS12}
	if cfg.CACert != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(cfg.CACert)) {
			return nil, errors.New("ca_cert: no PEM certificate found")
		}
		c.RootCAs = pool
	}
	switch {
	case cfg.ClientCert == "" && cfg.ClientKey == "":
		return c, nil
	case cfg.ClientCert == "":
		return nil, errors.New("client_cert: missing, client_key is set")
	case cfg.ClientKey == "":
		return nil, errors.New("client_key: missing, client_cert is set")
	}
	if !hasPEM(cfg.ClientCert, "CERTIFICATE") {
		return nil, errors.New("client_cert: no PEM certificate found")
	}
	if !hasPEM(cfg.ClientKey, "PRIVATE KEY") {
		return nil, errors.New("client_key: no PEM private key found")
	}
	pair, err := tls.X509KeyPair([]byte(cfg.ClientCert), []byte(cfg.ClientKey))
	if err != nil {
		return nil, fmt.Errorf("client_cert/client_key: %w", err)
	}
	c.Certificates = []tls.Certificate{pair}
	return c, nil
}

// hasPEM reports whether s holds a PEM block whose type ends with suffix
// ("PRIVATE KEY" matches RSA, EC and PKCS#8 keys).
func hasPEM(s, suffix string) bool {
	rest := []byte(s)
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return false
		}
		if len(b.Type) >= len(suffix) && b.Type[len(b.Type)-len(suffix):] == suffix {
			return true
		}
	}
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL", s)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: scheme %q is not http or https", s, u.Scheme)
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", s)
	}
	return nil
}

func orDefault(seconds float64, def time.Duration) time.Duration {
	if seconds > 0 {
		return time.Duration(seconds * float64(time.Second))
	}
	return def
}

func readTimeout(cfg Config) time.Duration { return orDefault(cfg.SockReadTimeout, 60*time.Second) }
