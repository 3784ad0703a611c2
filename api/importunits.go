package api

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"pith/meta"
)

// The per-unit state of an import, kept compact and free of pointers (the collector
// does not scan it): until a version is made, the import holds each of its units'
// upstream id, files and local id, and content_mapping.json. At 40,000 units that was
// 10 MB in maps of strings; so kept, about a third.

// unitKey is an upstream unit id as an import keeps it: a UUID's 16 bytes (Pulp and
// pith name units by UUID), or the first 16 bytes of the sha256 of any other id.
type unitKey [16]byte

func keyOf(id string) unitKey {
	k, _ := parseKey(id)
	return k
}

// parseKey is keyOf, and whether id is a UUID (its key spells it back).
func parseKey(id string) (unitKey, bool) {
	if len(id) == 36 {
		if u, err := uuid.Parse(id); err == nil && u.String() == id {
			return unitKey(u), true
		}
	}
	sum := sha256.Sum256([]byte(id))
	return unitKey(sum[:16]), false
}

func compareKeys(a, b unitKey) int { return bytes.Compare(a[:], b[:]) }

// unitFiles are a version's ContentArtifact rows: each unit's files, in the order of
// the rows, found by binary search once sorted.
type unitFiles struct {
	refs  []fileRef
	paths []byte // the relative paths, one after another
}

type fileRef struct {
	unit     unitKey
	artifact int64 // 0: none
	path, n  uint32
}

func (f *unitFiles) add(unit unitKey, rel string, artifact int64) error {
	if len(f.paths)+len(rel) > 1<<32-1 {
		return fmt.Errorf("the export's files have over 4 GiB of relative paths")
	}
	f.refs = append(f.refs, fileRef{unit: unit, artifact: artifact, path: uint32(len(f.paths)), n: uint32(len(rel))})
	f.paths = append(f.paths, rel...)
	return nil
}

// sort orders the rows by unit, keeping each unit's in their order.
func (f *unitFiles) sort() {
	slices.SortStableFunc(f.refs, func(a, b fileRef) int { return compareKeys(a.unit, b.unit) })
}

// of are a unit's files (after sort).
func (f *unitFiles) of(unit unitKey) []meta.ContentFile {
	i, found := slices.BinarySearchFunc(f.refs, unit, func(r fileRef, k unitKey) int { return compareKeys(r.unit, k) })
	if !found {
		return nil
	}
	var out []meta.ContentFile
	for ; i < len(f.refs) && f.refs[i].unit == unit; i++ {
		r := f.refs[i]
		cf := meta.ContentFile{RelativePath: string(f.paths[r.path : r.path+r.n])}
		if r.artifact != 0 {
			id := r.artifact
			cf.ArtifactID = &id
		}
		out = append(out, cf)
	}
	return out
}

// localUnits are the local ids of the units imported by upstream key; the last id
// recorded for a key counts (a retried transaction records a unit again).
type localUnits struct {
	refs   []localRef
	sorted int // refs[:sorted] are sorted, stably
}

type localRef struct {
	unit unitKey
	id   int64
}

func (l *localUnits) add(unit unitKey, id int64) {
	l.refs = append(l.refs, localRef{unit, id})
}

func (l *localUnits) sort() {
	if l.sorted != len(l.refs) {
		slices.SortStableFunc(l.refs, func(a, b localRef) int { return compareKeys(a.unit, b.unit) })
		l.sorted = len(l.refs)
	}
}

func (l *localUnits) get(unit unitKey) (int64, bool) {
	l.sort()
	i, found := slices.BinarySearchFunc(l.refs, unit, func(r localRef, k unitKey) int { return compareKeys(r.unit, k) })
	if !found {
		return 0, false
	}
	for i+1 < len(l.refs) && l.refs[i+1].unit == unit {
		i++
	}
	return l.refs[i].id, true
}

// all are the local ids of every unit imported, one per upstream key.
func (l *localUnits) all() []int64 {
	l.sort()
	var ids []int64
	for i, r := range l.refs {
		if i+1 < len(l.refs) && l.refs[i+1].unit == r.unit {
			continue // a later record of the same unit counts
		}
		ids = append(ids, r.id)
	}
	return ids
}

// unitMapping is content_mapping.json: the upstream units of each repository of the
// export (by name), as keys; nil when the export has none.
type unitMapping struct {
	byRepo map[string][]unitKey
	names  map[unitKey]string // the ids that are not UUIDs, for messages
}

func newUnitMapping(m map[string][]string) *unitMapping {
	if m == nil {
		return nil
	}
	um := &unitMapping{byRepo: make(map[string][]unitKey, len(m)), names: map[unitKey]string{}}
	for repo, ids := range m {
		keys := make([]unitKey, len(ids))
		for i, id := range ids {
			var isUUID bool
			keys[i], isUUID = parseKey(id)
			if !isUUID {
				um.names[keys[i]] = id
			}
		}
		um.byRepo[repo] = keys
	}
	return um
}

// local are the local ids of the units the mapping lists under a repository; an error
// names one that was not imported.
func (um *unitMapping) local(repo string, units *localUnits) ([]int64, error) {
	keys := um.byRepo[repo]
	ids := make([]int64, 0, len(keys))
	for _, k := range keys {
		id, ok := units.get(k)
		if !ok {
			name, found := um.names[k]
			if !found {
				name = uuid.UUID(k).String()
			}
			return nil, fmt.Errorf("content_mapping.json lists unit %s under %q, which no resource file of the export holds", name, repo)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
