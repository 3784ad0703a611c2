package testgalaxy

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Bounds of what the server accepts and keeps.
const (
	maxURI         = 4096     // request path and query
	maxPageDefault = 100      // page sizes when Config.MaxPage is zero
	maxUpload      = 16 << 20 // a publish body, as sent (base64 and all)
	maxCollections = 200      // collection versions held
	maxImports     = 1000     // import tasks kept
	maxStored      = 64 << 20 // their artifacts' bytes together
	maxLog         = 10000    // requests recorded; later ones are counted only
	maxParts       = 8        // parts of a publish body
)

// Config says what a Server serves and how.
type Config struct {
	// Prefix is the path in front of "api/": "/" (Galaxy's own layout, the default) or a
	// distribution's, "/pulp_ansible/galaxy/<base_path>/".
	Prefix string
	// Token is the credential publishing needs ("Authorization: Token <Token>");
	// Username and Password, when set, are accepted too, as HTTP Basic. Reads need none,
	// but a request carrying credentials that match neither is refused (401) wherever
	// it goes, as Pulp refuses them. With no credential configured nothing can publish.
	Token              string
	Username, Password string
	// MaxPage caps page sizes (v3 limit, v1 page_size); 100 when zero. A small value
	// makes clients follow next links.
	MaxPage int
	// Roles are the v1 roles served, with ids 1, 2, … in this order.
	Roles []Role
	// TLS serves HTTPS with a certificate for 127.0.0.1 that Server.CAFile holds.
	TLS bool
	// RedirectDownloads answers artifact downloads with a 302 to a presigned-looking URL
	// on this server that, like S3 for a presigned request, refuses a request carrying
	// an Authorization header too: as pith's content app redirects to object storage.
	RedirectDownloads bool
}

// Request is what the server recorded of one request.
type Request struct {
	Method      string
	URI         string // path and query, as sent
	Auth        string // the scheme of the Authorization header ("Token", "Basic"), or ""
	ContentType string
	UserAgent   string
	Parts       []Part // a multipart body's parts, for a publish
	Status      int
}

// Part is one part of a multipart body as sent.
type Part struct {
	Name, Filename, ContentType, TransferEncoding string
	Size                                          int64 // bytes as sent, before any decoding
}

// String is the request's line in a log: "GET /api/ 200".
func (r Request) String() string {
	s := fmt.Sprintf("%s %s %d", r.Method, r.URI, r.Status)
	if r.Auth != "" {
		s += " auth=" + r.Auth
	}
	for _, p := range r.Parts {
		s += fmt.Sprintf(" part[%s filename=%q type=%s encoding=%s %dB]", p.Name, p.Filename, p.ContentType, p.TransferEncoding, p.Size)
	}
	return s
}

// Server is a running Galaxy fixture.
type Server struct {
	URL    string // http://127.0.0.1:port; stands in for https://github.com in role archive URLs
	API    string // the API root clients are given: URL + Prefix + "api/"
	CAFile string // with Config.TLS: the PEM file of the certificate to trust

	cfg    Config
	prefix string
	start  time.Time

	mu          sync.Mutex
	roles       []*role
	collections map[string]*version // by "namespace.name-version"
	stored      int64
	imports     map[string]*importTask
	nextID      int
	log         []Request
	dropped     int
}

var prefixRE = regexp.MustCompile(`^(/[A-Za-z0-9._-]+)*/$`)

// New starts a Galaxy fixture serving cfg until the test ends.
func New(t testing.TB, cfg Config) *Server {
	t.Helper()
	s, err := newServer(cfg)
	if err != nil {
		t.Fatalf("testgalaxy: %v", err)
	}
	ts := httptest.NewUnstartedServer(s.handler())
	ts.Config.ReadHeaderTimeout = 10 * time.Second
	ts.Config.MaxHeaderBytes = 64 << 10
	ts.Config.ErrorLog = log.New(logWriter{t}, "testgalaxy: ", 0) // a client refusing the certificate, say
	if cfg.TLS {
		ts.StartTLS()
		s.CAFile = filepath.Join(t.TempDir(), "testgalaxy-ca.pem")
		pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
		if err := os.WriteFile(s.CAFile, pemBytes, 0o644); err != nil {
			t.Fatal(err)
		}
	} else {
		ts.Start()
	}
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	s.API = ts.URL + s.prefix + "api/"
	return s
}

