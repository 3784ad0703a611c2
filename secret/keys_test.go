package secret

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestSealOpen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "encryption.key")
	k, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, plain := range []string{"", "hunter2", "-----BEGIN PRIVATE KEY-----\nMII…\n-----END PRIVATE KEY-----\n"} {
		s := k.Seal(plain)
		if !IsSealed(s) || strings.Contains(s, "hunter2") || !k.Current(s) {
			t.Errorf("sealed %q as %q", plain, s)
		}
		if s == k.Seal(plain) {
			t.Errorf("%q sealed twice the same: the nonce is not random", plain)
		}
		got, err := k.Open(s)
		if err != nil || got != plain {
			t.Errorf("open %q: %q, %v", s, got, err)
		}
	}
	if _, err := Create(path); err == nil {
		t.Error("Create overwrote an existing key file")
	}
}

func TestWrongKeyNamesTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, _ := Create(filepath.Join(dir, "a.key"))
	b, _ := Create(filepath.Join(dir, "b.key"))
	s := a.Seal("hunter2")
	if got, err := b.Open(s); err == nil || !strings.Contains(err.Error(), b.Path()) || got != "" {
		t.Errorf("opened with another file's key: %q, %v", got, err)
	}
	// A value whose bytes were changed does not open, even with its own key.
	damaged := s[:len(s)-2] + "AA"
	if s[len(s)-2:] == "AA" {
		damaged = s[:len(s)-2] + "BB"
	}
	if got, err := a.Open(damaged); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("opened a damaged value: %q, %v", got, err)
	}
	if _, err := a.Open("hunter2"); err == nil {
		t.Error("opened a plaintext value")
	}
}

func TestRotation(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "encryption.key")
	old, _ := Create(path)
	s := old.Seal("hunter2")
	k, err := AddKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if ids := k.IDs(); len(ids) != 2 || ids[1] != old.IDs()[0] {
		t.Fatalf("after AddKey: keys %v, want a new one before %v", ids, old.IDs())
	}
	if k.Current(s) {
		t.Error("a value sealed with the old key counts as current")
	}
	if got, err := k.Open(s); err != nil || got != "hunter2" {
		t.Errorf("the old key no longer opens: %q, %v", got, err)
	}
	if s2 := k.Seal("hunter2"); SealedWith(s2) != k.IDs()[0] {
		t.Errorf("sealed with %s, want the new first key %s", SealedWith(s2), k.IDs()[0])
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("rewritten key file: %v, %v", fi.Mode(), err)
	}
}

func TestKeyFileCreatedOwnerOnly(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "encryption.key")
	if _, err := Create(path); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	raw := make([]byte, 32)
	rand.Read(raw)
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		return p
	}
	// A Pulp (Fernet) key file: URL-safe base64, with a comment and a blank line.
	if k, err := Load(write("pulp.key", "# pulp\n\n"+base64.URLEncoding.EncodeToString(raw)+"\n")); err != nil || len(k.IDs()) != 1 {
		t.Errorf("Pulp key file: %v", err)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"empty.key", "# nothing\n", "holds no key"},
		{"short.key", base64.StdEncoding.EncodeToString(raw[:16]) + "\n", "line 1: a key of 16 bytes"},
		{"junk.key", "# c\nnot base64!\n", "line 2: not a base64"},
	} {
		_, err := Load(write(tc.name, tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%s: %v, want an error naming the file and %q", tc.name, err, tc.want)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing.key")); !errors.Is(err, ErrNoKeyFile) {
		t.Errorf("missing file: %v", err)
	}
}
