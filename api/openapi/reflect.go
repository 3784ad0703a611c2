package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Registry holds the component schemas of a document, by name.
type Registry struct {
	schemas map[string]Schema
	types   map[string]reflect.Type
	errs    []error
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{schemas: map[string]Schema{}, types: map[string]reflect.Type{}}
}

// Add reflects v (a struct or pointer to one) into the component schema name and
// returns name. Adding the same type under the same name again is a no-op; a
// different type under a taken name is an error that Document reports.
//
// JSON tags give property names (and omitempty); the `openapi` tag gives the rest as
// comma-separated items: format=uri, type=string, nullable, readOnly, writeOnly,
// minLength=1, maxLength=255, minimum=1, maximum=9, default=x, enum=a|b, required,
// optional, newer (a field of newer Pulp releases: accepted, left out of the document),
// omit (a field that hides an embedded one of the same name and is left out),
// hidden (Pulp's HiddenField: hides an embedded one, accepted in requests and ignored,
// left out of the document),
// and desc=text (last: the rest of the tag is the text, commas included).
// A property is required unless it is a pointer, map, slice, interface or
// json.RawMessage, omitempty, readOnly, has a default, or is tagged optional; the
// tag required forces it.
func (r *Registry) Add(name string, v any) string {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if prev, ok := r.types[name]; ok {
		if prev != t {
			r.errs = append(r.errs, fmt.Errorf("schema %q: added as %v and as %v", name, prev, t))
		}
		return name
	}
	if _, ok := r.schemas[name]; ok {
		r.errs = append(r.errs, fmt.Errorf("schema %q: added raw and as %v", name, t))
		return name
	}
	if t == nil || t.Kind() != reflect.Struct {
		r.errs = append(r.errs, fmt.Errorf("schema %q: %v is not a struct", name, t))
		return name
	}
	s, err := structSchema(t)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("schema %q: %w", name, err))
	}
	r.types[name] = t
	r.schemas[name] = s
	return name
}

// AddSchema registers a schema written by hand under name and returns name.
func (r *Registry) AddSchema(name string, s Schema) string {
	if _, ok := r.schemas[name]; ok {
		r.errs = append(r.errs, fmt.Errorf("schema %q: added twice", name))
		return name
	}
	r.schemas[name] = s
	return name
}

// Paginated registers Paginated<item>List, the {count, next, previous, results}
// page of a list operation, and returns its name.
func (r *Registry) Paginated(item string) string {
	name := "Paginated" + item + "List"
	if _, ok := r.schemas[name]; ok {
		return name
	}
	r.schemas[name] = Schema{
		Type:     "object",
		Required: []string{"count", "results"},
		Properties: []Property{
			{"count", Schema{Type: "integer", Example: 123}},
			{"next", Schema{Type: "string", Nullable: true, Format: "uri", Example: "http://api.example.org/accounts/?offset=400&limit=100"}},
			{"previous", Schema{Type: "string", Nullable: true, Format: "uri", Example: "http://api.example.org/accounts/?offset=200&limit=100"}},
			{"results", Schema{Type: "array", Items: &Schema{Ref: item}}},
		},
	}
	return name
}

// Schema returns the component schema called name.
func (r *Registry) Schema(name string) (Schema, bool) {
	s, ok := r.schemas[name]
	return s, ok
}

// names lists the registered schema names in order.
func (r *Registry) names() []string {
	ns := make([]string, 0, len(r.schemas))
	for n := range r.schemas {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

func structSchema(t reflect.Type) (Schema, error) {
	s := Schema{Type: "object", Properties: []Property{}}
	if err := addFields(&s, t); err != nil {
		return s, err
	}
	return s, nil
}

// addFields appends t's exported fields to s, flattening embedded structs like
// encoding/json: a field of t hides an embedded struct's field of the same JSON name, so
// a kind can drop or reshape a field its shared shape has. A field tagged
// `openapi:"omit"` hides that way and is left out of the document itself.
func addFields(s *Schema, t reflect.Type) error {
	own := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		own[name] = true
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				var inner Schema
				if err := addFields(&inner, ft); err != nil {
					return err
				}
				for _, p := range inner.Properties {
					if !own[p.Name] {
						s.Properties = append(s.Properties, p)
					}
				}
				for _, r := range inner.Required {
					if !own[r] {
						s.Required = append(s.Required, r)
					}
				}
				continue
			}
		}
		if !f.IsExported() || tagged(f, "newer") || tagged(f, "omit") || tagged(f, "hidden") {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fs, req, err := fieldSchema(f)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		if req && !strings.Contains(","+opts+",", ",omitempty,") {
			s.Required = append(s.Required, name)
		}
		s.Properties = append(s.Properties, Property{Name: name, Schema: fs})
	}
	return nil
}

