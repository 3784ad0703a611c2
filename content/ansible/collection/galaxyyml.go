package collection

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// GalaxyYML is the file a collection's source tree describes itself in.
const GalaxyYML = "galaxy.yml"

// galaxyKey is one key of ansible-galaxy's galaxy.yml schema
// (ansible/galaxy/data/collections_galaxy_meta.yml).
type galaxyKey struct {
	name     string
	typ      string // "str", "list", "dict" or "sentinel" (any value; absence matters)
	required bool
}

var galaxyKeys = []galaxyKey{
	{"namespace", "str", true}, {"name", "str", true}, {"version", "str", true},
	{"readme", "str", true}, {"authors", "list", true}, {"description", "str", false},
	{"license", "list", false}, {"license_file", "str", false}, {"tags", "list", false},
	{"dependencies", "dict", false}, {"repository", "str", false}, {"documentation", "str", false},
	{"homepage", "str", false}, {"issues", "str", false}, {"build_ignore", "list", false},
	{"manifest", "sentinel", false},
}

// manifestInfoKeys are MANIFEST.json's collection_info keys in the order
// ansible-galaxy's _build_manifest writes them.
var manifestInfoKeys = []string{"namespace", "name", "version", "authors", "readme", "tags",
	"description", "license", "license_file", "dependencies", "repository", "documentation",
	"homepage", "issues"}

// buildMeta is galaxy.yml read, normalized as ansible-galaxy normalizes it, and checked.
type buildMeta struct {
	info        *omap // collection_info, in MANIFEST.json's order
	namespace   string
	name        string
	version     string
	licenseFile string
	ignore      []string         // build_ignore
	manifest    *manifestControl // nil: no "manifest" key (the walk with build_ignore)
	warnings    []string
}

// manifestControl is galaxy.yml's "manifest" (MANIFEST.in-style directives).
type manifestControl struct {
	directives   []string
	omitDefaults bool
}

func galaxyError(kind error, format string, args ...any) *Error {
	return errorf(kind, GalaxyYML, format, args...)
}

