package ansible

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"pith/api/rest"
)

// Galaxy's v1 roles API, what `ansible-galaxy role install` asks: anonymous, in
// pulpcore's pages ({count, next, previous, results}, 100 a page) and plain errors.

type v1Role struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

type v1RoleVersion struct {
	Name   string `json:"name"`
	Source string `json:"source"`
}

// Paging of the v1 lists: pulpcore's LimitOffsetPagination.
const (
	v1DefaultLimit = 100
	v1MaxLimit     = 1000
)

// v1PageOf is the pulpcore page of items [offset, offset+limit) of n.
func v1PageOf(r *http.Request, n int, item func(i int) any) map[string]any {
	q := r.URL.Query()
	limit, offset := v1DefaultLimit, 0
	if l, err := strconv.Atoi(q.Get("limit")); err == nil && l > 0 {
		limit = min(l, v1MaxLimit)
	}
	if o, err := strconv.Atoi(q.Get("offset")); err == nil && o > 0 {
		offset = min(o, n)
	}
	link := func(off int) any {
		v := r.URL.Query()
		v.Set("limit", strconv.Itoa(limit))
		v.Set("offset", strconv.Itoa(off))
		return rest.OriginOf(r.Context()) + (&url.URL{Path: r.URL.Path, RawQuery: v.Encode()}).String()
	}
	out := map[string]any{"count": n, "next": nil, "previous": nil}
	if offset+limit < n {
		out["next"] = link(offset + limit)
	}
	if offset > 0 {
		out["previous"] = link(max(offset-limit, 0))
	}
	results := []any{}
	for i := offset; i < min(offset+limit, n); i++ {
		results = append(results, item(i))
	}
	out["results"] = results
	return out
}

// v1Served is the index of what the v1 route's distribution serves.
func (p *Plugin) v1Served(r *http.Request) (dist, *vindex, error) {
	d, ix, err := p.served(r)
	if err == errNoDistribution {
		return d, nil, rest.Status(http.StatusNotFound, "No AnsibleDistribution matches the given query.")
	}
	return d, ix, err
}

// rolesList is v1/roles/: one item per role, owner__username and name matched without
// regard to case.
func (p *Plugin) rolesList(w http.ResponseWriter, r *http.Request) error {
	_, ix, err := p.v1Served(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	var roles []*irole
	for _, role := range ix.roles {
		if o, ok := q["owner__username"]; ok && !strings.EqualFold(o[0], role.Namespace) {
			continue
		}
		if n, ok := q["name"]; ok && !strings.EqualFold(n[0], role.Name) {
			continue
		}
		roles = append(roles, role)
	}
	return writeGalaxy(w, http.StatusOK, v1PageOf(r, len(roles), func(i int) any {
		return v1Role{ID: roles[i].Namespace + "." + roles[i].Name, Name: roles[i].Name, Namespace: roles[i].Namespace}
	}))
}

// roleVersions is v1/roles/<namespace>.<name>/versions/: each version with the content
// app's URL of its archive.
func (p *Plugin) roleVersions(w http.ResponseWriter, r *http.Request) error {
	d, ix, err := p.v1Served(r)
	if err != nil {
		return err
	}
	ns, name, ok := strings.Cut(r.PathValue("role"), ".")
	if !ok || strings.Contains(name, ".") {
		return rest.BadField("role", "A role is named <namespace>.<name>.")
	}
	var versions []iroleVersion
	for _, role := range ix.roles {
		if role.Namespace == ns && role.Name == name {
			versions = role.Versions
		}
	}
	return writeGalaxy(w, http.StatusOK, v1PageOf(r, len(versions), func(i int) any {
		return v1RoleVersion{Name: versions[i].Version, Source: p.galaxy.contentURL(r, d.BasePath, versions[i].RelativePath)}
	}))
}
