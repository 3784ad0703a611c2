package api

import (
	"context"
	"net/http"
	"strings"

	"pith/api/href"
	"pith/api/rest"
	"pith/meta"
)

// Lists show a caller only what its roles let it see, as Pulp's scope_queryset does,
// narrowed in the list's own SQL query: rows of a viewset whose policy scopes its
// queryset need the viewset's view permission (on every object or on the row); a list
// of every type (repositories/) asks each type's viewset; content is what visible
// repositories hold; versions are those of visible repositories; task groups those
// with a visible task. Superusers see everything and their queries are not touched.

// scoping names a list's policy and the columns its rows are matched by.
type scoping struct {
	viewset string
	id      string // the rows' pulp_id column ("r.pulp_id")
	typ     string // a list of every type: the rows' type column ("r.type")
	content string // a content list: the rows' content id ("c.id")
	repo    string // a version list: the rows' repository id ("v.repository_id")
	group   string // a task group list: the rows' id ("g.id")
	row     string // a repository list: the rows' id ("r.id")
}

// scope narrows a list to what the caller may see, after also (nil for nothing).
func (s *Server) scope(sc scoping, also func(*http.Request, *meta.List) error) func(*http.Request, *meta.List) error {
	return func(r *http.Request, l *meta.List) error {
		if also != nil {
			if err := also(r, l); err != nil {
				return err
			}
		}
		c := callerFrom(r.Context())
		if c == nil || c.subject.Superuser {
			return nil
		}
		cond, err := s.scopeCond(r.Context(), c, sc)
		if err != nil || cond.Row == "" {
			return err
		}
		l.AndCond(cond)
		return nil
	}
}

// contentOfType narrows a content list to one type, as ofType, and to what the caller
// may see, as scope. The type is matched through the (type, id) index, which a page read
// in id order walks and stops at its limit; except in the page of a caller who sees few
// of the units (meta.Page), which reads the set of units the visible repositories hold in
// id order and checks each unit's type: SQLite without statistics would otherwise read
// every unit of the type, probe the set with each and sort them (the page of a viewer of
// every file repository 1.14 → 0.57 ms, of 3,000 of them 2.83 → 2.30 ms). The count keeps
// the type's index: where the type is rare among the units of the set (1,000 among
// 51,000), looking each unit up took 31 ms against 21 ms (docs/benchmarks.md).
func (s *Server) contentOfType(typ string, sc scoping) func(*http.Request, *meta.List) error {
	narrow := s.scope(sc, nil)
	return func(r *http.Request, l *meta.List) error {
		if err := narrow(r, l); err != nil {
			return err
		}
		l.AndCond(meta.Cond{Row: "c.type = ?", Set: "c.type = ?", Sparse: s.db.Dialect().NoIndex("c.type") + " = ?", Args: []any{typ}})
		return nil
	}
}

