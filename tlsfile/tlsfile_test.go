package tlsfile

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"pith/internal/testcert"
)

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testcert.NewCA(t, "CA")
	certFile, keyFile := ca.Server(t, "127.0.0.1").Write(t, dir, "a")
	_, otherKey := ca.Server(t, "127.0.0.1").Write(t, dir, "b")
	caFile := ca.Write(t, dir, "ca.pem")
	junk := testcert.WriteFile(t, filepath.Join(dir, "junk.pem"), []byte("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n"))
	big := testcert.WriteFile(t, filepath.Join(dir, "big.pem"), append(append(bytes.Repeat([]byte("#"), MaxSize), '\n'), ca.PEM...))
	atMax := testcert.WriteFile(t, filepath.Join(dir, "max.pem"), append(append(bytes.Repeat([]byte("#"), MaxSize-len(ca.PEM)-1), '\n'), ca.PEM...))
	if _, err := LoadPair(certFile, keyFile); err != nil {
		t.Errorf("a matching pair: %v", err)
	}
	for _, f := range []string{caFile, atMax} {
		if _, err := LoadPool(f); err != nil {
			t.Errorf("bundle %s: %v", f, err)
		}
	}
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"mismatched key", func() error { _, err := LoadPair(certFile, otherKey); return err }, "b.key"},
		{"no certificate", func() error { _, err := LoadPair(junk, keyFile); return err }, "junk.pem"},
		{"missing file", func() error { _, err := LoadPair(filepath.Join(dir, "none.crt"), keyFile); return err }, "none.crt"},
		{"empty bundle", func() error { _, err := LoadPool(junk); return err }, "junk.pem: no PEM certificate"},
		{"bundle too large", func() error { _, err := LoadPool(big); return err }, "big.pem: larger than"},
	} {
		if err := tc.err(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
}
