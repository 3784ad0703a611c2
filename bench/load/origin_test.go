package load

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testFiles are served by the test origin, plus /redirect (302 to /a.txt).
var testFiles = map[string]string{
	"a.txt": "alpha\n",
	"b.txt": strings.Repeat("b", 1000),
	"c.txt": strings.Repeat("c", 10000),
}

// testOrigin serves testFiles with nginx if it is installed (closer to production
// serving) and with an in-process httptest server otherwise. It returns the base URL,
// ending with "/", and the server's name.
func testOrigin(t *testing.T) (base, server string) {
	t.Helper()
	dir := t.TempDir()
	www := filepath.Join(dir, "www")
	if err := os.Mkdir(www, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range testFiles {
		if err := os.WriteFile(filepath.Join(www, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if nginx, err := exec.LookPath("nginx"); err == nil {
		if base, err := startNginx(t, nginx, dir); err == nil {
			return base, "nginx"
		} else {
			t.Logf("nginx did not start, using httptest: %v", err)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(www)))
	mux.Handle("/redirect", http.RedirectHandler("/a.txt", http.StatusFound))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/", "httptest"
}

// startNginx runs nginx in the foreground on a free loopback port with a config in dir.
func startNginx(t *testing.T, nginx, dir string) (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	l.Close()
	conf := fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path %[1]s/tmp;
	proxy_temp_path %[1]s/tmp;
	fastcgi_temp_path %[1]s/tmp;
	uwsgi_temp_path %[1]s/tmp;
	scgi_temp_path %[1]s/tmp;
	server {
		listen %[2]s;
		root %[1]s/www;
		location = /redirect { return 302 /a.txt; }
	}
}
`, dir, addr)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command(nginx, "-p", dir, "-c", confPath, "-e", filepath.Join(dir, "error.log"))
	if err := cmd.Start(); err != nil {
		return "", err
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr + "/", nil
		}
	}
	log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
	return "", fmt.Errorf("nginx not listening on %s after 5s: %s", addr, log)
}
