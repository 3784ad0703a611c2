package meta_test

import (
	"context"
	"log/slog"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"pith/internal/testcert"
	"pith/internal/testpg"
	"pith/meta"
)

// A postgres:// URL's TLS parameters reach pgx as they are, for the pool and for the
// connection that listens for notifications: against a cluster that takes only TLS
// with a client certificate, the URL with sslmode=verify-full, sslrootcert, sslcert and
// sslkey migrates, queries over TLS and hears notifications; without the client
// certificate, without TLS or trusting another CA it does not connect.
func TestPostgresTLS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	ca, other := testcert.NewCA(t, "PostgreSQL CA"), testcert.NewCA(t, "other CA")
	ca.Write(t, dir, "ca.crt")
	ca.Server(t, "127.0.0.1").Write(t, dir, "server")
	ca.Client(t, "pith").Write(t, dir, "client")
	raw := testpg.StartTLS(t, dir)

	db := Open(t, raw)
	var ssl bool
	if err := db.QueryRow(ctx, `SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()`).Scan(&ssl); err != nil || !ssl {
		t.Fatalf("the pool's connection: ssl %v, %v", ssl, err)
	}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	heard := make(chan string, 8)
	go db.Listen(lctx, slog.New(slog.DiscardHandler), func(_, payload string) { heard <- payload }, "pith_tls_test")
	for _, want := range []string{"", "over tls"} { // "" once listening
		select {
		case got := <-heard:
			if got != want {
				t.Fatalf("heard %q, want %q", got, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("no notification %q", want)
		}
		if want == "" {
			if err := db.Notify(ctx, "pith_tls_test", "over tls"); err != nil {
				t.Fatal(err)
			}
		}
	}

	otherCA := other.Write(t, dir, "other.crt")
	for _, tc := range []struct {
		name string
		set  map[string]string // "" deletes
	}{
		{"no client certificate", map[string]string{"sslcert": "", "sslkey": ""}},
		{"no TLS", map[string]string{"sslmode": "disable"}},
		{"another CA trusted", map[string]string{"sslrootcert": otherCA}},
		{"missing CA file", map[string]string{"sslrootcert": filepath.Join(dir, "missing.crt")}},
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		for k, v := range tc.set {
			if q.Del(k); v != "" {
				q.Set(k, v)
			}
		}
		u.RawQuery = q.Encode()
		if db, err := meta.Open(ctx, u.String()); err == nil {
			db.Close()
			t.Errorf("%s: connected", tc.name)
		}
	}
}
