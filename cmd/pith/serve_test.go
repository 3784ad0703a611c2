package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"pith/config"
	"pith/internal/testconn"
	"pith/meta"
)

const testPassword = "serve-test"

// running is a node served the way runNode serves it, on listeners of the test's.
type running struct {
	api, content string // addresses
}

// startNode builds the API and the content app with the given settings (on SQLite in a
// temporary directory) and serves them as `pith serve` does, until the test ends.
func startNode(t *testing.T, args ...string) running {
	t.Helper()
	return startNodeWith(t, nil, args...)
}

// startNodeWith is startNode with wrap (if not nil) around each endpoint's routes, to
// see the requests they get.
func startNodeWith(t *testing.T, wrap func(http.Handler) http.Handler, args ...string) running {
	t.Helper()
	cfg, _, err := config.Load("serve", append([]string{"--data", t.TempDir(), "--log-level", "error"}, args...), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := roles{api: true, content: true}
	n, err := build(ctx, cfg, r)
	if err != nil {
		t.Fatal(err)
	}
	if err := meta.SetPassword(ctx, n.db, "admin", testPassword, true); err != nil {
		t.Fatal(err)
	}
	eps := endpoints(cfg, r)
	var out running
	for i := range eps {
		if eps[i].ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if eps[i].handler = n.handler(eps[i].roles); wrap != nil {
			eps[i].handler = wrap(eps[i].handler)
		}
		if eps[i].roles.api {
			out.api = eps[i].ln.Addr().String()
		}
		if eps[i].roles.content {
			out.content = eps[i].ln.Addr().String()
		}
	}
	done := make(chan error, 1)
	go func() { done <- n.serveHTTP(ctx, cfg, eps) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		n.db.Close()
	})
	return out
}

var basicAuth = "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+testPassword)) + "\r\n"

// A client that sends headers and then trickles a body it was never asked for (no
// credentials, a method the content app does not take, a path nothing serves) is
// answered at once, with Connection: close, and the connection ends; the body deadline
// is an hour, so nothing here waits for it.
func TestSlowBodyAnsweredAtOnce(t *testing.T) {
	t.Parallel()
	s := startNode(t, "--body-timeout-seconds", "3600")
	for _, tc := range []struct {
		target string
		code   int
	}{
		{"/pulp/api/v3/repositories/file/file/", 401},
		{"/pulp/api/v3/uploads/", 401},
		{"/pulp/content/anything/", 405},
		{"/nowhere", 404},
	} {
		req := "POST " + tc.target + " HTTP/1.1\r\nHost: pith\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"na"
		resp, _, c := testconn.Exchange(t, s.api, req)
		if resp.StatusCode != tc.code || !resp.Close || !c.ClosedByServer() {
			t.Errorf("%s: %d, Connection: close %v; want %d and the connection closed", tc.target, resp.StatusCode, resp.Close, tc.code)
		}
	}
}

// A known client whose body does not come within --body-timeout-seconds is told so (a
// 400 naming the timeout, not the connection's addresses) and the connection ends.
func TestSlowBodyTimesOut(t *testing.T) {
	t.Parallel()
	s := startNode(t, "--body-timeout-seconds", "1")
	req := "POST /pulp/api/v3/repositories/file/file/ HTTP/1.1\r\nHost: pith\r\n" + basicAuth +
		"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"na"
	resp, body, c := testconn.Exchange(t, s.api, req)
	if resp.StatusCode != 400 || !resp.Close || !strings.Contains(body, "not received within 1s") || strings.Contains(body, "127.0.0.1") {
		t.Errorf("%d %s, Connection: close %v", resp.StatusCode, body, resp.Close)
	}
	if !c.ClosedByServer() {
		t.Error("the connection stayed open")
	}
}

// The operations that take files (found from the route table) give a known client
// --upload-timeout-seconds to send them instead.
func TestUploadsGetLonger(t *testing.T) {
	t.Parallel()
	s := startNode(t, "--body-timeout-seconds", "1", "--upload-timeout-seconds", "60")
	resp, body, _ := testconn.Exchange(t, s.api, "POST /pulp/api/v3/uploads/ HTTP/1.1\r\nHost: pith\r\n"+basicAuth+
		"Content-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"size\": 4}")
	var up struct {
		Href string `json:"pulp_href"`
	}
	if err := json.Unmarshal([]byte(body), &up); err != nil || resp.StatusCode != 201 {
		t.Fatalf("create upload: %d %s", resp.StatusCode, body)
	}
	form := "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\nabcd\r\n--b--\r\n"
	c := testconn.Dial(t, s.api, "")
	c.Send(t, fmt.Sprintf("PUT %s HTTP/1.1\r\nHost: pith\r\n%sContent-Type: multipart/form-data; boundary=b\r\nContent-Range: bytes 0-3/4\r\nContent-Length: %d\r\n\r\n%s",
		up.Href, basicAuth, len(form), form[:10]))
	time.Sleep(2 * time.Second) // past the body timeout
	c.Send(t, form[10:])
	// Read to its end, the body leaves the connection open for the next request.
	if resp, body, err := c.Answer(); err != nil || resp.StatusCode != 200 || resp.Close {
		t.Errorf("slow chunk: %v %s %v", resp, body, err)
	}
}

// --max-connections-per-client reaches the listener.
func TestConnectionCap(t *testing.T) {
	t.Parallel()
	s := startNode(t, "--max-connections-per-client", "1")
	const status = "GET /pulp/api/v3/status/ HTTP/1.1\r\nHost: pith\r\n\r\n"
	if resp, _, _ := testconn.Exchange(t, s.api, status); resp.StatusCode != 200 {
		t.Fatalf("first connection: %d", resp.StatusCode)
	}
	c := testconn.Dial(t, s.api, "")
	c.Send(t, status)
	if resp, _, err := c.Answer(); err == nil {
		t.Errorf("second connection answered %d", resp.StatusCode)
	}
}

// With --content-listen the content app and the API are different origins: neither
// address serves the other's paths.
func TestContentListen(t *testing.T) {
	t.Parallel()
	s := startNode(t, "--listen", "127.0.0.1:24817", "--content-listen", "127.0.0.1:24816")
	if s.api == s.content {
		t.Fatal("one listener for both")
	}
	for _, tc := range []struct {
		addr, target string
		code         int
	}{
		{s.api, "/pulp/api/v3/status/", 200},
		{s.api, "/", 302},
		{s.api, "/pulp/content/", 404},
		{s.api, "/metrics", 404},
		{s.content, "/pulp/content/", 200},
		{s.content, "/metrics", 200},
		{s.content, "/pulp/api/v3/status/", 404},
		{s.content, "/", 404},
	} {
		resp, _, _ := testconn.Exchange(t, tc.addr, "GET "+tc.target+" HTTP/1.1\r\nHost: pith\r\n\r\n")
		if resp.StatusCode != tc.code {
			t.Errorf("%s on the %s listener: %d, want %d", tc.target, map[bool]string{true: "API", false: "content"}[tc.addr == s.api], resp.StatusCode, tc.code)
		}
	}
}
