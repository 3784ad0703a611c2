package ansible

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
	"pith/content/ansible/collection"
	"pith/meta"
)

// The cross-repository search (plugin/ansible/search/collection-versions/): every
// collection version of every repository version a distribution serves, with whether it
// is its collection's highest there, deprecated, signed. pulp_ansible keeps an index
// table for it, updated on new versions and distribution changes (with the gaps
// PULP.md §3.10 tells); pith answers from the served versions' indexes, always current,
// so the rebuild has nothing to do.

// searchItem is one result (CollectionVersionSearchListResponse).
type searchItem struct {
	Repository        searchRepo         `json:"repository"`
	CollectionVersion collectionSummary  `json:"collection_version"`
	RepositoryVersion string             `json:"repository_version" openapi:"readOnly"`
	NamespaceMetadata *namespaceResponse `json:"namespace_metadata" openapi:"nullable"`
	IsHighest         bool               `json:"is_highest"`
	IsDeprecated      bool               `json:"is_deprecated"`
	IsSigned          bool               `json:"is_signed"`
}

type searchRepo struct {
	rest.RepoResponse
	RetainCheckpoints *int64 `json:"retain_checkpoints"`
}

type collectionSummary struct {
	PulpHref        string            `json:"pulp_href"`
	Namespace       string            `json:"namespace"`
	Name            string            `json:"name"`
	Version         string            `json:"version"`
	RequiresAnsible *string           `json:"requires_ansible"`
	PulpCreated     string            `json:"pulp_created"`
	Contents        []any             `json:"contents"`
	Dependencies    map[string]string `json:"dependencies"`
	Description     string            `json:"description"`
	Tags            []tagResponse     `json:"tags"`
}

// searchRow is a candidate result before rendering.
type searchRow struct {
	repo    *meta.Repository
	dist    []dist // the distributions serving this repository version
	version string // "latest" or the number
	cv      *icv
	attrs   cvAttrs
	ns      *meta.Content
	highest bool
}

// searchParams declares the search's query parameters, for the document.
func searchParams() []openapi.Param {
	str := openapi.Schema{Type: "string"}
	var ps []openapi.Param
	for _, n := range []string{"dependency", "keywords", "name", "namespace", "q", "repository_label", "repository_version", "tags", "version", "version_range"} {
		ps = append(ps, openapi.Query(n, str, ""))
	}
	for _, n := range []string{"deprecated", "highest", "is_deprecated", "is_highest", "is_signed", "signed"} {
		ps = append(ps, openapi.Query(n, openapi.Schema{Type: "boolean"}, ""))
	}
	for _, n := range []string{"distribution", "distribution_base_path", "repository", "repository_name"} {
		ps = append(ps, openapi.Repeated(n, str, ""))
	}
	return append(ps, openapi.CSV("order_by", openapi.Schema{Type: "string", Enum: []string{"-name", "-namespace", "-pulp_created", "-version", "name", "namespace", "pulp_created", "version"}}, ""),
		openapi.Query("limit", openapi.Schema{Type: "integer"}, "Number of results to return per page."),
		openapi.Query("offset", openapi.Schema{Type: "integer"}, "The initial index from which to return the results."))
}

