package api

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pith/api/access"
	"pith/meta"
)

func testDB(t *testing.T) *meta.DB {
	t.Helper()
	db, err := meta.Open(t.Context(), filepath.Join(t.TempDir(), "pith.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return db
}

// The user a reverse proxy names in a header is believed only from the proxies trusted
// with it, and made on first sight.
func TestRemoteUserHeader(t *testing.T) {
	a := newAuthn(testDB(t), "X-Remote-User", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")})
	req := func(from, user string) *http.Request {
		r := httptest.NewRequest("GET", "/pulp/api/v3/login/", nil)
		r.RemoteAddr = from + ":4321"
		if user != "" {
			r.Header.Set("X-Remote-User", user)
		}
		return r
	}
	sub, err := a.authenticate(req("10.1.2.3", "erin"))
	if err != nil || sub.Username != "erin" || sub.ID == 0 || sub.Superuser {
		t.Fatalf("from the proxy: %+v %v", sub, err)
	}
	again, err := a.authenticate(req("10.1.2.3", "erin"))
	if err != nil || again.ID != sub.ID {
		t.Fatalf("the same user again: %+v %v", again, err)
	}
	if sub, err := a.authenticate(req("192.0.2.7", "admin")); err != nil || !sub.Anonymous() {
		t.Fatalf("from elsewhere the header is ignored: %+v %v", sub, err)
	}
	if _, err := a.authenticate(req("10.1.2.3", "not a name!")); err == nil {
		t.Fatal("an invalid user name was accepted")
	}
}

func TestThrottle(t *testing.T) {
	th := newThrottle()
	now := time.Unix(1000, 0)
	for range failBurst {
		if w := th.wait(now, "a"); w != 0 {
			t.Fatalf("throttled early: %v", w)
		}
		th.fail(now, "a")
	}
	if w := th.wait(now, "a"); w <= 0 || w > failEvery {
		t.Fatalf("after the burst: wait %v", w)
	}
	if w := th.wait(now, "b"); w != 0 {
		t.Fatalf("another key: wait %v", w)
	}
	if w := th.wait(now.Add(failEvery), "a"); w != 0 {
		t.Fatalf("a token later: wait %v", w)
	}
}

// Every condition the shipped policies name can be evaluated (rpm adds its own,
// has_perms_to_copy, through its table).
func TestShippedConditionsKnown(t *testing.T) {
	d, err := access.Core()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"../content/file/access.json", "../content/rpm/access.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		o, err := access.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		d.Merge(o)
	}
	for name, p := range d.Policies {
		for _, st := range p.Statements {
			for _, c := range st.Condition {
				n, _, _ := strings.Cut(c, ":")
				if _, ok := conditions[n]; !ok && n != "has_perms_to_copy" {
					t.Errorf("policy %s names condition %s, which pith cannot evaluate", name, n)
				}
			}
		}
	}
}
