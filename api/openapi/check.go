package openapi

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Checker checks responses against the response schemas of a document (the reference
// release set's, typically), the way the generated client bindings read them: required
// properties present, types, enums, and null only where the property is nullable or not
// required (the bindings make every optional property nullable).
type Checker struct {
	ops     map[string]map[string]any // operationId → its operation object
	schemas map[string]any
}

// NewChecker reads a document.
func NewChecker(doc []byte) (*Checker, error) {
	var d struct {
		Paths      map[string]map[string]json.RawMessage
		Components struct{ Schemas map[string]any }
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	c := &Checker{ops: map[string]map[string]any{}, schemas: d.Components.Schemas}
	for _, item := range d.Paths {
		for _, raw := range item {
			var op map[string]any
			if json.Unmarshal(raw, &op) != nil {
				continue
			}
			if id, ok := op["operationId"].(string); ok {
				c.ops[id] = op
			}
		}
	}
	return c, nil
}

// Has reports whether the document has the operation.
func (c *Checker) Has(opID string) bool { _, ok := c.ops[opID]; return ok }

// Response checks a response of an operation: its status must be one the document
// declares, and its body must match that response's schema. It returns the problems,
// each naming the JSON path.
func (c *Checker) Response(opID string, status int, body []byte) []string {
	op, ok := c.ops[opID]
	if !ok {
		return []string{"operation " + opID + " is not in the document"}
	}
	responses, _ := op["responses"].(map[string]any)
	resp, ok := responses[strconv.Itoa(status)].(map[string]any)
	if !ok {
		codes := make([]string, 0, len(responses))
		for k := range responses {
			codes = append(codes, k)
		}
		sort.Strings(codes)
		return []string{fmt.Sprintf("status %d is not one the document declares (%s)", status, strings.Join(codes, ", "))}
	}
	content, _ := resp["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	schema, _ := media["schema"].(map[string]any)
	if schema == nil {
		return nil // no body declared, or not JSON
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return []string{"body is not JSON: " + err.Error()}
	}
	var problems []string
	c.check("$", schema, v, &problems, 0)
	return problems
}

// resolve follows $ref and merges allOf into one schema.
func (c *Checker) resolve(s map[string]any) map[string]any {
	for i := 0; i < 16; i++ {
		ref, ok := s["$ref"].(string)
		if !ok {
			break
		}
		next, _ := c.schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		if next == nil {
			return map[string]any{}
		}
		s = next
	}
	if all, ok := s["allOf"].([]any); ok {
		merged := map[string]any{}
		for k, v := range s {
			if k != "allOf" {
				merged[k] = v
			}
		}
		for _, part := range all {
			p, _ := part.(map[string]any)
			for k, v := range c.resolve(p) {
				if _, set := merged[k]; !set {
					merged[k] = v
				}
			}
		}
		return merged
	}
	return s
}

func (c *Checker) check(path string, s map[string]any, v any, problems *[]string, depth int) {
	if depth > 32 {
		return
	}
	s = c.resolve(s)
	fail := func(format string, args ...any) {
		*problems = append(*problems, path+": "+fmt.Sprintf(format, args...))
	}
	if v == nil {
		if nullable, _ := s["nullable"].(bool); !nullable && s["type"] != nil {
			fail("null, but the schema is not nullable")
		}
		return
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		if alts, ok := s[key].([]any); ok {
			for _, alt := range alts {
				a, _ := alt.(map[string]any)
				var sub []string
				c.check(path, a, v, &sub, depth+1)
				if len(sub) == 0 {
					return
				}
			}
			fail("matches none of the %s alternatives", key)
			return
		}
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		found := false
		for _, e := range enum {
			found = found || fmt.Sprint(e) == fmt.Sprint(v)
		}
		if !found {
			fail("%v is not one of %v", v, enum)
		}
	}
	switch s["type"] {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			fail("%T, want an object", v)
			return
		}
		props, _ := s["properties"].(map[string]any)
		required := map[string]bool{}
		for _, r := range asStrings(s["required"]) {
			required[r] = true
			if _, ok := obj[r]; !ok {
				if ro, _ := c.resolve(asMap(props[r]))["writeOnly"].(bool); !ro {
					fail("required property %q is missing", r)
				}
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ps, ok := props[k].(map[string]any)
			if !ok {
				if ap, ok := s["additionalProperties"].(map[string]any); ok {
					c.check(path+"."+k, ap, obj[k], problems, depth+1)
				}
				continue
			}
			if obj[k] == nil && !required[k] {
				continue // the bindings read an optional property as nullable
			}
			c.check(path+"."+k, ps, obj[k], problems, depth+1)
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			fail("%T, want an array", v)
			return
		}
		items, _ := s["items"].(map[string]any)
		for i, it := range arr {
			c.check(fmt.Sprintf("%s[%d]", path, i), items, it, problems, depth+1)
		}
	case "string":
		if _, ok := v.(string); !ok {
			fail("%T %v, want a string", v, v)
		}
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			fail("%T %v, want an integer", v, v)
		} else if f, err := n.Float64(); err != nil || f != math.Trunc(f) {
			fail("%v, want an integer", v)
		}
	case "number":
		if _, ok := v.(json.Number); !ok {
			fail("%T %v, want a number", v, v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			fail("%T %v, want a boolean", v, v)
		}
	}
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

func asStrings(v any) []string {
	xs, _ := v.([]any)
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
