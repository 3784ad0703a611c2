package api

import (
	"context"
	"net/http"
	"strings"

	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
	"pith/content"
	"pith/meta"
	"pith/task"
)

// Limits of a bulk modify request.
const (
	bulkMaxRepositories = 100000
	bulkDefaultBatch    = 500
	bulkMaxBatch        = 5000
)

// extensions are pith's operations beyond Pulp's API. They are served like the others
// but stay out of the OpenAPI document, which must match the reference release set
// (clients such as the pulp CLI validate against it; docs/compatibility.md lists them).
func (s *Server) extensions() []route {
	return []route{
		{op: openapi.Operation{ID: "repositories_bulk_modify", Method: "POST", Path: href.Root + "repositories/bulk_modify/"},
			pattern: "/pulp/api/v3/repositories/bulk_modify/{$}", h: s.bulkModify,
			// No Pulp policy covers it: administrators only.
			guard: guard{viewset: "repositories/bulk_modify", action: "create", body: true}},
		s.profileArtifactRoute(),
	}
}

// bulkModifyIn is the body of /repositories/bulk_modify/, a pith extension: Pulp's modify
// for many repositories at once.
type bulkModifyIn struct {
	Repositories       []string `json:"repositories" openapi:"required"`
	AddContentUnits    []string `json:"add_content_units"`
	RemoveContentUnits []string `json:"remove_content_units"`
	BatchSize          *int     `json:"batch_size" openapi:"minimum=1,maximum=5000,default=500"`
}

// bulkModify validates everything first, so that a bad request dispatches nothing, then
// dispatches one task per batch of repositories as one task group. Each task locks only
// its own repositories, so batches run in parallel on as many workers as there are.
func (s *Server) bulkModify(w http.ResponseWriter, r *http.Request) error {
	var in bulkModifyIn
	raw, err := rest.ReadBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := rest.Require(raw, "repositories"); err != nil {
		return err
	}
	if err := rest.Decode(raw, &in); err != nil {
		return err
	}
	batch := bulkDefaultBatch
	if in.BatchSize != nil {
		if *in.BatchSize < 1 || *in.BatchSize > bulkMaxBatch {
			return rest.BadField("batch_size", "Ensure this value is between 1 and %d (got %d).", bulkMaxBatch, *in.BatchSize)
		}
		batch = *in.BatchSize
	}
	if len(in.Repositories) == 0 || len(in.Repositories) > bulkMaxRepositories {
		return rest.BadField("repositories", "Name between 1 and %d repositories (got %d).", bulkMaxRepositories, len(in.Repositories))
	}
	if len(in.AddContentUnits) == 0 && len(in.RemoveContentUnits) == 0 {
		return rest.FieldErrors{
			"add_content_units":    {"Give add_content_units or remove_content_units (or both)."},
			"remove_content_units": {"Give add_content_units or remove_content_units (or both)."},
		}
	}
	ctx := r.Context()
	repos, err := s.bulkRepositories(ctx, in.Repositories)
	if err != nil {
		return err
	}
	a := content.BulkModifyArgs{}
	var addTypes, removeTypes []string
	if a.Add, addTypes, err = s.bulkContent(ctx, "add_content_units", in.AddContentUnits, false); err != nil {
		return err
	}
	for _, h := range in.RemoveContentUnits {
		if h == "*" {
			a.RemoveAll = true
		}
	}
	if a.Remove, removeTypes, err = s.bulkContent(ctx, "remove_content_units", in.RemoveContentUnits, true); err != nil {
		return err
	}
	for i, repo := range repos {
		for _, list := range []struct {
			field string
			types []string
		}{{"add_content_units", addTypes}, {"remove_content_units", removeTypes}} {
			for j, t := range list.types {
				if !holds(repo.Type, t) {
					return rest.BadField(list.field, "Item %d: %s content cannot be in a %s repository (repositories item %d, %s).",
						j, t, repo.Type, i, in.Repositories[i])
				}
			}
		}
	}
	g, err := task.CreateGroup(ctx, s.db, "Add and remove content in many repositories.")
	if err != nil {
		return err
	}
	for start := 0; start < len(repos); start += batch {
		part := repos[start:min(start+batch, len(repos))]
		ta := a
		ta.Repositories = make([]string, len(part))
		locks := make([]string, len(part))
		for i, repo := range part {
			ta.Repositories[i] = repo.PulpID
			locks[i] = href.Repository(repo.Type, repo.PulpID)
		}
		// Not s.dispatch: waiting briefly for each batch would hold back the next ones.
		if _, err := s.env.Queue.Dispatch(ctx, task.Spec{Name: content.BulkModifyTask, Args: ta, Exclusive: locks, GroupID: &g.ID,
			LoggingCID: rest.CorrelationID(ctx), Profile: rest.Diagnostics(r)}); err != nil {
			return err
		}
	}
	return rest.WriteOne(w, r, http.StatusAccepted, rest.TaskGroupRef{TaskGroup: href.Group(g.PulpID)})
}

