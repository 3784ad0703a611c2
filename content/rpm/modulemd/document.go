package modulemd

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

// errEmpty marks a document holding nothing but comments.
var errEmpty = errors.New("empty document")

// parseSnippet decodes one framed document; base maps the snippet's line numbers to
// the file's (file line = base + snippet line). A document of an unknown type comes
// back with only Type set.
func parseSnippet(file, snippet string, base int) (Document, error) {
	w := &walker{file: file, base: base}
	dec := yaml.NewDecoder(strings.NewReader(snippet))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if err == io.EOF {
			return Document{}, errEmpty
		}
		return Document{}, w.syntax(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		return Document{}, &Error{File: file, Line: base + 2, Kind: ErrSyntax, Msg: "text holds more than one YAML document"}
	}
	if len(root.Content) == 0 || isNull(root.Content[0]) {
		return Document{}, errEmpty
	}
	if err := w.noAliases(&root); err != nil {
		return Document{}, err
	}
	top, err := w.mapping(root.Content[0], "")
	if err != nil {
		return Document{}, err
	}
	typ, err := w.required(top, "document")
	if err != nil {
		return Document{}, err
	}
	want := map[string]uint64{"modulemd": 2, "modulemd-defaults": 1, "modulemd-obsoletes": 1}[typ]
	if want == 0 {
		return Document{Type: typ}, nil
	}
	vn, err := w.need(top, "version", "version")
	if err != nil {
		return Document{}, err
	}
	version, err := w.uint(vn, "version")
	if err != nil {
		return Document{}, err
	}
	if version != want {
		msg := fmt.Sprintf("%s version %d is not supported (only version %d is)", typ, version, want)
		if typ == "modulemd" && version == 1 {
			msg += "; convert it with libmodulemd's modulemd-validator or drop it"
		}
		return Document{}, w.errAt(top.get("version"), "version", ErrUnsupported, "%s", msg)
	}
	dn, err := w.need(top, "data", "data")
	if err != nil {
		return Document{}, err
	}
	data, err := w.mapping(dn, "data")
	if err != nil {
		return Document{}, err
	}
	doc := Document{Type: typ}
	switch typ {
	case "modulemd":
		doc.Module, err = w.module(data, snippet)
	case "modulemd-defaults":
		doc.Defaults, err = w.defaults(data, snippet)
	case "modulemd-obsoletes":
		doc.Obsolete, err = w.obsolete(data, snippet)
	}
	if err != nil {
		return Document{}, err
	}
	return doc, nil
}

func (w *walker) module(data fields, snippet string) (*Modulemd, error) {
	m := &Modulemd{Snippet: snippet, Artifacts: []string{}, Dependencies: []Dependency{}, Profiles: map[string][]string{}}
	var err error
	// The fields Pulp's JSON schema requires of a modulemd document; the texts may
	// be empty, the identifiers may not.
	for _, f := range []struct {
		key      string
		dst      *string
		mayEmpty bool
	}{{"name", &m.Name, false}, {"stream", &m.Stream, false}, {"context", &m.Context, false},
		{"arch", &m.Arch, false}, {"summary", nil, true}, {"description", &m.Description, true}} {
		var v string
		if f.mayEmpty {
			n, err := w.need(data, f.key, "data."+f.key)
			if err != nil {
				return nil, err
			}
			if v, _, err = w.text(n, "data."+f.key); err != nil {
				return nil, err
			}
		} else if v, err = w.required(data, "data."+f.key); err != nil {
			return nil, err
		}
		if f.dst != nil {
			*f.dst = v
		}
	}
	vn, err := w.need(data, "version", "data.version")
	if err != nil {
		return nil, err
	}
	if m.Version, err = w.uint(vn, "data.version"); err != nil {
		return nil, err
	}
	ln, err := w.need(data, "license", "data.license")
	if err != nil {
		return nil, err
	}
	license, err := w.mapping(ln, "data.license")
	if err != nil {
		return nil, err
	}
	lmn, err := w.need(license, "module", "data.license.module")
	if err != nil {
		return nil, err
	}
	if _, err := w.list(lmn, "data.license.module"); err != nil {
		return nil, err
	}
	if sc, ok, err := w.bool(data.get("static_context"), "data.static_context"); err != nil {
		return nil, err
	} else if ok {
		m.StaticContext = &sc
	}
	artifacts, err := w.mapping(data.get("artifacts"), "data.artifacts")
	if err != nil {
		return nil, err
	}
	if rpms, err := w.list(artifacts.get("rpms"), "data.artifacts.rpms"); err != nil {
		return nil, err
	} else if rpms != nil {
		m.Artifacts = rpms
	}
	if m.Dependencies, err = w.dependencies(data.get("dependencies")); err != nil {
		return nil, err
	}
	profiles, keys, err := w.orderedMapping(data.get("profiles"), "data.profiles")
	if err != nil {
		return nil, err
	}
	for _, name := range keys {
		field := "data.profiles." + name
		p, err := w.mapping(profiles.get(name), field)
		if err != nil {
			return nil, err
		}
		rpms, err := w.list(p.get("rpms"), field+".rpms")
		if err != nil {
			return nil, err
		}
		if len(rpms) > 0 { // Pulp keeps only profiles that install something
			m.Profiles[name] = rpms
		}
	}
	return m, nil
}

