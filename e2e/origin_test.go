package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// `pith serve --content-listen` serves content on an origin apart from the API's, as
// Pulp's content app on its own port: base_url names it, files come from it (to curl,
// with the headers that keep browsers from running them), and the API's address serves
// no content.
func TestServeContentListen(t *testing.T) {
	contentAddr := freePort(t)
	s := startPith(t, "", "--content-listen", contentAddr)
	s.content = "http://" + contentAddr
	waitReady(t, s, s.content+"/pulp/content/")
	c := newCLI(t, s)
	page, _ := writeRandom(t, t.TempDir(), "page.html", 1000)
	c.run("file", "repository", "create", "--name", "r")
	c.run("file", "content", "upload", "--file", page, "--relative-path", "page.html", "--repository", "r")
	var pub, dist entity
	c.json(&pub, "file", "publication", "create", "--repository", "r")
	c.json(&dist, "file", "distribution", "create", "--name", "d", "--base-path", "d", "--publication", pub.str("pulp_href"))
	base := dist.str("base_url")
	if base != s.content+"/pulp/content/d/" {
		t.Fatalf("base_url = %q, want the content address", base)
	}
	out, err := exec.Command("curl", "-sfi", base+"page.html").Output()
	if err != nil || !strings.Contains(string(out), "Content-Security-Policy: default-src 'none'; sandbox") {
		t.Errorf("curl %spage.html: %v\n%.300s", base, err, out)
	}
	if code, _ := get(t, s.url+"/pulp/content/d/page.html"); code != 404 {
		t.Errorf("content on the API's address: %d", code)
	}
}
