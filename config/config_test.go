package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestPrecedence(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "pith.json")
	os.WriteFile(file, []byte(`{"listen": "127.0.0.1:1111", "data": "/from/file", "workers": 3}`), 0o644)
	c, rest, err := Load("serve", []string{"--config", file, "--listen", "127.0.0.1:3333", "extra"},
		env(map[string]string{"PITH_LISTEN": "127.0.0.1:2222", "PITH_DATA": "/from/env"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:3333" || c.Data != "/from/env" || c.Workers != 3 {
		t.Errorf("flag > env > file: %+v", c)
	}
	if c.Database != "/from/env/pith.db" || c.ContentOrigin != "http://127.0.0.1:3333" {
		t.Errorf("derived defaults: %q %q", c.Database, c.ContentOrigin)
	}
	if len(rest) != 1 || rest[0] != "extra" {
		t.Errorf("positional args: %v", rest)
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	c, _, err := Load("serve", nil, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:24817" || c.Data != "./pith-data" || c.Database != "pith-data/pith.db" || c.Workers < 1 ||
		c.DBEncryptionKey != "pith-data/encryption.key" || c.MaxMetadataMiB != 1024 {
		t.Errorf("defaults: %+v", c)
	}
}

func TestBadSettingsAreNamed(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"listen": "127.0.0.1:1", "colour": "red"}`), 0o644)
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--listen", "nowhere"}, nil, "listen"},
		{nil, map[string]string{"PITH_WORKERS": "many"}, "PITH_WORKERS"},
		{[]string{"--database", "mysql://x"}, nil, "database"},
		{[]string{"--content-origin", "ftp://x"}, nil, "content-origin"},
		{[]string{"--tuning", "huge"}, nil, "tuning"},
		{[]string{"--log-level", "loud"}, nil, "log-level"},
		{[]string{"--max-metadata-mib", "0"}, nil, "max-metadata-mib"},
		{[]string{"--config", bad}, nil, "colour"},
		{[]string{"--content-listen", "nowhere"}, nil, "content-listen"},
		{[]string{"--content-listen", "127.0.0.1:24817"}, nil, "content-listen"},
		{[]string{"--body-timeout-seconds", "0"}, nil, "body-timeout-seconds"},
		{[]string{"--upload-timeout-seconds", "0"}, nil, "upload-timeout-seconds"},
		{[]string{"--max-connections-per-client", "-1"}, nil, "max-connections-per-client"},
		{[]string{"--cache", "rediss:/x"}, nil, "cache"},
		{[]string{"--tls-cert", "c.pem"}, nil, "tls-cert: needs tls-key"},
		{nil, map[string]string{"PITH_TLS_KEY": "k.pem"}, "tls-key: needs tls-cert"},
		{[]string{"--tls-client-ca", "ca.pem"}, nil, "tls-client-ca"},
		{[]string{"--task-diagnostics", "memory,memray"}, nil, `task-diagnostics: "memray" is not a profiler`},
		{nil, map[string]string{"PITH_TASK_DIAGNOSTICS": "pyinstrument"}, "task-diagnostics"},
		{[]string{"--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-client-cert-user", "uid"}, nil, "tls-client-cert-user"},
	} {
		_, _, err := Load("serve", tc.args, env(tc.env))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: error %v, want one naming %q", tc.args, tc.env, err, tc.want)
		}
	}
}

// task-diagnostics names profilers from a flag, the environment or the file; spaces and
// repeats are dropped, and the default is none.
func TestTaskDiagnostics(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "pith.json")
	os.WriteFile(file, []byte(`{"task_diagnostics": ["heap"]}`), 0o644)
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want []string
	}{
		{nil, nil, nil},
		{[]string{"--task-diagnostics", "memory, pprof,memory,"}, nil, []string{"memory", "pprof"}},
		{nil, map[string]string{"PITH_TASK_DIAGNOSTICS": "heap,memory"}, []string{"heap", "memory"}},
		{[]string{"--config", file}, nil, []string{"heap"}},
	} {
		c, _, err := Load("serve", tc.args, env(tc.env))
		if err != nil {
			t.Fatalf("%v %v: %v", tc.args, tc.env, err)
		}
		got, err := c.Diagnostics()
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%v %v: %q, %v; want %q", tc.args, tc.env, got, err, tc.want)
		}
	}
}

// Content served on its own address is what distributions' base_url names, unless
// content-origin says otherwise (a proxy in front).
func TestContentListenOrigin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--content-listen", "127.0.0.1:24816"}, "http://127.0.0.1:24816"},
		{[]string{"--content-listen", "127.0.0.1:24816", "--content-origin", "https://content.example/"}, "https://content.example"},
		{nil, "http://127.0.0.1:24817"},
		{[]string{"--tls-cert", "c.pem", "--tls-key", "k.pem"}, "https://127.0.0.1:24817"},
		{[]string{"--tls-cert", "c.pem", "--tls-key", "k.pem", "--content-listen", "127.0.0.1:24816"}, "https://127.0.0.1:24816"},
	} {
		c, _, err := Load("serve", tc.args, env(nil))
		if err != nil || c.ContentOrigin != tc.want {
			t.Errorf("%v: content origin %q, %v; want %q", tc.args, c.ContentOrigin, err, tc.want)
		}
	}
}

func TestFlagsAfterArguments(t *testing.T) {
	t.Parallel()
	c, pos, err := Load("admin password", []string{"pw", "--data", "/d", "more", "--", "--listen", "x"}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Data != "/d" || c.Listen != "127.0.0.1:24817" {
		t.Errorf("flags between arguments: data %q listen %q", c.Data, c.Listen)
	}
	if strings.Join(pos, " ") != "pw more --listen x" {
		t.Errorf("positional arguments: %q", pos)
	}
}

// A PostgreSQL URL reaches the database driver as it was given: its TLS parameters
// (pgx reads sslmode, sslrootcert, sslcert, sslkey) are neither dropped nor rewritten.
func TestDatabaseURLUntouched(t *testing.T) {
	t.Parallel()
	const u = "postgres://pith:s%40cret@db.example:5432/pith?sslmode=verify-full&sslrootcert=/etc/pith/ca.pem&sslcert=/etc/pith/client.crt&sslkey=/etc/pith/client.key"
	file := filepath.Join(t.TempDir(), "pith.json")
	os.WriteFile(file, []byte(`{"database": "`+u+`"}`), 0o644)
	for _, tc := range []struct {
		args []string
		env  map[string]string
	}{
		{[]string{"--database", u}, nil},
		{nil, map[string]string{"PITH_DATABASE": u}},
		{[]string{"--config", file}, nil},
	} {
		c, _, err := Load("serve", tc.args, env(tc.env))
		if err != nil || c.Database != u {
			t.Errorf("%v %v: database %q, %v", tc.args, tc.env, c.Database, err)
		}
	}
}

func TestExportVersions(t *testing.T) {
	good := Config{ExportVersions: []string{"core=3.123.1", "rpm=3.39"}}
	if m, err := good.ExportVersionMap(); err != nil || m["core"] != "3.123.1" || m["rpm"] != "3.39" {
		t.Errorf("%v %v", m, err)
	}
	for _, bad := range []string{"core", "core=", "=3.1.1", "core=3", "core=3.x.1", "core=3.1.1;rm"} {
		if _, err := (Config{ExportVersions: []string{bad}}).ExportVersionMap(); err == nil || !strings.Contains(err.Error(), "export-versions") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