// scopeCond is the condition a list's rows must meet (Row "" for none).
func (s *Server) scopeCond(ctx context.Context, c *caller, sc scoping) (meta.Cond, error) {
	pol, _, err := s.policies.get(ctx, s.db, sc.viewset)
	if err != nil || !pol.Scoped() {
		return meta.Cond{}, err
	}
	switch {
	case sc.row != "":
		// Repositories: those visible, by row id, where the caller's grants keep them.
		var repos meta.Cond
		if sc.typ != "" {
			repos, err = s.typedCond(ctx, c, sc.viewset, "rr.pulp_id", "rr.type")
		} else {
			repos, err = s.objectCond(ctx, c, sc.viewset, "rr.pulp_id")
		}
		if err != nil || repos.Row == "" || repos.Row == "1 = 0" {
			return repos, err
		}
		if in, ok, err := s.visibleRepos(ctx, c, sc.row, repos); ok || err != nil {
			return in, err
		}
		sc.row = ""
		return s.scopeCond(ctx, c, sc)
	case sc.content != "":
		// Content some visible repository holds. The count (and a page of a caller who
		// sees few of the units) reads the set of holdings, each checked against its
		// repository by primary key: written as a join, SQLite without statistics scans
		// the repositories and seeks their holdings, twice as slow. A page of a caller who
		// sees most units checks each unit's holdings in the list's order and stops at its
		// limit (meta.Page chooses).
		repos, err := s.typedCond(ctx, c, "repositories", "rr.pulp_id", "rr.type")
		switch {
		case err != nil || repos.Row == "1 = 0":
			return repos, err
		case repos.Row == "":
			return meta.Cond{
				Row:    `EXISTS (SELECT 1 FROM repository_content rc WHERE rc.content_id = ` + sc.content + `)`,
				Set:    sc.content + ` IN (SELECT rc.content_id FROM repository_content rc)`,
				Narrow: true,
			}, nil
		}
		// Kept as a set of repositories, each holding is checked from the index of
		// holdings by unit alone, without its repository's row.
		in, ok, err := s.visibleRepos(ctx, c, "rc.repository_id", repos)
		switch {
		case err != nil || (ok && in.Row == "1 = 0"):
			return in, err
		case ok:
			return meta.Cond{
				Row:    `EXISTS (SELECT 1 FROM repository_content rc WHERE rc.content_id = ` + sc.content + ` AND ` + in.Row + `)`,
				Set:    sc.content + ` IN (SELECT rc.content_id FROM repository_content rc WHERE ` + in.Set + `)`,
				Args:   in.Args,
				Narrow: true,
			}, nil
		}
		return meta.Cond{
			Row: `EXISTS (SELECT 1 FROM repository_content rc JOIN repositories rr ON rr.id = rc.repository_id WHERE rc.content_id = ` + sc.content + ` AND ` +
				repos.Row + `)`,
			Set: sc.content + ` IN (SELECT rc.content_id FROM repository_content rc WHERE EXISTS (SELECT 1 FROM repositories rr WHERE rr.id = rc.repository_id AND ` +
				repos.Set + `))`,
			Args:   repos.Args,
			Narrow: true,
		}, nil
	case sc.repo != "":
		repos, err := s.typedCond(ctx, c, "repositories", "rr.pulp_id", "rr.type")
		if err != nil || repos.Row == "" || repos.Row == "1 = 0" {
			return repos, err
		}
		if in, ok, err := s.visibleRepos(ctx, c, sc.repo, repos); ok || err != nil {
			in.Narrow = false // as the subquery below: a version list is paged as any other
			return in, err
		}
		return same(sc.repo+` IN (SELECT rr.id FROM repositories rr WHERE `+repos.Set+`)`, repos.Args), nil
	case sc.group != "":
		tasks, err := s.scopeCond(ctx, c, scoping{viewset: "tasks", id: "tt.pulp_id"})
		if err != nil {
			return meta.Cond{}, err
		}
		return same(sc.group+` IN (SELECT tt.task_group_id FROM tasks tt WHERE tt.task_group_id IS NOT NULL AND tt.parent_task_id IS NULL AND `+
			orTrue(tasks.Row)+`)`, tasks.Args), nil
	case sc.typ != "":
		return s.typedCond(ctx, c, sc.viewset, sc.id, sc.typ)
	}
	return s.objectCond(ctx, c, sc.viewset, sc.id)
}

// same is a condition written one way for the page and the count: a subquery read as a
// set either way.
func same(cond string, args []any) meta.Cond { return meta.Cond{Row: cond, Set: cond, Args: args} }

func orTrue(cond string) string {
	if cond == "" {
		return "1 = 1"
	}
	return cond
}

// objectCond: the row's object is one the caller holds the viewset's scope permission
// on (Row "" when it holds it on every object, or the policy names none).
func (s *Server) objectCond(ctx context.Context, c *caller, viewset, idCol string) (meta.Cond, error) {
	pol, _, err := s.policies.get(ctx, s.db, viewset)
	if err != nil || !pol.Scoped() {
		return meta.Cond{}, err
	}
	perm := s.policies.defaults.Policies[viewset].ScopePermission
	if perm == "" {
		return meta.Cond{}, nil
	}
	if ok, err := c.hasModelPerm(perm); ok || err != nil {
		return meta.Cond{}, err
	}
	g, err := c.userGrants()
	if err != nil {
		return meta.Cond{}, err
	}
	return g.Granted(ctx, idCol, s.env.ModelOf(viewset+"/"), perm)
}

