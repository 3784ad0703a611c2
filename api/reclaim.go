package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"pith/api/href"
	"pith/api/rest"
	"pith/content"
	"pith/meta"
	"pith/task"
)

// maxReclaimHrefs bounds the hrefs of a reclaim_space body (each names a repository or
// a version; "*" names every repository).
const maxReclaimHrefs = 1000

// reclaimSpace queues reclaim_space for the repositories named (every one for "*"),
// keeping the files of the versions in the keeplist. As Pulp's, it locks the
// repositories, and those of the kept versions, shared.
func (s *Server) reclaimSpace(w http.ResponseWriter, r *http.Request) error {
	var in reclaimIn
	raw, err := rest.ReadBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := rest.Require(raw, "repo_hrefs"); err != nil {
		return err
	}
	if err := rest.Decode(raw, &in); err != nil {
		return err
	}
	if len(in.RepoHrefs) > maxReclaimHrefs || len(in.RepoVersionsKeeplist) > maxReclaimHrefs {
		return rest.NonField("At most %d repositories and %d versions may be named.", maxReclaimHrefs, maxReclaimHrefs)
	}
	repos, err := s.reclaimRepos(r.Context(), in.RepoHrefs)
	if err != nil {
		return err
	}
	var a content.ReclaimArgs
	locks := map[string]bool{}
	var shared []string
	lock := func(repo meta.Repository) {
		if h := href.Repository(repo.Type, repo.PulpID); !locks[h] {
			locks[h] = true
			shared = append(shared, h)
		}
	}
	for _, repo := range repos {
		a.Repositories = append(a.Repositories, repo.PulpID)
		lock(repo)
	}
	for _, h := range in.RepoVersionsKeeplist {
		p, ok := href.Parse(h)
		n, isVersion := p.VersionNumber()
		if _, known := s.core.Table().RepoKind(repoTypeOf(p.Collection)); !ok || !isVersion || !known {
			return rest.BadField("repo_versions_keeplist", "Invalid hyperlink - No URL match for %q.", h)
		}
		repo, err := meta.RepositoryByPulpID(r.Context(), s.db, p.ID)
		if err == nil {
			_, err = meta.VersionByNumber(r.Context(), s.db, repo.ID, n)
		}
		if errors.Is(err, meta.ErrNotFound) {
			return rest.BadField("repo_versions_keeplist", "Invalid hyperlink - Object does not exist: %q.", h)
		}
		if err != nil {
			return err
		}
		a.Keep = append(a.Keep, content.VersionArgs{Repository: repo.PulpID, Number: n})
		lock(repo)
	}
	spec := task.Spec{Name: content.ReclaimTask, Args: a, Shared: shared}
	if len(shared) == 0 {
		spec.Exclusive = []string{href.Root + "repositories/reclaim_space/"}
	}
	return s.env.Dispatch(w, r, spec)
}

// reclaimRepos resolves repo_hrefs: repository hrefs, or ["*"] for every repository.
func (s *Server) reclaimRepos(ctx context.Context, hrefs []any) ([]meta.Repository, error) {
	if len(hrefs) == 0 {
		return nil, rest.BadField("repo_hrefs", "Must not be [].")
	}
	var out []meta.Repository
	for _, v := range hrefs {
		h, ok := v.(string)
		if !ok {
			return nil, rest.BadField("repo_hrefs", "Each item must be a repository href or '*', not %v.", v)
		}
		if h == "*" {
			if len(hrefs) != 1 {
				return nil, rest.BadField("repo_hrefs", "Can not specify other HREFs when using '*'")
			}
			all, _, err := meta.ListRepositories(ctx, s.db, meta.List{})
			return all, err
		}
		p, ok := href.Parse(h)
		if _, known := s.core.Table().RepoKind(repoTypeOf(p.Collection)); !ok || p.Rest != "" || !known {
			return nil, rest.BadField("repo_hrefs", "Invalid hyperlink - No URL match for %q.", h)
		}
		repo, err := meta.RepositoryByPulpID(ctx, s.db, p.ID)
		if errors.Is(err, meta.ErrNotFound) || err == nil && repo.Type != repoTypeOf(p.Collection) {
			return nil, rest.BadField("repo_hrefs", "Invalid hyperlink - Object does not exist: %q.", h)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, repo)
	}
	return out, nil
}

// repoTypeOf is the repository type of a repository collection
// ("repositories/rpm/rpm/" → "rpm.rpm"); "" for any other collection.
func repoTypeOf(collection string) string {
	seg, ok := strings.CutPrefix(collection, "repositories/")
	seg = strings.TrimSuffix(seg, "/")
	if !ok || strings.Count(seg, "/") != 1 {
		return ""
	}
	return strings.Replace(seg, "/", ".", 1)
}

// repairAll queues the repair of every stored artifact; one runs at a time.
func (s *Server) repairAll(w http.ResponseWriter, r *http.Request) error {
	in, err := readRepair(r)
	if err != nil {
		return err
	}
	return s.env.Dispatch(w, r, task.Spec{Name: content.RepairAllTask, Args: content.RepairAllArgs{VerifyChecksums: in.VerifyChecksums},
		Exclusive: []string{href.Root + "repair/"}})
}