// searchRows gathers the candidates: each repository version some distribution serves,
// once.
func (p *Plugin) searchRows(ctx context.Context) ([]searchRow, error) {
	ds, _, err := meta.ListDistributions(ctx, p.db, meta.List{Where: []string{"d.type = ?"}, Args: []any{RepoType}})
	if err != nil {
		return nil, err
	}
	type servedKey struct {
		repo    int64
		version string
	}
	seen := map[servedKey]int{} // index in groups
	type group struct {
		d     dist
		dists []dist
	}
	var groups []group
	for _, md := range ds {
		d, err := p.distribution(ctx, md.BasePath)
		if err != nil || d.Version == 0 {
			continue
		}
		v := "latest"
		if d.Pinned {
			v = strconv.FormatInt(d.Number, 10)
		}
		k := servedKey{d.Repo.ID, v}
		if i, ok := seen[k]; ok {
			groups[i].dists = append(groups[i].dists, d)
			continue
		}
		seen[k] = len(groups)
		groups = append(groups, group{d: d, dists: []dist{d}})
	}
	var rows []searchRow
	for _, g := range groups {
		ix, err := p.galaxy.indexes.get(ctx, p, g.d)
		if err != nil {
			return nil, err
		}
		repo, err := meta.RepositoryByID(ctx, p.db, g.d.Repo.ID)
		if err != nil {
			return nil, err
		}
		l := meta.List{}
		inServed(&l, g.d, CollectionVersionType)
		cs, _, err := meta.ListContent(ctx, p.db, l)
		if err != nil {
			return nil, err
		}
		nl := meta.List{}
		inServed(&nl, g.d, NamespaceType)
		nss, _, err := meta.ListContent(ctx, p.db, nl)
		if err != nil {
			return nil, err
		}
		nsByName := map[string]*meta.Content{}
		for i := range nss {
			nsByName[nss[i].RepoKey] = &nss[i]
		}
		version := "latest"
		if g.d.Pinned {
			version = strconv.FormatInt(g.d.Number, 10)
		}
		for _, c := range cs {
			v := ix.byID[c.ID]
			if v == nil {
				continue
			}
			a := decodeAttrs[cvAttrs](c.Attrs)
			rows = append(rows, searchRow{repo: &repo, dist: g.dists, version: version, cv: v, attrs: a, ns: nsByName[a.Namespace],
				highest: v == searchHighest(v.Coll)})
		}
	}
	return rows, nil
}

// searchHighest is the search's highest version of a collection: the highest release,
// or the highest pre-release when there is none (pulp_ansible's is_highest).
func searchHighest(c *icoll) *icv {
	var best *icv
	for _, v := range c.Versions {
		if best == nil || (len(best.Sem.Prerelease) > 0) != (len(v.Sem.Prerelease) > 0) && len(v.Sem.Prerelease) == 0 ||
			(len(best.Sem.Prerelease) > 0) == (len(v.Sem.Prerelease) > 0) && v.Sem.Compare(best.Sem) > 0 {
			best = v
		}
	}
	return best
}

// searchFilter is one filter of the search: whether a row passes for the value.
type searchFilter func(r *searchRow, v string) (bool, error)

func boolFilter(get func(r *searchRow) bool) searchFilter {
	return func(r *searchRow, v string) (bool, error) {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return true, nil // pulp_ansible ignores a value that is not a boolean
		}
		return get(r) == b, nil
	}
}

