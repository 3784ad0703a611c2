package serve

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"

	"pith/tlsfile"
)

// redisTLS are the files of a rediss:// URL's TLS, named by parameters of pith's own,
// after redis-server's settings (go-redis takes only skip_verify=true, to verify
// nothing, which it reads itself):
//
//	tls_ca_cert_file   PEM bundle of the CAs that sign Redis's certificate (default: the
//	                   system's)
//	tls_cert_file      PEM client certificate, for a Redis that asks for one
//	tls_key_file       its private key
//
// They are read once, at start.
type redisTLS struct{ ca, cert, key string }

// redisTLSFiles takes pith's TLS parameters out of a Redis URL, for go-redis refuses
// parameters it does not know.
func redisTLSFiles(rawURL string) (string, redisTLS, error) {
	var f redisTLS
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", f, fmt.Errorf("cache: %w", err)
	}
	q := u.Query()
	f = redisTLS{ca: q.Get("tls_ca_cert_file"), cert: q.Get("tls_cert_file"), key: q.Get("tls_key_file")}
	if f == (redisTLS{}) {
		return rawURL, f, nil
	}
	switch {
	case u.Scheme != "rediss":
		return "", f, errors.New("cache: tls_ca_cert_file, tls_cert_file and tls_key_file need a rediss:// URL")
	case (f.cert == "") != (f.key == ""):
		return "", f, errors.New("cache: tls_cert_file and tls_key_file go together")
	}
	q.Del("tls_ca_cert_file")
	q.Del("tls_cert_file")
	q.Del("tls_key_file")
	u.RawQuery = q.Encode()
	return u.String(), f, nil
}

// apply loads the files into the TLS configuration go-redis made of a rediss:// URL.
func (f redisTLS) apply(c *tls.Config) error {
	if f.ca != "" {
		pool, err := tlsfile.LoadPool(f.ca)
		if err != nil {
			return fmt.Errorf("cache: tls_ca_cert_file: %w", err)
		}
		c.RootCAs = pool
	}
	if f.cert != "" {
		pair, err := tlsfile.LoadPair(f.cert, f.key)
		if err != nil {
			return fmt.Errorf("cache: tls_cert_file: %w", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return nil
}
