package ansible_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"pith/content/ansible/collection"
)

// A Galaxy v3 server for sync tests, laid out as pulp_ansible's: the API root at /api/
// (the remote's url is the server's root, so the sync finds it by appending "api/"),
// collections and versions paged by limit and offset (at most maxPage per page, to make
// the client follow links.next), details with manifest and files, docs blobs, the
// unpaginated list of every version when unpaginated is set, and artifacts under
// /download/. Hook, when set, sees every request first and may answer it.

// fixtureVersion is a collection version the fixture serves.
type fixtureVersion struct {
	ns, name, version string
	deps              map[string]string
	signed            bool
	marks             []string
	tarball           []byte
	sha256            string
	// served replaces the artifact's bytes (the listed sha256 stays the tarball's).
	served []byte
}

func (v *fixtureVersion) full() string     { return v.ns + "." + v.name }
func (v *fixtureVersion) filename() string { return v.ns + "-" + v.name + "-" + v.version + ".tar.gz" }

type galaxyFixture struct {
	t           *testing.T
	srv         *httptest.Server
	mu          sync.Mutex
	versions    []*fixtureVersion
	published   string
	unpaginated bool
	maxPage     int
	hook        func(w http.ResponseWriter, r *http.Request) bool
	requests    []string
	auth        []string // the Authorization of each API request
}

func newGalaxy(t *testing.T) *galaxyFixture {
	t.Helper()
	g := &galaxyFixture{t: t, published: "2026-01-02T03:04:05.123456Z", maxPage: 10}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.srv.Close)
	return g
}

// URL is what a remote names: the server's root.
func (g *galaxyFixture) URL() string { return g.srv.URL + "/" }

// add serves a generated collection version.
func (g *galaxyFixture) add(ns, name, version string, deps map[string]string) *fixtureVersion {
	g.t.Helper()
	v := &fixtureVersion{ns: ns, name: name, version: version, deps: deps}
	v.tarball = buildCollection(g.t, ns, name, version, deps)
	s := sha256.Sum256(v.tarball)
	v.sha256 = hex.EncodeToString(s[:])
	g.mu.Lock()
	g.versions = append(g.versions, v)
	g.mu.Unlock()
	return v
}

