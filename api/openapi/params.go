package openapi

import (
	"sort"
	"strings"
)

// Param is one operation parameter.
type Param struct {
	Name        string
	In          string // query, header, path
	Required    bool
	Schema      Schema
	Explode     *bool
	Style       string
	Description string
}

// MarshalJSON writes the parameter in the reference's key order.
func (p Param) MarshalJSON() ([]byte, error) {
	o := object{{"in", p.In}, {"name", p.Name}, {"schema", p.Schema}}
	o.addIf(p.Description != "", "description", p.Description)
	o.addIf(p.Required, "required", true)
	o.addIf(p.Explode != nil, "explode", p.Explode)
	o.addIf(p.Style != "", "style", p.Style)
	return o.MarshalJSON()
}

func boolPtr(b bool) *bool { return &b }

var (
	stringArray = Schema{Type: "array", Items: &Schema{Type: "string"}}
	dateTime    = Schema{Type: "string", Format: "date-time"}
)

// Query is a query parameter with any schema.
func Query(name string, s Schema, desc string) Param {
	return Param{Name: name, In: "query", Schema: s, Description: desc}
}

// CSV is a comma-separated array query parameter (explode false, style form).
func CSV(name string, item Schema, desc string) Param {
	return Param{Name: name, In: "query", Schema: Schema{Type: "array", Items: &item},
		Explode: boolPtr(false), Style: "form", Description: desc}
}

// Repeated is an array query parameter given once per value (explode true, style form).
func Repeated(name string, item Schema, desc string) Param {
	return Param{Name: name, In: "query", Schema: Schema{Type: "array", Items: &item},
		Explode: boolPtr(true), Style: "form", Description: desc}
}

// Header is a header parameter.
func Header(name string, s Schema, required bool, desc string) Param {
	return Param{Name: name, In: "header", Schema: s, Required: required, Description: desc}
}

// Diagnostics is the X-Task-Diagnostics header pulpcore declares on every operation.
func Diagnostics() Param {
	return Header("X-Task-Diagnostics", stringArray, false, "List of profilers to use on tasks.")
}

// ContentRange is the required Content-Range header of uploads_update.
func ContentRange() Param {
	return Header("Content-Range", Schema{Type: "string"}, true,
		"The Content-Range header specifies the location of the file chunk within the file.")
}

// Fields are the fields and exclude_fields query parameters of list and read operations.
func Fields() []Param {
	return []Param{
		Query("fields", stringArray, "A list of fields to include in the response."),
		Query("exclude_fields", stringArray, "A list of fields to exclude from the response."),
	}
}

// Pagination are the limit and offset query parameters of list operations.
func Pagination() []Param {
	return []Param{
		Query("limit", Schema{Type: "integer"}, "Number of results to return per page."),
		Query("offset", Schema{Type: "integer"}, "The initial index from which to return the results."),
	}
}

// ReadParams are the parameters of a read (detail GET) operation, except its path parameter.
func ReadParams() []Param { return append([]Param{Diagnostics()}, Fields()...) }

// ListParams are the parameters every list operation has: X-Task-Diagnostics,
// limit, offset, fields and exclude_fields. Filters and ordering come on top.
func ListParams() []Param {
	return append(append([]Param{Diagnostics()}, Pagination()...), Fields()...)
}

// Ordering is the ordering parameter allowing fields (each also descending), with
// the reference's enum (sorted) and description (in the given order).
func Ordering(fields ...string) Param {
	enum := make([]string, 0, 2*len(fields))
	var desc strings.Builder
	desc.WriteString("Ordering")
	for i, f := range fields {
		enum = append(enum, f, "-"+f)
		if i == 0 {
			desc.WriteString("\n")
		}
		l := label(f)
		desc.WriteString("\n* `" + f + "` - " + l + "\n* `-" + f + "` - " + l + " (descending)")
	}
	sort.Strings(enum)
	return CSV("ordering", Schema{Type: "string", Enum: enum}, desc.String())
}

// label is Django's verbose name of a field: "pulp_last_updated" → "Pulp last updated".
func label(f string) string {
	l := strings.ReplaceAll(f, "_", " ")
	if l == "" {
		return l
	}
	return strings.ToUpper(l[:1]) + l[1:]
}

