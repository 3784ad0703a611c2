// Package tests3 gives tests real S3 servers: MinIO, and the versitygw gateway as a
// second implementation, each started once per test binary on 127.0.0.1 with a temporary
// data directory, and a fresh bucket per test. Binaries are found in PITH_MINIO /
// PITH_VERSITYGW, ~/.cache/pith/bin (where scripts/test builds them) or PATH. A test that
// needs S3 fails (never skips) when its server cannot be had.
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
func Binary() (string, error) { return binary("minio", "PITH_MINIO") }

func binary(name, env string) (string, error) {
	if p := os.Getenv(env); p != "" {
		return p, nil
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "pith", "bin", name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("the %s binary was not found (%s, ~/.cache/pith/bin/%s or PATH); scripts/test builds it", name, env, name)
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
	return run("minio", "PITH_MINIO", "/minio/health/live", func(bin, dir, addr string) *exec.Cmd {
		console, _ := freePort()
		cmd := exec.Command(bin, "server", dir, "--address", addr, "--console-address", console, "--quiet")
		cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+AccessKey, "MINIO_ROOT_PASSWORD="+SecretKey, "MINIO_BROWSER=off")
		return cmd
	})
}

// run starts an S3 server binary on a free port and a temporary directory and waits
// until health answers (any status for "/").
func run(name, env, health string, command func(bin, dir, addr string) *exec.Cmd) (string, *exec.Cmd, string, error) {
	bin, err := binary(name, env)
	if err != nil {
		return "", nil, "", err
	}
	dir, err := os.MkdirTemp("", "pith-"+name+"-")
	if err != nil {
		return "", nil, "", err
	}
	addr, _ := freePort()
	cmd := command(bin, dir, addr)
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", nil, "", fmt.Errorf("start %s: %w", name, err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + health)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 || health == "/" {
				return addr, cmd, dir, nil
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			os.RemoveAll(dir)
			return "", nil, "", fmt.Errorf("%s did not become ready on %s", name, addr)
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

// Stop stops the servers (MinIO also for fault tests) and removes their data.
func Stop() {
	for _, p := range []struct {
		cmd *exec.Cmd
		dir string
	}{{proc, dataDir}, {vgwProc, vgwDir}} {
		if p.cmd != nil && p.cmd.Process != nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
		if p.dir != "" {
			os.RemoveAll(p.dir)
		}
	}
}

var (
	vgwOnce     sync.Once
	vgwEndpoint string
	vgwErr      error
	vgwProc     *exec.Cmd
	vgwDir      string
)

// VersityURL is a storage setting for a fresh bucket on a versitygw gateway (POSIX
// backend), started on first use and stopped by Main.
func VersityURL(t testing.TB) string {
	t.Helper()
	vgwOnce.Do(func() {
		vgwEndpoint, vgwProc, vgwDir, vgwErr = run("versitygw", "PITH_VERSITYGW", "/", func(bin, dir, addr string) *exec.Cmd {
			return exec.Command(bin, "--access", AccessKey, "--secret", SecretKey, "--port", addr, "posix", dir)
		})
	})
	if vgwErr != nil {
		t.Fatal(vgwErr)
	}
	return fmt.Sprintf("s3://%s:%s@%s/%s?region=us-east-1&path_style=true&insecure=true", AccessKey, SecretKey, vgwEndpoint, Bucket())
}
