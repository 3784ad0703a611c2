package api

import (
	"encoding/json"
	"net/http"

	"pith/content/file"
	"pith/meta"
	"pith/task"
)

func pubListSpec(typ string) listSpec {
	content := func(in bool) func(l *meta.List, d meta.Dialect, v string) error {
		return func(l *meta.List, d meta.Dialect, v string) error {
			vals := []string{v}
			if in {
				vals = splitComma(vals)
			}
			var ors []string
			var args []any
			for _, h := range vals {
				hp, ok := parseHref(h)
				if !ok {
					return badField("content", "Invalid hyperlink - No URL match for %q.", h)
				}
				ors = append(ors, "c.pulp_id = ?")
				args = append(args, hp.id)
			}
			if len(ors) == 0 {
				l.And("1 = 0")
				return nil
			}
			cond := `EXISTS (SELECT 1 FROM repository_content rc JOIN contents c ON c.id = rc.content_id WHERE rc.repository_id = p.repository_id
				AND rc.version_added <= p.version_number AND (rc.version_removed IS NULL OR rc.version_removed > p.version_number) AND (`
			for i, o := range ors {
				if i > 0 {
					cond += " OR "
				}
				cond += o
			}
			l.And(cond+"))", args...)
			return nil
		}
	}
	fs := []filter{
		{name: "checkpoint", kind: kCustom, boolean: true, lookups: []string{"exact"}, apply: func(l *meta.List, d meta.Dialect, v string) error {
			if v == "true" || v == "True" {
				l.And("1 = 0")
			}
			return nil
		}},
		{name: "content", kind: kCustom, lookups: []string{"exact"}, apply: content(false)},
		{name: "content__in", kind: kCustom, lookups: []string{"exact"}, apply: content(true)},
		timeFilter("pulp_created", "p.created"),
		hrefFilter("repository", "r.pulp_id", ""),
		{name: "repository_version", kind: kCustom, lookups: []string{"exact"}, apply: func(l *meta.List, d meta.Dialect, v string) error {
			repo, n, err := versionFilterArgs(v, "repository_version")
			if err != nil {
				return err
			}
			l.And("r.pulp_id = ? AND p.version_number = ?", repo, n)
			return nil
		}},
	}
	if typ == "" {
		fs = append(fs, filter{name: "pulp_type", col: "p.type", lookups: []string{"exact", "in"}})
	}
	fs = append(fs, identityFilters("p.pulp_id")...)
	return listSpec{filters: fs, ordering: ordering("p", map[string]string{"pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated"})}
}

// renderPub shows a publication as its type's response.
func (s *Server) renderPub(p meta.Publication, dists []string) any {
	if p.Type == rpmType {
		return renderRpmPub(p)
	}
	return s.renderFilePub(p, dists)
}

func (s *Server) renderFilePub(p meta.Publication, dists []string) filePublicationResponse {
	var a filePubAttrs
	json.Unmarshal(p.Attrs, &a)
	if dists == nil {
		dists = []string{}
	}
	return filePublicationResponse{
		PulpHref: pubHref(p.Type, p.PulpID), Prn: prn("file.filepublication", p.PulpID), PulpCreated: ts(p.Created), PulpLastUpdated: ts(p.Updated),
		RepositoryVersion: versionHref(fileType, p.RepoPulpID, p.VersionNumber), Repository: repoHref(fileType, p.RepoPulpID),
		Distributions: dists, Manifest: a.Manifest,
	}
}

func (s *Server) pubDists(r *http.Request, p meta.Publication) ([]string, error) {
	ds, _, err := meta.ListDistributions(r.Context(), s.db, meta.List{Where: []string{"d.publication_id = ?"}, Args: []any{p.ID}})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = distHref(d.Type, d.PulpID)
	}
	return out, nil
}

func (s *Server) pubList(typ string) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		q, err := parseList(r, s.db.Dialect(), pubListSpec(typ))
		if err != nil {
			return err
		}
		if typ != "" {
			q.list.And("p.type = ?", typ)
		}
		ps, total, err := meta.ListPublications(r.Context(), s.db, q.list)
		if err != nil {
			return err
		}
		items := make([]any, len(ps))
		for i, p := range ps {
			dists, err := s.pubDists(r, p)
			if err != nil {
				return err
			}
			items[i] = s.renderPub(p, dists)
		}
		return writePage(w, r, q, total, items)
	}
}

func (s *Server) pubRead(w http.ResponseWriter, r *http.Request) error {
	p, err := meta.PublicationByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	dists, err := s.pubDists(r, p)
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusOK, s.renderPub(p, dists))
}

func (s *Server) pubDelete(w http.ResponseWriter, r *http.Request) error {
	p, err := meta.PublicationByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := meta.DeletePublication(r.Context(), s.db, p.ID); err != nil {
		return err
	}
	s.cfg.Content.Invalidate()
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// pubSource resolves what a publication of type typ publishes: a repository version,
// or the latest version of a repository.
func (s *Server) pubSource(r *http.Request, typ string, repository, version *string) (meta.Repository, int64, error) {
	collection := "repositories/" + typeSegment(typ) + "/"
	switch {
	case repository != nil && version != nil:
		return meta.Repository{}, 0, fieldError{"non_field_errors": {"Only one of the attributes 'repository' and 'repository_version' may be provided."}}
	case version != nil:
		id, num, err := versionOf("repository_version", *version, collection)
		if err != nil {
			return meta.Repository{}, 0, err
		}
		repo, err := meta.RepositoryByPulpID(r.Context(), s.db, id)
		if err != nil {
			return repo, 0, badField("repository_version", "Invalid hyperlink - Object does not exist.")
		}
		if _, err := meta.VersionByNumber(r.Context(), s.db, repo.ID, num); err != nil {
			return repo, 0, badField("repository_version", "Invalid hyperlink - Object does not exist.")
		}
		return repo, num, nil
	case repository != nil:
		repo, err := repositoryOf(r.Context(), s.db, "repository", *repository, collection)
		if err != nil {
			return meta.Repository{}, 0, err
		}
		return *repo, repo.LatestVersion, nil
	}
	return meta.Repository{}, 0, fieldError{"non_field_errors": {"Either the 'repository' or 'repository_version' need to be specified."}}
}

func (s *Server) pubCreate(w http.ResponseWriter, r *http.Request) error {
	var in filePublicationIn
	raw, err := readBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := decode(raw, &in); err != nil {
		return err
	}
	if in.Checkpoint {
		return badField("checkpoint", "Checkpoint publications are not supported by this server yet.")
	}
	repo, n, err := s.pubSource(r, fileType, in.Repository, in.RepositoryVersion)
	if err != nil {
		return err
	}
	manifest := "PULP_MANIFEST"
	var attrs fileRepoAttrs
	json.Unmarshal(repo.Attrs, &attrs)
	if attrs.Manifest != nil {
		manifest = *attrs.Manifest
	}
	if has(raw, "manifest") {
		manifest = ""
		if in.Manifest != nil {
			manifest = *in.Manifest
		}
	}
	t, err := s.dispatch(r, task.Spec{Name: file.PublishTask, Args: file.PublishArgs{Repository: repo.PulpID, Version: n, Manifest: manifest},
		Shared: []string{repoHref(repo.Type, repo.PulpID)}})
	if err != nil {
		return err
	}
	return accepted(w, t)
}