var searchFilters = map[string]searchFilter{
	"name":          func(r *searchRow, v string) (bool, error) { return r.attrs.Name == v, nil },
	"namespace":     func(r *searchRow, v string) (bool, error) { return r.attrs.Namespace == v, nil },
	"version":       func(r *searchRow, v string) (bool, error) { return r.attrs.Version == v, nil },
	"is_highest":    boolFilter(func(r *searchRow) bool { return r.highest }),
	"highest":       boolFilter(func(r *searchRow) bool { return r.highest }),
	"is_deprecated": boolFilter(func(r *searchRow) bool { return r.cv.Coll.Deprecated }),
	"deprecated":    boolFilter(func(r *searchRow) bool { return r.cv.Coll.Deprecated }),
	"is_signed":     boolFilter(func(r *searchRow) bool { return len(r.cv.Signatures) > 0 }),
	"signed":        boolFilter(func(r *searchRow) bool { return len(r.cv.Signatures) > 0 }),
	"tags": func(r *searchRow, v string) (bool, error) {
		for t := range strings.SplitSeq(v, ",") {
			if t = strings.TrimSpace(t); t != "" && !slices.Contains(r.attrs.Tags, t) {
				return false, nil
			}
		}
		return true, nil
	},
	"dependency": func(r *searchRow, v string) (bool, error) { _, ok := r.attrs.Dependencies[v]; return ok, nil },
	"version_range": func(r *searchRow, v string) (bool, error) {
		rg, err := collection.ParseRange(v)
		if err != nil {
			return false, rest.FieldErrors{"non_field_errors": {"version_range must be a valid semantic version range."}}
		}
		return rg.Match(r.cv.Sem), nil
	},
	"q":        keywords,
	"keywords": keywords,
	"repository": func(r *searchRow, v string) (bool, error) {
		return r.repo.PulpID == v || href.Repository(RepoType, r.repo.PulpID) == v, nil
	},
	"repository_name": func(r *searchRow, v string) (bool, error) { return r.repo.Name == v, nil },
	"repository_label": func(r *searchRow, v string) (bool, error) {
		k, val, hasVal := strings.Cut(v, "=")
		got, ok := r.repo.Labels[k]
		return ok && (!hasVal || got == val), nil
	},
	"repository_version": func(r *searchRow, v string) (bool, error) { return r.version == v, nil },
	"distribution": func(r *searchRow, v string) (bool, error) {
		return slices.ContainsFunc(r.dist, func(d dist) bool { return d.PulpID == v }), nil
	},
	"distribution_base_path": func(r *searchRow, v string) (bool, error) {
		return slices.ContainsFunc(r.dist, func(d dist) bool { return d.BasePath == v }), nil
	},
}

// keywords matches words in the namespace, name, description and tags (pulp_ansible:
// a ranked full-text search).
func keywords(r *searchRow, v string) (bool, error) {
	text := strings.ToLower(strings.Join(append([]string{r.attrs.Namespace, r.attrs.Name, r.attrs.Description}, r.attrs.Tags...), " "))
	for w := range strings.FieldsSeq(strings.ToLower(v)) {
		if !strings.Contains(text, w) {
			return false, nil
		}
	}
	return true, nil
}

// repeatable are the search filters a row passes when it matches any of the values.
var repeatable = map[string]bool{"repository": true, "repository_name": true, "distribution": true, "distribution_base_path": true}

// searchOrder orders rows by an order_by key.
var searchOrder = map[string]func(a, b *searchRow) int{
	"pulp_created": func(a, b *searchRow) int { return compareInts(a.cv.Created, b.cv.Created) },
	"namespace":    func(a, b *searchRow) int { return strings.Compare(a.attrs.Namespace, b.attrs.Namespace) },
	"name":         func(a, b *searchRow) int { return strings.Compare(a.attrs.Name, b.attrs.Name) },
	"version":      func(a, b *searchRow) int { return a.cv.Sem.Compare(b.cv.Sem) },
}

// searchList is plugin/ansible/search/collection-versions/.
func (p *Plugin) searchList(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var cmps []func(a, b *searchRow) int
	for _, k := range rest.SplitComma(q["order_by"]) {
		cmp, ok := searchOrder[strings.TrimPrefix(k, "-")]
		if !ok {
			return rest.BadField("order_by", "Select a valid choice. %s is not one of the available choices.", k)
		}
		if strings.HasPrefix(k, "-") {
			asc := cmp
			cmp = func(a, b *searchRow) int { return -asc(a, b) }
		}
		if strings.TrimPrefix(k, "-") == "version" {
			// pulp_ansible: ordering by version ignores every other key.
			cmps = []func(a, b *searchRow) int{cmp}
			break
		}
		cmps = append(cmps, cmp)
	}
	rows, err := p.searchRows(r.Context())
	if err != nil {
		return err
	}
	var out []*searchRow
	for i := range rows {
		ok, err := passes(&rows[i], q)
		if err != nil {
			return err
		}
		if ok {
			out = append(out, &rows[i])
		}
	}
	if len(cmps) == 0 {
		cmps = []func(a, b *searchRow) int{func(a, b *searchRow) int { return -compareInts(a.cv.Created, b.cv.Created) }}
	}
	slices.SortStableFunc(out, func(a, b *searchRow) int {
		for _, c := range cmps {
			if n := c(a, b); n != 0 {
				return n
			}
		}
		return 0
	})
	pg := pagingOf(r)
	from, to := pg.window(len(out))
	data := make([]any, 0, to-from)
	origin := rest.OriginOf(r.Context())
	for _, row := range out[from:to] {
		data = append(data, renderSearch(row, origin))
	}
	return writeGalaxy(w, http.StatusOK, pg.page(r, len(out), data))
}

