package auth

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

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
	a := New(testDB(t), Config{Header: "X-Remote-User", TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	req := func(from, user string) *http.Request {
		r := httptest.NewRequest("GET", "/pulp/api/v3/login/", nil)
		r.RemoteAddr = from + ":4321"
		if user != "" {
			r.Header.Set("X-Remote-User", user)
		}
		return r
	}
	sub, err := a.Authenticate(req("10.1.2.3", "erin"))
	if err != nil || sub.Username != "erin" || sub.ID == 0 || sub.Superuser {
		t.Fatalf("from the proxy: %+v %v", sub, err)
	}
	again, err := a.Authenticate(req("10.1.2.3", "erin"))
	if err != nil || again.ID != sub.ID {
		t.Fatalf("the same user again: %+v %v", again, err)
	}
	if sub, err := a.Authenticate(req("192.0.2.7", "admin")); err != nil || !sub.Anonymous() {
		t.Fatalf("from elsewhere the header is ignored: %+v %v", sub, err)
	}
	if _, err := a.Authenticate(req("10.1.2.3", "not a name!")); err == nil {
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
