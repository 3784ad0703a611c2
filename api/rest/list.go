package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"pith/api/href"
	"pith/api/openapi"
	"pith/meta"
)

// ValueType is the type of a filtered field; it decides how values parse and which
// lookups make sense.
type ValueType int

// The value types of filters.
const (
	String ValueType = iota
	Int
	Bool
	DateTime
	Custom
)

// Filter declares one filterable field. The same declaration produces the OpenAPI
// parameters and the SQL, so the document and the behaviour cannot drift apart.
type Filter struct {
	Name    string    // query parameter base name
	Col     string    // SQL expression
	Attr    string    // instead of Col: this member of the unit's attrs (c.attrs)
	Type    ValueType // value type
	Lookups []string  // "exact", "contains", "in", "gt", ...; "exact" is the bare name
	// Apply handles Custom filters: val is the raw query value.
	Apply   func(l *meta.List, d meta.Dialect, val string) error
	Desc    string // document description of a custom filter
	Boolean bool   // a custom filter taking a boolean
	Number  bool   // a custom filter taking a number
	UUID    bool   // a custom filter documented as a UUID
	// Repeated is a custom filter given once per value (?p=a&p=b, an array exploded in
	// the document); Apply gets the values joined by commas.
	Repeated bool
}

// ListSpec declares a list operation: its filters and orderable fields.
type ListSpec struct {
	Filters []Filter
	// Ordering maps API fields to SQL columns; "attr:<key>" is a member of c.attrs.
	Ordering map[string]string
}

// Query is a parsed list request.
type Query struct {
	List    meta.List
	fields  map[string]bool
	exclude map[string]bool
	regexes []string // the parameters matching with a regular expression
}

// Explain turns the error of running q's list into the 400 it is when the database
// refused a regular expression the request sent (PostgreSQL judges its own syntax when
// the query runs); any other error is returned as it is.
func (q Query) Explain(err error) error {
	why, ok := meta.BadPattern(err)
	if !ok || len(q.regexes) == 0 {
		return err
	}
	fe := FieldErrors{}
	for _, p := range q.regexes {
		fe[p] = []string{fmt.Sprintf("Enter a valid regular expression (%s).", why)}
	}
	return fe
}

// The bounds of a list request's filters, far beyond what the pulp CLI, the bindings and
// Katello send, and well within what both databases take: SQLite refuses an
// expression deeper than 1,000 (each ANDed or ORed term is a level) and more than 32,766
// bound values.
const (
	// MaxFilterTerms bounds the conditions of one request: filter parameters, each value
	// of a repeated one, each term of pulp_label_select and of q.
	MaxFilterTerms = 256
	// MaxFilterValues bounds the values bound into one request's query, every __in
	// list's included.
	MaxFilterValues = 10_000
)

func tooManyTerms(param string) error {
	return BadField(param, "Too many filter terms: a request may have at most %d.", MaxFilterTerms)
}

func tooManyValues(param string) error {
	return BadField(param, "Too many values: a request may have at most %d.", MaxFilterValues)
}

// SplitComma splits comma-separated values, dropping empty ones.
func SplitComma(vs []string) []string {
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

// ParseList reads pagination, fields, ordering and the declared filters from a request.
// Undeclared parameters are a 400 naming them, and so are filters beyond the bounds
// (MaxFilterTerms, MaxFilterValues, MaxQDepth, meta.MaxPattern).
func ParseList(r *http.Request, d meta.Dialect, spec ListSpec) (Query, error) {
	q := Query{}
	vals := r.URL.Query()
	known := map[string]bool{"limit": true, "offset": true, "fields": true, "exclude_fields": true, "ordering": true, "q": true}
	byName := map[string]func(l *meta.List, v string) error{}
	for _, f := range spec.Filters {
		for _, lk := range f.Lookups {
			pname := f.Name
			if lk != "exact" && lk != "" {
				pname += "__" + lk
			}
			known[pname] = true
			byName[pname] = func(l *meta.List, v string) error {
				// Checked before the filter makes a condition of each comma-separated value.
				if strings.Count(v, ",") >= MaxFilterValues {
					return tooManyValues(pname)
				}
				if lk == "regex" || lk == "iregex" {
					q.regexes = append(q.regexes, pname)
				}
				return applyLookup(l, d, f, lk, pname, v)
			}
		}
	}
	repeated := map[string]bool{}
	for _, f := range spec.Filters {
		repeated[f.Name] = f.Repeated
	}
	terms := 0
	// In order, so that the parameter an error names does not vary between requests.
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		if !known[k] {
			return q, BadField(k, "Unknown query parameter %q.", k)
		}
		vs := vals[k]
		if repeated[k] {
			vs = []string{strings.Join(vs, ",")}
		}
		fn := byName[k]
		if fn == nil && k != "q" {
			continue
		}
		for _, v := range vs {
			if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
				return q, BadField(k, "Enter text without null characters or invalid UTF-8.")
			}
			if k != "prn__in" {
				v = resolveValue(r.Context(), v) // PRNs become hrefs
			}
			before := len(q.List.Where)
			var n int
			var err error
			if k == "q" {
				n, err = applyQ(&q.List, v, byName, MaxFilterTerms-terms)
			} else {
				err = fn(&q.List, v)
				n = len(q.List.Where) - before
			}
			if err != nil {
				return q, err
			}
			if terms += n; terms > MaxFilterTerms {
				return q, tooManyTerms(k)
			}
			if len(q.List.Args) > MaxFilterValues {
				return q, tooManyValues(k)
			}
		}
	}
	if v := vals.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return q, BadField("limit", "A valid non-negative integer is required.")
		}
		q.List.Limit = n
	}
	if v := vals.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return q, BadField("offset", "A valid non-negative integer is required.")
		}
		q.List.Offset = n
	}
	if q.List.Limit == 0 {
		q.List.Limit = 100
	}
	if q.List.Limit > 1000 {
		q.List.Limit = 1000
	}
	q.fields, q.exclude = fieldSet(vals["fields"]), fieldSet(vals["exclude_fields"])
	var order []string
	ordered := map[string]bool{}
	for _, o := range SplitComma(vals["ordering"]) {
		desc := strings.HasPrefix(o, "-")
		name := strings.TrimPrefix(o, "-")
		col, ok := spec.Ordering[name]
		if !ok {
			return q, BadField("ordering", "Select a valid choice. %s is not one of the available choices.", o)
		}
		// A field again orders nothing more (and SQLite takes at most 2,000 terms).
		if ordered[name] {
			continue
		}
		ordered[name] = true
		if key, ok := strings.CutPrefix(col, "attr:"); ok {
			col = d.JSONText("c.attrs", key)
		}
		if desc {
			col += " DESC"
		}
		order = append(order, col)
	}
	q.List.OrderBy = strings.Join(order, ", ")
	return q, nil
}

func fieldSet(vs []string) map[string]bool {
	var out map[string]bool
	for _, name := range SplitComma(vs) {
		if out == nil {
			out = map[string]bool{}
		}
		out[name] = true
	}
	return out
}

