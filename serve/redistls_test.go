package serve

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"pith/internal/testcert"
	"pith/internal/testredis"
)

// The shared cache reaches a redis-server that speaks only TLS and asks for client
// certificates, with the CA and client certificate named in the rediss:// URL; without
// either, or over plain redis://, it is not connected.
func TestSharedRedisTLS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	serverCA, clientCA, otherCA := testcert.NewCA(t, "redis CA"), testcert.NewCA(t, "client CA"), testcert.NewCA(t, "other CA")
	certFile, keyFile := serverCA.Server(t, "127.0.0.1").Write(t, dir, "redis")
	rs := testredis.StartTLS(t, testredis.TLS{Cert: certFile, Key: keyFile, CA: clientCA.Write(t, dir, "clients.pem"), ClientCerts: true})
	caFile := serverCA.Write(t, dir, "ca.pem")
	otherCAFile := otherCA.Write(t, dir, "other.pem")
	clientCert, clientKey := clientCA.Client(t, "pith").Write(t, dir, "client")
	port := strings.TrimPrefix(strings.TrimSuffix(rs.URL, "/0"), "rediss://127.0.0.1:")
	with := func(scheme string, params ...string) string {
		q := url.Values{}
		for i := 0; i+1 < len(params); i += 2 {
			q.Set(params[i], params[i+1])
		}
		return scheme + "://127.0.0.1:" + port + "/0?" + q.Encode()
	}
	for _, tc := range []struct {
		name string
		url  string
		want bool
	}{
		{"CA and client certificate", with("rediss", "tls_ca_cert_file", caFile, "tls_cert_file", clientCert, "tls_key_file", clientKey), true},
		{"client certificate, verification skipped", with("rediss", "skip_verify", "true", "tls_cert_file", clientCert, "tls_key_file", clientKey), true},
		{"the system's CAs", with("rediss", "tls_cert_file", clientCert, "tls_key_file", clientKey), false},
		{"another CA", with("rediss", "tls_ca_cert_file", otherCAFile, "tls_cert_file", clientCert, "tls_key_file", clientKey), false},
		{"no client certificate", with("rediss", "tls_ca_cert_file", caFile), false},
		{"plain redis://", with("redis"), false},
	} {
		sh, err := NewShared(ctx, tc.url, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := sh.Connected(ctx); got != tc.want {
			t.Errorf("%s: connected %v, want %v", tc.name, got, tc.want)
		}
		if tc.want {
			k := resolutionKey{dist: "d", path: "a.txt"}
			sh.put(ctx, k, resolution{kind: kindFile, prefix: "p"})
			if r, ok := sh.get(ctx, k); !ok || r.prefix != "p" {
				t.Errorf("%s: a resolution put is not got back: %+v %v", tc.name, r, ok)
			}
		}
		sh.Close()
	}
}

// The TLS parameters are checked before anything connects, each error naming its parameter.
func TestSharedRedisTLSParameters(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testcert.NewCA(t, "CA")
	caFile := ca.Write(t, dir, "ca.pem")
	certFile, keyFile := ca.Client(t, "pith").Write(t, dir, "client")
	missing := filepath.Join(dir, "missing.pem")
	for _, tc := range []struct {
		url, want string
	}{
		{"redis://127.0.0.1:1/0?tls_ca_cert_file=" + caFile, "need a rediss:// URL"},
		{"rediss://127.0.0.1:1/0?tls_cert_file=" + certFile, "go together"},
		{"rediss://127.0.0.1:1/0?tls_key_file=" + keyFile, "go together"},
		{"rediss://127.0.0.1:1/0?tls_ca_cert_file=" + missing, "tls_ca_cert_file: open " + missing},
		{"rediss://127.0.0.1:1/0?tls_ca_cert_file=" + keyFile, "tls_ca_cert_file: CA bundle"},
		{"rediss://127.0.0.1:1/0?tls_cert_file=" + certFile + "&tls_key_file=" + caFile, "tls_cert_file: certificate"},
		{"rediss://127.0.0.1:1/0?tls_colour=red", "unexpected option: tls_colour"},
	} {
		if _, err := NewShared(context.Background(), tc.url, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.url, err, tc.want)
		}
	}
	sh, err := NewShared(context.Background(), "rediss://127.0.0.1:1/0?tls_ca_cert_file="+caFile+"&tls_cert_file="+certFile+"&tls_key_file="+keyFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	sh.Close()
}
