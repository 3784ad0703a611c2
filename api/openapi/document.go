package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Operation is one API operation as the route table declares it.
type Operation struct {
	ID      string // operationId
	Method  string // HTTP method, any case
	Path    string // as in the reference: literal, or an href template like {task_href}
	Tag     string
	Summary string
	// Description is optional free text.
	Description string
	// Params excludes the href path parameter, which Document derives from Path
	// (declaring it explicitly is allowed).
	Params    []Param
	Body      *Body
	Responses []Response
	// Anonymous operations carry no security: no credentials are sent or needed.
	Anonymous bool
}

// Body is a request body: the same component schema under each media type.
type Body struct {
	MediaTypes []string
	Schema     string // component name
}

// Response is one response of an operation.
type Response struct {
	Code int
	// Schema is the component name of the body; "" with no MediaTypes means no
	// body, "" with MediaTypes means a free-form object (like the docs operation).
	Schema      string
	Description string
	// MediaTypes default to application/json when Schema is set.
	MediaTypes []string
}

// Info is the document's info section.
type Info struct {
	Title, Version, Description string
	// AppVersions becomes info.x-pulp-app-versions: component → PEP 440 version.
	AppVersions map[string]string
}

// ErrInvalid marks a route table or registry that cannot make a valid document.
var ErrInvalid = errors.New("invalid openapi input")

var (
	pathParamRE = regexp.MustCompile(`\{([^{}]+)\}`)
	methods     = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}
)

// Document renders ops and the schemas in reg into an OpenAPI 3.0.1 JSON
// document. Equal inputs give equal bytes. Only the schemas in reg appear
// under components, whether or not an operation uses them.
func Document(info Info, ops []Operation, reg *Registry) ([]byte, error) {
	if reg == nil {
		reg = NewRegistry()
	}
	errs := slices.Clone(reg.errs)
	if info.Title == "" || info.Version == "" {
		errs = append(errs, errors.New("info: title and version are required"))
	}
	paths := map[string]map[string]json.RawMessage{}
	seen := map[string]bool{}
	for _, op := range ops {
		b, err := renderOp(op, reg)
		if err == nil && seen[op.ID] {
			err = errors.New("duplicate operationId")
		}
		m := strings.ToLower(op.Method)
		if err == nil && paths[op.Path][m] != nil {
			err = fmt.Errorf("%s %s declared twice", op.Method, op.Path)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("operation %q: %w", op.ID, err))
			continue
		}
		seen[op.ID] = true
		if paths[op.Path] == nil {
			paths[op.Path] = map[string]json.RawMessage{}
		}
		paths[op.Path][m] = b
	}
	for _, name := range reg.names() {
		s := reg.schemas[name]
		s.refs(func(ref string) {
			if _, ok := reg.schemas[ref]; !ok {
				errs = append(errs, fmt.Errorf("schema %q: unknown schema %q", name, ref))
			}
		})
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}

	inf := object{{"title", info.Title}, {"version", info.Version}}
	inf.addIf(info.Description != "", "description", info.Description)
	versions := info.AppVersions
	if versions == nil {
		versions = map[string]string{}
	}
	inf.add("x-pulp-app-versions", versions)
	inf.add("x-pulp-domain-enabled", false)

	var ps object
	pathKeys := make([]string, 0, len(paths))
	for p := range paths {
		pathKeys = append(pathKeys, p)
	}
	sort.Strings(pathKeys)
	for _, p := range pathKeys {
		var item object
		for _, m := range methods {
			if b, ok := paths[p][m]; ok {
				item.add(m, b)
			}
		}
		ps.add(p, item)
	}
	schemas := map[string]Schema{}
	for n, s := range reg.schemas {
		schemas[n] = s
	}
	doc := object{
		{"openapi", "3.0.1"},
		{"info", inf},
		{"paths", ps},
		{"components", object{
			{"schemas", schemas},
			{"securitySchemes", object{
				{"basicAuth", object{{"type", "http"}, {"scheme", "basic"}}},
				{"cookieAuth", object{{"type", "apiKey"}, {"in", "cookie"}, {"name", "sessionid"}}},
			}},
		}},
	}
	return json.Marshal(doc)
}

