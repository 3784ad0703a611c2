package ansible

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"pith/api/rest"
	"pith/internal/lru"
)

// The Galaxy API: pulp_ansible's v3 API (and the v1 roles API) under
// /pulp_ansible/galaxy/<base_path>/api/ and /pulp_ansible/galaxy/default/api/, which
// ansible-galaxy speaks. Every answer about what a distribution serves comes from the
// index of the repository version it serves (galaxy_index.go), built once per version
// and kept in a bounded cache: a version never changes, so neither does its index, and
// its answers carry an ETag a client may revalidate with.

// galaxyAPI is the state of the Galaxy API: where content is served and the caches.
type galaxyAPI struct {
	p *Plugin
	// contentOrigin is where the content app serves (download URLs point there); empty:
	// the origin of the request.
	contentOrigin string
	indexes       *indexCache
	// details are rendered version details (their manifests and file lists are large),
	// by index key and collection version.
	details *lru.Cache[string, []byte]
}

// Bounds of the Galaxy caches, in bytes (estimated for indexes).
const (
	maxIndexBytes  = 256 << 20
	maxDetailBytes = 64 << 20
)

func newGalaxy(p *Plugin) *galaxyAPI {
	return &galaxyAPI{p: p, indexes: newIndexCache(maxIndexBytes),
		details: lru.NewWeighted[string, []byte](maxDetailBytes, func(b []byte) int64 { return int64(len(b)) + 128 })}
}

// SetContentOrigin says where the content app serves (config's content-origin):
// collection download URLs point there, so that artifacts go through the content app
// and its redirects to object storage.
func (p *Plugin) SetContentOrigin(origin string) {
	p.galaxy.contentOrigin = strings.TrimSuffix(origin, "/")
}

// contentURL is the content app's URL of a path of a distribution.
func (g *galaxyAPI) contentURL(r *http.Request, basePath, path string) string {
	origin := g.contentOrigin
	if origin == "" {
		origin = rest.OriginOf(r.Context())
	}
	return origin + "/pulp/content/" + escapePath(basePath) + "/" + escapePath(path)
}

// escapePath escapes each segment of a path that may hold slashes (a base path).
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// dist is a distribution as the Galaxy API sees it: the repository version it serves.
type dist struct {
	ID       int64
	PulpID   string
	BasePath string
	// Repo is the repository it serves (or whose version it serves); nil: none.
	Repo *distRepo
	// Version is the version it serves (0: none), with its pulp_id, number and creation.
	Version       int64
	VersionPulpID string
	Number        int64
	Published     int64
	// Pinned: it serves one fixed version (repository_version), not the latest.
	Pinned bool
	// Guard is the pulp_id of its content guard ("" for none).
	Guard string
}

// distRepo is the repository a distribution serves.
type distRepo struct {
	ID      int64
	PulpID  string
	Private bool
	// Updated is when its row last changed: a part of the index key, so a change made
	// in place (rebuilt metadata) is not answered from an older index.
	Updated int64
}

// indexKey names what the distribution serves for the index cache and ETags.
func (d dist) indexKey() string {
	if d.Version == 0 {
		return ""
	}
	return d.VersionPulpID + ":" + itoa(d.Repo.Updated)
}

// errNoDistribution is the 404 of a base path no ansible distribution has.
var errNoDistribution = rest.ErrNotFound

// distribution finds the ansible distribution at a base path and what it serves, in one
// query.
func (p *Plugin) distribution(ctx context.Context, basePath string) (dist, error) {
	var d dist
	var repoID, verID, number, published, repoUpdated sql.NullInt64
	var repoPulp, verPulp, attrs sql.NullString
	var pinned sql.NullInt64
	var guard sql.NullString
	err := p.db.QueryRow(ctx, `SELECT d.id, d.pulp_id, d.base_path, d.repository_version_id, d.content_guard,
			r.id, r.pulp_id, r.attrs, r.updated, v.id, v.pulp_id, v.number, v.created
		FROM distributions d
		LEFT JOIN repository_versions fv ON fv.id = d.repository_version_id
		LEFT JOIN repositories r ON r.id = COALESCE(fv.repository_id, d.repository_id)
		LEFT JOIN repository_versions v ON v.id = COALESCE(fv.id,
			(SELECT lv.id FROM repository_versions lv WHERE lv.repository_id = d.repository_id ORDER BY lv.number DESC LIMIT 1))
		WHERE d.base_path = ? AND d.type = ?`, basePath, RepoType).Scan(
		&d.ID, &d.PulpID, &d.BasePath, &pinned, &guard, &repoID, &repoPulp, &attrs, &repoUpdated, &verID, &verPulp, &number, &published)
	if errors.Is(err, sql.ErrNoRows) {
		return d, errNoDistribution
	}
	if err != nil {
		return d, err
	}
	d.Pinned, d.Guard = pinned.Valid, guard.String
	if repoID.Valid {
		d.Repo = &distRepo{ID: repoID.Int64, PulpID: repoPulp.String, Updated: repoUpdated.Int64,
			Private: decodeAttrs[repoAttrs](json.RawMessage(attrs.String)).Private}
	}
	if verID.Valid && d.Repo != nil {
		d.Version, d.VersionPulpID, d.Number, d.Published = verID.Int64, verPulp.String, number.Int64, published.Int64
	}
	return d, nil
}

