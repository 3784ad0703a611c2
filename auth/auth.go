package auth

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
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"pith/api/access"
	"pith/meta"
)

// Django's names for the cookies and the header of a login session, and its age.
const (
	SessionCookie = "sessionid"
	CSRFCookie    = "csrftoken"
	csrfHeader    = "X-CSRFToken"
	SessionAge    = 14 * 24 * time.Hour // Django's SESSION_COOKIE_AGE
)

// Error is an authentication that failed: the HTTP status to answer (401, 403 for a
// missing CSRF token, 429 for a throttled client) and what to say.
type Error struct {
	Status int
	Detail string
}

func (e *Error) Error() string { return e.Detail }

func fail(status int, format string, args ...any) error {
	return &Error{Status: status, Detail: fmt.Sprintf(format, args...)}
}

// Authenticator authenticates requests.
type Authenticator struct {
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

// Config is what an Authenticator believes.
type Config struct {
	// Header names the header a trusted reverse proxy puts the authenticated user's name
	// in ("" for none); it is believed only from TrustedProxies.
	Header         string
	TrustedProxies []netip.Prefix
	// CertUser names the user a request's verified TLS client certificate names (nil:
	// certificates name nobody).
	CertUser func(r *http.Request) (string, bool)
}

// maxVerified bounds the remembered passwords; the memory is forgotten when full.
const maxVerified = 10_000

// New is an Authenticator of the users in db.
func New(db *meta.DB, cfg Config) *Authenticator {
	a := &Authenticator{db: db, verified: map[[32]byte]struct{}{}, fails: newThrottle(), header: cfg.Header, proxies: cfg.TrustedProxies,
		certUser: cfg.CertUser}
	rand.Read(a.secret[:])
	return a
}

var (
	errBadCredentials = &Error{http.StatusUnauthorized, "Invalid username/password."}
	errInactive       = &Error{http.StatusUnauthorized, "User inactive or deleted."}
	errCSRF           = &Error{http.StatusForbidden, "CSRF Failed: CSRF token missing or incorrect."}
)

// Authenticate names the user a request runs as; the zero Subject for none. A failure
// is an *Error, or the store's error.
func (a *Authenticator) Authenticate(r *http.Request) (access.Subject, error) {
	ctx := r.Context()
	if user, pw, ok := r.BasicAuth(); ok {
		return a.basic(ctx, a.clientAddr(r), user, pw)
	}
	if strings.HasPrefix(strings.ToLower(r.Header.Get("Authorization")), "basic ") {
		return access.Subject{}, fail(http.StatusUnauthorized, "Invalid basic header. Credentials not correctly base64 encoded.")
	}
	if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
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
		if name := r.Header.Get(a.header); name != "" && a.FromProxy(r) {
			return a.remoteUser(ctx, name)
		}
	}
	// A verified client certificate names the user of the same name; one naming nobody
	// leaves the request anonymous: hosts present certificates for the content app's
	// certificate guards, and must still reach what anyone may.
	if a.certUser != nil {
		if name, ok := a.certUser(r); ok {
			u, err := meta.UserByName(ctx, a.db, name)
			if err == nil {
				return subjectOf(u)
			}
			if !errors.Is(err, meta.ErrNotFound) {
				return access.Subject{}, err
			}
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
func (a *Authenticator) basic(ctx context.Context, addr, user, pw string) (access.Subject, error) {
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
		return access.Subject{}, fail(http.StatusTooManyRequests, "Request was throttled. Expected available in %d seconds.", int(math.Ceil(wait.Seconds())))
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

func (a *Authenticator) credKey(user, pw, hash string) [32]byte {
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
func (a *Authenticator) remoteUser(ctx context.Context, name string) (access.Subject, error) {
	u, err := meta.UserByName(ctx, a.db, name)
	if errors.Is(err, meta.ErrNotFound) {
		if msg := ValidUsername(name); msg != "" {
			return access.Subject{}, fail(http.StatusUnauthorized, "The user named by the %s header is not valid: %s", a.header, msg)
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

// FromProxy reports whether a request comes from a trusted proxy (whose headers naming
// the user, the client address or its certificate may be believed).
func (a *Authenticator) FromProxy(r *http.Request) bool {
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
func (a *Authenticator) clientAddr(r *http.Request) string {
	addr := hostOf(r.RemoteAddr)
	if a.FromProxy(r) {
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

// Session is a new login session: its cookie's value, its CSRF token and its expiry.
type Session struct {
	Key, CSRF string
	Expires   time.Time
}

// StartSession stores a new login session of a user (and removes expired ones).
func StartSession(ctx context.Context, db *meta.DB, userID int64) (Session, error) {
	s := Session{Key: randomToken(), CSRF: randomToken(), Expires: time.Now().Add(SessionAge)}
	if err := meta.CreateSession(ctx, db, hashKey(s.Key), userID, s.CSRF, s.Expires.UnixMicro()); err != nil {
		return Session{}, err
	}
	// Expired sessions go as new ones come: the table holds only live ones and those
	// since the last login.
	return s, meta.DeleteExpiredSessions(ctx, db)
}

// EndSession removes the session of a cookie's value.
func EndSession(ctx context.Context, db *meta.DB, key string) error {
	return meta.DeleteSession(ctx, db, hashKey(key))
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

var usernameRE = regexp.MustCompile(`^[\pL\pN_.@+-]+$`)

// ValidUsername is Django's rule for usernames ("" when valid, else the message).
func ValidUsername(name string) string {
	switch {
	case name == "":
		return "This field may not be blank."
	case utf8.RuneCountInString(name) > 150:
		return "Ensure this field has no more than 150 characters."
	case !usernameRE.MatchString(name):
		return "Enter a valid username. This value may contain only letters, numbers, and @/./+/-/_ characters."
	}
	return ""
}
