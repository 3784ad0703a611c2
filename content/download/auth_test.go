package download

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A token without an auth_url is sent as "Token <token>", instead of basic auth.
func TestGalaxyToken(t *testing.T) {
	t.Parallel()
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		w.Write([]byte("x"))
	}))
	defer srv.Close()
	d, _ := newD(t, Config{URL: srv.URL + "/", Token: "t0k", Username: "me", Password: "pw"})
	if _, _, err := fetch(context.Background(), d, srv.URL+"/a", Expect{Size: 1}); err != nil {
		t.Fatal(err)
	}
	if got != "Token t0k" {
		t.Errorf("Authorization %q, want the token", got)
	}
}

// With an auth_url, the token is the refresh token of an SSO grant: the access token it
// gives is sent as a bearer token, obtained once for concurrent requests, and obtained
// again when the server answers 401 (it expired), without spending a retry. An SSO
// server that refuses fails the download, naming the auth_url.
func TestGalaxyBearerRefresh(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	grants, current := 0, ""
	sso := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.Method != "POST" || r.Form.Get("grant_type") != "refresh_token" || r.Form.Get("client_id") != "cloud-services" ||
			r.Form.Get("refresh_token") != "refresh-me" {
			http.Error(w, "bad grant", http.StatusBadRequest)
			return
		}
		mu.Lock()
		grants++
		current = fmt.Sprintf("access-%d", grants)
		fmt.Fprintf(w, `{"access_token": %q, "expires_in": 300}`, current)
		mu.Unlock()
	}))
	defer sso.Close()
	// An access token is good for two requests.
	uses := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if uses[tok]++; tok != current || uses[tok] > 2 {
			http.Error(w, "expired", http.StatusUnauthorized)
			return
		}
		w.Write([]byte("x"))
	}))
	defer srv.Close()
	d, sleeps := newD(t, Config{URL: srv.URL + "/", Token: "refresh-me", AuthURL: sso.URL + "/token", MaxRetries: -1})
	// Concurrent first requests wait for one grant.
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for i := range 2 {
		wg.Go(func() {
			if _, _, err := fetch(context.Background(), d, fmt.Sprintf("%s/%d", srv.URL, i), Expect{Size: 1}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if grants != 1 {
		t.Errorf("%d grants for two concurrent requests, want 1", grants)
	}
	for i := range 5 {
		if _, _, err := fetch(context.Background(), d, fmt.Sprintf("%s/more/%d", srv.URL, i), Expect{Size: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if grants != 4 {
		t.Errorf("%d grants for seven requests, two per token, want 4", grants)
	}
	if len(*sleeps) != 0 {
		t.Errorf("a 401 was retried with backoff %v", *sleeps)
	}

	refused, _ := newD(t, Config{URL: srv.URL + "/", Token: "wrong", AuthURL: sso.URL + "/token"})
	_, _, err := fetch(context.Background(), refused, srv.URL+"/a", Expect{Size: 1})
	var de *Error
	if !errors.As(err, &de) || de.Status != http.StatusBadRequest || !strings.Contains(err.Error(), sso.URL+"/token") {
		t.Errorf("refused grant: %v", err)
	}
	if _, err := New(Config{AuthURL: sso.URL}); err == nil {
		t.Error("an auth_url without a token was accepted")
	}
}
