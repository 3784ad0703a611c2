package e2e

import (
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"pith/internal/testfiles"
)

// countingServer serves the test data on 127.0.0.1 and counts the requests of each path.
type countingServer struct {
	url string
	mu  sync.Mutex
	n   map[string]int
}

func newCountingServer(t *testing.T) *countingServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &countingServer{url: "http://" + l.Addr().String(), n: map[string]int{}}
	files := http.FileServer(http.Dir(testfiles.Path()))
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.n[r.URL.Path]++
		c.mu.Unlock()
		files.ServeHTTP(w, r)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return c
}

// count is the number of requests for paths that end with suffix.
func (c *countingServer) count(suffix string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for p, k := range c.n {
		if strings.HasSuffix(p, suffix) {
			n += k
		}
	}
	return n
}

// An alternate content source made, refreshed and used with the pulp CLI, for file and
// rpm: the sync fetches every file the source has from it and asks its remote for
// metadata only.
func TestACSWithCLI(t *testing.T) {
	for name, start := range installations() {
		t.Run(name, func(t *testing.T) {
			s := start(t)
			c := newCLI(t, s)
			near, far := newCountingServer(t), newCountingServer(t)

			// A source needs an on_demand remote: the CLI shows pith's 400 naming it.
			c.run("file", "remote", "create", "--name", "far", "--url", far.url+"/yum-katello/file1/PULP_MANIFEST", "--policy", "immediate")
			if out, err := c.try("file", "acs", "create", "--name", "bad", "--remote", "far"); err == nil || !strings.Contains(out, "remote") || !strings.Contains(out, "on_demand") {
				t.Fatalf("acs with an immediate remote: %v\n%s", err, out)
			}
			c.run("file", "remote", "create", "--name", "near", "--url", near.url+"/yum-katello/", "--policy", "on_demand")
			if out, err := c.try("file", "acs", "create", "--name", "bad", "--remote", "near", "--path", "../file1/PULP_MANIFEST"); err == nil || !strings.Contains(out, "paths") {
				t.Fatalf("acs with a .. path: %v\n%s", err, out)
			}
			var acs entity
			c.json(&acs, "file", "acs", "create", "--name", "near", "--remote", "near", "--path", "file1/PULP_MANIFEST")
			c.run("file", "acs", "refresh", "--name", "near")
			c.json(&acs, "file", "acs", "show", "--name", "near")
			if acs["last_refreshed"] == nil || toJSON(acs["paths"]) != `["file1/PULP_MANIFEST"]` {
				t.Fatalf("refreshed source: %v", acs)
			}
			c.run("file", "repository", "create", "--name", "files", "--remote", "far")
			c.run("file", "repository", "sync", "--name", "files")
			var ver entity
			c.json(&ver, "file", "repository", "version", "show", "--repository", "files")
			if presentCount(ver) != 3 {
				t.Fatalf("synced version: %v", ver)
			}
			if n := far.count(".iso"); n != 0 {
				t.Errorf("the remote was asked for %d files the source has", n)
			}
			if n := near.count(".iso"); n != 3 {
				t.Errorf("the source gave %d files, want 3", n)
			}
			var units []entity
			c.json(&units, "file", "content", "list")
			if len(units) != 3 {
				t.Errorf("%d file units listed, want the 3 of the synced repository", len(units))
			}

			// rpm: the source is the zoo repository below the remote's URL.
			c.run("rpm", "remote", "create", "--name", "near-yum", "--url", near.url+"/yum-katello/", "--policy", "on_demand")
			c.run("rpm", "acs", "create", "--name", "near-rpm", "--remote", "near-yum", "--path", "zoo/")
			c.run("rpm", "acs", "refresh", "--name", "near-rpm")
			c.run("rpm", "remote", "create", "--name", "far-yum", "--url", far.url+"/yum-katello/zoo/", "--policy", "immediate")
			c.run("rpm", "repository", "create", "--name", "zoo", "--remote", "far-yum")
			c.run("rpm", "repository", "sync", "--name", "zoo")
			if n := far.count(".rpm"); n != 0 {
				t.Errorf("the remote was asked for %d packages the source has", n)
			}
			if n := near.count(".rpm"); n != 20 {
				t.Errorf("the source gave %d packages, want 20", n)
			}
			var list []entity
			c.json(&list, "rpm", "acs", "list")
			if len(list) != 1 || list[0].str("name") != "near-rpm" {
				t.Errorf("rpm acs list: %v", list)
			}
			c.run("file", "acs", "destroy", "--name", "near")
			c.run("file", "remote", "destroy", "--name", "near")
		})
	}
}
