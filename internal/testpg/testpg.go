// Package testpg gives each test a fresh, empty PostgreSQL database. It uses the cluster
// named by PITH_TEST_POSTGRES (scripts/test starts one for the whole run); without it, a
// test binary starts its own throwaway cluster with scripts/pg and stops it at exit.
// It never touches a system cluster.
package testpg

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
)

var (
	once     sync.Once
	base     string
	startErr error
	ownDir   string
)

// repoRoot finds the module root by walking up to go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("go.mod not found above the working directory")
		}
		dir = parent
	}
}

func cluster() (string, error) {
	once.Do(func() {
		if u := os.Getenv("PITH_TEST_POSTGRES"); u != "" {
			base = u
			return
		}
		root, err := repoRoot()
		if err != nil {
			startErr = err
			return
		}
		dir, err := os.MkdirTemp("", "pith-testpg-")
		if err != nil {
			startErr = err
			return
		}
		out, err := exec.Command("bash", filepath.Join(root, "scripts", "pg"), "start", dir).Output()
		if err != nil {
			msg := err.Error()
			if ee, ok := err.(*exec.ExitError); ok {
				msg = string(ee.Stderr)
			}
			startErr = fmt.Errorf("start a throwaway PostgreSQL (run scripts/test, which installs it): %s", strings.TrimSpace(msg))
			os.RemoveAll(dir)
			return
		}
		ownDir = dir
		base = strings.TrimSpace(string(out))
	})
	return base, startErr
}

// Main runs the tests and stops a cluster this binary started. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if ownDir != "" {
		if root, err := repoRoot(); err == nil {
			exec.Command("bash", filepath.Join(root, "scripts", "pg"), "stop", ownDir).Run()
		}
	}
	os.Exit(code)
}

// URL creates a fresh empty database for the test, dropped when the test ends, and
// returns its connection URL. A test that needs PostgreSQL fails (never skips) when no
// cluster can be had.
func URL(t testing.TB) string {
	t.Helper()
	b, err := cluster()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("pgx", b)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	buf := make([]byte, 6)
	rand.Read(buf)
	name := "pith_test_" + hex.EncodeToString(buf)
	if _, err := admin.ExecContext(context.Background(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", b)
		if err != nil {
			return
		}
		defer db.Close()
		db.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u, err := url.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