func applyLookup(l *meta.List, d meta.Dialect, f Filter, lk, pname, v string) error {
	if f.Type == Custom {
		return f.Apply(l, d, v)
	}
	if f.Attr != "" {
		f.Col = d.JSONText("c.attrs", f.Attr)
	}
	parse := func(s string) (any, error) {
		switch f.Type {
		case Int:
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, BadField(pname, "Enter a whole number.")
			}
			return n, nil
		case Bool:
			b, err := strconv.ParseBool(strings.ToLower(s))
			if err != nil {
				return nil, BadField(pname, "Enter a valid boolean.")
			}
			return b, nil
		case DateTime:
			t, err := parseTime(s)
			if err != nil {
				return nil, BadField(pname, "Enter a valid date/time.")
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
		l.And(f.Col+" = ?", x)
	case "ne":
		x, err := parse(v)
		if err != nil {
			return err
		}
		l.And(f.Col+" <> ?", x)
	case "iexact":
		l.And("lower("+f.Col+") = lower(?)", v)
	case "contains", "icontains":
		l.And(d.Contains(f.Col, lk == "icontains"), v)
	case "startswith":
		l.And("substr("+f.Col+", 1, length(?)) = ?", v, v)
	case "istartswith":
		l.And("lower(substr("+f.Col+", 1, length(?))) = lower(?)", v, v)
	case "regex", "iregex":
		if err := meta.CheckPattern(d, v, lk == "iregex"); err != nil {
			return BadField(pname, "Enter a valid regular expression (%v).", err)
		}
		l.And(d.RegexpMatch(f.Col, lk == "iregex"), v)
	case "in":
		parts := SplitComma([]string{v})
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
		l.And(f.Col+" IN "+Placeholders(len(parts)), args...)
	case "gt", "gte", "lt", "lte":
		x, err := parse(v)
		if err != nil {
			return err
		}
		op := map[string]string{"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}[lk]
		l.And(f.Col+" "+op+" ?", x)
	case "range":
		parts := SplitComma([]string{v})
		if len(parts) != 2 {
			return BadField(pname, "Enter two values separated by a comma.")
		}
		a, err := parse(parts[0])
		if err != nil {
			return err
		}
		b, err := parse(parts[1])
		if err != nil {
			return err
		}
		l.And(f.Col+" BETWEEN ? AND ?", a, b)
	case "isnull":
		b, err := strconv.ParseBool(strings.ToLower(v))
		if err != nil {
			return BadField(pname, "Enter a valid boolean.")
		}
		if b {
			l.And(f.Col + " IS NULL")
		} else {
			l.And(f.Col + " IS NOT NULL")
		}
	default:
		return fmt.Errorf("filter %s: unsupported lookup %q", f.Name, lk)
	}
	return nil
}

// Placeholders is "(?,?,…)" with n marks.
func Placeholders(n int) string {
	return "(" + strings.TrimSuffix(strings.Repeat("?,", n), ",") + ")"
}

// Args turns strings into query arguments.
func Args(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999Z", "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("invalid time %q", s)
}

// ParseTime reads a date-time as Pulp accepts it (RFC 3339 or a date).
func ParseTime(s string) (time.Time, error) { return parseTime(s) }

// Params turns a list declaration into the operation's parameters; the document orders
// them as the reference does.
func (spec ListSpec) Params() []openapi.Param {
	var ps []openapi.Param
	for _, f := range spec.Filters {
		ps = append(ps, f.params()...)
	}
	if len(spec.Filters) > 0 {
		ps = append(ps, openapi.Q())
	}
	if len(spec.Ordering) > 0 {
		names := make([]string, 0, len(spec.Ordering))
		for k := range spec.Ordering {
			names = append(names, k)
		}
		sort.Strings(names)
		ps = append(ps, openapi.Ordering(names...))
	}
	return openapi.Params(openapi.ListParams(), ps)
}

func (f Filter) params() []openapi.Param {
	switch f.Type {
	case Int:
		return openapi.IntFilter(f.Name, f.Lookups...)
	case DateTime:
		return openapi.DateTimeFilter(f.Name, f.Lookups...)
	case Bool:
		return []openapi.Param{openapi.BoolFilter(f.Name)}
	case Custom:
		switch {
		case f.Name == "pulp_id__in":
			return []openapi.Param{openapi.UUIDFilter(f.Name)}
		case f.Name == "pulp_label_select":
			return []openapi.Param{openapi.LabelSelect()}
		case strings.HasSuffix(f.Name, "__in"):
			return []openapi.Param{openapi.MultiFilter(f.Name)}
		case f.Boolean:
			return []openapi.Param{openapi.BoolFilter(f.Name)}
		case f.UUID:
			return []openapi.Param{openapi.Query(f.Name, openapi.Schema{Type: "string", Format: "uuid"}, f.Desc)}
		case f.Repeated:
			return []openapi.Param{openapi.Repeated(f.Name, openapi.Schema{Type: "string"}, f.Desc)}
		case f.Number:
			return []openapi.Param{openapi.Query(f.Name, openapi.Schema{Type: "number"}, f.Desc)}
		}
		return []openapi.Param{openapi.HrefFilter(f.Name, f.Desc)}
	}
	return openapi.StringFilter(f.Name, f.Lookups...)
}

// IdentityFilters are pulp_id__in, pulp_href__in and prn__in over col, the UUID column.
func IdentityFilters(col string) []Filter {
	ids := func(conv func(string) (string, bool)) func(l *meta.List, d meta.Dialect, v string) error {
		return func(l *meta.List, d meta.Dialect, v string) error {
			parts := SplitComma([]string{v})
			if len(parts) == 0 {
				l.And("1 = 0")
				return nil
			}
			args := make([]any, 0, len(parts))
			for _, p := range parts {
				id, ok := conv(p)
				if !ok {
					id = "-"
				}
				args = append(args, id)
			}
			l.And(col+" IN "+Placeholders(len(args)), args...)
			return nil
		}
	}
	return []Filter{
		{Name: "pulp_id__in", Type: Custom, Lookups: []string{"exact"}, Apply: ids(func(s string) (string, bool) { return s, true })},
		{Name: "pulp_href__in", Type: Custom, Lookups: []string{"exact"}, Apply: ids(func(s string) (string, bool) {
			p, ok := href.Parse(s)
			return p.ID, ok
		})},
		{Name: "prn__in", Type: Custom, Lookups: []string{"exact"}, Apply: ids(func(s string) (string, bool) {
			i := strings.LastIndex(s, ":")
			return s[i+1:], strings.HasPrefix(s, "prn:") && i > 0
		})},
	}
}

// UnitFilters are the filters every content list has beside its kind's own (over units,
// alias c): orphaned_for, pulp_label_select, and repository_version, _added and _removed.
func UnitFilters() []Filter {
	return []Filter{
		{Name: "orphaned_for", Type: Custom, Number: true, Lookups: []string{"exact"}, Apply: func(l *meta.List, d meta.Dialect, v string) error {
			mins, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return BadField("orphaned_for", "A valid number is required.")
			}
			l.And(`NOT EXISTS (SELECT 1 FROM repository_content rc WHERE rc.content_id = c.id) AND c.created < ?`,
				time.Now().Add(-time.Duration(mins*float64(time.Minute))).UnixMicro())
			return nil
		}},
		LabelSelect("c.labels"),
		versionUnits("repository_version", meta.InVersion("rc", "?")),
		versionUnits("repository_version_added", "rc.version_added = ?"),
		versionUnits("repository_version_removed", "rc.version_removed = ?"),
	}
}

// versionUnits filters units (alias c) by a version href: present in it, added by it,
// or removed by it.
func versionUnits(name, cond string) Filter {
	return Filter{Name: name, Type: Custom, Lookups: []string{"exact"}, Apply: func(l *meta.List, d meta.Dialect, v string) error {
		repo, n, err := VersionFilter(v, name)
		if err != nil {
			return err
		}
		args := []any{repo}
		for i := 0; i < strings.Count(cond, "?"); i++ {
			args = append(args, n)
		}
		l.And(`EXISTS (SELECT 1 FROM repository_content rc WHERE rc.content_id = c.id
			AND rc.repository_id = (SELECT rr.id FROM repositories rr WHERE rr.pulp_id = ?) AND `+cond+`)`, args...)
		return nil
	}}
}

// TimeFilter is a date-time filter with Pulp's lookups.
func TimeFilter(name, col string) Filter {
	return Filter{Name: name, Col: col, Type: DateTime, Lookups: []string{"exact", "gt", "gte", "isnull", "lt", "lte", "range"}}
}

// NameLookups are the lookups of a name filter.
var NameLookups = []string{"exact", "contains", "icontains", "iexact", "in", "iregex", "istartswith", "regex", "startswith"}

// HrefFilter matches col, a UUID column, against the UUID of an href in one of
// collections (any collection when none is given).
func HrefFilter(name, col string, collections ...string) Filter {
	return Filter{Name: name, Type: Custom, Lookups: []string{"exact"}, Apply: func(l *meta.List, d meta.Dialect, v string) error {
		p, ok := href.Parse(v)
		if !ok || (len(collections) > 0 && !contains(collections, p.Collection)) {
			return BadField(name, "Invalid hyperlink - No URL match for %q.", v)
		}
		l.And(col+" = ?", p.ID)
		return nil
	}}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// Ordering prefixes every column of m with alias.
func Ordering(alias string, m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = alias + "." + v
	}
	return out
}

// VersionFilter parses a repository version href used as a filter value into the
// repository's UUID and the number.
func VersionFilter(v, field string) (string, int64, error) {
	p, ok := href.Parse(v)
	n, isVersion := p.VersionNumber()
	if !ok || !strings.HasPrefix(p.Collection, "repositories/") || !isVersion {
		return "", 0, BadField(field, "Invalid hyperlink - No URL match for %q.", v)
	}
	return p.ID, n, nil
}

// Origin is the scheme and host a request reached the API at ("http://host:port"),
// which absolute links in answers start with.
func Origin(r *http.Request) string {
	if r.TLS != nil {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

type originKey struct{}

// WithOrigin keeps a request's Origin in its context, for renderers that get only the
// context.
func WithOrigin(ctx context.Context, origin string) context.Context {
	return context.WithValue(ctx, originKey{}, origin)
}

// OriginOf is the Origin WithOrigin kept ("" for none).
func OriginOf(ctx context.Context) string {
	s, _ := ctx.Value(originKey{}).(string)
	return s
}

// pageOut renders a list response: {count, next, previous, results}. next becomes
// null after the last page.
func pageOut(r *http.Request, q Query, total int64, results []any) map[string]any {
	if results == nil {
		results = []any{}
	}
	link := func(off int) any {
		u, _ := url.Parse(Origin(r))
		u.Path = r.URL.Path
		v := r.URL.Query()
		v.Set("limit", strconv.Itoa(q.List.Limit))
		v.Set("offset", strconv.Itoa(off))
		if off <= 0 {
			v.Del("offset")
		}
		u.RawQuery = v.Encode()
		return u.String()
	}
	var next, prev any
	if int64(q.List.Offset+len(results)) < total && len(results) > 0 {
		next = link(q.List.Offset + q.List.Limit)
	}
	if q.List.Offset > 0 {
		prev = link(max(0, q.List.Offset-q.List.Limit))
	}
	return map[string]any{"count": total, "next": next, "previous": prev, "results": results}
}

// project applies fields / exclude_fields to one rendered object.
func (q Query) project(m map[string]any) map[string]any {
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

// Time renders a timestamp (microseconds) as Pulp does.
func Time(us int64) string { return meta.Time(us).Format("2006-01-02T15:04:05.000000Z") }

// TimePtr renders an optional timestamp; nil is null.
func TimePtr(us *int64) any {
	if us == nil {
		return nil
	}
	return Time(*us)
}

// WritePage sends a page of typed items, projecting fields when asked.
func WritePage(w http.ResponseWriter, r *http.Request, q Query, total int64, items []any) error {
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
	WriteJSON(w, http.StatusOK, pageOut(r, q, total, results))
	return nil
}

// WriteOne sends one typed item, projecting fields/exclude_fields when asked.
func WriteOne(w http.ResponseWriter, r *http.Request, status int, item any) error {
	v := r.URL.Query()
	q := Query{fields: fieldSet(v["fields"]), exclude: fieldSet(v["exclude_fields"])}
	if q.fields == nil && q.exclude == nil {
		WriteJSON(w, status, item)
		return nil
	}
	m, err := toMap(item)
	if err != nil {
		return err
	}
	WriteJSON(w, status, q.project(m))
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