// lookupDesc is how django-filter describes each lookup; %s is the field.
var lookupDesc = map[string]string{
	"exact":       "Filter results where %s matches value",
	"iexact":      "Filter results where %s matches value",
	"contains":    "Filter results where %s contains value",
	"icontains":   "Filter results where %s contains value",
	"startswith":  "Filter results where %s starts with value",
	"istartswith": "Filter results where %s starts with value",
	"regex":       "Filter results where %s matches regex value",
	"iregex":      "Filter results where %s matches regex value",
	"ne":          "Filter results where %s not equal to value",
	"in":          "Filter results where %s is in a comma-separated list of values",
	"gt":          "Filter results where %s is greater than value",
	"gte":         "Filter results where %s is greater than or equal to value",
	"lt":          "Filter results where %s is less than value",
	"lte":         "Filter results where %s is less than or equal to value",
	"range":       "Filter results where %s is between two comma separated values",
	"isnull":      "Filter results where %s has a null value",
}

// filter builds one parameter per lookup ("" or "exact" = the plain name), with
// values of schema s; in and range are comma-separated arrays, isnull is boolean.
func filter(name string, s Schema, lookups []string) []Param {
	if len(lookups) == 0 {
		lookups = []string{"exact"}
	}
	ps := make([]Param, 0, len(lookups))
	for _, lk := range lookups {
		if lk == "" {
			lk = "exact"
		}
		n := name
		if lk != "exact" {
			n += "__" + lk
		}
		desc := strings.ReplaceAll(lookupDesc[lk], "%s", name)
		switch lk {
		case "in", "range":
			ps = append(ps, CSV(n, s, desc))
		case "isnull":
			ps = append(ps, Query(n, Schema{Type: "boolean"}, desc))
		default:
			ps = append(ps, Query(n, s, desc))
		}
	}
	return ps
}

// StringFilter is a string filter with lookups such as exact, contains, icontains,
// iexact, in, iregex, istartswith, regex, startswith, ne.
func StringFilter(name string, lookups ...string) []Param {
	return filter(name, Schema{Type: "string"}, lookups)
}

// IntFilter is an integer filter with lookups such as exact, gt, gte, lt, lte, range, ne, isnull, in.
func IntFilter(name string, lookups ...string) []Param {
	return filter(name, Schema{Type: "integer"}, lookups)
}

// DateTimeFilter is a date-time filter with lookups such as exact, gt, gte, lt, lte, range, isnull.
func DateTimeFilter(name string, lookups ...string) []Param {
	return filter(name, dateTime, lookups)
}

// BoolFilter is a boolean filter on name.
func BoolFilter(name string) Param {
	return filter(name, Schema{Type: "boolean"}, nil)[0]
}

// ChoiceFilter is an exact filter whose value is one of choices, described like
// the reference ("… matches value" and one line per choice, in the given order).
func ChoiceFilter(name string, choices ...string) Param {
	enum := append([]string(nil), choices...)
	sort.Strings(enum)
	desc := strings.ReplaceAll(lookupDesc["exact"], "%s", name)
	if len(choices) > 0 {
		desc += "\n"
	}
	for _, c := range choices {
		desc += "\n* `" + c + "` - " + label(c)
	}
	return Query(name, Schema{Type: "string", Enum: enum}, desc)
}

// HrefFilter is a plain string filter taking an href or PRN, such as remote
// (desc "") or with_content ("Content Unit referenced by HREF/PRN").
func HrefFilter(name, desc string) Param {
	return Query(name, Schema{Type: "string"}, desc)
}

// multiple is the description of the reference's plain multi-value filters.
const multiple = "Multiple values may be separated by commas."

// MultiFilter is a comma-separated string filter described as the reference's
// plain multi-value filters, such as content__in or reserved_resources__in.
func MultiFilter(name string) Param {
	return CSV(name, Schema{Type: "string"}, multiple)
}

// UUIDFilter is a comma-separated filter of UUIDs, such as pulp_id__in.
func UUIDFilter(name string) Param {
	return CSV(name, Schema{Type: "string", Format: "uuid"}, multiple)
}

// IdentityFilters are prn__in, pulp_href__in and pulp_id__in, which every pulpcore list has.
func IdentityFilters() []Param {
	return []Param{MultiFilter("prn__in"), MultiFilter("pulp_href__in"), UUIDFilter("pulp_id__in")}
}

// LabelSelect is the pulp_label_select filter.
func LabelSelect() Param {
	return Query("pulp_label_select", Schema{Type: "string"}, "Filter labels by search string")
}

// Q is the q filter (NOT/AND/OR over the other filters).
func Q() Param {
	return Query("q", Schema{Type: "string"}, "Filter results by using NOT, AND and OR operations on other filters")
}

// Params flattens parameter groups, so a route can list helpers of both shapes:
// Params(ListParams(), StringFilter("name", "exact", "in"), []Param{Q()}).
func Params(groups ...[]Param) []Param {
	var ps []Param
	for _, g := range groups {
		ps = append(ps, g...)
	}
	return ps
}