// holds reports whether a repository type takes units of a type: a plugin's repositories
// take that plugin's units ("rpm.rpm" takes "rpm.package", "rpm.advisory", ...).
func holds(repoType, unitType string) bool {
	plugin, _, _ := strings.Cut(repoType, ".")
	return strings.HasPrefix(unitType, plugin+".")
}

// bulkRepositories resolves repository hrefs in request order; an unknown, malformed or
// repeated one is a 400 naming its index.
func (s *Server) bulkRepositories(ctx context.Context, hrefs []string) ([]meta.Repository, error) {
	ids := make([]string, len(hrefs))
	index := make(map[string]int, len(hrefs))
	for i, h := range hrefs {
		p, ok := href.Parse(h)
		if !ok || !strings.HasPrefix(p.Collection, "repositories/") || strings.Count(p.Collection, "/") != 3 || p.Rest != "" {
			return nil, rest.BadField("repositories", "Item %d: Invalid hyperlink - No URL match for %q.", i, h)
		}
		if j, dup := index[p.ID]; dup {
			return nil, rest.BadField("repositories", "Item %d: %s is also item %d; name each repository once.", i, h, j)
		}
		index[p.ID] = i
		ids[i] = p.ID
	}
	found := make(map[string]meta.Repository, len(ids))
	for start := 0; start < len(ids); start += 500 {
		part := ids[start:min(start+500, len(ids))]
		repos, _, err := meta.ListRepositories(ctx, s.db, meta.List{Where: []string{"r.pulp_id IN " + rest.Placeholders(len(part))}, Args: rest.Args(part)})
		if err != nil {
			return nil, err
		}
		for _, repo := range repos {
			found[repo.PulpID] = repo
		}
	}
	out := make([]meta.Repository, len(ids))
	for i, id := range ids {
		repo, ok := found[id]
		p, _ := href.Parse(hrefs[i])
		if !ok || p.Collection != "repositories/"+href.Segment(repo.Type)+"/" {
			return nil, rest.BadField("repositories", "Item %d: %s: Invalid hyperlink - Object does not exist.", i, hrefs[i])
		}
		out[i] = repo
	}
	return out, nil
}

// bulkContent resolves content hrefs to keys and types, dropping repeats; with star,
// "*" entries are skipped (the caller handles them).
func (s *Server) bulkContent(ctx context.Context, field string, hrefs []string, star bool) ([]int64, []string, error) {
	var ids []string
	var where []int
	seen := map[string]bool{}
	for i, h := range hrefs {
		if star && h == "*" {
			continue
		}
		p, ok := href.Parse(h)
		if !ok || !s.env.IsUnitCollection(p.Collection) || p.Rest != "" {
			return nil, nil, rest.BadField(field, "Item %d: Invalid hyperlink - No URL match for %q.", i, h)
		}
		if !seen[p.ID] {
			seen[p.ID] = true
			ids = append(ids, p.ID)
			where = append(where, i)
		}
	}
	found := make(map[string]meta.Content, len(ids))
	for start := 0; start < len(ids); start += 500 {
		part := ids[start:min(start+500, len(ids))]
		units, _, err := meta.ListContent(ctx, s.db, meta.List{Where: []string{"c.pulp_id IN " + rest.Placeholders(len(part))}, Args: rest.Args(part)})
		if err != nil {
			return nil, nil, err
		}
		for _, c := range units {
			found[c.PulpID] = c
		}
	}
	keys := make([]int64, len(ids))
	types := make([]string, len(ids))
	for k, id := range ids {
		c, ok := found[id]
		h := hrefs[where[k]]
		p, _ := href.Parse(h)
		kind, known := s.core.Table().UnitKind(c.Type)
		if !ok || !known || p.Collection != "content/"+kind.Segment+"/" {
			return nil, nil, rest.BadField(field, "Item %d: %s: Invalid hyperlink - Object does not exist.", where[k], h)
		}
		keys[k], types[k] = c.ID, c.Type
	}
	return keys, types, nil
}