// logWriter sends the HTTP server's own messages to the test's log.
type logWriter struct{ t testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func newServer(cfg Config) (*Server, error) {
	s := &Server{cfg: cfg, prefix: cfg.Prefix, start: time.Now().UTC().Truncate(time.Second),
		collections: map[string]*version{}, imports: map[string]*importTask{}}
	if s.prefix == "" {
		s.prefix = "/"
	}
	if !prefixRE.MatchString(s.prefix) || len(s.prefix) > 256 || s.prefix != "/" && path.Clean(s.prefix)+"/" != s.prefix {
		return nil, fmt.Errorf("prefix %q: want /, or /segment/…/ of letters, digits, '.', '_' and '-'", cfg.Prefix)
	}
	if s.cfg.MaxPage <= 0 {
		s.cfg.MaxPage = maxPageDefault
	}
	for _, r := range cfg.Roles {
		if err := s.addRole(r); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Requests returns the requests recorded so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// ResetRequests forgets the requests recorded so far.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log, s.dropped = nil, 0
}

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	api := s.prefix + "api/"
	mux.HandleFunc("GET "+api+"{$}", s.root)
	s.roleRoutes(mux, api)
	s.collectionRoutes(mux, api)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		req := Request{Method: r.Method, URI: r.RequestURI, ContentType: r.Header.Get("Content-Type"), UserAgent: r.UserAgent()}
		if a := r.Header.Get("Authorization"); a != "" {
			req.Auth, _, _ = strings.Cut(a, " ")
		}
		// The handler adds the parts of a publish body to the record.
		r = r.WithContext(withRecord(r.Context(), &req))
		switch {
		case len(r.RequestURI) > maxURI:
			v3Error(rec, http.StatusRequestURITooLong, "invalid", fmt.Sprintf("the request URI is longer than %d bytes", maxURI))
		case s.auth(r) == authBad:
			v3Error(rec, http.StatusUnauthorized, "authentication_failed", "Invalid token or username/password.")
		default:
			mux.ServeHTTP(rec, r)
		}
		req.Status = rec.status
		s.mu.Lock()
		if len(s.log) < maxLog {
			s.log = append(s.log, req)
		} else {
			s.dropped++
		}
		s.mu.Unlock()
	})
}

// root is the API root: the versions a Pulp distribution offers.
func (s *Server) root(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"available_versions": map[string]string{"v1": "v1/", "v3": "v3/"},
		"current_version":    "v3",
	})
}

type authResult int

const (
	authNone authResult = iota // no credentials sent
	authOK
	authBad
)

func (s *Server) auth(r *http.Request) authResult {
	h := r.Header.Get("Authorization")
	if h == "" {
		return authNone
	}
	scheme, cred, _ := strings.Cut(h, " ")
	switch {
	case strings.EqualFold(scheme, "Token") && s.cfg.Token != "" && equal(cred, s.cfg.Token):
		return authOK
	case strings.EqualFold(scheme, "Basic") && s.cfg.Username != "":
		b, err := base64.StdEncoding.DecodeString(cred)
		user, pw, _ := strings.Cut(string(b), ":")
		if err == nil && equal(user, s.cfg.Username) && equal(pw, s.cfg.Password) {
			return authOK
		}
	}
	return authBad
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// recorder keeps the status a handler wrote.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encoding the response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// v3Error writes Galaxy v3's error document.
func v3Error(w http.ResponseWriter, status int, code, detail string) {
	writeJSON(w, status, map[string]any{"errors": []map[string]string{{
		"status": strconv.Itoa(status), "code": code, "title": http.StatusText(status), "detail": detail,
	}}})
}

// v1Error writes the Django REST framework error document of Galaxy's v1 API.
func v1Error(w http.ResponseWriter, status int, detail string) {
	writeJSON(w, status, map[string]string{"detail": detail})
}

// intParam reads an integer query parameter: absent is def; below min, or not an
// integer, is an error naming it; above max (when max > 0) is max, as Django REST
// framework caps page sizes.
func intParam(r *http.Request, name string, def, min, max int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || len(v) > 9 || n < min {
		return 0, fmt.Errorf("%s: %q is not an integer from %d below 10^9", name, v, min)
	}
	if max > 0 && n > max {
		n = max
	}
	return n, nil
}

type recordKey struct{}

func withRecord(ctx context.Context, req *Request) context.Context {
	return context.WithValue(ctx, recordKey{}, req)
}

// record is the log entry of the request being served.
func record(r *http.Request) *Request {
	req, _ := r.Context().Value(recordKey{}).(*Request)
	if req == nil {
		return &Request{}
	}
	return req
}

// timestamp is a time in the API's format.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }
