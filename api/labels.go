package api

import (
	"net/http"
	"regexp"
	"strings"

	"pith/meta"
)

// mergeLabels applies sent labels: a null value deletes the key. Keys must be
// identifier-like, as Pulp requires.
var labelKey = regexp.MustCompile(`^[\w ]+$`)

func setLabels(in labelsIn) (meta.Labels, error) {
	out := meta.Labels{}
	for k, v := range in {
		if !labelKey.MatchString(k) {
			return nil, badField("pulp_labels", "Key %q contains non-alphanumeric characters.", k)
		}
		if v != nil {
			if strings.ContainsAny(*v, ",()") {
				return nil, badField("pulp_labels", "Value %q of key %q contains one of the invalid characters ',()'.", *v, k)
			}
			out[k] = *v
		}
	}
	return out, nil
}

// labelSelect implements pulp_label_select: comma-separated terms "key=value",
// "key!=value", "key~substring", "key" (exists) and "!key" (absent).
func labelSelect(col string) filter {
	return filter{name: "pulp_label_select", kind: kCustom, lookups: []string{"exact"}, apply: func(l *meta.List, d meta.Dialect, v string) error {
		for _, term := range strings.Split(v, ",") {
			term = strings.TrimSpace(term)
			switch {
			case term == "":
			case strings.Contains(term, "!="):
				k, val, _ := strings.Cut(term, "!=")
				l.And("("+d.JSONText(col, strings.TrimSpace(k))+" IS NULL OR "+d.JSONText(col, strings.TrimSpace(k))+" <> ?)", strings.TrimSpace(val))
			case strings.Contains(term, "="):
				k, val, _ := strings.Cut(term, "=")
				l.And(d.JSONText(col, strings.TrimSpace(k))+" = ?", strings.TrimSpace(val))
			case strings.Contains(term, "~"):
				k, val, _ := strings.Cut(term, "~")
				l.And(d.Contains(d.JSONText(col, strings.TrimSpace(k)), true), strings.TrimSpace(val))
			case strings.HasPrefix(term, "!"):
				l.And(d.JSONText(col, strings.TrimPrefix(term, "!")) + " IS NULL")
			default:
				l.And(d.JSONText(col, term) + " IS NOT NULL")
			}
		}
		return nil
	}}
}

// labelOps reads a set_label / unset_label body.
func readSetLabel(r *http.Request) (setLabelIn, error) {
	var in setLabelIn
	raw, err := readBody(r, &in, nil)
	if err != nil {
		return in, err
	}
	if err := requireFields(raw, "key"); err != nil {
		return in, err
	}
	if err := decode(raw, &in); err != nil {
		return in, err
	}
	if !labelKey.MatchString(in.Key) {
		return in, badField("key", "Key %q contains non-alphanumeric characters.", in.Key)
	}
	if in.Value != nil && strings.ContainsAny(*in.Value, ",()") {
		return in, badField("value", "Value %q contains one of the invalid characters ',()'.", *in.Value)
	}
	return in, nil
}

func readUnsetLabel(r *http.Request) (unsetLabelIn, error) {
	var in unsetLabelIn
	raw, err := readBody(r, &in, nil)
	if err != nil {
		return in, err
	}
	if err := requireFields(raw, "key"); err != nil {
		return in, err
	}
	return in, decode(raw, &in)
}