// distBasePath is the base path of the distribution a request names: the
// distro_base_path of the plugin URLs, else the {path} of the legacy ones.
func distBasePath(r *http.Request) string {
	if bp := r.PathValue("distro_base_path"); bp != "" {
		return bp
	}
	return r.PathValue("path")
}

// served resolves the distribution a request names and the index of what it serves;
// a distribution serving nothing has an empty index.
func (p *Plugin) served(r *http.Request) (dist, *vindex, error) {
	d, err := p.distribution(r.Context(), distBasePath(r))
	if err != nil {
		return d, nil, err
	}
	ix, err := p.galaxy.indexes.get(r.Context(), p, d)
	return d, ix, err
}

// notModified sets the ETag and caching headers of a GET answered from what the
// distribution serves and reports whether the client already has it (answered 304).
// The tag names the served version (and its repository's last change), the request's
// path and query and the origins its absolute links use, so it changes whenever the
// answer may.
func (g *galaxyAPI) notModified(w http.ResponseWriter, r *http.Request, d dist) bool {
	h := sha256.New()
	for _, s := range []string{d.indexKey(), d.BasePath, r.URL.EscapedPath(), r.URL.RawQuery, rest.OriginOf(r.Context()), g.contentOrigin} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	tag := `"` + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
	w.Header().Set("ETag", tag)
	// A distribution may move to another version at any time: clients keep the answer
	// but ask again each time, and a 304 costs the server no rendering.
	w.Header().Set("Cache-Control", "private, no-cache")
	for _, t := range strings.Split(r.Header.Get("If-None-Match"), ",") {
		if t = strings.TrimPrefix(strings.TrimSpace(t), "W/"); t == tag || t == "*" {
			w.WriteHeader(http.StatusNotModified)
			return true
		}
	}
	return false
}

// galaxyURLs builds the links pulp_ansible's serializers give: below
// /pulp_ansible/galaxy/<path>/api/v3/plugin/ansible/content/<distro_base_path>/, where
// path is the request's {path}, or the distribution's base path for the default root.
type galaxyURLs struct{ base string }

func urlsOf(r *http.Request, basePath string) galaxyURLs {
	path := r.PathValue("path")
	if path == "" {
		path = basePath
	}
	return galaxyURLs{base: GalaxyRoot + escapePath(path) + "/api/v3/plugin/ansible/content/" + escapePath(basePath) + "/collections/"}
}

func (u galaxyURLs) collection(namespace, name string) string {
	return u.base + "index/" + url.PathEscape(namespace) + "/" + url.PathEscape(name) + "/"
}

func (u galaxyURLs) versions(namespace, name string) string {
	return u.collection(namespace, name) + "versions/"
}

func (u galaxyURLs) version(namespace, name, version string) string {
	return u.versions(namespace, name) + url.PathEscape(version) + "/"
}

// defaultRoot is where pulp_ansible's plugin URLs are reversed to when a request names
// no {path}: the legacy URLs redirect there, and imports are found there.
const defaultRoot = GalaxyRoot + "default/api/v3/plugin/ansible/"

// legacyRedirect answers a legacy v3 URL as pulp_ansible does: 302 to the plugin URL
// of the distribution {path} names, the query kept. Under the default root there is no
// distribution to name (pulp_ansible's ANSIBLE_DEFAULT_DISTRIBUTION_PATH is unset): 404.
func (p *Plugin) legacyRedirect(target func(r *http.Request) string) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		path := r.PathValue("path")
		if path == "" {
			return rest.ErrNotFound
		}
		loc := defaultRoot + "content/" + escapePath(path) + "/" + target(r)
		if r.URL.RawQuery != "" {
			loc += "?" + r.URL.RawQuery
		}
		w.Header().Set("Location", loc)
		w.WriteHeader(http.StatusFound)
		return nil
	}
}
