package rpm_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"pith/content/contenttest"
	"pith/content/rpm"
	"pith/internal/testuln"
)

const ulnRemotes = "/pulp/api/v3/remotes/rpm/uln/"

// ulnEnv is pith with the rpm type and a ULN server whose channel ol9_x86_64 is the zoo
// repository.
func ulnEnv(t *testing.T) (*contenttest.Env, *testuln.Server) {
	srv := testuln.New(t, "me", "s3cret-pw", map[string]string{"ol9_x86_64": filepath.Join(data, "yum-katello", "zoo")})
	return contenttest.New(t, contenttest.Type(rpm.New)), srv
}

// ulnSync makes a ULN remote with body's fields and a repository, syncs it and returns
// the repository and the sync's task.
func ulnSync(e *contenttest.Env, srv *testuln.Server, name string, body map[string]any) (map[string]any, map[string]any) {
	b := map[string]any{"name": name, "url": "uln://ol9_x86_64", "username": "me", "password": "s3cret-pw", "uln_server_base_url": srv.URL + "/"}
	for k, v := range body {
		b[k] = v
	}
	code, remote := e.JSON("POST", ulnRemotes, b)
	code2, repo := e.JSON("POST", "/pulp/api/v3/repositories/rpm/rpm/", map[string]any{"name": name})
	if code != 201 || code2 != 201 {
		e.T.Fatalf("create: %d %v, %d %v", code, remote, code2, repo)
	}
	code, m := e.JSON("POST", repo["pulp_href"].(string)+"sync/", map[string]any{"remote": remote["pulp_href"]})
	if code != 202 {
		e.T.Fatalf("sync: %d %v", code, m)
	}
	return repo, e.Wait(m["task"].(string))
}

func packages(e *contenttest.Env, repo map[string]any) float64 {
	e.T.Helper()
	_, m, _ := e.Do("GET", repo["pulp_href"].(string), "", nil)
	v, _ := m["latest_version_href"].(string)
	_, ver, _ := e.Do("GET", v, "", nil)
	present, _ := ver["content_summary"].(map[string]any)["present"].(map[string]any)
	pkg, _ := present[rpm.PackageType].(map[string]any)
	n, _ := pkg["count"].(float64)
	return n
}

// A ULN remote's bad input is a 400 naming the field, and creates nothing.
func TestULNRemoteBadInput(t *testing.T) {
	e, srv := ulnEnv(t)
	good := map[string]any{"name": "uln", "url": "uln://ol9_x86_64", "username": "me", "password": "s3cret-pw", "uln_server_base_url": srv.URL + "/"}
	for _, c := range []struct {
		field string
		v     any // nil: left out
	}{
		{"url", "https://linux-update.oracle.com/ol9_x86_64"},
		{"url", "uln://"},
		{"url", nil},
		{"username", nil},
		{"username", ""},
		{"password", nil},
		{"uln_server_base_url", "ftp://example.com/"},
	} {
		b := map[string]any{}
		for k, v := range good {
			b[k] = v
		}
		if c.v == nil {
			delete(b, c.field)
		} else {
			b[c.field] = c.v
		}
		code, m := e.JSON("POST", ulnRemotes, b)
		if _, named := m[c.field]; code != 400 || !named {
			t.Errorf("%s=%v: %d %v, want a 400 naming %s", c.field, c.v, code, m, c.field)
		}
	}
	if n := e.Count("remotes"); n != 0 {
		t.Errorf("%d remotes after bad input, want 0", n)
	}
	code, m := e.JSON("POST", ulnRemotes, good)
	if code != 201 || m["url"] != "uln://ol9_x86_64" || m["uln_server_base_url"] != srv.URL+"/" {
		t.Fatalf("create: %d %v", code, m)
	}
	if b, _ := json.Marshal(m); strings.Contains(string(b), "s3cret-pw") {
		t.Errorf("the remote shows its password: %s", b)
	}
	// A partial update keeps the credentials; a full one must give them again.
	if code, m := e.JSON("PATCH", m["pulp_href"].(string), map[string]any{"policy": "on_demand"}); code != 202 && code != 200 {
		t.Errorf("patch: %d %v", code, m)
	}
	if code, m := e.JSON("PUT", m["pulp_href"].(string), map[string]any{"name": "uln", "url": "uln://ol9_x86_64"}); code != 400 {
		t.Errorf("put without credentials: %d %v, want 400", code, m)
	}
}