// renderOp validates one operation and renders it.
func renderOp(op Operation, reg *Registry) (json.RawMessage, error) {
	if op.ID == "" {
		return nil, errors.New("empty operationId")
	}
	if !slices.Contains(methods, strings.ToLower(op.Method)) {
		return nil, fmt.Errorf("unknown method %q", op.Method)
	}
	if !strings.HasPrefix(op.Path, "/") && !strings.HasPrefix(op.Path, "{") {
		return nil, fmt.Errorf("path %q must start with / or {", op.Path)
	}
	params, err := opParams(op)
	if err != nil {
		return nil, err
	}
	if len(op.Responses) == 0 {
		return nil, errors.New("no responses")
	}
	known := func(name string) error {
		if _, ok := reg.schemas[name]; !ok {
			return fmt.Errorf("unknown schema %q", name)
		}
		return nil
	}

	o := object{{"operationId", op.ID}}
	o.addIf(op.Description != "", "description", op.Description)
	o.addIf(op.Summary != "", "summary", op.Summary)
	o.add("parameters", params)
	if op.Tag != "" {
		o.add("tags", []string{op.Tag})
	}
	if op.Body != nil {
		if len(op.Body.MediaTypes) == 0 {
			return nil, errors.New("request body without media types")
		}
		if err := known(op.Body.Schema); err != nil {
			return nil, fmt.Errorf("request body: %w", err)
		}
		var content object
		for _, mt := range op.Body.MediaTypes {
			content.add(mt, object{{"schema", Schema{Ref: op.Body.Schema}}})
		}
		o.add("requestBody", object{{"content", content}, {"required", true}})
	}
	if !op.Anonymous {
		o.add("security", []object{{{"basicAuth", []string{}}}, {{"cookieAuth", []string{}}}})
	}
	var responses object
	codes := map[int]bool{}
	rs := slices.Clone(op.Responses)
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Code < rs[j].Code })
	for _, r := range rs {
		if r.Code < 100 || r.Code > 599 || codes[r.Code] {
			return nil, fmt.Errorf("response %d: bad or duplicate code", r.Code)
		}
		codes[r.Code] = true
		var ro object
		mts := r.MediaTypes
		if len(mts) == 0 && r.Schema != "" {
			mts = []string{"application/json"}
		}
		if len(mts) > 0 {
			s := Schema{Type: "object"}
			if r.Schema != "" {
				if err := known(r.Schema); err != nil {
					return nil, fmt.Errorf("response %d: %w", r.Code, err)
				}
				s = Schema{Ref: r.Schema}
			}
			var content object
			for _, mt := range mts {
				content.add(mt, object{{"schema", s}})
			}
			ro.add("content", content)
		}
		ro.add("description", r.Description) // required, even when empty
		responses.add(strconv.Itoa(r.Code), ro)
	}
	o.add("responses", responses)
	return json.Marshal(o)
}

// opParams adds the path parameters named in op.Path, checks the declared ones, and
// orders them like the reference: headers by name, then path and query parameters
// by name, then fields and exclude_fields.
func opParams(op Operation) ([]Param, error) {
	inPath := map[string]bool{}
	for _, m := range pathParamRE.FindAllStringSubmatch(op.Path, -1) {
		inPath[m[1]] = true
	}
	declared := map[string]bool{}
	var heads, rest, tail []Param
	for _, p := range op.Params {
		key := p.In + " " + p.Name
		if p.Name == "" || declared[key] {
			return nil, fmt.Errorf("parameter %q (%s): empty or declared twice", p.Name, p.In)
		}
		declared[key] = true
		switch p.In {
		case "header":
			heads = append(heads, p)
		case "path":
			if !inPath[p.Name] {
				return nil, fmt.Errorf("path parameter %q is not in path %q", p.Name, op.Path)
			}
			p.Required = true
			rest = append(rest, p)
		case "query", "cookie":
			if p.In == "query" && (p.Name == "fields" || p.Name == "exclude_fields") {
				tail = append(tail, p)
			} else {
				rest = append(rest, p)
			}
		default:
			return nil, fmt.Errorf("parameter %q: unknown location %q", p.Name, p.In)
		}
	}
	for name := range inPath {
		if !declared["path "+name] {
			rest = append(rest, Param{Name: name, In: "path", Required: true, Schema: Schema{Type: "string"}})
		}
	}
	byName := func(ps []Param) {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	}
	byName(heads)
	byName(rest)
	sort.SliceStable(tail, func(i, j int) bool { return tail[i].Name > tail[j].Name }) // fields, exclude_fields
	return append(append(append(make([]Param, 0, len(op.Params)+1), heads...), rest...), tail...), nil
}
