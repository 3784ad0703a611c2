package openapi

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Diff compares every operation of ours with the operation of the same operationId
// in reference, and returns one human-readable line per difference: method, path,
// security, parameters (each one's required, schema type/format, items
// type/format, enum, explode), request media types and the required properties
// and property names of the body schema, response codes and their media types.
// Operations of ours missing from the reference are reported too. An empty
// result means ours matches the reference wherever ours has something.
func Diff(reference, ours []byte) ([]string, error) {
	ref, err := parseSpec(reference)
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	our, err := parseSpec(ours)
	if err != nil {
		return nil, fmt.Errorf("ours: %w", err)
	}
	ids := make([]string, 0, len(our.ops))
	for id := range our.ops {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []string
	for _, id := range ids {
		o := our.ops[id]
		r, ok := ref.ops[id]
		if !ok {
			out = append(out, fmt.Sprintf("%s: not in the reference (%s %s)", id, o.method, o.path))
			continue
		}
		d := differ{id: id}
		d.diffOp(ref, our, r, o)
		out = append(out, d.lines...)
	}
	return out, nil
}

type differ struct {
	id    string
	lines []string
}

func (d *differ) addf(format string, args ...any) {
	d.lines = append(d.lines, d.id+": "+fmt.Sprintf(format, args...))
}

// cmp records a difference between want (reference) and got (ours).
func (d *differ) cmp(what string, want, got any) {
	w, g := show(want), show(got)
	if w != g {
		d.addf("%s: want %s, got %s", what, w, g)
	}
}

// subset records enum values of ours the reference does not allow: an enum the
// reference lacks, or values outside the reference's enum, make the client refuse
// values the reference accepts. Fewer values, or no enum, are fine.
func (d *differ) subset(what string, want, got any) {
	w, g := sortedStrings(want), sortedStrings(got)
	if got == nil {
		return
	}
	if want == nil {
		d.addf("%s: want <unset>, got %s", what, show(got))
		return
	}
	var extra []string
	for _, v := range g {
		if !slices.Contains(w, v) {
			extra = append(extra, v)
		}
	}
	if len(extra) > 0 {
		d.addf("%s: not in the reference: %s", what, strings.Join(extra, ", "))
	}
}

func show(v any) string {
	if v == nil {
		return "<unset>"
	}
	b, _ := json.Marshal(v) // values came from JSON
	return string(b)
}

func (d *differ) diffOp(ref, our *spec, r, o specOp) {
	d.cmp("method", r.method, o.method)
	d.cmp("path", r.path, o.path)
	d.cmp("security", securityKind(r.op), securityKind(o.op))

	rp, op := r.params(ref), o.params(our)
	for _, k := range unionKeys(rp, op) {
		a, inRef := rp[k]
		b, inOur := op[k]
		name, in, _ := strings.Cut(k, "\x00")
		switch {
		case !inOur:
			d.addf("parameter %q (%s): missing", name, in)
		case !inRef:
			d.addf("parameter %q (%s): not in the reference", name, in)
		default:
			p := fmt.Sprintf("parameter %q (%s)", name, in)
			d.cmp(p+": required", a["required"] == true, b["required"] == true)
			d.cmp(p+": explode", a["explode"], b["explode"])
			as, bs := ref.resolve(a["schema"]), our.resolve(b["schema"])
			d.cmp(p+": schema type", as["type"], bs["type"])
			d.cmp(p+": schema format", as["format"], bs["format"])
			d.subset(p+": schema enum", as["enum"], bs["enum"])
			ai, bi := ref.resolve(as["items"]), our.resolve(bs["items"])
			d.cmp(p+": items type", ai["type"], bi["type"])
			d.cmp(p+": items format", ai["format"], bi["format"])
			d.subset(p+": items enum", ai["enum"], bi["enum"])
		}
	}

	rb, ob := obj(r.op["requestBody"]), obj(o.op["requestBody"])
	d.cmp("request media types", sortedKeys(obj(rb["content"])), sortedKeys(obj(ob["content"])))
	rs, os := bodySchema(ref, rb), bodySchema(our, ob)
	if rs != nil && os != nil {
		d.cmp("request body required properties", sortedStrings(rs["required"]), sortedStrings(os["required"]))
		var missing []string
		ourProps := obj(os["properties"])
		for _, k := range sortedKeys(obj(rs["properties"])) {
			if _, ok := ourProps[k]; !ok {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			d.addf("request body properties missing: %s", strings.Join(missing, ", "))
		}
	}

	rr, or := obj(r.op["responses"]), obj(o.op["responses"])
	d.cmp("response codes", sortedKeys(rr), sortedKeys(or))
	for _, code := range sortedKeys(or) {
		if _, ok := rr[code]; ok {
			d.cmp("response "+code+" media types", sortedKeys(obj(obj(rr[code])["content"])), sortedKeys(obj(obj(or[code])["content"])))
		}
	}
}

// bodySchema is the resolved schema of the first media type of a request body.
func bodySchema(s *spec, body map[string]any) map[string]any {
	content := obj(body["content"])
	keys := sortedKeys(content)
	if len(keys) == 0 {
		return nil
	}
	return s.resolve(obj(content[keys[0]])["schema"])
}

func securityKind(op map[string]any) string {
	sec, ok := op["security"].([]any)
	if !ok || len(sec) == 0 {
		return "anonymous"
	}
	var names []string
	for _, req := range sec {
		if len(obj(req)) == 0 {
			names = append(names, "{}")
		}
		names = append(names, sortedKeys(obj(req))...)
	}
	sort.Strings(names)
	return strings.Join(names, "+")
}

type spec struct {
	raw map[string]any
	ops map[string]specOp
}

type specOp struct {
	method, path string
	item, op     map[string]any
}

func parseSpec(b []byte) (*spec, error) {
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("parse document: %w", err)
	}
	s := &spec{raw: raw, ops: map[string]specOp{}}
	for path, item := range obj(raw["paths"]) {
		for m, v := range obj(item) {
			op := obj(v)
			id, _ := op["operationId"].(string)
			if id == "" || !slices.Contains(methods, m) {
				continue
			}
			if _, dup := s.ops[id]; dup {
				return nil, fmt.Errorf("duplicate operationId %q", id)
			}
			s.ops[id] = specOp{method: m, path: path, item: obj(item), op: op}
		}
	}
	return s, nil
}

// params are the operation's parameters (path-level ones included), keyed by name and location.
func (o specOp) params(s *spec) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, list := range []any{o.item["parameters"], o.op["parameters"]} {
		ps, _ := list.([]any)
		for _, p := range ps {
			pm := s.resolve(p)
			name, _ := pm["name"].(string)
			in, _ := pm["in"].(string)
			out[name+"\x00"+in] = pm
		}
	}
	return out
}

// resolve follows a local $ref (and a lone allOf) to the object it names.
func (s *spec) resolve(v any) map[string]any {
	m := obj(v)
	for range 10 {
		if all, ok := m["allOf"].([]any); ok && len(all) == 1 {
			m = obj(all[0])
			continue
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			break
		}
		var cur any = s.raw
		for part := range strings.SplitSeq(strings.TrimPrefix(ref, "#/"), "/") {
			cur = obj(cur)[part]
		}
		m = obj(cur)
	}
	return m
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func sortedStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

func unionKeys[V any](a, b map[string]V) []string {
	set := map[string]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	return sortedKeys(set)
}
