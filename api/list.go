package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"pith/meta"
)

// kind is the type of a filtered field; it decides how values parse and which lookups
// make sense.
type kind int

const (
	kString kind = iota
	kInt
	kBool
	kTime
	kCustom
)

// filter declares one filterable field. The same declaration produces the OpenAPI
// parameters and the SQL, so the document and the behaviour cannot drift apart.
type filter struct {
	name    string   // query parameter base name
	col     string   // SQL expression
	attr    string   // instead of col: this member of the unit's attrs (c.attrs)
	kind    kind     // value type
	lookups []string // "exact", "contains", "in", "gt", ...; "exact" is the bare name
	// apply handles kCustom filters: vals are the raw query values.
	apply   func(l *meta.List, d meta.Dialect, val string) error
	desc    string // document description of a custom filter
	boolean bool   // a custom filter taking a boolean
	number  bool   // a custom filter taking a number
	uuid    bool   // a custom filter documented as a UUID
}

// listSpec declares a list operation: its filters and orderable fields.
type listSpec struct {
	filters  []filter
	ordering map[string]string // API field → SQL column
	order    []string          // ordering names in declaration order (for the document)
}

// query is a parsed list request.
type query struct {
	list    meta.List
	fields  map[string]bool
	exclude map[string]bool
}

func splitComma(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// parseList reads pagination, fields, ordering and the declared filters from a request.
// Undeclared parameters are a 400 naming them.
func parseList(r *http.Request, d meta.Dialect, spec listSpec) (query, error) {
	q := query{}
	vals := r.URL.Query()
	known := map[string]bool{"limit": true, "offset": true, "fields": true, "exclude_fields": true, "ordering": true, "q": true}
	byName := map[string]func(l *meta.List, v string) error{}
	for _, f := range spec.filters {
		f := f
		for _, lk := range f.lookups {
			pname := f.name
			if lk != "exact" && lk != "" {
				pname += "__" + lk
			}
			lk := lk
			known[pname] = true
			byName[pname] = func(l *meta.List, v string) error { return applyLookup(l, d, f, lk, pname, v) }
		}
	}
	for k, vs := range vals {
		if !known[k] {
			return q, badField(k, "Unknown query parameter %q.", k)
		}
		fn := byName[k]
		if k == "q" {
			fn = func(l *meta.List, v string) error { return applyQ(l, v, byName) }
		}
		if fn == nil {
			continue
		}
		for _, v := range vs {
			if err := fn(&q.list, v); err != nil {
				return q, err
			}
		}
	}
	if v := vals.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return q, badField("limit", "A valid non-negative integer is required.")
		}
		q.list.Limit = n
	}
	if v := vals.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return q, badField("offset", "A valid non-negative integer is required.")
		}
		q.list.Offset = n
	}
	if q.list.Limit == 0 {
		q.list.Limit = 100
	}
	if q.list.Limit > 1000 {
		q.list.Limit = 1000
	}
	for _, name := range splitComma(vals["fields"]) {
		if q.fields == nil {
			q.fields = map[string]bool{}
		}
		q.fields[name] = true
	}
	for _, name := range splitComma(vals["exclude_fields"]) {
		if q.exclude == nil {
			q.exclude = map[string]bool{}
		}
		q.exclude[name] = true
	}
	var order []string
	for _, o := range splitComma(vals["ordering"]) {
		desc := strings.HasPrefix(o, "-")
		col, ok := spec.ordering[strings.TrimPrefix(o, "-")]
		if !ok {
			return q, badField("ordering", "Select a valid choice. %s is not one of the available choices.", o)
		}
		if key, ok := strings.CutPrefix(col, "attr:"); ok {
			col = d.JSONText("c.attrs", key)
		}
		if desc {
			col += " DESC"
		}
		order = append(order, col)
	}
	q.list.OrderBy = strings.Join(order, ", ")
	return q, nil
}

