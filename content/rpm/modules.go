package rpm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"pith/content/rpm/modulemd"
	"pith/meta"
)

// moduleUnit builds the unit of one modular document: its attrs are v's JSON (the API
// fields) plus "snippet", republished verbatim; its digest is the snippet's SHA-256.
func moduleUnit(typ, key, repoKey string, v any, snippet string) (meta.Content, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return meta.Content{}, fmt.Errorf("%s %s: %w", typ, key, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return meta.Content{}, fmt.Errorf("%s %s: %w", typ, key, err)
	}
	m["snippet"], _ = json.Marshal(snippet)
	attrs, err := json.Marshal(m)
	if err != nil {
		return meta.Content{}, fmt.Errorf("%s %s: %w", typ, key, err)
	}
	sum := sha256.Sum256([]byte(snippet))
	return meta.Content{Type: typ, NaturalKey: key, RepoKey: repoKey, Digest: hex.EncodeToString(sum[:]), Attrs: attrs}, nil
}

// ModulemdUnit is the unit of a module stream build, as sync stores it (m.Packages is
// stored as given: nil for synced modules, the package hrefs for created ones).
func ModulemdUnit(m *modulemd.Modulemd) (meta.Content, error) {
	key := fmt.Sprintf("%s:%s:%d:%s:%s", m.Name, m.Stream, m.Version, m.Context, m.Arch)
	return moduleUnit(ModulemdType, key, key, m, m.Snippet)
}

// ModulemdDefaultsUnit is the unit of a module's defaults, as sync stores it.
func ModulemdDefaultsUnit(d *modulemd.ModulemdDefaults) (meta.Content, error) {
	return moduleUnit(DefaultsType, d.Module+" "+d.Digest(), d.Module, d, d.Snippet)
}

// ModulemdObsoleteUnit is the unit of a module obsolete, as sync stores it.
func ModulemdObsoleteUnit(o *modulemd.ModulemdObsolete) (meta.Content, error) {
	key := o.Modified + " " + o.ModuleName + ":" + o.ModuleStream
	return moduleUnit(ObsoleteType, key, key, o, o.Snippet)
}

// DocumentUnit is the unit of a decoded modular document of any of the three types.
func DocumentUnit(doc modulemd.Document) (meta.Content, error) {
	switch {
	case doc.Module != nil:
		return ModulemdUnit(doc.Module)
	case doc.Defaults != nil:
		return ModulemdDefaultsUnit(doc.Defaults)
	case doc.Obsolete != nil:
		return ModulemdObsoleteUnit(doc.Obsolete)
	}
	return meta.Content{}, fmt.Errorf("%q documents are not stored", doc.Type)
}
