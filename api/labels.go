package api

import (
	"context"
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

// labelStore loads one resource's labels and returns how to save them.
type labelStore func(ctx context.Context, id string) (meta.Labels, func(meta.Labels) error, error)

// labelHandlers are the set_label and unset_label operations of a resource kind; Pulp
// answers them with status (201 for most kinds, 200 for distributions).
func (s *Server) labelHandlers(status int, load labelStore) (set, unset func(http.ResponseWriter, *http.Request) error) {
	set = func(w http.ResponseWriter, r *http.Request) error {
		in, err := readSetLabel(r)
		if err != nil {
			return err
		}
		labels, save, err := load(r.Context(), r.PathValue("id"))
		if err != nil {
			return err
		}
		if labels == nil {
			labels = meta.Labels{}
		}
		if in.Value == nil {
			delete(labels, in.Key)
		} else {
			labels[in.Key] = *in.Value
		}
		if err := save(labels); err != nil {
			return err
		}
		return writeOne(w, r, status, setLabelResponse{Key: in.Key, Value: in.Value})
	}
	unset = func(w http.ResponseWriter, r *http.Request) error {
		in, err := readUnsetLabel(r)
		if err != nil {
			return err
		}
		labels, save, err := load(r.Context(), r.PathValue("id"))
		if err != nil {
			return err
		}
		v, ok := labels[in.Key]
		if !ok {
			return badField("key", "Label with key %q does not exist.", in.Key)
		}
		delete(labels, in.Key)
		if err := save(labels); err != nil {
			return err
		}
		return writeOne(w, r, status, unsetLabelResponse{Key: in.Key, Value: &v})
	}
	return set, unset
}

func (s *Server) repoLabels(ctx context.Context, id string) (meta.Labels, func(meta.Labels) error, error) {
	x, err := meta.RepositoryByPulpID(ctx, s.db, id)
	return x.Labels, func(l meta.Labels) error { x.Labels = l; return meta.UpdateRepository(ctx, s.db, x) }, err
}

func (s *Server) remoteLabels(ctx context.Context, id string) (meta.Labels, func(meta.Labels) error, error) {
	x, err := meta.RemoteByPulpID(ctx, s.db, id)
	return x.Labels, func(l meta.Labels) error { x.Labels = l; return meta.UpdateRemote(ctx, s.db, x) }, err
}

func (s *Server) distLabels(ctx context.Context, id string) (meta.Labels, func(meta.Labels) error, error) {
	x, err := meta.DistributionByPulpID(ctx, s.db, id)
	return x.Labels, func(l meta.Labels) error { x.Labels = l; return meta.UpdateDistribution(ctx, s.db, x, 0) }, err
}

func (s *Server) contentLabels(ctx context.Context, id string) (meta.Labels, func(meta.Labels) error, error) {
	x, err := meta.ContentByPulpID(ctx, s.db, id)
	return x.Labels, func(l meta.Labels) error { return meta.UpdateContentLabels(ctx, s.db, x.ID, l) }, err
}
