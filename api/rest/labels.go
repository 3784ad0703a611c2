package rest

import (
	"regexp"
	"strings"

	"pith/meta"
)

// LabelsIn are pulp_labels as sent: values may be null to delete a key.
type LabelsIn map[string]*string

// labelKey is what a label key may be: word characters, spaces, hyphens and dots, as
// newer Pulp allows (3.105 took word characters and spaces only; a replica labels what it
// makes with the keys its upstream uses).
var labelKey = regexp.MustCompile(`^[\w .\-]+$`)

// SetLabels checks sent labels and returns them without the null (deleted) ones.
func SetLabels(in LabelsIn) (meta.Labels, error) {
	out := meta.Labels{}
	for k, v := range in {
		if !labelKey.MatchString(k) {
			return nil, BadField("pulp_labels", "Key %q contains invalid characters. Only alphanumerics, underscores, spaces, hyphens, and dots are allowed.", k)
		}
		if v != nil && strings.ContainsAny(*v, "()") {
			return nil, BadField("pulp_labels", "Key %q contains value with parenthesis.", k)
		}
		if v != nil {
			out[k] = *v
		}
	}
	return out, nil
}

// LabelKey reports whether k may be a label key.
func LabelKey(k string) bool { return labelKey.MatchString(k) }

// LabelSelect implements pulp_label_select over col: comma-separated terms "key=value",
// "key!=value", "key~substring", "key" (exists) and "!key" (absent). The key each term
// selects by must be a label key; anything else ("key!x") is an invalid term.
func LabelSelect(col string) Filter {
	return Filter{Name: "pulp_label_select", Type: Custom, Lookups: []string{"exact"}, Apply: func(l *meta.List, d meta.Dialect, v string) error {
		for _, term := range strings.Split(v, ",") {
			term = strings.TrimSpace(term)
			if term == "" {
				continue
			}
			// The operator, and the key and value either side of it.
			op, key, val := "", term, ""
			for _, o := range []string{"!=", "=", "~"} {
				if k, v, ok := strings.Cut(term, o); ok {
					op, key, val = o, strings.TrimSpace(k), strings.TrimSpace(v)
					break
				}
			}
			if op == "" && strings.HasPrefix(term, "!") {
				op, key = "!", strings.TrimSpace(term[1:])
			}
			if !labelKey.MatchString(key) {
				return BadField("pulp_label_select", "Invalid search term: %q; a label key has only alphanumerics, underscores, spaces, hyphens, and dots.", term)
			}
			field := d.JSONText(col, key)
			switch op {
			case "!=":
				l.And("("+field+" IS NULL OR "+field+" <> ?)", val)
			case "=":
				l.And(field+" = ?", val)
			case "~":
				l.And(d.Contains(field, true), val)
			case "!":
				l.And(field + " IS NULL")
			default:
				l.And(field + " IS NOT NULL")
			}
		}
		return nil
	}}
}