func (g *galaxyFixture) requested(prefix string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, r := range g.requests {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

func (g *galaxyFixture) serve(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.requests = append(g.requests, r.URL.Path)
	if strings.HasPrefix(r.URL.Path, "/api/") {
		g.auth = append(g.auth, r.Header.Get("Authorization"))
	}
	hook := g.hook
	g.mu.Unlock()
	if hook != nil && hook(w, r) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	p := r.URL.Path
	switch {
	case p == "/api/":
		writeJSON(w, map[string]any{"available_versions": map[string]string{"v3": "v3/"}, "current_version": "v3"})
	case p == "/api/v3/":
		writeJSON(w, map[string]any{"published": g.published})
	case p == "/api/v3/collections/":
		var items []any
		seen := map[string]bool{}
		for _, v := range g.versions {
			if !seen[v.full()] {
				seen[v.full()] = true
				items = append(items, map[string]any{"namespace": v.ns, "name": v.name, "deprecated": false,
					"href": "/api/v3/collections/" + v.ns + "/" + v.name + "/"})
			}
		}
		g.page(w, r, items)
	case p == "/api/v3/collection_versions/all/" && g.unpaginated:
		var items []any
		for _, v := range g.versions {
			items = append(items, g.entry(v, false))
		}
		writeJSON(w, items)
	case strings.HasPrefix(p, "/api/v3/collections/"):
		parts := strings.Split(strings.Trim(strings.TrimPrefix(p, "/api/v3/collections/"), "/"), "/")
		if len(parts) < 3 || parts[2] != "versions" {
			http.NotFound(w, r)
			return
		}
		var mine []*fixtureVersion
		for _, v := range g.versions {
			if v.ns == parts[0] && v.name == parts[1] {
				mine = append(mine, v)
			}
		}
		if len(mine) == 0 {
			http.NotFound(w, r)
			return
		}
		switch len(parts) {
		case 3:
			var items []any
			for _, v := range mine {
				items = append(items, map[string]any{"version": v.version, "href": g.href(v), "requires_ansible": ">=2.14.0", "marks": []any{}})
			}
			g.page(w, r, items)
		case 4, 5:
			i := slices.IndexFunc(mine, func(v *fixtureVersion) bool { return v.version == parts[3] })
			if i < 0 || (len(parts) == 5 && parts[4] != "docs-blob") {
				http.NotFound(w, r)
				return
			}
			if len(parts) == 5 {
				writeJSON(w, map[string]any{"docs_blob": map[string]any{"collection_readme": map[string]string{"name": "README.md", "html": "<p>from upstream " + mine[i].full() + "</p>"},
					"documentation_files": []any{}, "contents": []any{}}})
				return
			}
			writeJSON(w, g.entry(mine[i], true))
		default:
			http.NotFound(w, r)
		}
	case strings.HasPrefix(p, "/download/"):
		for _, v := range g.versions {
			if p == "/download/"+v.filename() {
				b := v.tarball
				if v.served != nil {
					b = v.served
				}
				w.Header().Set("Content-Length", strconv.Itoa(len(b)))
				w.Write(b)
				return
			}
		}
		http.NotFound(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (g *galaxyFixture) href(v *fixtureVersion) string {
	return "/api/v3/collections/" + v.ns + "/" + v.name + "/versions/" + v.version + "/"
}

// entry is a version as pulp_ansible's serializers show it: its detail (with manifest and
// files), or an entry of the unpaginated list.
func (g *galaxyFixture) entry(v *fixtureVersion, detail bool) map[string]any {
	deps := v.deps
	if deps == nil {
		deps = map[string]string{}
	}
	sigs := []any{}
	if v.signed {
		sigs = append(sigs, map[string]any{"signature": "-----BEGIN PGP SIGNATURE-----\nx\n-----END PGP SIGNATURE-----\n",
			"pubkey_fingerprint": "0123456789abcdef", "signing_service": nil, "pulp_created": g.published})
	}
	e := map[string]any{
		"version": v.version, "href": g.href(v), "created_at": g.published, "updated_at": g.published, "requires_ansible": ">=2.14.0",
		"marks": append([]string{}, v.marks...), "artifact": map[string]any{"filename": v.filename(), "sha256": v.sha256, "size": len(v.tarball)},
		"collection":   map[string]any{"id": "x", "name": v.name, "href": "/api/v3/collections/" + v.ns + "/" + v.name + "/"},
		"download_url": g.srv.URL + "/download/" + v.filename(), "name": v.name,
		"namespace": map[string]any{"name": v.ns, "metadata_sha256": nil}, "signatures": sigs,
		"metadata": map[string]any{"authors": []string{"Fixture <f@example.com>"}, "dependencies": deps, "description": "upstream " + v.full(),
			"documentation": nil, "homepage": "https://example.com", "issues": nil, "license": []string{"GPL-3.0-or-later"},
			"repository": "https://example.com/" + v.full(), "tags": []string{"fixture"},
			"contents": []any{map[string]any{"name": "upstream_module", "content_type": "module", "description": "from upstream"}}},
		"git_url": nil, "git_commit_sha": nil,
	}
	if detail {
		e["manifest"] = map[string]any{"collection_info": map[string]any{"namespace": v.ns, "name": v.name, "version": v.version}, "format": 1}
		e["files"] = map[string]any{"files": []any{map[string]any{"name": "README.md", "ftype": "file"}}, "format": 1}
	}
	return e
}

// page answers a page of items as pulp_ansible's v3 pagination does.
func (g *galaxyFixture) page(w http.ResponseWriter, r *http.Request, items []any) {
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	if limit <= 0 || limit > g.maxPage {
		limit = g.maxPage
	}
	end := min(offset+limit, len(items))
	var next any
	if end < len(items) {
		next = fmt.Sprintf("%s?limit=%d&offset=%d", r.URL.Path, limit, end)
	}
	data := items[min(offset, len(items)):end]
	if data == nil {
		data = []any{}
	}
	writeJSON(w, map[string]any{"meta": map[string]any{"count": len(items)}, "links": map[string]any{"first": nil, "previous": nil, "next": next, "last": nil},
		"data": data})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// buildCollection writes a valid collection tarball the way ansible-galaxy builds one:
// MANIFEST.json, FILES.json (every file's sha256), then the files.
func buildCollection(t testing.TB, ns, name, version string, deps map[string]string) []byte {
	t.Helper()
	if deps == nil {
		deps = map[string]string{}
	}
	files := map[string]string{
		"README.md":               "# " + ns + "." + name + "\n\nVersion " + version + ".\n",
		"meta/runtime.yml":        "---\nrequires_ansible: '>=2.14.0'\n",
		"plugins/modules/ping.py": "DOCUMENTATION = r'''\nmodule: ping\nshort_description: Ping from " + name + "\n'''\n",
	}
	var names []string
	dirs := map[string]bool{}
	for n := range files {
		names = append(names, n)
		for d := path.Dir(n); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	entries := []any{map[string]any{"name": ".", "ftype": "dir", "chksum_type": nil, "chksum_sha256": nil, "format": 1}}
	for _, n := range names {
		if dirs[n] {
			entries = append(entries, map[string]any{"name": n, "ftype": "dir", "chksum_type": nil, "chksum_sha256": nil, "format": 1})
		} else {
			entries = append(entries, map[string]any{"name": n, "ftype": "file", "chksum_type": "sha256", "chksum_sha256": hexSum(files[n]), "format": 1})
		}
	}
	filesJSON, _ := json.Marshal(map[string]any{"files": entries, "format": 1})
	manifest, _ := json.Marshal(map[string]any{
		"collection_info": map[string]any{"namespace": ns, "name": name, "version": version, "authors": []string{"Fixture <f@example.com>"},
			"readme": "README.md", "tags": []string{"fixture"}, "description": "A fixture", "license": []string{"GPL-3.0-or-later"},
			"license_file": nil, "dependencies": deps, "repository": "https://example.com/" + ns + "." + name, "documentation": nil,
			"homepage": "https://example.com", "issues": nil},
		"file_manifest_file": map[string]any{"name": "FILES.json", "ftype": "file", "chksum_type": "sha256", "chksum_sha256": hexSum(string(filesJSON)), "format": 1},
		"format":             1,
	})
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	write := func(name string, body string, dir bool) {
		h := &tar.Header{Name: name, Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(body)), Format: tar.FormatPAX}
		if dir {
			h.Name, h.Typeflag, h.Mode, h.Size = name+"/", tar.TypeDir, 0o755, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	write("MANIFEST.json", string(manifest), false)
	write("FILES.json", string(filesJSON), false)
	for _, n := range names {
		write(n, files[n], dirs[n])
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	// The fixture's tarballs are valid collections.
	if _, err := collection.Read(bytes.NewReader(buf.Bytes()), collection.Options{}); err != nil {
		t.Fatalf("generated %s.%s %s: %v", ns, name, version, err)
	}
	return buf.Bytes()
}

func hexSum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
