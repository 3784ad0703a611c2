package serve

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// listDir renders a directory of a distribution as Pulp does: ../, then directories,
// then files.
func (s *Server) listDir(w http.ResponseWriter, r *http.Request, res resolution) {
	seen := map[string]bool{}
	var dirs, files []string
	for _, p := range res.entries {
		rest := strings.TrimPrefix(p, res.prefix)
		name, _, isDir := strings.Cut(rest, "/")
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		if isDir {
			dirs = append(dirs, name+"/")
		} else {
			files = append(files, name)
		}
	}
	writeIndex(w, r, append(dirs, files...))
}

func writeIndex(w http.ResponseWriter, r *http.Request, names []string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if r.Method == http.MethodHead {
		return
	}
	p := html.EscapeString(r.URL.Path)
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html>\n<head><title>Index of %s</title></head>\n<body>\n<h1>Index of %s</h1>\n<hr><pre><a href=\"../\">../</a>\n", p, p)
	for _, n := range names {
		fmt.Fprintf(w, "<a href=\"%s\">%s</a>\n", html.EscapeString(href(n)), html.EscapeString(n))
	}
	fmt.Fprint(w, "</pre><hr></body>\n</html>\n")
}

// href is the link to a name in a listing: its escaped path, after "./" when a colon
// comes before any slash, which would make the name a URL of that scheme (a unit from a
// hostile upstream named javascript:alert(document.domain)).
func href(name string) string {
	p := (&url.URL{Path: name}).EscapedPath()
	if i := strings.IndexByte(p, ':'); i >= 0 && !strings.Contains(p[:i], "/") {
		return "./" + p
	}
	return p
}

// listDistributions lists the top level: the first segment of every visible base path.
func (s *Server) listDistributions(w http.ResponseWriter, r *http.Request, t *distTable) {
	s.listBasePaths(w, r, t, "")
}

// listBasePaths lists the base paths under a prefix that is not itself a distribution,
// or answers 404 when none are.
func (s *Server) listBasePaths(w http.ResponseWriter, r *http.Request, t *distTable, prefix string) {
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	seen := map[string]bool{}
	var names []string
	for bp, d := range t.byPath {
		if d.Hidden || !strings.HasPrefix(bp+"/", prefix) {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(bp, prefix), "/")
		if name != "" && !seen[name] {
			seen[name] = true
			names = append(names, name+"/")
		}
	}
	if len(names) == 0 && prefix != "" {
		http.Error(w, "no distribution serves "+r.URL.Path, http.StatusNotFound)
		return
	}
	if prefix != "" && !strings.HasSuffix(r.URL.Path, "/") {
		http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
		return
	}
	sort.Strings(names)
	writeIndex(w, r, names)
}