// visibleRepos is repos (a typedCond of repositories, alias rr) as a condition on col, a
// repository's row id, where the caller's grants keep it (meta.Grants.InRepositories).
func (s *Server) visibleRepos(ctx context.Context, c *caller, col string, repos meta.Cond) (meta.Cond, bool, error) {
	g, err := c.userGrants()
	if err != nil {
		return meta.Cond{}, false, err
	}
	return g.InRepositories(ctx, col, repos)
}

// typedCond is the condition of a list of every type under a collection
// ("repositories"): each row meets its own type's condition. Rows of a type whose
// viewset has no policy of its own (administrators only: certguard's guards) are not
// shown, where Pulp shows them all (its fallback policy scopes nothing).
func (s *Server) typedCond(ctx context.Context, c *caller, collection, idCol, typCol string) (meta.Cond, error) {
	var row, set []string
	var args []any
	open, narrow := true, false
	for _, typ := range s.typesOf(collection) {
		viewset := collection + "/" + href.Segment(typ)
		if _, ok, err := s.policies.get(ctx, s.db, viewset); err != nil || !ok {
			if err != nil {
				return meta.Cond{}, err
			}
			open = false
			continue
		}
		cond, err := s.objectCond(ctx, c, viewset, idCol)
		if err != nil {
			return meta.Cond{}, err
		}
		if cond.Row == "" {
			row, set = append(row, typCol+" = ?"), append(set, typCol+" = ?")
			args = append(args, typ)
			continue
		}
		open, narrow = false, narrow || cond.Narrow
		if cond.Row == "1 = 0" {
			continue // no role on any object of the type
		}
		row = append(row, "("+typCol+" = ? AND "+cond.Row+")")
		set = append(set, "("+typCol+" = ? AND "+cond.Set+")")
		args = append(append(args, typ), cond.Args...)
	}
	if open && len(row) > 0 {
		return meta.Cond{}, nil // every type visible: no condition
	}
	if len(row) == 0 {
		return same("1 = 0", nil), nil
	}
	return meta.Cond{Row: "(" + strings.Join(row, " OR ") + ")", Set: "(" + strings.Join(set, " OR ") + ")", Args: args, Narrow: narrow}, nil
}

// typesOf are the types of a collection's kinds ("repositories" → "file.file", ...).
func (s *Server) typesOf(collection string) []string {
	t := s.core.Table()
	var out []string
	switch collection {
	case "repositories":
		for _, k := range t.Repositories() {
			out = append(out, k.Type)
		}
	case "remotes":
		for _, k := range t.Remotes() {
			out = append(out, k.Type)
		}
	case "publications":
		for _, k := range t.Publications() {
			out = append(out, k.Type)
		}
	case "distributions":
		for _, k := range t.Distributions() {
			out = append(out, k.Type)
		}
	case "acs":
		for _, k := range t.ACSKinds() {
			out = append(out, k.Type)
		}
	case "contentguards":
		for _, k := range guardKinds {
			out = append(out, k.typ)
		}
	}
	return out
}

// visible answers 404 when the caller may not see the object a detail operation names,
// as a scoped queryset would; it lets administrators and unscoped viewsets through.
func (s *Server) visible(ctx context.Context, c *caller, viewset string, o meta.Object) error {
	if c.subject.Superuser {
		return nil
	}
	var sc scoping
	var table string
	switch {
	case strings.HasPrefix(viewset, "content/"):
		sc, table = scoping{viewset: viewset, content: "c.id"}, "contents c WHERE c.pulp_id = ?"
	case viewset == "task-groups":
		sc, table = scoping{viewset: viewset, group: "g.id"}, "task_groups g WHERE g.pulp_id = ?"
	default:
		pol, _, err := s.policies.get(ctx, s.db, viewset)
		perm := s.policies.defaults.Policies[viewset].ScopePermission
		if err != nil || !pol.Scoped() || perm == "" {
			return err
		}
		if ok, err := c.can(perm, o); err != nil || !ok {
			return notFoundOr(err)
		}
		return nil
	}
	cond, err := s.scopeCond(ctx, c, sc)
	if err != nil || cond.Row == "" {
		return err
	}
	var n int
	if err := s.db.QueryRow(ctx, "SELECT count(*) FROM "+table+" AND "+cond.Row, append([]any{o.ID}, cond.Args...)...).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return rest.ErrNotFound
	}
	return nil
}

func notFoundOr(err error) error {
	if err != nil {
		return err
	}
	return rest.ErrNotFound
}
