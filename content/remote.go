package content

import (
	"encoding/json"
	"fmt"
	"strings"

	"pith/content/download"
	"pith/meta"
)

// remoteAttrs are the download settings of a remote's attrs (Pulp's field names).
type remoteAttrs struct {
	CACert              *string             `json:"ca_cert"`
	ClientCert          *string             `json:"client_cert"`
	ClientKey           *string             `json:"client_key"`
	TLSValidation       *bool               `json:"tls_validation"`
	ProxyURL            *string             `json:"proxy_url"`
	ProxyUsername       *string             `json:"proxy_username"`
	ProxyPassword       *string             `json:"proxy_password"`
	Username            *string             `json:"username"`
	Password            *string             `json:"password"`
	MaxRetries          *int64              `json:"max_retries"`
	TotalTimeout        *float64            `json:"total_timeout"`
	ConnectTimeout      *float64            `json:"connect_timeout"`
	SockConnectTimeout  *float64            `json:"sock_connect_timeout"`
	SockReadTimeout     *float64            `json:"sock_read_timeout"`
	Headers             []map[string]string `json:"headers"`
	DownloadConcurrency *int64              `json:"download_concurrency"`
	RateLimit           *int64              `json:"rate_limit"`
	// Token and AuthURL are pulp_ansible's collection remote's Galaxy token and SSO
	// server.
	Token   *string `json:"token"`
	AuthURL *string `json:"auth_url"`
	// ULNServerBaseURL is pulp_rpm's ULN remote's server.
	ULNServerBaseURL *string `json:"uln_server_base_url"`
}

// DefaultULNServer is the ULN server of a ULN remote without uln_server_base_url
// (pulp_rpm's DEFAULT_ULN_SERVER_BASE_URL).
const DefaultULNServer = "https://linux-update.oracle.com/"

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func num[T int64 | float64](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}

// DownloadConfig turns a stored remote into downloader settings.
func DownloadConfig(r meta.Remote) (download.Config, error) {
	var a remoteAttrs
	if len(r.Attrs) > 0 {
		if err := json.Unmarshal(r.Attrs, &a); err != nil {
			return download.Config{}, fmt.Errorf("remote %q: settings: %w", r.Name, err)
		}
	}
	c := download.Config{
		URL: r.URL, CACert: str(a.CACert), ClientCert: str(a.ClientCert), ClientKey: str(a.ClientKey), TLSValidation: true,
		ProxyURL: str(a.ProxyURL), ProxyUsername: str(a.ProxyUsername), ProxyPassword: str(a.ProxyPassword),
		Username: str(a.Username), Password: str(a.Password), MaxRetries: int(num(a.MaxRetries)),
		TotalTimeout: num(a.TotalTimeout), ConnectTimeout: num(a.ConnectTimeout), SockConnectTimeout: num(a.SockConnectTimeout),
		SockReadTimeout: num(a.SockReadTimeout), DownloadConcurrency: int(num(a.DownloadConcurrency)), RateLimit: int(num(a.RateLimit)),
		Headers: map[string]string{}, Token: str(a.Token),
	}
	if c.Token != "" {
		c.AuthURL = str(a.AuthURL) // pulp_ansible asks the SSO server only with a token
	}
	if strings.HasPrefix(strings.ToLower(r.URL), "uln://") {
		// A ULN remote's credentials log in to its server; its url names a channel there.
		c.ULNServer = DefaultULNServer
		if str(a.ULNServerBaseURL) != "" {
			c.ULNServer = *a.ULNServerBaseURL
		}
	}
	if a.TLSValidation != nil {
		c.TLSValidation = *a.TLSValidation
	}
	// Without a download_concurrency, pith finds the upstream's knee by itself (up to 32
	// requests at once) and backs off when it answers 429; a set value is kept as it is.
	c.Adaptive = a.DownloadConcurrency == nil
	if a.MaxRetries != nil && *a.MaxRetries == 0 {
		c.MaxRetries = -1 // explicitly no retries
	}
	for _, h := range a.Headers {
		for k, v := range h {
			c.Headers[k] = v
		}
	}
	return c, nil
}
