package api

import (
	"context"
	"net/http"
	"strings"

	"pith/api/rest"
	"pith/meta"
)

// labelOps reads a set_label / unset_label body.
func readSetLabel(r *http.Request) (setLabelIn, error) {
	var in setLabelIn
	raw, err := rest.ReadBody(r, &in, nil)
	if err != nil {
		return in, err
	}
	if err := rest.Require(raw, "key"); err != nil {
		return in, err
	}
	if err := rest.Decode(raw, &in); err != nil {
		return in, err
	}
	if !rest.LabelKey(in.Key) {
		return in, rest.BadField("key", "Key %q contains invalid characters. Only alphanumerics, underscores, spaces, hyphens, and dots are allowed.", in.Key)
	}
	if in.Value != nil && strings.ContainsAny(*in.Value, "()") {
		return in, rest.BadField("value", "Key %q contains value with parenthesis.", in.Key)
	}
	return in, nil
}

func readUnsetLabel(r *http.Request) (unsetLabelIn, error) {
	var in unsetLabelIn
	raw, err := rest.ReadBody(r, &in, nil)
	if err != nil {
		return in, err
	}
	if err := rest.Require(raw, "key"); err != nil {
		return in, err
	}
	return in, rest.Decode(raw, &in)
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
		return rest.WriteOne(w, r, status, setLabelResponse{Key: in.Key, Value: in.Value})
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
			return rest.BadField("key", "Label with key %q does not exist.", in.Key)
		}
		delete(labels, in.Key)
		if err := save(labels); err != nil {
			return err
		}
		return rest.WriteOne(w, r, status, unsetLabelResponse{Key: in.Key, Value: &v})
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
