package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"pith/config"
	"pith/internal/testpg"
	"pith/meta"
	"pith/secret"
)

func TestMain(m *testing.M) { testpg.Main(m) }

func loadConfig(t *testing.T, args ...string) config.Config {
	t.Helper()
	cfg, _, err := config.Load("test", args, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The database (with its -wal and -shm files) and the key file are readable by their
// owner only, whatever the umask; a database file left readable by others is tightened.
func TestDataFilesOwnerOnly(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "data")
	cfg := loadConfig(t, "--data", dir)
	db, err := openDB(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	check := func() {
		t.Helper()
		for _, name := range []string{"pith.db", "pith.db-wal", "pith.db-shm", "encryption.key"} {
			fi, err := os.Stat(filepath.Join(dir, name))
			if err != nil {
				t.Errorf("%s: %v", name, err)
			} else if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, want 0600", name, fi.Mode().Perm())
			}
		}
		if fi, _ := os.Stat(dir); fi.Mode().Perm()&0o007 != 0 {
			t.Errorf("data directory: mode %v, want no access for others", fi.Mode().Perm())
		}
	}
	check()
	db.Close()
	os.Chmod(filepath.Join(dir, "pith.db"), 0o644) // as an older pith made it
	if db, err = openDB(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check()
}

// storeRemote stores a remote with a password in the installation of cfg.
func storeRemote(t *testing.T, cfg config.Config, password string) {
	t.Helper()
	db, err := openDB(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	attrs, _ := json.Marshal(map[string]string{"username": "alice", "password": password})
	if _, err := meta.CreateRemote(t.Context(), db, meta.Remote{Type: "file.file", Name: "r", URL: "http://x/", Policy: "immediate", Attrs: attrs}); err != nil {
		t.Fatal(err)
	}
}

// readPassword opens the installation of cfg and reads the remote's password back.
func readPassword(ctx context.Context, cfg config.Config) (string, error) {
	db, err := openDB(ctx, cfg)
	if err != nil {
		return "", err
	}
	defer db.Close()
	ms, _, err := meta.ListRemotes(ctx, db, meta.List{})
	if err != nil || len(ms) == 0 {
		return "", err
	}
	var a struct{ Password string }
	json.Unmarshal(ms[0].Attrs, &a)
	return a.Password, nil
}

// The embedded installation makes its key on first start; rotate-key adds a key and
// seals everything with it, after which the old key can go; a wrong or missing key file
// is an error naming it.
func TestEncryptionKeyLifecycle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cfg := loadConfig(t, "--data", dir)
	storeRemote(t, cfg, "pw-s3cr3t")
	for _, name := range []string{"pith.db", "pith.db-wal"} {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); bytes.Contains(b, []byte("pw-s3cr3t")) {
			t.Errorf("%s holds the password in plain text", name)
		}
	}
	keyFile := filepath.Join(dir, "encryption.key")
	old, err := secret.Load(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := run(t.Context(), []string{"admin", "rotate-key", "--data", dir}); err != nil {
		t.Fatal(err)
	}
	k, err := secret.Load(keyFile)
	if err != nil || len(k.IDs()) != 2 || k.IDs()[1] != old.IDs()[0] {
		t.Fatalf("after rotate-key: %v %v, want a new key before %s", k.IDs(), err, old.IDs()[0])
	}
	// Drop the old key: its comment and its line are the last two lines of the file.
	b, _ := os.ReadFile(keyFile)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	os.WriteFile(keyFile, []byte(strings.Join(lines[:len(lines)-2], "\n")+"\n"), 0o600)
	if k, err := secret.Load(keyFile); err != nil || len(k.IDs()) != 1 {
		t.Fatalf("key file without the old key: %v %v", k, err)
	}
	if pw, err := readPassword(t.Context(), cfg); err != nil || pw != "pw-s3cr3t" {
		t.Fatalf("password with the new key alone: %q %v", pw, err)
	}
	// Another key in the file: a clear error naming it, not garbage credentials.
	saved, _ := os.ReadFile(keyFile)
	os.Remove(keyFile)
	if _, err := secret.Create(keyFile); err != nil {
		t.Fatal(err)
	}
	if pw, err := readPassword(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), keyFile) || pw != "" {
		t.Errorf("with another key: %q, %v; want an error naming %s", pw, err, keyFile)
	}
	// No key file: not a fresh key, since the database holds sealed secrets.
	os.Remove(keyFile)
	if _, err := readPassword(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), keyFile) || !strings.Contains(err.Error(), "restore") {
		t.Errorf("without the key file: %v", err)
	}
	if _, err := os.Stat(keyFile); !os.IsNotExist(err) {
		t.Errorf("a key file was made over a database sealed with another: %v", err)
	}
	os.WriteFile(keyFile, saved, 0o600)
	if pw, err := readPassword(t.Context(), cfg); err != nil || pw != "pw-s3cr3t" {
		t.Errorf("with the key file restored: %q %v", pw, err)
	}
	// The key lost for good: forget-secrets empties what it sealed, and pith starts.
	os.Remove(keyFile)
	if err := run(t.Context(), []string{"admin", "forget-secrets", "--data", dir}); err != nil {
		t.Fatal(err)
	}
	if pw, err := readPassword(t.Context(), cfg); err != nil || pw != "" {
		t.Errorf("after forget-secrets: %q %v, want no password and no error", pw, err)
	}
}

// Over PostgreSQL every process needs the same key file: a missing one is an error,
// never a key one process makes for itself.
func TestEncryptionKeyRequiredWithPostgres(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "shared.key")
	cfg := loadConfig(t, "--data", dir, "--database", testpg.URL(t), "--db-encryption-key", keyFile)
	if _, err := openDB(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), keyFile) || !strings.Contains(err.Error(), "every pith process") {
		t.Fatalf("without a key file: %v", err)
	}
	if _, err := os.Stat(keyFile); !os.IsNotExist(err) {
		t.Errorf("a process made a key file of its own: %v", err)
	}
	if _, err := secret.Create(keyFile); err != nil {
		t.Fatal(err)
	}
	storeRemote(t, cfg, "pw-s3cr3t")
	if pw, err := readPassword(t.Context(), cfg); err != nil || pw != "pw-s3cr3t" {
		t.Errorf("with the shared key: %q %v", pw, err)
	}
}
