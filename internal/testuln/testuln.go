// Package testuln is a ULN server for tests: the XML-RPC API at /rpc/api answers
// auth.login with a session key (wrong credentials: an XML-RPC fault), and
// /XMLRPC/GET-REQ/<channel>/<path> serves the files of a channel's directory only to
// requests carrying a current key in X-ULN-API-User-Key (others: 403), as Oracle's
// linux-update.oracle.com does for pulp_rpm's UlnDownloader.
package testuln

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// keyHeader is the header of the session key.
const keyHeader = "X-ULN-API-User-Key"

// Server is a running ULN server.
type Server struct {
	*httptest.Server
	user, password string
	channels       map[string]string // label → directory

	mu          sync.Mutex
	keys        map[string]bool
	logins      int
	refused     int // file requests without a current key
	served      int
	expireAfter int      // drop every key once this many more files were served; 0: never
	bodies      []string // every XML-RPC request body
}

// New starts a ULN server with one account and channels (label → directory), closed
// when the test ends.
func New(t testing.TB, user, password string, channels map[string]string) *Server {
	s := &Server{user: user, password: password, channels: channels, keys: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /rpc/api", s.rpc)
	mux.HandleFunc("GET /XMLRPC/GET-REQ/{channel}/{path...}", s.file)
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// Logins is the number of successful logins.
func (s *Server) Logins() int { s.mu.Lock(); defer s.mu.Unlock(); return s.logins }

// Refused is the number of file requests refused for want of a current key.
func (s *Server) Refused() int { s.mu.Lock(); defer s.mu.Unlock(); return s.refused }

// Served is the number of files served.
func (s *Server) Served() int { s.mu.Lock(); defer s.mu.Unlock(); return s.served }

// Calls are the XML-RPC request bodies received.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

// ExpireAfter makes every session key expire once, after n more files were served.
func (s *Server) ExpireAfter(n int) { s.mu.Lock(); defer s.mu.Unlock(); s.expireAfter = n }

type param struct {
	String string `xml:"value>string"`
}

func (s *Server) rpc(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var call struct {
		Method string  `xml:"methodName"`
		Params []param `xml:"params>param"`
	}
	s.mu.Lock()
	s.bodies = append(s.bodies, string(b))
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/xml")
	if err := xml.Unmarshal(b, &call); err != nil || call.Method != "auth.login" || len(call.Params) != 2 {
		fault(w, -1, "unknown method or bad call")
		return
	}
	if call.Params[0].String != s.user || call.Params[1].String != s.password {
		fault(w, 2950, "Either the password or username is incorrect.")
		return
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	key := base64.RawURLEncoding.EncodeToString(raw) // 43 characters, as ULN's keys
	s.mu.Lock()
	s.keys[key] = true
	s.logins++
	s.mu.Unlock()
	fmt.Fprintf(w, "<?xml version='1.0'?>\n<methodResponse><params><param><value><string>%s</string></value></param></params></methodResponse>", key)
}

func fault(w http.ResponseWriter, code int, msg string) {
	fmt.Fprintf(w, "<?xml version='1.0'?>\n<methodResponse><fault><value><struct>"+
		"<member><name>faultCode</name><value><int>%d</int></value></member>"+
		"<member><name>faultString</name><value><string>%s</string></value></member>"+
		"</struct></value></fault></methodResponse>", code, msg)
}

func (s *Server) file(w http.ResponseWriter, r *http.Request) {
	dir, ok := s.channels[r.PathValue("channel")]
	s.mu.Lock()
	if !s.keys[r.Header.Get(keyHeader)] {
		s.refused++
		s.mu.Unlock()
		http.Error(w, "no valid session key", http.StatusForbidden)
		return
	}
	s.served++
	if s.expireAfter > 0 {
		if s.expireAfter--; s.expireAfter == 0 {
			clear(s.keys)
		}
	}
	s.mu.Unlock()
	p := r.PathValue("path")
	if !ok || strings.Contains(p, "..") {
		http.NotFound(w, r)
		return
	}
	http.ServeFileFS(w, r, os.DirFS(dir), p)
}
