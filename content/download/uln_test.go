package download

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pith/internal/testuln"
)

func ulnChannel(t *testing.T) (*testuln.Server, Config) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"a.txt": "alpha", "sub/b c.txt": "beta"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := testuln.New(t, "me", "s3cret-pw", map[string]string{"ol9_x86_64": dir})
	return srv, Config{URL: "uln://ol9_x86_64", ULNServer: srv.URL + "/", Username: "me", Password: "s3cret-pw"}
}

// A ULN downloader logs in once, then fetches uln:// URLs from the server's
// XMLRPC/GET-REQ/<channel>/ with the session key; the password goes to the login only.
func TestULNFetch(t *testing.T) {
	t.Parallel()
	srv, cfg := ulnChannel(t)
	d, _ := newD(t, cfg)
	for u, want := range map[string]string{"uln://ol9_x86_64/a.txt": "alpha", "uln://ol9_x86_64/sub/b%20c.txt": "beta"} {
		_, sinks, err := fetch(context.Background(), d, u, Expect{Size: -1})
		if err != nil {
			t.Fatal(err)
		}
		if got := sinks[len(sinks)-1].String(); got != want {
			t.Errorf("%s: %q, want %q", u, got, want)
		}
	}
	if srv.Logins() != 1 || srv.Refused() != 0 {
		t.Errorf("%d logins and %d refused requests, want 1 and 0", srv.Logins(), srv.Refused())
	}
	calls := srv.Calls()
	if len(calls) != 1 || !strings.Contains(calls[0], "<methodName>auth.login</methodName>") {
		t.Errorf("XML-RPC calls %q, want one auth.login", calls)
	}
}

// Wrong credentials fail every download naming the server and the login, never the
// password; a key refused mid-way is replaced by one login more.
func TestULNLoginFaults(t *testing.T) {
	t.Parallel()
	srv, cfg := ulnChannel(t)
	bad := cfg
	bad.Password = "wrong-pw"
	d, _ := newD(t, bad)
	_, _, err := fetch(context.Background(), d, "uln://ol9_x86_64/a.txt", Expect{Size: -1})
	if err == nil || !strings.Contains(err.Error(), "ULN server "+srv.URL+"/rpc/api: login") || !strings.Contains(err.Error(), "fault 2950") {
		t.Fatalf("error %v, want a failed login naming the server", err)
	}
	if strings.Contains(err.Error(), "wrong-pw") {
		t.Errorf("error %v shows the password", err)
	}
	if n := len(srv.Calls()); n != 1 {
		t.Errorf("%d login calls, want 1: a fault is not retried", n)
	}

	d, _ = newD(t, cfg)
	srv.ExpireAfter(1)
	for range 3 {
		if _, _, err := fetch(context.Background(), d, "uln://ol9_x86_64/a.txt", Expect{Size: 5}); err != nil {
			t.Fatal(err)
		}
	}
	if srv.Logins() != 2 || srv.Refused() != 1 {
		t.Errorf("%d logins and %d refused requests, want 2 and 1", srv.Logins(), srv.Refused())
	}
}

func TestXMLRPCString(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ body, want, err string }{
		{"<methodResponse><params><param><value><string>k&amp;y</string></value></param></params></methodResponse>", "k&y", ""},
		{"<methodResponse><params><param><value> bare </value></param></params></methodResponse>", "bare", ""},
		{"<methodResponse><fault><value><struct><member><name>faultCode</name><value><i4>3</i4></value></member>" +
			"<member><name>faultString</name><value>no</value></member></struct></value></fault></methodResponse>", "", "fault 3: no"},
		{"<methodResponse><params></params></methodResponse>", "", "not one string"},
		{"<methodResponse><params><param><value><struct></struct></value></param></params></methodResponse>", "", "not one string"},
		{"<html>", "", "not an XML-RPC response"},
	} {
		got, err := xmlrpcString([]byte(c.body))
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %q, %v; want %q, %q", c.body, got, err, c.want, c.err)
		}
	}
}

func TestXMLRPCCall(t *testing.T) {
	t.Parallel()
	got := string(xmlrpcCall("auth.login", "a<b", "c&d"))
	if !strings.Contains(got, "<param><value><string>a&lt;b</string></value></param><param><value><string>c&amp;d</string></value></param>") {
		t.Errorf("call %s does not escape its parameters", got)
	}
}

// Whatever a ULN server answers, reading it neither panics nor gives a key with a fault.
func FuzzXMLRPCString(f *testing.F) {
	f.Add([]byte("<methodResponse><params><param><value><string>k</string></value></param></params></methodResponse>"))
	f.Add([]byte("<methodResponse><fault><value><struct><member><name>faultCode</name><value><int>1</int></value></member></struct></value></fault></methodResponse>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := xmlrpcString(b); err != nil && s != "" {
			t.Errorf("%q with error %v", s, err)
		}
	})
}
