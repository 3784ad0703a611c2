package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"pith/internal/testfiles"
	"pith/internal/testpg"
	"pith/internal/testredis"
	"pith/internal/tests3"
	"pith/internal/testtree"
	"pith/secret"
)

const adminPassword = "e2e-secret"

var pithBin string

func TestMain(m *testing.M) {
	pithBin = os.Getenv("PITH_BIN")
	if pithBin == "" {
		dir, err := os.MkdirTemp("", "pith-e2e-bin")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		pithBin = filepath.Join(dir, "pith")
		cmd := exec.Command("go", "build", "-o", pithBin, "pith/cmd/pith")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build pith:", err)
			os.Exit(1)
		}
		defer os.RemoveAll(dir)
	}
	code := m.Run()
	tests3.Stop()
	testpg.Stop()
	os.Exit(code)
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// server is a running pith installation: one `pith serve`, or separate api, content and
// worker processes over PostgreSQL.
type server struct {
	addr    string
	url     string // the API
	api2    string // a second API process of a split installation, with its own data directory
	content string // the content app's origin
	data    string
	caFile  string // with HTTPS: the PEM file of the CA of pith's certificate
	log     *logBuffer
	proc    *exec.Cmd   // the `pith serve` process
	workers []*exec.Cmd // worker processes of a split installation
	// database and storage are the installation's settings ("" for the defaults).
	database, storage string
}

// storageOf is the value of --storage among flags ("" for none).
func storageOf(flags []string) string {
	for i, f := range flags {
		if f == "--storage" && i+1 < len(flags) {
			return flags[i+1]
		}
	}
	return ""
}

// client is an HTTP client that trusts the server's certificate.
func (s *server) client() *http.Client {
	if s.caFile == "" {
		return http.DefaultClient
	}
	pem, _ := os.ReadFile(s.caFile)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// logBuffer gathers the output of pith processes; tests read it while they write.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startPith runs `pith serve` on a fresh data directory and database until the test ends.
func startPith(t *testing.T, database string, extra ...string) *server {
	t.Helper()
	return startPithOn(t, t.TempDir(), database, extra...)
}

// startPithOn runs `pith serve` on a data directory until the test ends; database ""
// is the data directory's own SQLite file.
func startPithOn(t *testing.T, data, database string, extra ...string) *server {
	t.Helper()
	s := &server{addr: freePort(t), data: data, log: &logBuffer{}, database: database, storage: storageOf(extra)}
	s.url = "http://" + s.addr
	s.content = s.url
	args := append([]string{"--data", s.data, "--workers", "2"}, extra...)
	if database != "" {
		// Over PostgreSQL the key file is the administrator's to make (at the default path).
		newKeyFile(t, s.data)
		args = append(args, "--database", database)
	}
	s.proc = s.start(t, append([]string{"serve", "--listen", s.addr}, args...)...)
	waitReady(t, s, s.url+"/pulp/api/v3/status/")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("pith log:\n%s", s.log.String())
		}
	})
	return s
}

// startSplit runs pith as separate processes over PostgreSQL, the way a scaled-out
// installation does: two APIs (the second on a data directory of its own, as on another
// host), one content app and two workers.
func startSplit(t *testing.T, database string, extra ...string) *server {
	t.Helper()
	s := &server{addr: freePort(t), data: t.TempDir(), log: &logBuffer{}, database: database, storage: storageOf(extra)}
	s.url = "http://" + s.addr
	contentAddr := freePort(t)
	s.content = "http://" + contentAddr
	// One key file for every process, the second API's included.
	common := append([]string{"--data", s.data, "--database", database, "--content-origin", s.content,
		"--db-encryption-key", newKeyFile(t, s.data)}, extra...)
	if out, err := exec.Command(pithBin, append([]string{"migrate"}, common...)...).CombinedOutput(); err != nil {
		t.Fatalf("pith migrate: %v\n%s", err, out)
	}
	s.start(t, append([]string{"api", "--listen", s.addr}, common...)...)
	s.start(t, append([]string{"content", "--listen", contentAddr}, common...)...)
	api2 := freePort(t)
	s.api2 = "http://" + api2
	s.start(t, append(append([]string{"api", "--listen", api2}, common...), "--data", t.TempDir())...)
	for i := 0; i < 2; i++ {
		s.workers = append(s.workers, s.start(t, append([]string{"worker", "--workers", "2"}, common...)...))
	}
	waitReady(t, s, s.url+"/pulp/api/v3/status/")
	waitReady(t, s, s.content+"/pulp/content/")
	waitReady(t, s, s.api2+"/pulp/api/v3/status/")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("pith logs:\n%s", s.log.String())
		}
	})
	return s
}