// passes reports whether a row passes every filter of the query.
func passes(row *searchRow, q map[string][]string) (bool, error) {
	for name, vals := range q {
		f, ok := searchFilters[name]
		if !ok || len(vals) == 0 {
			continue
		}
		if !repeatable[name] {
			vals = vals[:1]
		}
		any := false
		for _, v := range vals {
			ok, err := f(row, v)
			if err != nil {
				return false, err
			}
			any = any || ok
		}
		if !any {
			return false, nil
		}
	}
	return true, nil
}

func renderSearch(row *searchRow, origin string) searchItem {
	repo := row.repo
	rr := searchRepo{RepoResponse: rest.RepoResponse{PulpHref: repoHref(repo.PulpID), Prn: href.PRN("ansible.ansiblerepository", repo.PulpID),
		PulpCreated: rest.Time(repo.Created), PulpLastUpdated: rest.Time(repo.Updated), VersionsHref: repoHref(repo.PulpID) + "versions/",
		PulpLabels: repo.Labels, LatestVersionHref: href.Version(RepoType, repo.PulpID, repo.LatestVersion), Name: repo.Name,
		Description: repo.Description, RetainRepoVersions: repo.RetainVersions}}
	if rr.PulpLabels == nil {
		rr.PulpLabels = map[string]string{}
	}
	if repo.RemotePulpID != nil {
		h := href.Remote(*repo.RemoteType, *repo.RemotePulpID)
		rr.Remote = &h
	}
	a := row.attrs
	cs := collectionSummary{PulpHref: cvHref(row.cv.PulpID), Namespace: a.Namespace, Name: a.Name, Version: a.Version, RequiresAnsible: a.RequiresAnsible,
		PulpCreated: rest.Time(row.cv.Created), Contents: []any{}, Dependencies: a.Dependencies, Description: a.Description, Tags: []tagResponse{}}
	if cs.Dependencies == nil {
		cs.Dependencies = map[string]string{}
	}
	for _, t := range a.Tags {
		cs.Tags = append(cs.Tags, tagResponse{Name: t})
	}
	out := searchItem{Repository: rr, CollectionVersion: cs, RepositoryVersion: row.version, IsHighest: row.highest,
		IsDeprecated: row.cv.Coll.Deprecated, IsSigned: len(row.cv.Signatures) > 0}
	if row.ns != nil {
		n := renderNamespace(*row.ns, origin)
		out.NamespaceMetadata = &n
	}
	return out
}

// searchRebuildIn is the rebuild's body as pulp_ansible's document declares it (the
// rebuild reads none of it).
type searchRebuildIn struct {
	Repository        map[string]any  `json:"repository" openapi:"type=object,required"`
	NamespaceMetadata *map[string]any `json:"namespace_metadata" openapi:"type=object,nullable,required"`
	IsHighest         bool            `json:"is_highest" openapi:"required"`
	IsDeprecated      bool            `json:"is_deprecated" openapi:"required"`
	IsSigned          bool            `json:"is_signed" openapi:"required"`
}

// searchRebuild is the search's rebuild: pith's search reads the served versions
// themselves, so there is nothing to rebuild.
func (p *Plugin) searchRebuild(w http.ResponseWriter, r *http.Request) error {
	io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
	rest.WriteJSON(w, http.StatusCreated, map[string]any{})
	return nil
}
