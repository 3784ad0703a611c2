package ansible

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
)

// /pulp/api/v3/ansible/collections/: the collections of every stored collection version
// ({"name", "namespace"}), objects that hold object roles. pith keeps no row for a
// collection: it exists while a version of it is stored, and its pulp_id is derived
// from its name (collectionID).

// collectionItem is a collection as /pulp/api/v3/ansible/collections/ shows it.
type collectionItem struct {
	Name      string `json:"name" openapi:"desc=The name of the Collection."`
	Namespace string `json:"namespace" openapi:"desc=The namespace of the Collection."`
}

// storedCollection is a collection with what its list orders by.
type storedCollection struct {
	collectionItem
	id               string
	created, updated int64
}

// declareCollections adds the collection list and detail and the object kind that gives
// collections their role operations.
func (p *Plugin) declareCollections(t *rest.Table) {
	const tag = "Ansible: Collections"
	pat := href.Root + "ansible/collections/"
	item := t.Schema("ansible.CollectionResponse", collectionItem{})
	spec := collectionSpec()
	t.Add(rest.Op{ID: "ansible_collections_list", Viewset: "ansible/collections", Method: "GET", Path: pat, Pattern: pat + "{$}", Tag: tag,
		List: &spec, Responses: []openapi.Response{rest.Resp(200, t.Paginated(item))}, Handler: p.collectionList})
	t.Add(rest.Op{ID: "ansible_collections_read", Viewset: "ansible/collections", Method: "GET", Path: "{ansible_collection_href}", Pattern: pat + "{id}/{$}",
		Tag: tag, Detail: true, Responses: []openapi.Response{rest.Resp(200, item)}, Handler: p.collectionRead})
	t.Object(rest.ObjectKind{Model: "ansible.collection", Collection: "ansible/collections/", Viewset: "ansible/collections", Prefix: "ansible_collections",
		Href: "{ansible_collection_href}", Tag: tag, Exists: func(ctx context.Context, id string) (bool, error) {
			cs, err := p.storedCollections(ctx)
			return slices.ContainsFunc(cs, func(c storedCollection) bool { return c.id == id }), err
		}})
}

// collectionSpec is the collection list's filters and orderings. The list is made in
// Go (collectionList): ParseList only checks the request against them.
func collectionSpec() rest.ListSpec {
	spec := rest.ListSpec{Filters: append([]rest.Filter{{Name: "name", Lookups: []string{"exact"}}, {Name: "namespace", Lookups: []string{"exact"}}},
		rest.IdentityFilters("c.pulp_id")...), Ordering: map[string]string{}}
	for k := range storedOrder {
		spec.Ordering[k] = "c.id"
	}
	return spec
}

// storedOrder are the orderings of the collection list.
var storedOrder = map[string]func(a, b storedCollection) int{
	"name":              func(a, b storedCollection) int { return strings.Compare(a.Name, b.Name) },
	"namespace":         func(a, b storedCollection) int { return strings.Compare(a.Namespace, b.Namespace) },
	"pulp_created":      func(a, b storedCollection) int { return compareInts(a.created, b.created) },
	"pk":                func(a, b storedCollection) int { return compareInts(a.created, b.created) },
	"pulp_last_updated": func(a, b storedCollection) int { return compareInts(a.updated, b.updated) },
	"pulp_id":           func(a, b storedCollection) int { return strings.Compare(a.id, b.id) },
}

// storedCollections are the collections of the stored collection versions, oldest
// first.
func (p *Plugin) storedCollections(ctx context.Context) ([]storedCollection, error) {
	rows, err := p.db.Query(ctx, `SELECT c.repo_key, MIN(c.created), MAX(c.updated) FROM contents c WHERE c.type = ? GROUP BY c.repo_key`, CollectionVersionType)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byName := map[string]*storedCollection{}
	var out []*storedCollection
	for rows.Next() {
		var key string
		var created, updated int64
		if err := rows.Scan(&key, &created, &updated); err != nil {
			return nil, err
		}
		coll, _, _ := strings.Cut(key, ":")
		ns, name, _ := strings.Cut(coll, ".")
		c := byName[coll]
		if c == nil {
			c = &storedCollection{collectionItem: collectionItem{Name: name, Namespace: ns}, id: collectionID(ns, name), created: created, updated: updated}
			byName[coll] = c
			out = append(out, c)
		}
		c.created, c.updated = min(c.created, created), max(c.updated, updated)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	res := make([]storedCollection, len(out))
	for i, c := range out {
		res[i] = *c
	}
	slices.SortFunc(res, storedOrder["pulp_created"])
	return res, nil
}

// collectionList is ansible_collections_list.
func (p *Plugin) collectionList(w http.ResponseWriter, r *http.Request) error {
	q, err := rest.ParseList(r, p.db.Dialect(), collectionSpec())
	if err != nil {
		return err
	}
	cs, err := p.storedCollections(r.Context())
	if err != nil {
		return err
	}
	v := r.URL.Query()
	ids := map[string]bool{}
	for _, param := range []string{"pulp_id__in", "pulp_href__in", "prn__in"} {
		for _, s := range rest.SplitComma(v[param]) {
			ids[s[strings.LastIndexAny(strings.TrimSuffix(s, "/"), "/:")+1:]] = true
		}
	}
	cs = slices.DeleteFunc(cs, func(c storedCollection) bool {
		if n, ok := v["name"]; ok && n[0] != c.Name {
			return true
		}
		if n, ok := v["namespace"]; ok && n[0] != c.Namespace {
			return true
		}
		return len(ids) > 0 && !ids[c.id]
	})
	for _, k := range slices.Backward(rest.SplitComma(v["ordering"])) {
		cmp, ok := storedOrder[strings.TrimPrefix(k, "-")]
		if !ok {
			return rest.BadField("ordering", "Select a valid choice. %s is not one of the available choices.", k)
		}
		if strings.HasPrefix(k, "-") {
			asc := cmp
			cmp = func(a, b storedCollection) int { return -asc(a, b) }
		}
		slices.SortStableFunc(cs, cmp)
	}
	from := min(q.List.Offset, len(cs))
	to := len(cs)
	if q.List.Limit > 0 {
		to = min(from+q.List.Limit, len(cs))
	}
	items := make([]any, 0, to-from)
	for _, c := range cs[from:to] {
		items = append(items, c.collectionItem)
	}
	return rest.WritePage(w, r, q, int64(len(cs)), items)
}

// collectionRead is ansible_collections_read.
func (p *Plugin) collectionRead(w http.ResponseWriter, r *http.Request) error {
	cs, err := p.storedCollections(r.Context())
	if err != nil {
		return err
	}
	for _, c := range cs {
		if c.id == r.PathValue("id") {
			return rest.WriteOne(w, r, http.StatusOK, c.collectionItem)
		}
	}
	return rest.ErrNotFound
}
