package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pith/meta"
)

// Flags after a positional argument are settings like any other: `pith admin password
// NEW --data DIR` resets the password in DIR's database, not in ./pith-data.
func TestAdminPasswordFlagAfterArgument(t *testing.T) {
	t.Chdir(t.TempDir())
	dir := filepath.Join(t.TempDir(), "data")
	if err := run(t.Context(), []string{"admin", "password", "n3w-pass", "--data", dir}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("pith-data"); !os.IsNotExist(err) {
		t.Errorf("./pith-data was created (stat: %v): --data after the password was ignored", err)
	}
	db, err := meta.Open(t.Context(), filepath.Join(dir, "pith.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hash, err := meta.PasswordHash(t.Context(), db, "admin")
	if err != nil {
		t.Fatalf("admin in %s: %v", dir, err)
	}
	if !meta.CheckPassword(hash, "n3w-pass") {
		t.Error("the password in --data's database is not the new one")
	}
}

func TestStrayArgumentsRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	// Cancelled: a command that ignored its stray argument would start and stop at once.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, args := range [][]string{
		{"admin", "password", "one", "two"},
		{"migrate", "now", "--data", "d"},
		{"serve", "extra"},
		{"bench", "rpm", "extra", "--full"},
	} {
		err := run(ctx, args)
		if err == nil || !strings.Contains(err.Error(), "unexpected argument") {
			t.Errorf("%v: error %v, want one about the unexpected argument", args, err)
		}
	}
	if _, err := os.Stat("d"); !os.IsNotExist(err) {
		t.Errorf("a refused command created its data directory (stat: %v)", err)
	}
}

// An unknown `pith admin user` command is refused before the store is opened: nothing is
// made where the data directory would be.
func TestUnknownAdminUserCommand(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, args := range [][]string{
		{"admin", "user", "--help"},
		{"admin", "user", "lst", "--data", "d"},
	} {
		err := run(t.Context(), args)
		if err == nil || !strings.Contains(err.Error(), "unknown command") {
			t.Errorf("%v: error %v, want one naming the unknown command", args, err)
		}
	}
	if entries, _ := os.ReadDir("."); len(entries) > 0 {
		t.Errorf("a refused command made %s", entries[0].Name())
	}
}
