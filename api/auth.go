package api

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"pith/api/access"
	"pith/api/rest"
	"pith/meta"
)

// Authentication: a request runs as the user its credentials name, checked in this
// order: HTTP Basic, a login session (with Django's CSRF check on unsafe methods), the
// user a trusted reverse proxy names in a header, the user a TLS client certificate
// names; with none it is anonymous. Wrong credentials are a 401, never a fall back to
// anonymous.

const (
	sessionCookie = "sessionid"
	csrfCookie    = "csrftoken"
	csrfHeader    = "X-CSRFToken"
	sessionAge    = 14 * 24 * time.Hour // Django's SESSION_COOKIE_AGE
)

// authn authenticates requests.
type authn struct {
	db *meta.DB
	// verified remembers passwords that were checked: an HMAC (keyed by a secret of
	// this process) of the user, the password and the stored hash, so a client sending
	// the right password on every request costs one key derivation, while any other
	// password always costs a full one. A changed password changes the stored hash and
	// so every key.
	secret   [32]byte
	mu       sync.Mutex
	verified map[[32]byte]struct{}
	fails    *throttle
	header   string         // trusted proxy's user header ("" off)
	proxies  []netip.Prefix // addresses it is trusted from
	certUser func(r *http.Request) (string, bool)
}

// maxVerified bounds the remembered passwords; the memory is forgotten when full.
const maxVerified = 10_000

func newAuthn(db *meta.DB, header string, proxies []netip.Prefix) *authn {
	a := &authn{db: db, verified: map[[32]byte]struct{}{}, fails: newThrottle(), header: header, proxies: proxies}
	rand.Read(a.secret[:])
	return a
}

var (
	errBadCredentials = rest.Status(http.StatusUnauthorized, "Invalid username/password.")
	errInactive       = rest.Status(http.StatusUnauthorized, "User inactive or deleted.")
	errCSRF           = rest.Status(http.StatusForbidden, "CSRF Failed: CSRF token missing or incorrect.")
)

// authenticate names the user a request runs as; the zero Subject for none.
func (a *authn) authenticate(r *http.Request) (access.Subject, error) {
	ctx := r.Context()
	if user, pw, ok := r.BasicAuth(); ok {
		return a.basic(ctx, a.clientAddr(r), user, pw)
	}
	if strings.HasPrefix(strings.ToLower(r.Header.Get("Authorization")), "basic ") {
		return access.Subject{}, rest.Status(http.StatusUnauthorized, "Invalid basic header. Credentials not correctly base64 encoded.")
	}
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		uid, csrf, err := meta.Session(ctx, a.db, hashKey(c.Value))
		if err == nil {
			if !safeMethod(r.Method) && !hmac.Equal([]byte(r.Header.Get(csrfHeader)), []byte(csrf)) {
				return access.Subject{}, errCSRF
			}
			u, err := meta.UserByID(ctx, a.db, uid)
			if err != nil {
				return access.Subject{}, errInactive
			}
			return subjectOf(u)
		}
		if !errors.Is(err, meta.ErrNotFound) {
			return access.Subject{}, err
		}
		// An expired or unknown session is no session: the request is anonymous.
	}
	if a.header != "" {
		if name := r.Header.Get(a.header); name != "" && a.fromProxy(r) {
			return a.remoteUser(ctx, name)
		}
	}
	if a.certUser != nil {
		if name, ok := a.certUser(r); ok {
			u, err := meta.UserByName(ctx, a.db, name)
			if err != nil {
				return access.Subject{}, rest.Status(http.StatusUnauthorized, "No user matches the client certificate's subject %q.", name)
			}
			return subjectOf(u)
		}
	}
	return access.Subject{}, nil
}

func safeMethod(m string) bool { return m == "GET" || m == "HEAD" || m == "OPTIONS" || m == "TRACE" }

func subjectOf(u meta.User) (access.Subject, error) {
	if !u.Active {
		return access.Subject{}, errInactive
	}
	return access.Subject{ID: u.ID, Username: u.Username, Superuser: u.Superuser, Staff: u.Staff}, nil
}

