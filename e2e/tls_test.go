package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"pith/internal/testcert"
)

// curl runs curl -sS with args and returns its output and exit code.
func curl(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, err := exec.Command("curl", append([]string{"-sS", "--max-time", "30"}, args...)...).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// `pith serve` with --tls-cert, --tls-key and --tls-client-ca serves HTTPS to curl and to
// the pulp CLI, which verify its certificate: a client certificate of the client CA is
// accepted, one of another CA refused at the handshake, plain HTTP answered 400; the
// content app's base_url is https:// and serves the files.
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	serverCA, clientCA, otherCA := testcert.NewCA(t, "pith CA"), testcert.NewCA(t, "client CA"), testcert.NewCA(t, "other CA")
	certFile, keyFile := serverCA.Server(t, "127.0.0.1").Write(t, dir, "server")
	aliceCert, aliceKey := clientCA.Client(t, "alice").Write(t, dir, "alice")
	malloryCert, malloryKey := otherCA.Client(t, "mallory").Write(t, dir, "mallory")
	s := &server{addr: freePort(t), data: t.TempDir(), log: &logBuffer{}, caFile: serverCA.Write(t, dir, "ca.pem")}
	s.url = "https://" + s.addr
	s.content = s.url
	s.start(t, "serve", "--listen", s.addr, "--data", s.data, "--workers", "2",
		"--tls-cert", certFile, "--tls-key", keyFile, "--tls-client-ca", clientCA.Write(t, dir, "clients.pem"))
	waitReady(t, s, s.url+"/pulp/api/v3/status/")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("pith log:\n%s", s.log.String())
		}
	})

	status := s.url + "/pulp/api/v3/status/"
	out, code := curl(t, "-f", "--cacert", s.caFile, status)
	var st struct {
		ContentSettings map[string]string `json:"content_settings"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.ContentSettings["content_origin"] != s.url {
		t.Fatalf("curl --cacert: exit %d, %.300s; want the status with content_origin %s", code, out, s.url)
	}
	if out, code := curl(t, status); code != 60 {
		t.Errorf("curl without the CA: exit %d %s, want 60 (certificate not verified)", code, out)
	}
	if out, code := curl(t, "-f", "--cacert", s.caFile, "--cert", aliceCert, "--key", aliceKey, status); code != 0 {
		t.Errorf("curl with the client CA's certificate: exit %d %s", code, out)
	}
	if out, code := curl(t, "--cacert", s.caFile, "--cert", malloryCert, "--key", malloryKey, status); code == 0 {
		t.Errorf("curl with another CA's certificate: served %s", out)
	} else {
		t.Logf("curl with another CA's certificate: exit %d %s", code, strings.TrimSpace(out))
	}
	if out, code := curl(t, "-o", "/dev/null", "-w", "%{http_code}", "http://"+s.addr+"/pulp/api/v3/status/"); out != "400" {
		t.Errorf("plain HTTP: exit %d %s, want a 400", code, out)
	}

	// The pulp CLI over HTTPS, trusting the CA through REQUESTS_CA_BUNDLE.
	c := newCLI(t, s)
	file, _ := writeRandom(t, t.TempDir(), "f.bin", 5000)
	c.run("file", "repository", "create", "--name", "r")
	c.run("file", "content", "upload", "--file", file, "--relative-path", "f.bin", "--repository", "r")
	var pub, dist entity
	c.json(&pub, "file", "publication", "create", "--repository", "r")
	c.json(&dist, "file", "distribution", "create", "--name", "d", "--base-path", "d", "--publication", pub.str("pulp_href"))
	if base := dist.str("base_url"); base != s.url+"/pulp/content/d/" {
		t.Fatalf("base_url = %q, want %s/pulp/content/d/", base, s.url)
	}
	got, code := curl(t, "-f", "--cacert", s.caFile, s.url+"/pulp/content/d/f.bin")
	want, _ := os.ReadFile(file)
	if code != 0 || got != string(want) {
		t.Errorf("curl the file over HTTPS: exit %d, %d bytes, want %d", code, len(got), len(want))
	}
}
