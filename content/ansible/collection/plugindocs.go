package collection

import "errors"

// fileDocs is the documentation read from one plugin file, as JSON of the YAML values,
// keys in order; what ansible-doc adds and galaxy-importer reshapes is applied when the
// collection is known (docStrings).
type fileDocs struct {
	doc      []byte // DOCUMENTATION, a mapping; nil when absent or unreadable
	examples []byte // EXAMPLES; nil when absent
	ret      []byte // RETURN; nil when absent or unreadable
	short    string // doc's short_description, when it is a string
	hasShort bool
}

func (d *fileDocs) size() int64 {
	return int64(len(d.doc) + len(d.examples) + len(d.ret) + len(d.short) + 64)
}

// yamlBudget is how many bytes of values a YAML text of n bytes may build.
func yamlBudget(n int) int { return 4*n + 256<<10 }

// readDocs reads DOCUMENTATION, EXAMPLES and RETURN from a plugin's Python source or
// from a YAML file beside it (ansible-doc's "adjacent" documentation). It returns nil
// when there is no readable DOCUMENTATION: ansible-doc then has none for the plugin.
func readDocs(src []byte, sidecar bool, limit int64) *fileDocs {
	if int64(len(src)) > limit {
		return nil
	}
	var doc, examples, ret any
	var hasExamples bool
	if sidecar {
		v, err := parseYAML(src, yamlBudget(len(src)))
		m, ok := asOmap(v)
		if err != nil || !ok {
			return nil
		}
		doc, _ = m.get("DOCUMENTATION")
		examples, hasExamples = m.get("EXAMPLES")
		ret, _ = m.get("RETURN")
	} else {
		strs := pyDocStrings(string(src))
		text, ok := strs["DOCUMENTATION"]
		if !ok {
			return nil
		}
		var err error
		if doc, err = parseYAML([]byte(text), yamlBudget(len(text))); err != nil {
			return nil
		}
		if ex, ok := strs["EXAMPLES"]; ok {
			examples, hasExamples = ex, true
		}
		if r, ok := strs["RETURN"]; ok {
			ret, _ = parseYAML([]byte(r), yamlBudget(len(r)))
		}
	}
	dm, ok := asOmap(doc)
	if !ok {
		return nil
	}
	d := &fileDocs{doc: encodeValue(dm)}
	if v, ok := dm.get("short_description"); ok {
		d.short, d.hasShort = yamlString(v)
	}
	if hasExamples {
		d.examples = encodeValue(examples)
	}
	if ret != nil {
		d.ret = encodeValue(ret)
	}
	return d
}

// docStrings builds what galaxy-importer stores for one plugin: ansible-doc's JSON for
// it ({doc, examples, return, metadata}, with the collection's name added to
// version_added and deprecation entries, and doc's collection, plugin_name and, for
// modules, has_action), then options, suboptions, return values and their "contains"
// turned from mappings into lists of {"name": key, ...}.
func (d *fileDocs) docStrings(collection, pluginName string, isModule bool, hasAction bool) ([]byte, error) {
	docV, err := decodeValue(d.doc)
	if err != nil {
		return nil, err
	}
	doc, ok := asOmap(docV)
	if !ok {
		return nil, errors.New("DOCUMENTATION is not a mapping")
	}
	addCollection(doc, collection, isModule, false)
	doc.set("collection", collection)
	doc.set("plugin_name", pluginName)
	if isModule {
		doc.set("has_action", hasAction)
	}
	if opts, ok := asOmap(mustGet(doc, "options")); ok {
		rows := namedList(opts)
		for _, r := range rows {
			nestTables(r, "suboptions")
		}
		doc.set("options", rows)
	}
	out := newOmap()
	out.set("doc", doc)
	out.set("examples", nil)
	if d.examples != nil {
		ex, err := decodeValue(d.examples)
		if err != nil {
			return nil, err
		}
		out.set("examples", ex)
	}
	out.set("metadata", nil)
	out.set("return", nil)
	if d.ret != nil {
		rv, err := decodeValue(d.ret)
		if err != nil {
			return nil, err
		}
		if rm, ok := asOmap(rv); ok && len(rm.keys) > 0 {
			addCollection(rm, collection, isModule, true)
			rows := namedList(rm)
			for _, r := range rows {
				nestTables(r, "contains")
			}
			rv = rows
		}
		out.set("return", rv)
	}
	return encodeValue(out), nil
}