// basic checks a username and password. Failures are throttled per user and per client
// address; a throttled client still gets in with a password verified before.
func (a *authn) basic(ctx context.Context, addr, user, pw string) (access.Subject, error) {
	u, err := meta.UserByName(ctx, a.db, user)
	if err != nil && !errors.Is(err, meta.ErrNotFound) {
		return access.Subject{}, err
	}
	key := a.credKey(user, pw, u.PasswordHash)
	a.mu.Lock()
	_, known := a.verified[key]
	a.mu.Unlock()
	if known && u.PasswordHash != "" {
		return subjectOf(u)
	}
	now := time.Now()
	if wait := a.fails.wait(now, "user:"+user, "addr:"+addr); wait > 0 {
		return access.Subject{}, rest.Status(http.StatusTooManyRequests, "Request was throttled. Expected available in %d seconds.", int(math.Ceil(wait.Seconds())))
	}
	// The key derivation runs whether or not the user exists or has a password.
	if !meta.CheckPassword(u.PasswordHash, pw) {
		a.fails.fail(now, "user:"+user, "addr:"+addr)
		return access.Subject{}, errBadCredentials
	}
	if meta.NeedsRehash(u.PasswordHash) {
		if h, err := meta.HashPassword(pw); err == nil && meta.SetPasswordHash(ctx, a.db, u.ID, h) == nil {
			u.PasswordHash = h
			key = a.credKey(user, pw, h)
		}
	}
	a.mu.Lock()
	if len(a.verified) >= maxVerified {
		clear(a.verified)
	}
	a.verified[key] = struct{}{}
	a.mu.Unlock()
	return subjectOf(u)
}

func (a *authn) credKey(user, pw, hash string) [32]byte {
	m := hmac.New(sha256.New, a.secret[:])
	for _, s := range []string{user, pw, hash} {
		fmt.Fprintf(m, "%d:%s", len(s), s)
	}
	var k [32]byte
	copy(k[:], m.Sum(nil))
	return k
}

// remoteUser is the user a trusted proxy names; it is created on first sight, as
// Django's RemoteUserBackend does.
func (a *authn) remoteUser(ctx context.Context, name string) (access.Subject, error) {
	u, err := meta.UserByName(ctx, a.db, name)
	if errors.Is(err, meta.ErrNotFound) {
		if msg := validUsername(name); msg != "" {
			return access.Subject{}, rest.Status(http.StatusUnauthorized, "The user named by the %s header is not valid: %s", a.header, msg)
		}
		u, err = meta.CreateUser(ctx, a.db, meta.User{Username: name, Active: true})
		if errors.Is(err, meta.ErrConflict) {
			u, err = meta.UserByName(ctx, a.db, name)
		}
	}
	if err != nil {
		return access.Subject{}, err
	}
	return subjectOf(u)
}

// fromProxy reports whether a request comes from a trusted proxy.
func (a *authn) fromProxy(r *http.Request) bool {
	ip, err := netip.ParseAddr(hostOf(r.RemoteAddr))
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	for _, p := range a.proxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// clientAddr is the address failures are counted against: the peer, or behind a
// trusted proxy the address it reports last in X-Forwarded-For.
func (a *authn) clientAddr(r *http.Request) string {
	addr := hostOf(r.RemoteAddr)
	if a.fromProxy(r) {
		if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
			parts := strings.Split(xff, ",")
			addr = strings.TrimSpace(parts[len(parts)-1])
		}
	}
	return addr
}

func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// hashKey is how a session's cookie is stored: its SHA-256, so that the sessions table
// holds nothing a client could present.
func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// throttle counts authentication failures in token buckets: a key may fail failBurst
// times at once, then once every failEvery. It keeps at most maxThrottled keys,
// forgetting those whose buckets are full again first.
type throttle struct {
	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

const (
	failBurst    = 10
	failEvery    = 6 * time.Second
	maxThrottled = 100_000
)

func newThrottle() *throttle { return &throttle{buckets: map[string]*bucket{}} }

func (t *throttle) level(b *bucket, now time.Time) float64 {
	return min(failBurst, b.tokens+now.Sub(b.at).Seconds()/failEvery.Seconds())
}

// wait is how long until every key may fail again (0: now).
func (t *throttle) wait(now time.Time, keys ...string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	var w time.Duration
	for _, k := range keys {
		if b, ok := t.buckets[k]; ok {
			if lv := t.level(b, now); lv < 1 {
				w = max(w, time.Duration((1-lv)*float64(failEvery)))
			}
		}
	}
	return w
}

// fail takes a token from each key's bucket.
func (t *throttle) fail(now time.Time, keys ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buckets) >= maxThrottled {
		for k, b := range t.buckets {
			if t.level(b, now) >= failBurst {
				delete(t.buckets, k)
			}
		}
		if len(t.buckets) >= maxThrottled {
			clear(t.buckets)
		}
	}
	for _, k := range keys {
		b, ok := t.buckets[k]
		if !ok {
			b = &bucket{tokens: failBurst, at: now}
			t.buckets[k] = b
		}
		b.tokens, b.at = t.level(b, now)-1, now
	}
}