// parseGalaxyYML reads galaxy.yml as ansible-galaxy's _get_meta_from_src_dir and
// _normalize_galaxy_yml_manifest do (missing keys refused, unknown ones warned about,
// absent ones defaulted, a lone value where a list is expected made a list), then
// checks every value as the import of the built artifact would (collectionInfo's rules),
// so that what Build writes is importable.
func parseGalaxyYML(src []byte) (*buildMeta, error) {
	v, err := parseYAML(src, yamlBudget(len(src)))
	if err != nil {
		return nil, &Error{Kind: ErrFormat, Path: GalaxyYML, Msg: "failed to parse the galaxy.yml: " + err.Error(), Err: err}
	}
	doc, ok := asOmap(v)
	if !ok {
		return nil, galaxyError(ErrFormat, "the collection galaxy.yml is incorrectly formatted")
	}
	known := map[string]galaxyKey{}
	var missing []string
	for _, k := range galaxyKeys {
		known[k.name] = k
		if _, ok := doc.get(k.name); k.required && !ok {
			missing = append(missing, k.name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, galaxyError(ErrInvalid, "the collection galaxy.yml is missing the following mandatory keys: %s", strings.Join(missing, ", "))
	}
	m := &buildMeta{info: newOmap()}
	var unknown []string
	for _, k := range doc.keys {
		if _, ok := known[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		m.warnings = append(m.warnings, fmt.Sprintf("found unknown keys in collection galaxy.yml: %s", strings.Join(unknown, ", ")))
	}
	vals := map[string]any{}
	for _, k := range galaxyKeys {
		val, present := doc.get(k.name)
		switch k.typ {
		case "list":
			if val == nil {
				val = []any{}
			} else if _, isList := val.([]any); !isList {
				val = []any{val}
			}
		case "dict":
			if !present {
				val = newOmap()
			}
		case "sentinel":
			if !present {
				continue
			}
		}
		if err := checkGalaxyType(k, val); err != nil {
			return nil, err
		}
		vals[k.name] = val
	}
	// ansible-galaxy builds version "*" from an empty version (for collections that
	// set it from git when they build); no Galaxy imports that.
	if s, _ := vals["version"].(string); s == "" {
		return nil, galaxyError(ErrInvalid, "'version' is empty: ansible-galaxy would build version '*', which Galaxy does not import")
	}
	if s, _ := vals["license_file"].(string); s == "" {
		vals["license_file"] = nil // "license_file or None"
	}
	for _, k := range manifestInfoKeys {
		m.info.set(k, vals[k])
	}
	if err := checkBuildInfo(m.info); err != nil {
		return nil, err
	}
	m.namespace, m.name, m.version = vals["namespace"].(string), vals["name"].(string), vals["version"].(string)
	m.licenseFile, _ = vals["license_file"].(string)
	for _, p := range vals["build_ignore"].([]any) {
		m.ignore = append(m.ignore, p.(string))
	}
	if mc, ok := vals["manifest"]; ok {
		if len(m.ignore) > 0 {
			return nil, galaxyError(ErrInvalid, `"build_ignore" and "manifest" are mutually exclusive`)
		}
		if m.manifest, err = parseManifestControl(mc); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// checkGalaxyType refuses values the import would refuse for their type (ansible-galaxy
// itself writes whatever YAML gave into MANIFEST.json).
func checkGalaxyType(k galaxyKey, v any) error {
	switch k.typ {
	case "str":
		if _, ok := v.(string); !ok && v != nil {
			return galaxyError(ErrInvalid, "'%s' must be a string", k.name)
		}
	case "list":
		for _, e := range v.([]any) {
			if _, ok := e.(string); !ok {
				return galaxyError(ErrInvalid, "'%s' must be a list of strings", k.name)
			}
		}
	case "dict":
		if v == nil {
			return nil
		}
		d, ok := asOmap(v)
		if !ok {
			return galaxyError(ErrInvalid, "'%s' must be a dictionary", k.name)
		}
		for _, dk := range d.keys {
			if _, ok := d.vals[dk].(string); !ok {
				return galaxyError(ErrInvalid, "'%s': the version range of %s must be a string", k.name, dk)
			}
		}
	}
	return nil
}

// checkBuildInfo checks collection_info with the rules MANIFEST.json is read with.
func checkBuildInfo(info *omap) error {
	o := object{keys: info.keys, vals: map[string]json.RawMessage{}}
	for _, k := range info.keys {
		o.vals[k] = encodeValue(info.vals[k])
	}
	var ci collectionInfo
	if err := ci.decode(o); err != nil {
		if e, ok := err.(*Error); ok {
			e.Path = GalaxyYML
		}
		return err
	}
	return nil
}

// parseManifestControl reads "manifest" as ansible-galaxy's ManifestControl does.
func parseManifestControl(v any) (*manifestControl, error) {
	if v == nil {
		return &manifestControl{}, nil
	}
	m, ok := asOmap(v)
	if !ok {
		return nil, galaxyError(ErrInvalid, `invalid "manifest" provided: it must be a mapping`)
	}
	mc := &manifestControl{}
	for _, k := range m.keys {
		switch k {
		case "directives":
			switch d := m.vals[k].(type) {
			case nil:
			case []any:
				for i, e := range d {
					s, ok := e.(string)
					if !ok {
						return nil, galaxyError(ErrInvalid, `"manifest.directives" item %d must be a string`, i)
					}
					mc.directives = append(mc.directives, s)
				}
			default:
				return nil, galaxyError(ErrInvalid, `"manifest.directives" must be a list, got: %s`, pyTypeName(d))
			}
		case "omit_default_directives":
			switch o := m.vals[k].(type) {
			case nil:
			case bool:
				mc.omitDefaults = o
			default:
				return nil, galaxyError(ErrInvalid, `"manifest.omit_default_directives" is expected to be a boolean, got: %s`, pyTypeName(o))
			}
		default:
			return nil, galaxyError(ErrInvalid, `invalid "manifest" provided: unexpected keyword argument '%s'`, k)
		}
	}
	if mc.omitDefaults && len(mc.directives) == 0 {
		return nil, galaxyError(ErrInvalid, `"manifest.omit_default_directives" was set to True, but no directives were defined in "manifest.directives"; this would produce an empty collection artifact`)
	}
	return mc, nil
}

// pyTypeName names a YAML value's type as Python would.
func pyTypeName(v any) string {
	switch x := v.(type) {
	case string:
		return "str"
	case bool:
		return "bool"
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return "float"
		}
		return "int"
	case *omap:
		return "dict"
	case []any:
		return "list"
	}
	return "NoneType"
}
