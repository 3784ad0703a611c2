// Package tests3 gives tests a real S3 server: MinIO, started once per test binary on
// 127.0.0.1 with a temporary data directory, and a fresh bucket per test. The binary is
// found in PITH_MINIO, ~/.cache/pith/bin/minio (where scripts/test builds it) or PATH.
// A test that needs S3 fails (never skips) when MinIO cannot be had.
package tests3

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Credentials of the test server.
const (
	AccessKey = "pithtest"
	SecretKey = "pithtest-secret"
)

var (
	once     sync.Once
	endpoint string
	startErr error
	proc     *exec.Cmd
	dataDir  string
)

// Binary locates the MinIO server binary.
func Binary() (string, error) {
	if p := os.Getenv("PITH_MINIO"); p != "" {
		return p, nil
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "pith", "bin", "minio")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("minio"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("the MinIO server binary was not found (PITH_MINIO, ~/.cache/pith/bin/minio or PATH); scripts/test builds it")
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func start() {
	var err error
	endpoint, proc, dataDir, err = launch()
	startErr = err
}

// launch starts a MinIO server and waits until it is live.
func launch() (string, *exec.Cmd, string, error) {
	bin, err := Binary()
	if err != nil {
		return "", nil, "", err
	}
	dir, err := os.MkdirTemp("", "pith-minio-")
	if err != nil {
		return "", nil, "", err
	}
	addr, _ := freePort()
	console, _ := freePort()
	cmd := exec.Command(bin, "server", dir, "--address", addr, "--console-address", console, "--quiet")
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+AccessKey, "MINIO_ROOT_PASSWORD="+SecretKey, "MINIO_BROWSER=off")
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", nil, "", fmt.Errorf("start MinIO: %w", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/minio/health/live")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return addr, cmd, dir, nil
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			os.RemoveAll(dir)
			return "", nil, "", fmt.Errorf("MinIO did not become ready on %s", addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Private starts a MinIO server of the test's own (so a fault test can stop it) and
// returns a storage URL for a bucket on it, and a function that stops the server.
func Private(t testing.TB) (string, func()) {
	t.Helper()
	addr, cmd, dir, err := launch()
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cmd.Process.Kill()
			cmd.Wait()
			os.RemoveAll(dir)
		})
	}
	t.Cleanup(stop)
	return fmt.Sprintf("s3://%s:%s@%s/%s?region=us-east-1&path_style=true&insecure=true", AccessKey, SecretKey, addr, Bucket()), stop
}

// Endpoint is host:port of the running server, starting it on first use.
func Endpoint(t testing.TB) string {
	t.Helper()
	once.Do(start)
	if startErr != nil {
		t.Fatal(startErr)
	}
	return endpoint
}

// Bucket returns a fresh bucket name (the driver creates buckets it doesn't find).
func Bucket() string {
	b := make([]byte, 6)
	rand.Read(b)
	return "pith-test-" + hex.EncodeToString(b)
}

// URL is a storage setting for a fresh bucket on the test server.
func URL(t testing.TB) string {
	return fmt.Sprintf("s3://%s:%s@%s/%s?region=us-east-1&path_style=true&insecure=true", AccessKey, SecretKey, Endpoint(t), Bucket())
}

// Main runs the tests and stops the server. Call it from TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	Stop()
	return code
}

// Stop stops the server (for fault tests) and removes its data.
func Stop() {
	if proc != nil && proc.Process != nil {
		proc.Process.Kill()
		proc.Wait()
	}
	if dataDir != "" {
		os.RemoveAll(dataDir)
	}
}
