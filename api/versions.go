package api

import (
	"net/http"
	"strconv"

	"pith/api/href"
	"pith/api/rest"
	"pith/content"
	"pith/meta"
	"pith/task"
)

func versionListSpec() rest.ListSpec {
	content := func(l *meta.List, d meta.Dialect, v string, in bool) error {
		vals := []string{v}
		if in {
			vals = rest.SplitComma(vals)
		}
		var ids []any
		for _, h := range vals {
			p, ok := href.Parse(h)
			if !ok {
				return rest.BadField("content", "Invalid hyperlink - No URL match for %q.", h)
			}
			ids = append(ids, p.ID)
		}
		if len(ids) == 0 {
			l.And("1 = 0")
			return nil
		}
		marks := "?"
		for range ids[1:] {
			marks += ",?"
		}
		l.And(`EXISTS (SELECT 1 FROM repository_content rc JOIN contents c ON c.id = rc.content_id WHERE rc.repository_id = v.repository_id
			AND c.pulp_id IN (`+marks+`) AND `+meta.InVersion("rc", "v.number")+`)`, ids...)
		return nil
	}
	fs := []rest.Filter{
		{Name: "content", Type: rest.Custom, Lookups: []string{"exact"}, Apply: func(l *meta.List, d meta.Dialect, v string) error { return content(l, d, v, false) }},
		{Name: "content__in", Type: rest.Custom, Lookups: []string{"exact"}, Apply: func(l *meta.List, d meta.Dialect, v string) error { return content(l, d, v, true) }},
		{Name: "number", Col: "v.number", Type: rest.Int, Lookups: []string{"exact", "gt", "gte", "lt", "lte", "range"}},
		rest.TimeFilter("pulp_created", "v.created"),
	}
	id := rest.IdentityFilters("v.pulp_id")
	fs = append(fs, id[1], id[2])
	return rest.ListSpec{Filters: fs, Ordering: rest.Ordering("v", map[string]string{"pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated", "number": "number"})}
}

func (s *Server) summaryOf(sum map[string]int64, param, vhref string) map[string]contentSummaryEntry {
	out := map[string]contentSummaryEntry{}
	for typ, n := range sum {
		k, ok := s.core.Table().UnitKind(typ)
		if !ok {
			continue
		}
		out[typ] = contentSummaryEntry{Count: n, Href: href.Root + "content/" + k.Segment + "/?" + param + "=" + vhref}
	}
	return out
}

func (s *Server) renderVersion(v meta.Version) versionResponse {
	h := href.Version(v.RepoType, v.RepoPulpID, v.Number)
	out := versionResponse{
		PulpHref: h, Prn: href.PRN("core.repositoryversion", v.PulpID), PulpCreated: rest.Time(v.Created), PulpLastUpdated: rest.Time(v.Updated),
		Number: v.Number, Repository: href.Repository(v.RepoType, v.RepoPulpID),
		ContentSummary: map[string]map[string]contentSummaryEntry{
			"added":   s.summaryOf(v.Summary.Added, "repository_version_added", h),
			"removed": s.summaryOf(v.Summary.Removed, "repository_version_removed", h),
			"present": s.summaryOf(v.Summary.Present, "repository_version", h),
		},
	}
	if v.Base != nil {
		b := href.Version(v.Base.RepoType, v.Base.RepoPulpID, v.Base.Number)
		out.BaseVersion = &b
	}
	return out
}

// versionList lists repository versions: of the repository in the path, or of every repository.
func (s *Server) versionList(perRepo bool) rest.HandlerFunc {
	scope := func(r *http.Request, l *meta.List) error {
		if !perRepo {
			l.And("r.sub_of IS NULL") // a distribution tree's sub-repositories are not listed
			return nil
		}
		repo, err := s.env.RepoByPath(r)
		if err != nil {
			return err
		}
		l.And("v.repository_id = ?", repo.ID)
		return nil
	}
	if !perRepo {
		// A repository's own versions are as visible as the repository (its URL); the list
		// of every version shows those of repositories the caller may see.
		return lister(s, versionListSpec(), s.scope(scoping{viewset: "repository_versions", repo: "v.repository_id"}, scope), meta.ListVersions,
			each(func(v meta.Version) any { return s.renderVersion(v) }))
	}
	return lister(s, versionListSpec(), scope, meta.ListVersions, each(func(v meta.Version) any { return s.renderVersion(v) }))
}

func (s *Server) versionByPath(r *http.Request) (meta.Repository, meta.Version, error) {
	repo, err := s.env.RepoByPath(r)
	if err != nil {
		return repo, meta.Version{}, err
	}
	n, err := strconv.ParseInt(r.PathValue("n"), 10, 64)
	if err != nil {
		return repo, meta.Version{}, rest.ErrNotFound
	}
	v, err := meta.VersionByNumber(r.Context(), s.db, repo.ID, n)
	return repo, v, err
}

func (s *Server) versionRead(w http.ResponseWriter, r *http.Request) error {
	_, v, err := s.versionByPath(r)
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, s.renderVersion(v))
}

func (s *Server) versionDelete(w http.ResponseWriter, r *http.Request) error {
	repo, v, err := s.versionByPath(r)
	if err != nil {
		return err
	}
	protected, err := meta.ProtectedVersions(r.Context(), s.db, repo.ID, meta.Now())
	if err != nil {
		return err
	}
	if protected[v.Number] {
		return rest.NonField("The repository version cannot be deleted because it (or its publications) are currently being " +
			"used to distribute content. Please update the necessary distributions first.")
	}
	return s.env.Dispatch(w, r, task.Spec{Name: content.DeleteVersionTask, Args: content.VersionArgs{Repository: repo.PulpID, Number: v.Number},
		Exclusive: []string{href.Repository(repo.Type, repo.PulpID)}})
}

func (s *Server) versionRepair(w http.ResponseWriter, r *http.Request) error {
	repo, v, err := s.versionByPath(r)
	if err != nil {
		return err
	}
	in, err := readRepair(r)
	if err != nil {
		return err
	}
	return s.env.Dispatch(w, r, task.Spec{Name: content.RepairTask,
		Args:   content.VersionArgs{Repository: repo.PulpID, Number: v.Number, VerifyChecksums: in.VerifyChecksums},
		Shared: []string{href.Repository(repo.Type, repo.PulpID)}})
}

// readRepair reads the body of a repair (verify_checksums is true unless given).
func readRepair(r *http.Request) (repairIn, error) {
	in := repairIn{VerifyChecksums: true}
	raw, err := rest.ReadBody(r, &in, nil)
	if err == nil {
		err = rest.Decode(raw, &in)
	}
	return in, err
}
