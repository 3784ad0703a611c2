package testpg

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// EnvURL names the environment variable holding the URL of a running cluster whose
// superuser may create databases.
const EnvURL = "PITH_TEST_POSTGRES"

var (
	once     sync.Once
	admin    *sql.DB // connected to the cluster's maintenance database
	baseURL  *url.URL
	startErr error
	ownDir   string // the cluster this binary started, if any
)

// Available reports whether URL can work without installing anything: a cluster is named
// by PITH_TEST_POSTGRES or the PostgreSQL server binaries are installed. It starts nothing.
func Available() bool {
	if os.Getenv(EnvURL) != "" {
		return true
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	return len(found) > 0
}

// URL creates a fresh, empty database for the test, dropped when the test ends, and
// returns its connection URL. It fails the test (never skips it) when no cluster can be had.
func URL(t testing.TB) string {
	t.Helper()
	once.Do(connect)
	if startErr != nil {
		t.Fatal(startErr)
	}
	name := "pith_test_" + strings.ToLower(rand.Text()[:16]) // a valid unquoted identifier
	if _, err := admin.ExecContext(t.Context(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("testpg: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		// t.Context is already canceled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("testpg: drop database %s: %v", name, err)
		}
	})
	u := *baseURL
	u.Path = "/" + name
	u.RawPath = ""
	return u.String()
}

// Main runs the tests, stops the cluster this binary started (if it started one) and exits
// with the tests' status. Call it from TestMain: func TestMain(m *testing.M) { testpg.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop closes the admin connection and stops a cluster this binary started; for a
// TestMain that has more to clean up than Main does.
func Stop() {
	if admin != nil {
		admin.Close()
	}
	if ownDir != "" {
		if err := runPG("stop", ownDir); err != nil {
			fmt.Fprintf(os.Stderr, "testpg: stop the cluster in %s: %v\n", ownDir, err)
		}
	}
}

// connect opens the admin connection, starting a cluster first when none is named.
func connect() {
	raw := os.Getenv(EnvURL)
	if raw == "" {
		var err error
		if raw, err = start(); err != nil {
			startErr = fmt.Errorf("testpg: no PostgreSQL for the tests: %w; run scripts/test, which installs PostgreSQL and starts a cluster (or set %s)", err, EnvURL)
			return
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		startErr = fmt.Errorf("testpg: %s: %w", EnvURL, err)
		return
	}
	db, err := sql.Open("pgx", raw)
	if err != nil {
		startErr = fmt.Errorf("testpg: open %s: %w", u.Redacted(), err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		startErr = fmt.Errorf("testpg: connect to %s: %w (is the cluster in %s running? scripts/test starts one)", u.Redacted(), err, EnvURL)
		return
	}
	db.SetMaxOpenConns(4) // creates and drops only; leave the cluster's connections to the tests
	admin, baseURL = db, u
}

// StartTLS starts a cluster of the test's own, stopped when the test ends, that accepts
// connections only over TLS with a client certificate (scripts/pg start --tls). certDir
// holds the PEM files ca.crt, server.crt and server.key (for 127.0.0.1), client.crt and
// client.key (common name pith). It returns the URL of the cluster's postgres database
// with sslmode=verify-full and the CA and client files: a superuser's, so a test may
// create databases. It fails the test when the cluster does not start.
func StartTLS(t testing.TB, certDir string) string {
	t.Helper()
	dir, raw, err := startIn("--tls", certDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := runPG("stop", dir); err != nil {
			t.Logf("testpg: stop the cluster in %s: %v", dir, err)
		}
	})
	return raw
}

// start runs scripts/pg to start the cluster of this binary and returns its URL.
func start() (string, error) {
	dir, raw, err := startIn()
	if err != nil {
		return "", err
	}
	ownDir = dir
	return raw, nil
}

// startIn starts a cluster watched by this process in a new directory, with more
// arguments of scripts/pg start, and returns the directory and the cluster's URL.
func startIn(args ...string) (dir, raw string, err error) {
	dir, err = os.MkdirTemp("/tmp", "pith-testpg-") // under /tmp: scripts/pg may run it as another user
	if err != nil {
		return "", "", err
	}
	out, err := pg(append([]string{"start", dir, "--watch", strconv.Itoa(os.Getpid())}, args...)...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			err = errors.New(strings.TrimSpace(string(ee.Stderr)))
		}
		os.RemoveAll(dir)
		return "", "", fmt.Errorf("scripts/pg start: %w", err)
	}
	return dir, strings.TrimSpace(string(out)), nil
}

func runPG(args ...string) error {
	cmd := pg(args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// pg is a command running scripts/pg of the module that holds the working directory.
func pg(args ...string) *exec.Cmd {
	script := "scripts/pg" // fails with a clear message if the root is not found
	if root, err := moduleRoot(); err == nil {
		script = filepath.Join(root, "scripts", "pg")
	}
	return exec.Command("bash", append([]string{script}, args...)...)
}

// moduleRoot walks up from the working directory to the directory holding go.mod.
func moduleRoot() (string, error) {
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
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}
