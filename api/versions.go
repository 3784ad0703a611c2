package api

import (
	"net/http"
	"strconv"

	"pith/meta"
	"pith/task"
)

func versionListSpec() listSpec {
	content := func(l *meta.List, d meta.Dialect, v string, in bool) error {
		vals := []string{v}
		if in {
			vals = splitComma(vals)
		}
		var ids []any
		for _, h := range vals {
			p, ok := parseHref(h)
			if !ok {
				return badField("content", "Invalid hyperlink - No URL match for %q.", h)
			}
			ids = append(ids, p.id)
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
			AND c.pulp_id IN (`+marks+`) AND rc.version_added <= v.number AND (rc.version_removed IS NULL OR rc.version_removed > v.number))`, ids...)
		return nil
	}
	fs := []filter{
		{name: "content", kind: kCustom, lookups: []string{"exact"}, apply: func(l *meta.List, d meta.Dialect, v string) error { return content(l, d, v, false) }},
		{name: "content__in", kind: kCustom, lookups: []string{"exact"}, apply: func(l *meta.List, d meta.Dialect, v string) error { return content(l, d, v, true) }},
		{name: "number", col: "v.number", kind: kInt, lookups: []string{"exact", "gt", "gte", "lt", "lte", "range"}},
		timeFilter("pulp_created", "v.created"),
	}
	id := identityFilters("v.pulp_id")
	fs = append(fs, id[1], id[2])
	return listSpec{filters: fs, ordering: ordering("v", map[string]string{"pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated", "number": "number"})}
}

func summaryOf(sum map[string]int64, param, vhref string) map[string]contentSummaryEntry {
	out := map[string]contentSummaryEntry{}
	for typ, n := range sum {
		seg, ok := unitSegment[typ]
		if !ok {
			continue
		}
		out[typ] = contentSummaryEntry{Count: n, Href: apiPath + "content/" + seg + "/?" + param + "=" + vhref}
	}
	return out
}

func renderVersion(v meta.Version) versionResponse {
	h := versionHref(v.RepoType, v.RepoPulpID, v.Number)
	out := versionResponse{
		PulpHref: h, Prn: prn("core.repositoryversion", v.PulpID), PulpCreated: ts(v.Created), PulpLastUpdated: ts(v.Updated),
		Number: v.Number, Repository: repoHref(v.RepoType, v.RepoPulpID),
		ContentSummary: map[string]map[string]contentSummaryEntry{
			"added":   summaryOf(v.Summary.Added, "repository_version_added", h),
			"removed": summaryOf(v.Summary.Removed, "repository_version_removed", h),
			"present": summaryOf(v.Summary.Present, "repository_version", h),
		},
	}
	if v.BaseVersion != nil {
		b := versionHref(v.RepoType, v.RepoPulpID, *v.BaseVersion)
		out.BaseVersion = &b
	}
	return out
}

func (s *Server) versionList(perRepo bool) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		q, err := parseList(r, s.db.Dialect(), versionListSpec())
		if err != nil {
			return err
		}
		if perRepo {
			repo, err := s.repoByPath(r)
			if err != nil {
				return err
			}
			q.list.And("v.repository_id = ?", repo.ID)
		} else {
			q.list.And("r.sub_of IS NULL") // a distribution tree's sub-repositories are not listed
		}
		vs, total, err := meta.ListVersions(r.Context(), s.db, q.list)
		if err != nil {
			return err
		}
		items := make([]any, len(vs))
		for i, v := range vs {
			items[i] = renderVersion(v)
		}
		return writePage(w, r, q, total, items)
	}
}

func (s *Server) versionByPath(r *http.Request) (meta.Repository, meta.Version, error) {
	repo, err := s.repoByPath(r)
	if err != nil {
		return repo, meta.Version{}, err
	}
	n, err := strconv.ParseInt(r.PathValue("n"), 10, 64)
	if err != nil {
		return repo, meta.Version{}, errNotFound
	}
	v, err := meta.VersionByNumber(r.Context(), s.db, repo.ID, n)
	return repo, v, err
}

func (s *Server) versionRead(w http.ResponseWriter, r *http.Request) error {
	_, v, err := s.versionByPath(r)
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusOK, renderVersion(v))
}

// VersionArgs name one repository version for the delete and repair tasks.
type VersionArgs struct {
	Repository      string `json:"repository"`
	Number          int64  `json:"number"`
	VerifyChecksums bool   `json:"verify_checksums,omitempty"`
}

func (s *Server) versionDelete(w http.ResponseWriter, r *http.Request) error {
	repo, v, err := s.versionByPath(r)
	if err != nil {
		return err
	}
	if v.Number == 0 {
		return errStatus(http.StatusBadRequest, "version 0 of repository %q cannot be deleted", repo.Name)
	}
	t, err := s.dispatch(r, task.Spec{Name: "pulpcore.app.tasks.repository.delete_version", Args: VersionArgs{Repository: repo.PulpID, Number: v.Number},
		Exclusive: []string{repoHref(repo.Type, repo.PulpID)}})
	if err != nil {
		return err
	}
	return accepted(w, t)
}

func (s *Server) versionRepair(w http.ResponseWriter, r *http.Request) error {
	repo, v, err := s.versionByPath(r)
	if err != nil {
		return err
	}
	in := repairIn{VerifyChecksums: true}
	raw, err := readBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := decode(raw, &in); err != nil {
		return err
	}
	t, err := s.dispatch(r, task.Spec{Name: "pulpcore.app.tasks.repository.repair_version",
		Args:   VersionArgs{Repository: repo.PulpID, Number: v.Number, VerifyChecksums: in.VerifyChecksums},
		Shared: []string{repoHref(repo.Type, repo.PulpID)}})
	if err != nil {
		return err
	}
	return accepted(w, t)
}
