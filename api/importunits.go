package api

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"pith/content/port"
	"pith/internal/spill"
	"pith/meta"
)

// The per-unit state of an import: until a version is made, the import holds each of
// its units' upstream id, files and local id, and content_mapping.json. They are kept in
// temporary files (spill), so that the memory an import takes does not grow with its
// export: at 40,000 units they were 10 MB in maps of strings, then 5 MB in sorted
// slices, and so 1% of that.

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

// unitFiles are a version's ContentArtifact rows: each unit's files, in the order of
// the rows, in a temporary file sorted by unit (spill).
type unitFiles struct{ t *spill.Table }

func newUnitFiles() *unitFiles { return &unitFiles{spill.New("", len(unitKey{}))} }

// add records a file: its artifact (0: none), then its relative path, as the value.
func (f *unitFiles) add(unit unitKey, rel string, artifact int64) error {
	v := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(rel)), uint64(artifact))
	return f.t.Add(unit[:], append(v, rel...))
}

func (f *unitFiles) sort() error { return f.t.Sort() }

// of are a unit's files (after sort).
func (f *unitFiles) of(unit unitKey) ([]meta.ContentFile, error) {
	var out []meta.ContentFile
	err := f.t.Each(unit[:], func(_, v []byte) error {
		cf := meta.ContentFile{RelativePath: string(v[8:])}
		if id := int64(binary.BigEndian.Uint64(v)); id != 0 {
			cf.ArtifactID = &id
		}
		out = append(out, cf)
		return nil
	})
	return out, err
}

func (f *unitFiles) close() { f.t.Close() }

// localUnits are the local ids of the units imported by upstream key, in a temporary
// file; the last id recorded for a key counts. Every id is recorded before the first is
// read (a retried transaction starts a new localUnits).
type localUnits struct{ t *spill.Table }

func newLocalUnits() *localUnits { return &localUnits{spill.New("", len(unitKey{}))} }

func (l *localUnits) add(unit unitKey, id int64) error {
	return l.t.Add(unit[:], binary.BigEndian.AppendUint64(nil, uint64(id)))
}

func (l *localUnits) get(unit unitKey) (int64, bool, error) {
	if err := l.t.Sort(); err != nil {
		return 0, false, err
	}
	var id int64
	found := false
	err := l.t.Each(unit[:], func(_, v []byte) error {
		id, found = int64(binary.BigEndian.Uint64(v)), true
		return nil
	})
	return id, found, err
}

// all are the local ids of every unit imported, one per upstream key.
func (l *localUnits) all() ([]int64, error) {
	if err := l.t.Sort(); err != nil {
		return nil, err
	}
	var ids []int64
	var last unitKey
	err := l.t.Each(nil, func(k, v []byte) error {
		id := int64(binary.BigEndian.Uint64(v))
		if len(ids) > 0 && unitKey(k) == last {
			ids[len(ids)-1] = id // a later record of the same unit counts
			return nil
		}
		last = unitKey(k)
		ids = append(ids, id)
		return nil
	})
	return ids, err
}

func (l *localUnits) close() {
	if l != nil {
		l.t.Close()
	}
}

// unitMapping is content_mapping.json: the upstream units of each repository of the
// export (by name), in a temporary file keyed by the repository name's key and the
// unit's; the value is the unit's id when it is not a UUID (for messages).
type unitMapping struct{ t *spill.Table }

// readMapping reads content_mapping.json ({"repository name": ["unit id", …], …}) as
// it streams; nil when the export has none.
func readMapping(ar *port.Archive, name string) (_ *unitMapping, err error) {
	r, ok, err := ar.Member(name)
	if !ok || err != nil {
		return nil, err
	}
	if r.Size() > maxMappingJSON {
		return nil, fmt.Errorf("%s is over %d bytes", name, maxMappingJSON)
	}
	t := spill.New("", 2*len(unitKey{}))
	defer func() {
		if err != nil {
			t.Close()
			err = fmt.Errorf("%s: %w", name, err)
		}
	}()
	dec := json.NewDecoder(bufio.NewReader(r))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object of repositories' units")
	}
	key := make([]byte, 2*len(unitKey{}))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		repo := tok.(string) // a key is a string in a JSON object
		rk := keyOf(repo)
		copy(key, rk[:])
		tok, err = dec.Token()
		if err != nil {
			return nil, err
		}
		if tok == nil {
			continue // null: no units
		}
		if tok != json.Delim('[') {
			return nil, fmt.Errorf("the units of %q are not a list", repo)
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			id, ok := tok.(string)
			if !ok {
				return nil, fmt.Errorf("a unit id of %q is not a string: %v", repo, tok)
			}
			unit, isUUID := parseKey(id)
			copy(key[len(unitKey{}):], unit[:])
			var v []byte
			if !isUUID {
				v = []byte(id)
			}
			if err := t.Add(key, v); err != nil {
				return nil, err
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if err := t.Sort(); err != nil {
		return nil, err
	}
	return &unitMapping{t}, nil
}

func (um *unitMapping) close() { um.t.Close() }

// local are the local ids of the units the mapping lists under a repository; an error
// names one that was not imported.
func (um *unitMapping) local(repo string, units *localUnits) ([]int64, error) {
	ids := []int64{}
	rk := keyOf(repo)
	err := um.t.Each(rk[:], func(k, v []byte) error {
		unit := unitKey(k[len(unitKey{}):])
		id, ok, err := units.get(unit)
		if err != nil {
			return err
		}
		if !ok {
			name := string(v)
			if name == "" {
				name = uuid.UUID(unit).String()
			}
			return fmt.Errorf("content_mapping.json lists unit %s under %q, which no resource file of the export holds", name, repo)
		}
		ids = append(ids, id)
		return nil
	})
	return ids, err
}