func mustGet(m *omap, k string) any {
	v, _ := m.get(k)
	return v
}

// namedList turns {key: {...}} into [{"name": key, ...}]. If any value is not a
// mapping the result is empty, as galaxy-importer's fallback makes it.
func namedList(m *omap) []any {
	rows := make([]any, 0, len(m.keys))
	for _, k := range m.keys {
		v, ok := asOmap(m.vals[k])
		if !ok {
			return []any{}
		}
		row := newOmap()
		row.set("name", k)
		for _, vk := range v.keys {
			row.set(vk, v.vals[vk])
		}
		rows = append(rows, row)
	}
	return rows
}

func nestTables(row any, key string) {
	r, ok := asOmap(row)
	if !ok {
		return
	}
	sub, ok := asOmap(mustGet(r, key))
	if !ok {
		return
	}
	rows := namedList(sub)
	for _, x := range rows {
		nestTables(x, key)
	}
	r.set(key, rows)
}

// addCollection adds the collection's name beside version_added and deprecation
// versions and dates, as ansible-doc does (add_collection_to_versions_and_dates).
func addCollection(frag *omap, collection string, isModule, returnDocs bool) {
	add := func(m *omap, field string) {
		if _, ok := m.get(field); !ok {
			m.set(field, collection)
		}
	}
	deprecation := func(v any, topLevel bool) {
		d, ok := asOmap(v)
		if !ok {
			return
		}
		field := "collection_name"
		if topLevel {
			field = "removed_from_collection"
		}
		if _, ok := d.get("removed_in"); ok && (isModule || topLevel) {
			add(d, field)
		}
		if _, ok := d.get("removed_at_date"); ok {
			add(d, field)
		}
		if _, ok := d.get("version"); ok && !isModule && !topLevel {
			add(d, field)
		}
	}
	versionAdded := func(m *omap) {
		if _, ok := m.get("version_added"); ok {
			add(m, "version_added_collection")
		}
	}
	var returns func(m *omap)
	returns = func(m *omap) {
		for _, k := range m.keys {
			if r, ok := asOmap(m.vals[k]); ok {
				versionAdded(r)
				if c, ok := asOmap(mustGet(r, "contains")); ok {
					returns(c)
				}
			}
		}
	}
	var options func(m *omap)
	options = func(m *omap) {
		for _, k := range m.keys {
			o, ok := asOmap(m.vals[k])
			if !ok {
				continue
			}
			versionAdded(o)
			if !isModule {
				for _, key := range []string{"env", "ini", "vars"} {
					if l, ok := mustGet(o, key).([]any); ok {
						for _, s := range l {
							if sm, ok := asOmap(s); ok {
								versionAdded(sm)
								deprecation(mustGet(sm, "deprecated"), false)
							}
						}
					}
				}
				deprecation(mustGet(o, "deprecated"), false)
			}
			if sub, ok := asOmap(mustGet(o, "suboptions")); ok {
				options(sub)
			}
		}
	}
	if len(frag.keys) == 0 {
		return
	}
	if returnDocs {
		returns(frag)
		return
	}
	versionAdded(frag)
	deprecation(mustGet(frag, "deprecated"), true)
	if o, ok := asOmap(mustGet(frag, "options")); ok {
		options(o)
	}
	if a, ok := asOmap(mustGet(frag, "attributes")); ok {
		for _, k := range a.keys {
			if am, ok := asOmap(a.vals[k]); ok {
				versionAdded(am)
			}
		}
	}
}