// newKeyFile makes the database encryption key file of an installation over PostgreSQL
// in dir, as its administrator would, and returns its path.
func newKeyFile(t *testing.T, dir string) string {
	t.Helper()
	// The data directory may not exist yet (pith makes it at start).
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	k, err := secret.Create(filepath.Join(dir, "encryption.key"))
	if err != nil {
		t.Fatal(err)
	}
	return k.Path()
}

// start runs one pith process until the test ends.
func (s *server) start(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, pithBin, args...)
	cmd.Env = append(os.Environ(), "PITH_ADMIN_PASSWORD="+adminPassword)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
	})
	return cmd
}

func waitReady(t *testing.T, s *server, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := s.client().Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pith did not become ready at %s: %v\n%s", url, err, s.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cli runs the real pulp CLI against a server with its own config and cache.
type cli struct {
	t   *testing.T
	bin string
	env []string
	dir string // the working directory of the commands ("": the test's)
}

func newCLI(t *testing.T, s *server) *cli {
	t.Helper()
	bin := os.Getenv("PITH_PULP_CLI")
	if bin == "" {
		if p, err := exec.LookPath("pulp"); err == nil {
			bin = p
		} else {
			t.Fatal("the pulp CLI is needed: set PITH_PULP_CLI (scripts/test installs pulp-cli 0.41.1)")
		}
	}
	home := t.TempDir()
	cfgDir := filepath.Join(home, "config", "pulp")
	os.MkdirAll(cfgDir, 0o755)
	// Over HTTPS the CLI verifies pith's certificate, with the CA given as to requests.
	toml := fmt.Sprintf("[cli]\nbase_url = %q\nusername = \"admin\"\npassword = %q\nverify_ssl = %v\nformat = \"json\"\ntimeout = 120\n", s.url, adminPassword, s.caFile != "")
	if err := os.WriteFile(filepath.Join(cfgDir, "cli.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"))
	if s.caFile != "" {
		env = append(env, "REQUESTS_CA_BUNDLE="+s.caFile)
	}
	return &cli{t: t, bin: bin, env: env}
}

// run runs a pulp command and returns its stdout; a failure fails the test.
func (c *cli) run(args ...string) string {
	c.t.Helper()
	out, err := c.try(args...)
	if err != nil {
		c.t.Fatalf("pulp %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (c *cli) try(args ...string) (string, error) {
	cmd := exec.Command(c.bin, args...)
	cmd.Env, cmd.Dir = c.env, c.dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

// json runs a pulp command and decodes its JSON output.
func (c *cli) json(v any, args ...string) {
	c.t.Helper()
	out := c.run(args...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		c.t.Fatalf("pulp %s: output is not JSON: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// get fetches a URL and returns status and body.
func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// fixtures serves the third-party test data (testdata/) on 127.0.0.1 like a mirror would.
func fixtures(t *testing.T) string {
	t.Helper()
	dir := testfiles.Path()
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("test data not found at %s: %v", dir, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(dir)))
	mux.Handle("/tree/", testtree.Handler(dir, "/tree/"))
	// /slow/ is a mirror that never finishes sending its one file, to test cancel.
	mux.HandleFunc("/slow/PULP_MANIFEST", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "slow.bin,%s,%d\n", strings.Repeat("0", 64), 1<<30)
	})
	mux.HandleFunc("/slow/slow.bin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(1<<30))
		w.WriteHeader(200)
		for i := 0; i < 600; i++ {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
				w.Write(make([]byte, 1024))
				w.(http.Flusher).Flush()
			}
		}
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String()
}

// installations are the ways of running pith every e2e test runs against: the embedded
// defaults; PostgreSQL with blobs in the database; separate api, content and worker
// processes over PostgreSQL with blobs in S3 (MinIO), redirects to presigned URLs and a
// Redis content cache. extra are flags every process of each installation gets.
func installations(extra ...string) map[string]func(t *testing.T) *server {
	return map[string]func(t *testing.T) *server{
		"sqlite": func(t *testing.T) *server { return startPith(t, "", extra...) },
		"postgres": func(t *testing.T) *server {
			return startPith(t, testpg.URL(t), append([]string{"--storage", "database"}, extra...)...)
		},
		"postgres-s3-redis-roles": func(t *testing.T) *server {
			return startSplit(t, testpg.URL(t), append([]string{"--storage", tests3.URL(t), "--cache", testredis.Start(t).URL}, extra...)...)
		},
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