func (w *walker) dependencies(n *yaml.Node) ([]Dependency, error) {
	deps := []Dependency{}
	if n == nil || isNull(n) {
		return deps, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, w.errAt(n, "data.dependencies", ErrInvalid, "expected a list, found %s", kindName(n))
	}
	for i, item := range n.Content {
		field := fmt.Sprintf("data.dependencies[%d]", i)
		if isNull(item) {
			return nil, w.errAt(item, field, ErrInvalid, "empty item")
		}
		m, err := w.mapping(item, field)
		if err != nil {
			return nil, err
		}
		var d Dependency
		if d.BuildRequires, err = w.streams(m.get("buildrequires"), field+".buildrequires"); err != nil {
			return nil, err
		}
		if d.Requires, err = w.streams(m.get("requires"), field+".requires"); err != nil {
			return nil, err
		}
		deps = append(deps, d)
	}
	return deps, nil
}

// streams reads a {module: [stream, ...]} mapping; nil when absent.
func (w *walker) streams(n *yaml.Node, field string) (map[string][]string, error) {
	m, keys, err := w.orderedMapping(n, field)
	if err != nil || m.m == nil {
		return nil, err
	}
	out := make(map[string][]string, len(keys))
	for _, k := range keys {
		l, err := w.list(m.get(k), field+"."+k)
		if err != nil {
			return nil, err
		}
		if l == nil {
			l = []string{}
		}
		out[k] = l
	}
	return out, nil
}

func (w *walker) defaults(data fields, snippet string) (*ModulemdDefaults, error) {
	d := &ModulemdDefaults{Snippet: snippet, Profiles: map[string][]string{}}
	var err error
	if d.Module, err = w.required(data, "data.module"); err != nil {
		return nil, err
	}
	if d.Stream, _, err = w.text(data.get("stream"), "data.stream"); err != nil {
		return nil, err
	}
	profiles, streams, err := w.orderedMapping(data.get("profiles"), "data.profiles")
	if err != nil {
		return nil, err
	}
	for _, stream := range streams {
		l, err := w.list(profiles.get(stream), "data.profiles."+stream)
		if err != nil {
			return nil, err
		}
		if l == nil {
			l = []string{}
		}
		d.Profiles[stream] = l
	}
	return d, nil
}

func (w *walker) obsolete(data fields, snippet string) (*ModulemdObsolete, error) {
	o := &ModulemdObsolete{Snippet: snippet}
	for _, f := range []struct {
		key string
		dst *string
	}{{"modified", &o.Modified}, {"module", &o.ModuleName}, {"stream", &o.ModuleStream}, {"message", &o.Message}} {
		v, err := w.required(data, "data."+f.key)
		if err != nil {
			return nil, err
		}
		*f.dst = v
	}
	if reset, ok, err := w.bool(data.get("reset"), "data.reset"); err != nil {
		return nil, err
	} else if ok {
		f := Flag(reset)
		o.OverridePrevious = &f
	}
	var err error
	if o.ModuleContext, err = w.optional(data.get("context"), "data.context"); err != nil {
		return nil, err
	}
	if o.EOLDate, err = w.optional(data.get("eol_date"), "data.eol_date"); err != nil {
		return nil, err
	}
	by, err := w.mapping(data.get("obsoleted_by"), "data.obsoleted_by")
	if err != nil {
		return nil, err
	}
	if o.ObsoletedByModuleName, err = w.optional(by.get("module"), "data.obsoleted_by.module"); err != nil {
		return nil, err
	}
	if o.ObsoletedByModuleStream, err = w.optional(by.get("stream"), "data.obsoleted_by.stream"); err != nil {
		return nil, err
	}
	return o, nil
}
