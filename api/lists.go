package api

import (
	"context"
	"net/http"

	"pith/api/href"
	"pith/api/rest"
	"pith/meta"
)

// lister is the handler of a list operation: the request's filters, ordering and page
// (spec), narrowed by scope (nil: not narrowed), select rows with list, which render
// shows.
func lister[T any](s *Server, spec rest.ListSpec, scope func(r *http.Request, l *meta.List) error,
	list func(ctx context.Context, q meta.Querier, l meta.List) ([]T, int64, error), render func(r *http.Request, rows []T) ([]any, error)) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q, err := rest.ParseList(r, s.db.Dialect(), spec)
		if err != nil {
			return err
		}
		if scope != nil {
			if err := scope(r, &q.List); err != nil {
				return err
			}
		}
		rows, total, err := list(r.Context(), s.db, q.List)
		if err != nil {
			return q.Explain(err)
		}
		items, err := render(r, rows)
		if err != nil {
			return err
		}
		return rest.WritePage(w, r, q, total, items)
	}
}

// each renders rows one by one.
func each[T any](f func(T) any) func(*http.Request, []T) ([]any, error) {
	return func(_ *http.Request, rows []T) ([]any, error) {
		items := make([]any, len(rows))
		for i, x := range rows {
			items[i] = f(x)
		}
		return items, nil
	}
}

// ofType narrows a list to one kind's type (col is the type column, "r.type"); every
// kind when typ is "".
func ofType(col, typ string) func(*http.Request, *meta.List) error {
	if typ == "" {
		return nil
	}
	return func(_ *http.Request, l *meta.List) error {
		l.And(col+" = ?", typ)
		return nil
	}
}

// kindScoping is the scoping of a list of a collection's objects ("repositories") of one
// type (typ "file.file": viewset repositories/file/file) or of every type (""), whose
// rows have alias a.
func kindScoping(collection, typ, a string) scoping {
	sc := scoping{viewset: collection + "/" + href.Segment(typ), id: a + ".pulp_id"}
	if typ == "" {
		sc = scoping{viewset: collection, id: a + ".pulp_id", typ: a + ".type"}
	}
	if collection == "repositories" {
		sc.row = a + ".id"
	}
	return sc
}
