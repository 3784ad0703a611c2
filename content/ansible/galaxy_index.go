package ansible

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/uuid"

	"pith/content/ansible/collection"
	"pith/internal/lru"
	"pith/meta"
)

// vindex is the Galaxy index of one repository version: its collections, each with its
// versions in pulp_ansible's list order, the highest one, whether it is deprecated; for
// each version what the Galaxy lists show of it (marks, requires_ansible, times) and
// its signatures; the namespaces' metadata and the roles. Lists and details are answered
// from it without scanning attrs in SQL. A version never changes, so an index is built
// once, on first use, and never goes stale (its key also names the repository's last
// change, for metadata rebuilt in place).
type vindex struct {
	key        string
	colls      []*icoll // by namespace, then name
	byName     map[string]*icoll
	byID       map[int64]*icv
	namespaces map[string]inamespace
	roles      []*irole // by namespace, then name
	cost       int64    // estimated bytes
}

// icoll is a collection in a version.
type icoll struct {
	Namespace, Name string
	Deprecated      bool
	// Versions are newest first (pulp_created descending), pulp_ansible's default order.
	Versions []*icv
	// Highest is pulp_ansible's highest_version: the greatest major, minor, patch, then
	// prerelease compared as text (so 1.0.0-rc1 above 1.0.0, as Pulp orders them), then
	// the newest.
	Highest *icv
	// Created is its oldest version's creation (pulp_ansible: the Collection's row);
	// Updated its highest version's last change.
	Created, Updated int64
}

// icv is a collection version in a version.
type icv struct {
	ID              int64
	PulpID          string
	Version         string
	Sem             collection.SemVer
	Created         int64
	Updated         int64
	RequiresAnsible *string
	Marks           []string // values, sorted
	Signatures      []int64  // signature units in the version
	Coll            *icoll
}

// inamespace is a namespace's metadata unit in a version.
type inamespace struct {
	ID     int64
	PulpID string
	SHA256 string
}

// irole is a legacy role with its versions in a version.
type irole struct {
	Namespace, Name string
	Versions        []iroleVersion // by version text
}

type iroleVersion struct {
	Version, RelativePath string
}

func (ix *vindex) collection(namespace, name string) *icoll {
	return ix.byName[namespace+"."+name]
}

// version finds a collection version by namespace, name and version.
func (ix *vindex) version(namespace, name, version string) *icv {
	c := ix.collection(namespace, name)
	if c == nil {
		return nil
	}
	for _, v := range c.Versions {
		if v.Version == version {
			return v
		}
	}
	return nil
}

// highestFirst is pulp_ansible's order of a collection's versions for highest_version.
func highestFirst(a, b *icv) int {
	for _, d := range [3]int{b.Sem.Major - a.Sem.Major, b.Sem.Minor - a.Sem.Minor, b.Sem.Patch - a.Sem.Patch} {
		if d != 0 {
			return d
		}
	}
	if c := strings.Compare(strings.Join(b.Sem.Prerelease, "."), strings.Join(a.Sem.Prerelease, ".")); c != 0 {
		return c
	}
	return newestFirst(a, b)
}

// newestFirst orders by creation, newest first (pulp_created descending), then by key.
func newestFirst(a, b *icv) int {
	if a.Created != b.Created {
		if a.Created > b.Created {
			return -1
		}
		return 1
	}
	return int(b.ID - a.ID)
}

// collectionNamespace is the namespace of the UUIDs of ansible collections.
var collectionNamespace = uuid.MustParse("1f3e5f4a-3b8e-5d8e-9a0c-6e1b2c7d9f10")

// collectionID is the pulp_id of the collection namespace.name: derived from its name,
// so that a collection needs no row of its own (it exists while a version of it does)
// and holds the same id, and the object roles given on it, across its versions' comings
// and goings.
func collectionID(namespace, name string) string {
	return uuid.NewSHA1(collectionNamespace, []byte(namespace+"."+name)).String()
}