// An rpm repository syncs from a ULN channel through one login; on_demand packages
// are fetched later with the session key.
func TestULNSync(t *testing.T) {
	e, srv := ulnEnv(t)
	repo, tk := ulnSync(e, srv, "zoo", map[string]any{"policy": "on_demand"})
	if tk["state"] != "completed" {
		t.Fatalf("sync: %v", tk)
	}
	if n := packages(e, repo); n != 20 {
		t.Errorf("%v packages, want the zoo's 20", n)
	}
	if srv.Logins() != 1 || srv.Refused() != 0 {
		t.Errorf("%d logins and %d refused requests, want 1 and 0", srv.Logins(), srv.Refused())
	}

	code, pub := e.JSON("POST", "/pulp/api/v3/publications/rpm/rpm/", map[string]any{"repository": repo["pulp_href"]})
	pub = e.Done("publish", code, pub)
	code, dist := e.JSON("POST", "/pulp/api/v3/distributions/rpm/rpm/", map[string]any{"name": "zoo", "base_path": "zoo",
		"publication": pub["created_resources"].([]any)[0]})
	e.Done("distribute", code, dist)
	served := srv.Served()
	resp, err := http.Get(e.URL + "/pulp/content/zoo/Packages/l/lion-0.3-0.8.noarch.rpm")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	h := sha256.New()
	io.Copy(h, resp.Body)
	want := sha256.Sum256(zooFile(e, "lion-0.3-0.8.noarch.rpm"))
	if resp.StatusCode != 200 || hex.EncodeToString(h.Sum(nil)) != hex.EncodeToString(want[:]) {
		t.Errorf("on_demand package: %d, sha256 %x, want 200 and the zoo's file", resp.StatusCode, h.Sum(nil))
	}
	if srv.Served() != served+1 || srv.Refused() != 0 {
		t.Errorf("the content app fetched %d files, %d refused; want 1 with the session key", srv.Served()-served, srv.Refused())
	}
}

// Wrong credentials fail the sync naming the ULN server and the login, with no new
// version and no password anywhere in the task.
func TestULNSyncWrongCredentials(t *testing.T) {
	e, srv := ulnEnv(t)
	repo, tk := ulnSync(e, srv, "zoo", map[string]any{"password": "wrong-pw"})
	if tk["state"] != "failed" {
		t.Fatalf("sync: %v", tk)
	}
	desc, _ := tk["error"].(map[string]any)["description"].(string)
	if !strings.Contains(desc, "ULN server "+srv.URL+"/rpc/api") || !strings.Contains(desc, "login") {
		t.Errorf("error %q does not name the ULN server and the login", desc)
	}
	if b, _ := json.Marshal(tk); strings.Contains(string(b), "wrong-pw") {
		t.Errorf("the task shows the password: %s", b)
	}
	if n := packages(e, repo); n != 0 {
		t.Errorf("%v packages after a failed sync, want 0", n)
	}
	if _, m, _ := e.Do("GET", repo["pulp_href"].(string), "", nil); !strings.HasSuffix(m["latest_version_href"].(string), "/versions/0/") {
		t.Errorf("latest version %v after a failed sync, want 0", m["latest_version_href"])
	}
}

// A session key that expires mid-sync is replaced by one login more, and the sync
// goes on.
func TestULNSyncKeyExpires(t *testing.T) {
	e, srv := ulnEnv(t)
	srv.ExpireAfter(4) // repomd.xml and a few metadata files, then the packages
	repo, tk := ulnSync(e, srv, "zoo", map[string]any{"policy": "immediate"})
	if tk["state"] != "completed" {
		t.Fatalf("sync: %v", tk)
	}
	if n := packages(e, repo); n != 20 {
		t.Errorf("%v packages, want the zoo's 20", n)
	}
	if srv.Logins() != 2 || srv.Refused() == 0 {
		t.Errorf("%d logins and %d refused requests, want 2 and some", srv.Logins(), srv.Refused())
	}
}