// tagged reports a field whose openapi tag holds item: "newer" (a field that newer Pulp
// releases define, accepted in requests, but not part of the document of the release
// set the registry describes) or "omit" (see addFields).
func tagged(f reflect.StructField, item string) bool {
	for it := range strings.SplitSeq(f.Tag.Get("openapi"), ",") {
		if it == item {
			return true
		}
	}
	return false
}

// fieldSchema is the schema of one struct field and whether it is required.
func fieldSchema(f reflect.StructField) (Schema, bool, error) {
	s, optional, err := typeSchema(f.Type)
	if err != nil {
		return s, false, err
	}
	required := !optional
	tag := f.Tag.Get("openapi")
	if i := strings.Index(tag, "desc="); i >= 0 && (i == 0 || tag[i-1] == ',') {
		s.Description = tag[i+len("desc="):]
		tag = strings.TrimSuffix(tag[:i], ",")
	}
	var def string
	hasDefault := false
	for item := range strings.SplitSeq(tag, ",") {
		k, v, _ := strings.Cut(item, "=")
		switch k {
		case "":
		case "format":
			s.Format = v
		case "type":
			s.Type = v
		case "nullable":
			s.Nullable = true
		case "readOnly":
			s.ReadOnly, required = true, false
		case "writeOnly":
			s.WriteOnly = true
		case "required":
			required = true
		case "optional":
			required = false
		case "minLength":
			s.MinLength, err = atoi(v)
		case "maxLength":
			s.MaxLength, err = atoi(v)
		case "minimum":
			s.Minimum, err = atoi(v)
		case "maximum":
			s.Maximum, err = atoi(v)
		case "enum":
			s.Enum = strings.Split(v, "|")
		case "default":
			def, hasDefault, required = v, true, false
		default:
			err = fmt.Errorf("unknown openapi tag item %q", item)
		}
		if err != nil {
			return s, false, err
		}
	}
	if hasDefault { // after the loop, so that type= anywhere in the tag counts
		if s.Default, err = defaultValue(s.Type, def); err != nil {
			return s, false, err
		}
	}
	return s, required, nil
}

func atoi(v string) (*int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return nil, fmt.Errorf("bad number %q: %w", v, err)
	}
	return &n, nil
}

func defaultValue(typ, v string) (any, error) {
	switch typ {
	case "boolean":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("bad boolean default %q: %w", v, err)
		}
		return b, nil
	case "integer":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bad integer default %q: %w", v, err)
		}
		return n, nil
	case "number":
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("bad number default %q: %w", v, err)
		}
		return n, nil
	}
	return v, nil
}

// typeSchema maps a Go type to a schema; optional reports types that are not
// required by default (pointers, maps, slices, free-form values).
func typeSchema(t reflect.Type) (s Schema, optional bool, err error) {
	switch t {
	case timeType:
		return Schema{Type: "string", Format: "date-time"}, false, nil
	case rawType:
		return Schema{}, true, nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		s, _, err = typeSchema(t.Elem())
		s.Nullable = true
		return s, true, err
	case reflect.String:
		return Schema{Type: "string"}, false, nil
	case reflect.Bool:
		return Schema{Type: "boolean"}, false, nil
	case reflect.Int64, reflect.Uint64:
		return Schema{Type: "integer", Format: "int64"}, false, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return Schema{Type: "integer"}, false, nil
	case reflect.Float32, reflect.Float64:
		return Schema{Type: "number", Format: "double"}, false, nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return Schema{Type: "string", Format: "binary"}, false, nil
		}
		item, _, err := typeSchema(t.Elem())
		return Schema{Type: "array", Items: &item}, true, err
	case reflect.Map:
		val, _, err := typeSchema(t.Elem())
		return Schema{Type: "object", AdditionalProperties: &val}, true, err
	case reflect.Struct:
		s, err := structSchema(t)
		return s, false, err
	}
	return Schema{}, true, nil // interfaces and anything else: free-form
}