// buildIndex reads what a version holds of the ansible kinds, in one query.
func (p *Plugin) buildIndex(ctx context.Context, d dist) (*vindex, error) {
	ix := &vindex{key: d.indexKey(), byName: map[string]*icoll{}, byID: map[int64]*icv{}, namespaces: map[string]inamespace{}}
	if d.Version == 0 {
		return ix, nil
	}
	dia := p.db.Dialect()
	rows, err := p.db.Query(ctx, `SELECT c.id, c.pulp_id, c.type, c.repo_key, c.relative_path, c.digest, c.created, c.updated,
			CASE WHEN c.type = ? THEN `+dia.JSONText("c.attrs", "requires_ansible")+` END,
			CASE WHEN c.type IN (?, ?) THEN c.attrs ELSE '' END
		FROM repository_content rc JOIN contents c ON c.id = rc.content_id
		WHERE rc.repository_id = ? AND `+meta.InVersion("rc", "?")+` AND c.type IN (?, ?, ?, ?, ?, ?)`,
		CollectionVersionType, SignatureType, MarkType, d.Repo.ID, d.Number, d.Number,
		CollectionVersionType, SignatureType, DeprecationType, MarkType, NamespaceType, RoleType)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type ref struct {
		cv    string // pulp_id of the collection version
		id    int64
		value string
	}
	var sigs, marks []ref
	deprecated := map[string]bool{}
	roles := map[string]*irole{}
	byPulp := map[string]*icv{}
	for rows.Next() {
		var id, created, updated int64
		var pulpID, typ, repoKey, relPath, digest, attrs string
		var requires sql.NullString
		if err := rows.Scan(&id, &pulpID, &typ, &repoKey, &relPath, &digest, &created, &updated, &requires, &attrs); err != nil {
			return nil, err
		}
		ix.cost += 96
		switch typ {
		case CollectionVersionType:
			coll, version, _ := strings.Cut(repoKey, ":")
			namespace, name, _ := strings.Cut(coll, ".")
			c := ix.byName[coll]
			if c == nil {
				c = &icoll{Namespace: namespace, Name: name}
				ix.byName[coll] = c
				ix.colls = append(ix.colls, c)
				ix.cost += 128 + int64(len(coll))
			}
			sem, _ := collection.ParseVersion(version)
			v := &icv{ID: id, PulpID: pulpID, Version: version, Sem: sem, Created: created, Updated: updated, Coll: c}
			if requires.Valid {
				v.RequiresAnsible = &requires.String
			}
			ix.cost += 160 + int64(len(version)+len(requires.String))
			c.Versions = append(c.Versions, v)
			ix.byID[id] = v
			byPulp[pulpID] = v
		case SignatureType:
			sigs = append(sigs, ref{cv: decodeAttrs[sigAttrs](json.RawMessage(attrs)).SignedCollection, id: id})
		case MarkType:
			a := decodeAttrs[markAttrs](json.RawMessage(attrs))
			marks = append(marks, ref{cv: a.MarkedCollection, value: a.Value})
		case DeprecationType:
			deprecated[repoKey] = true
		case NamespaceType:
			ix.namespaces[repoKey] = inamespace{ID: id, PulpID: pulpID, SHA256: digest}
		case RoleType:
			parts := strings.SplitN(repoKey, "/", 3)
			if len(parts) != 3 {
				continue
			}
			k := parts[0] + "." + parts[1]
			r := roles[k]
			if r == nil {
				r = &irole{Namespace: parts[0], Name: parts[1]}
				roles[k] = r
				ix.roles = append(ix.roles, r)
			}
			r.Versions = append(r.Versions, iroleVersion{Version: parts[2], RelativePath: relPath})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, s := range sigs {
		if v := byPulp[s.cv]; v != nil {
			v.Signatures = append(v.Signatures, s.id)
		}
	}
	for _, m := range marks {
		if v := byPulp[m.cv]; v != nil {
			v.Marks = append(v.Marks, m.value)
		}
	}
	slices.SortFunc(ix.colls, func(a, b *icoll) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	for _, c := range ix.colls {
		c.Deprecated = deprecated[c.Namespace+"."+c.Name]
		c.Highest = slices.MinFunc(c.Versions, highestFirst)
		c.Updated = c.Highest.Updated
		slices.SortFunc(c.Versions, newestFirst)
		c.Created = c.Versions[len(c.Versions)-1].Created
		for _, v := range c.Versions {
			slices.Sort(v.Marks)
			slices.Sort(v.Signatures)
		}
	}
	slices.SortFunc(ix.roles, func(a, b *irole) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	for _, r := range ix.roles {
		slices.SortFunc(r.Versions, func(a, b iroleVersion) int { return strings.Compare(a.Version, b.Version) })
	}
	return ix, nil
}

// indexCache keeps the indexes of the versions served lately, within an estimated
// number of bytes, and builds each one once however many requests want it at once.
type indexCache struct {
	lru *lru.Cache[string, *vindex]
	mu  sync.Mutex
	// building are the builds under way, by key.
	building map[string]*indexBuild
}

type indexBuild struct {
	done chan struct{}
	ix   *vindex
	err  error
}

func newIndexCache(maxBytes int64) *indexCache {
	return &indexCache{lru: lru.NewWeighted[string, *vindex](maxBytes, func(ix *vindex) int64 { return ix.cost + 512 }),
		building: map[string]*indexBuild{}}
}

// get is the index of what d serves.
func (c *indexCache) get(ctx context.Context, p *Plugin, d dist) (*vindex, error) {
	key := d.indexKey()
	if key == "" {
		return &vindex{byName: map[string]*icoll{}, byID: map[int64]*icv{}, namespaces: map[string]inamespace{}}, nil
	}
	if ix, ok := c.lru.Get(key); ok {
		return ix, nil
	}
	c.mu.Lock()
	b, ok := c.building[key]
	if !ok {
		b = &indexBuild{done: make(chan struct{})}
		c.building[key] = b
		go func() {
			// The build outlives a request that gives up waiting: the next one uses it.
			b.ix, b.err = p.buildIndex(context.WithoutCancel(ctx), d)
			if b.err == nil {
				c.lru.Put(key, b.ix)
			}
			c.mu.Lock()
			delete(c.building, key)
			c.mu.Unlock()
			close(b.done)
		}()
	}
	c.mu.Unlock()
	select {
	case <-b.done:
		return b.ix, b.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
