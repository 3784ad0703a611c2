package testgalaxy

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Role is a legacy (v1) role as Galaxy lists it.
type Role struct {
	Namespace, Name string   // the role is Namespace.Name; Namespace is its owner's username
	Versions        []string // release tags, e.g. "1.0.0"; the archive of each is made by RoleArchive
	Description     string
	// GitHubUser and GitHubRepo name the repository Galaxy imported the role from, which
	// the archive URLs name: Namespace and "ansible-role-"+Name when empty.
	GitHubUser, GitHubRepo string
}

type role struct {
	Role
	id         int
	versionIDs []int
}

var (
	roleNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`)
	tagRE      = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}$`)
)

func (s *Server) addRole(r Role) error {
	if r.GitHubUser == "" {
		r.GitHubUser = r.Namespace
	}
	if r.GitHubRepo == "" {
		r.GitHubRepo = "ansible-role-" + r.Name
	}
	for _, f := range [][2]string{{"namespace", r.Namespace}, {"name", r.Name}, {"github user", r.GitHubUser}, {"github repo", r.GitHubRepo}} {
		if !roleNameRE.MatchString(f[1]) {
			return fmt.Errorf("role %s.%s: %s %q: want up to 64 letters, digits, '_', '.' and '-'", r.Namespace, r.Name, f[0], f[1])
		}
	}
	if len(r.Versions) > 1000 {
		return fmt.Errorf("role %s.%s: %d versions, at most 1000", r.Namespace, r.Name, len(r.Versions))
	}
	for _, v := range r.Versions {
		if !tagRE.MatchString(v) {
			return fmt.Errorf("role %s.%s: version %q: want up to 64 letters, digits, '_', '.', '+' and '-'", r.Namespace, r.Name, v)
		}
	}
	for _, o := range s.roles {
		if strings.EqualFold(o.Namespace, r.Namespace) && strings.EqualFold(o.Name, r.Name) {
			return fmt.Errorf("role %s.%s: given twice", r.Namespace, r.Name)
		}
	}
	ro := &role{Role: r, id: len(s.roles) + 1}
	for range r.Versions {
		s.nextID++
		ro.versionIDs = append(ro.versionIDs, s.nextID)
	}
	s.roles = append(s.roles, ro)
	return nil
}

func (s *Server) roleRoutes(mux *http.ServeMux, api string) {
	mux.HandleFunc("GET "+api+"v1/roles/{$}", s.roleList)
	mux.HandleFunc("GET "+api+"v1/roles/{id}/{$}", s.roleDetail)
	mux.HandleFunc("GET "+api+"v1/roles/{id}/versions/{$}", s.roleVersions)
	mux.HandleFunc("GET /{user}/{repo}/archive/{file}", s.roleArchive)
}

// roleList is /api/v1/roles/: filtered by owner__username (namespace__name is the
// same), name and id, each matched without regard to case as Galaxy does; other
// parameters are ignored as Django's filters ignore them.
func (s *Server) roleList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	owner := q.Get("owner__username")
	if owner == "" {
		owner = q.Get("namespace__name")
	}
	var out []any
	for _, ro := range s.roles {
		if owner != "" && !strings.EqualFold(owner, ro.Namespace) ||
			q.Get("name") != "" && !strings.EqualFold(q.Get("name"), ro.Name) ||
			q.Get("id") != "" && q.Get("id") != strconv.Itoa(ro.id) {
			continue
		}
		out = append(out, s.roleJSON(ro))
	}
	s.v1Page(w, r, out)
}

func (s *Server) findRole(w http.ResponseWriter, r *http.Request) *role {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || id < 1 || id > len(s.roles) {
		v1Error(w, http.StatusNotFound, "Not found.")
		return nil
	}
	return s.roles[id-1]
}

func (s *Server) roleDetail(w http.ResponseWriter, r *http.Request) {
	if ro := s.findRole(w, r); ro != nil {
		writeJSON(w, http.StatusOK, s.roleJSON(ro))
	}
}

// roleVersions is /api/v1/roles/<id>/versions/: each with the download_url
// ansible-galaxy fetches the archive from (the GitHub-shaped path on this server).
func (s *Server) roleVersions(w http.ResponseWriter, r *http.Request) {
	ro := s.findRole(w, r)
	if ro == nil {
		return
	}
	out := []any{}
	for i, v := range ro.Versions {
		out = append(out, map[string]any{
			"id": ro.versionIDs[i], "name": v, "version": v, "active": true,
			"download_url": s.archiveURL(ro, v),
			"created":      timestamp(s.start), "modified": timestamp(s.start),
			"commit_date": timestamp(s.start), "commit_sha": "",
			"url": "", "related": map[string]any{}, "summary_fields": map[string]any{},
		})
	}
	s.v1Page(w, r, out)
}

func (s *Server) archiveURL(ro *role, v string) string {
	return fmt.Sprintf("%s/%s/%s/archive/%s.tar.gz", s.URL, ro.GitHubUser, ro.GitHubRepo, v)
}