func applyLookup(l *meta.List, d meta.Dialect, f filter, lk, pname, v string) error {
	if f.kind == kCustom {
		return f.apply(l, d, v)
	}
	if f.attr != "" {
		f.col = d.JSONText("c.attrs", f.attr)
	}
	parse := func(s string) (any, error) {
		switch f.kind {
		case kInt:
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, badField(pname, "Enter a whole number.")
			}
			return n, nil
		case kBool:
			b, err := strconv.ParseBool(strings.ToLower(s))
			if err != nil {
				return nil, badField(pname, "Enter a valid boolean.")
			}
			return b, nil
		case kTime:
			t, err := parseTime(s)
			if err != nil {
				return nil, badField(pname, "Enter a valid date/time.")
			}
			return t.UnixMicro(), nil
		}
		return s, nil
	}
	switch lk {
	case "", "exact":
		x, err := parse(v)
		if err != nil {
			return err
		}
		l.And(f.col+" = ?", x)
	case "ne":
		x, err := parse(v)
		if err != nil {
			return err
		}
		l.And(f.col+" <> ?", x)
	case "iexact":
		l.And("lower("+f.col+") = lower(?)", v)
	case "contains", "icontains":
		l.And(d.Contains(f.col, lk == "icontains"), v)
	case "startswith":
		l.And("substr("+f.col+", 1, length(?)) = ?", v, v)
	case "istartswith":
		l.And("lower(substr("+f.col+", 1, length(?))) = lower(?)", v, v)
	case "regex", "iregex":
		l.And(d.RegexpMatch(f.col, lk == "iregex"), v)
	case "in":
		parts := splitComma([]string{v})
		if len(parts) == 0 {
			l.And("1 = 0")
			return nil
		}
		args := make([]any, len(parts))
		for i, p := range parts {
			x, err := parse(p)
			if err != nil {
				return err
			}
			args[i] = x
		}
		l.And(f.col+" IN ("+strings.TrimSuffix(strings.Repeat("?,", len(parts)), ",")+")", args...)
	case "gt", "gte", "lt", "lte":
		x, err := parse(v)
		if err != nil {
			return err
		}
		op := map[string]string{"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}[lk]
		l.And(f.col+" "+op+" ?", x)
	case "range":
		parts := splitComma([]string{v})
		if len(parts) != 2 {
			return badField(pname, "Enter two values separated by a comma.")
		}
		a, err := parse(parts[0])
		if err != nil {
			return err
		}
		b, err := parse(parts[1])
		if err != nil {
			return err
		}
		l.And(f.col+" BETWEEN ? AND ?", a, b)
	case "isnull":
		b, err := strconv.ParseBool(strings.ToLower(v))
		if err != nil {
			return badField(pname, "Enter a valid boolean.")
		}
		if b {
			l.And(f.col + " IS NULL")
		} else {
			l.And(f.col + " IS NOT NULL")
		}
	default:
		return fmt.Errorf("filter %s: unsupported lookup %q", f.name, lk)
	}
	return nil
}

func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999Z", "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("invalid time %q", s)
}

// pageOut renders a list response: {count, next, previous, results}. next becomes
// null after the last page.
func pageOut(r *http.Request, q query, total int64, results []any) map[string]any {
	if results == nil {
		results = []any{}
	}
	link := func(off int) any {
		u := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path}
		if r.TLS != nil {
			u.Scheme = "https"
		}
		v := r.URL.Query()
		v.Set("limit", strconv.Itoa(q.list.Limit))
		v.Set("offset", strconv.Itoa(off))
		if off <= 0 {
			v.Del("offset")
		}
		u.RawQuery = v.Encode()
		return u.String()
	}
	var next, prev any
	if int64(q.list.Offset+len(results)) < total && len(results) > 0 {
		next = link(q.list.Offset + q.list.Limit)
	}
	if q.list.Offset > 0 {
		prev = link(max(0, q.list.Offset-q.list.Limit))
	}
	return map[string]any{"count": total, "next": next, "previous": prev, "results": results}
}

// project applies fields / exclude_fields to one rendered object.
func (q query) project(m map[string]any) map[string]any {
	if q.fields == nil && q.exclude == nil {
		return m
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if q.fields != nil && !q.fields[k] {
			continue
		}
		if q.exclude[k] {
			continue
		}
		out[k] = v
	}
	return out
}

// fieldsOnly parses fields/exclude_fields for a detail read.
func fieldsOnly(r *http.Request) query {
	q := query{}
	v := r.URL.Query()
	for _, name := range splitComma(v["fields"]) {
		if q.fields == nil {
			q.fields = map[string]bool{}
		}
		q.fields[name] = true
	}
	for _, name := range splitComma(v["exclude_fields"]) {
		if q.exclude == nil {
			q.exclude = map[string]bool{}
		}
		q.exclude[name] = true
	}
	return q
}

func ts(us int64) string { return meta.Time(us).Format("2006-01-02T15:04:05.000000Z") }

func tsPtr(us *int64) any {
	if us == nil {
		return nil
	}
	return ts(*us)
}

// writePage sends a page of typed items, projecting fields when asked.
func writePage(w http.ResponseWriter, r *http.Request, q query, total int64, items []any) error {
	results := items
	if q.fields != nil || q.exclude != nil {
		results = make([]any, len(items))
		for i, it := range items {
			m, err := toMap(it)
			if err != nil {
				return err
			}
			results[i] = q.project(m)
		}
	}
	writeJSON(w, http.StatusOK, pageOut(r, q, total, results))
	return nil
}

// writeOne sends one typed item, projecting fields/exclude_fields when asked.
func writeOne(w http.ResponseWriter, r *http.Request, status int, item any) error {
	q := fieldsOnly(r)
	if q.fields == nil && q.exclude == nil {
		writeJSON(w, status, item)
		return nil
	}
	m, err := toMap(item)
	if err != nil {
		return err
	}
	writeJSON(w, status, q.project(m))
	return nil
}

func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return m, d.Decode(&m)
}