// roleJSON is a role as galaxy.ansible.com's v1 API gives it: pulp_ansible's role sync
// reads name, summary_fields.namespace.name, summary_fields.versions[].name,
// github_user and github_repo; ansible-galaxy reads id (and github_* when a version has
// no download_url).
func (s *Server) roleJSON(ro *role) map[string]any {
	versions := []any{}
	for i, v := range ro.Versions {
		versions = append(versions, map[string]any{"id": ro.versionIDs[i], "name": v, "release_date": timestamp(s.start)})
	}
	ns := map[string]any{"id": ro.id, "name": ro.Namespace}
	return map[string]any{
		"id":      ro.id,
		"url":     fmt.Sprintf("%sapi/v1/roles/%d/", s.prefix, ro.id),
		"related": map[string]string{"versions": fmt.Sprintf("%sapi/v1/roles/%d/versions/", s.prefix, ro.id)},
		"summary_fields": map[string]any{
			"namespace": ns, "provider_namespace": ns,
			"repository":   map[string]string{"name": ro.GitHubRepo, "original_name": ro.GitHubRepo},
			"dependencies": []any{}, "tags": []any{}, "versions": versions,
		},
		"role_type": "ANS", "name": ro.Name, "username": ro.Namespace, "description": ro.Description,
		"github_user": ro.GitHubUser, "github_repo": ro.GitHubRepo, "github_branch": "main", "commit": "",
		"download_count": 0, "active": true, "is_valid": true, "min_ansible_version": "2.9",
		"created": timestamp(s.start), "modified": timestamp(s.start),
	}
}

// v1Page writes one page of items as Galaxy's v1 API pages (page and page_size, 10 a
// page unless asked, at most MaxPage): next and previous as absolute URLs, next_link
// and previous_link as paths, which ansible-galaxy follows.
func (s *Server) v1Page(w http.ResponseWriter, r *http.Request, items []any) {
	size, err := intParam(r, "page_size", min(10, s.cfg.MaxPage), 1, s.cfg.MaxPage)
	if err == nil {
		var page int
		if page, err = intParam(r, "page", 1, 1, 0); err == nil {
			pages := max(1, (len(items)+size-1)/size)
			if page > pages {
				v1Error(w, http.StatusNotFound, "Invalid page.")
				return
			}
			link := func(p int) (abs, path any) {
				if p < 1 || p > pages {
					return nil, nil
				}
				q := r.URL.Query()
				q.Set("page", strconv.Itoa(p))
				path = r.URL.Path + "?" + q.Encode()
				return s.URL + path.(string), path
			}
			next, nextLink := link(page + 1)
			prev, prevLink := link(page - 1)
			lo := min((page-1)*size, len(items))
			hi := min(lo+size, len(items))
			writeJSON(w, http.StatusOK, map[string]any{
				"count": len(items), "cur_page": page, "num_pages": pages,
				"next": next, "next_link": nextLink, "previous": prev, "previous_link": prevLink,
				"results": append([]any{}, items[lo:hi]...),
			})
			return
		}
	}
	v1Error(w, http.StatusBadRequest, err.Error())
}

// roleArchive serves /<github_user>/<github_repo>/archive/<version>.tar.gz as GitHub
// would for the role's tag.
func (s *Server) roleArchive(w http.ResponseWriter, r *http.Request) {
	v, ok := strings.CutSuffix(r.PathValue("file"), ".tar.gz")
	for _, ro := range s.roles {
		if !ok || ro.GitHubUser != r.PathValue("user") || ro.GitHubRepo != r.PathValue("repo") {
			continue
		}
		for _, have := range ro.Versions {
			if have == v {
				b := RoleArchive(ro.Role, v)
				w.Header().Set("Content-Type", "application/x-gzip")
				w.Header().Set("Content-Length", strconv.Itoa(len(b)))
				w.Write(b)
				return
			}
		}
	}
	http.NotFound(w, r)
}

// RoleArchive is the archive GitHub makes of a role's release tag: one top directory,
// <github_repo>-<version>/, holding meta/main.yml, tasks/main.yml and README.md. The
// same role and version give the same bytes.
func RoleArchive(r Role, version string) []byte {
	repo := r.GitHubRepo
	if repo == "" {
		repo = "ansible-role-" + r.Name
	}
	top := repo + "-" + version + "/"
	files := []struct{ name, body string }{
		{"README.md", fmt.Sprintf("# %s.%s\n\nA role made by pith's testgalaxy, version %s.\n", r.Namespace, r.Name, version)},
		{"meta/main.yml", fmt.Sprintf(`galaxy_info:
  role_name: %s
  namespace: %s
  author: testgalaxy
  description: %q
  license: MIT
  min_ansible_version: "2.9"
  platforms:
    - name: GenericLinux
      versions: [all]
  galaxy_tags: []
dependencies: []
`, r.Name, r.Namespace, r.Description)},
		{"tasks/main.yml", fmt.Sprintf(`- name: Say which role this is
  ansible.builtin.debug:
    msg: "%s.%s %s"
`, r.Namespace, r.Name, version)},
	}
	mtime := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, d := range []string{top, top + "meta/", top + "tasks/"} {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: mtime})
	}
	for _, f := range files {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: top + f.name, Mode: 0o644, Size: int64(len(f.body)), ModTime: mtime})
		tw.Write([]byte(f.body))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}
