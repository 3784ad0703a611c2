package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"pith/content/file"
	"pith/meta"
	"pith/task"
)

const fileType = "file.file"

func repoListSpec(typ string) listSpec {
	fs := []filter{
		{name: "latest_with_content", kind: kCustom, lookups: []string{"exact"}, apply: withContent(true)},
		{name: "name", col: "r.name", lookups: nameLookups},
		labelSelect("r.labels"),
		hrefFilter("remote", "(SELECT m.pulp_id FROM remotes m WHERE m.id = r.remote_id)", "remotes/"+typeSegment(typ)+"/"),
		{name: "retain_repo_versions", col: "r.retain_repo_versions", kind: kInt, lookups: []string{"exact", "gt", "gte", "isnull", "lt", "lte", "ne", "range"}},
		{name: "with_content", kind: kCustom, lookups: []string{"exact"}, apply: withContent(false)},
	}
	if typ == "" {
		fs = append(fs, filter{name: "pulp_type", col: "r.type", lookups: []string{"exact", "in"}})
	}
	fs = append(fs, identityFilters("r.pulp_id")...)
	return listSpec{filters: fs, ordering: ordering("r", map[string]string{
		"pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated", "name": "name",
		"description": "description", "next_version": "next_version", "retain_repo_versions": "retain_repo_versions",
	})}
}

// withContent filters repositories having a unit (href) in any version, or in the latest.
func withContent(latest bool) func(l *meta.List, d meta.Dialect, v string) error {
	return func(l *meta.List, d meta.Dialect, v string) error {
		p, ok := parseHref(v)
		if !ok {
			return badField("with_content", "Invalid hyperlink - No URL match for %q.", v)
		}
		cond := `EXISTS (SELECT 1 FROM repository_content rc JOIN contents c ON c.id = rc.content_id WHERE rc.repository_id = r.id AND c.pulp_id = ?`
		if latest {
			cond += ` AND rc.version_removed IS NULL`
		}
		l.And(cond+")", p.id)
		return nil
	}
}

// repoKind is one repository type: its body and response (embedding repoIn and
// repoResponse), the remotes it syncs from and its PRN model.
type repoKind struct {
	prn     string // e.g. "file.filerepository"
	remotes string // collection of its remotes, e.g. "remotes/file/file/"
	body    func() repoBody
	view    func() repoView
}

type repoBody interface{ common() *repoIn }

func (r *repoIn) common() *repoIn { return r }

type repoView interface{ common() *repoResponse }

func (r *repoResponse) common() *repoResponse { return r }

// validator is a body that checks its type's own fields.
type validator interface{ validate() error }

var repoKinds = map[string]repoKind{
	fileType: {prn: "file.filerepository", remotes: "remotes/file/file/",
		body: func() repoBody {
			m := "PULP_MANIFEST"
			return &fileRepositoryIn{fileRepoAttrs: fileRepoAttrs{Manifest: &m}}
		},
		view: func() repoView { return &fileRepositoryResponse{} }},
	rpmType: {prn: "rpm.rpmrepository", remotes: "remotes/rpm/rpm/",
		body: func() repoBody { return &rpmRepositoryIn{} }, view: func() repoView { return &rpmRepositoryResponse{} }},
}

// repoColumns are the body fields kept in columns rather than in attrs.
var repoColumns = []string{"name", "description", "retain_repo_versions", "remote", "pulp_labels"}

func (s *Server) renderRepo(r meta.Repository) any {
	kind, ok := repoKinds[r.Type]
	if !ok {
		kind = repoKinds[fileType]
	}
	v := kind.view()
	json.Unmarshal(r.Attrs, v)
	out := v.common()
	*out = repoResponse{
		PulpHref: repoHref(r.Type, r.PulpID), Prn: prn(kind.prn, r.PulpID), PulpCreated: ts(r.Created), PulpLastUpdated: ts(r.Updated),
		VersionsHref: repoHref(r.Type, r.PulpID) + "versions/", PulpLabels: r.Labels, LatestVersionHref: versionHref(r.Type, r.PulpID, r.LatestVersion),
		Name: r.Name, Description: r.Description, RetainRepoVersions: r.RetainVersions,
	}
	if r.RemotePulpID != nil {
		h := remoteHref(*r.RemoteType, *r.RemotePulpID)
		out.Remote = &h
	}
	return v
}

// applyRepo applies a create or update body to a repository of type typ, validating it.
// With partial, fields not sent keep their values; otherwise they reset to defaults.
func (s *Server) applyRepo(ctx context.Context, q meta.Querier, cur meta.Repository, typ string, raw map[string]json.RawMessage, partial bool) (meta.Repository, error) {
	kind, ok := repoKinds[typ]
	if !ok {
		return cur, fmt.Errorf("repository %s: unknown type %q", cur.PulpID, typ)
	}
	body := kind.body()
	in := body.common()
	if partial {
		json.Unmarshal(cur.Attrs, body)
		*in = repoIn{Name: cur.Name, Description: cur.Description, RetainRepoVersions: cur.RetainVersions}
		if cur.RemotePulpID != nil {
			h := remoteHref(*cur.RemoteType, *cur.RemotePulpID)
			in.Remote = &h
		}
	} else if err := requireFields(raw, "name"); err != nil {
		return cur, err
	}
	if err := decode(raw, body); err != nil {
		return cur, err
	}
	if in.Name == "" {
		return cur, badField("name", "This field may not be blank.")
	}
	if in.RetainRepoVersions != nil && *in.RetainRepoVersions < 1 {
		return cur, badField("retain_repo_versions", "Ensure this value is greater than or equal to 1.")
	}
	if v, ok := body.(validator); ok {
		if err := v.validate(); err != nil {
			return cur, err
		}
	}
	out := cur
	out.Type = typ
	out.Name, out.Description, out.RetainVersions = in.Name, in.Description, in.RetainRepoVersions
	out.RemoteID = nil
	if in.Remote != nil {
		id, err := hrefOf("remote", *in.Remote, kind.remotes)
		if err != nil {
			return cur, err
		}
		m, err := meta.RemoteByPulpID(ctx, q, id)
		if err != nil {
			return cur, badField("remote", "Invalid hyperlink - Object does not exist.")
		}
		out.RemoteID = &m.ID
	}
	if has(raw, "pulp_labels") || !partial {
		l, err := setLabels(in.PulpLabels)
		if err != nil {
			return cur, err
		}
		out.Labels = l
	}
	var err error
	out.Attrs, err = attrsWithout(body, repoColumns...)
	return out, err
}

func (s *Server) repoList(typ string) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		spec := repoListSpec(typ)
		q, err := parseList(r, s.db.Dialect(), spec)
		if err != nil {
			return err
		}
		if typ != "" {
			q.list.And("r.type = ?", typ)
		}
		rs, total, err := meta.ListRepositories(r.Context(), s.db, q.list)
		if err != nil {
			return err
		}
		items := make([]any, len(rs))
		for i, x := range rs {
			items[i] = s.renderRepo(x)
		}
		return writePage(w, r, q, total, items)
	}
}

func (s *Server) repoCreate(typ string) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		raw, err := readBody(r, repoKinds[typ].body(), nil)
		if err != nil {
			return err
		}
		repo, err := s.applyRepo(r.Context(), s.db, meta.Repository{}, typ, raw, false)
		if err != nil {
			return err
		}
		repo, err = meta.CreateRepository(r.Context(), s.db, repo)
		if errors.Is(err, meta.ErrConflict) {
			return badField("name", "This field must be unique.")
		}
		if err != nil {
			return err
		}
		return writeOne(w, r, http.StatusCreated, s.renderRepo(repo))
	}
}

func (s *Server) repoByPath(r *http.Request) (meta.Repository, error) {
	return meta.RepositoryByPulpID(r.Context(), s.db, r.PathValue("id"))
}

func (s *Server) repoRead(w http.ResponseWriter, r *http.Request) error {
	repo, err := s.repoByPath(r)
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusOK, s.renderRepo(repo))
}

// errDryRun rolls back a validation transaction.
var errDryRun = errors.New("dry run")

// updateArgs are the arguments of the general update task: the body is re-applied to
// the current state when the task runs, so queued updates compose.
type updateArgs struct {
	Kind    string                     `json:"kind"`
	ID      string                     `json:"id"`
	Body    map[string]json.RawMessage `json:"body"`
	Partial bool                       `json:"partial"`
}

// validateUpdate runs an update in a transaction that is rolled back: bad input is a 400
// before any task is queued.
func (s *Server) validateUpdate(ctx context.Context, a updateArgs) error {
	err := s.db.Tx(ctx, func(tx *meta.Tx) error {
		if err := s.applyUpdate(ctx, tx, a); err != nil {
			return err
		}
		return errDryRun
	})
	if errors.Is(err, errDryRun) {
		return nil
	}
	return err
}

func (s *Server) updateHandler(kind, typ, href string, partial bool, resources func(*http.Request) ([]string, error)) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		var target any
		switch kind {
		case "repository":
			target = repoKinds[typ].body()
		case "remote":
			target = remoteKinds[typ].body()
		case "distribution":
			target = distKinds[typ].body()
		}
		raw, err := readBody(r, target, nil)
		if err != nil {
			return err
		}
		a := updateArgs{Kind: kind, ID: r.PathValue("id"), Body: raw, Partial: partial}
		if err := s.validateUpdate(r.Context(), a); err != nil {
			return err
		}
		locks, err := resources(r)
		if err != nil {
			return err
		}
		t, err := s.dispatch(r, task.Spec{Name: "pulpcore.app.tasks.base.general_update", Args: a, Exclusive: locks})
		if err != nil {
			return err
		}
		return accepted(w, t)
	}
}

// applyUpdate is the body of the general update task.
func (s *Server) applyUpdate(ctx context.Context, tx *meta.Tx, a updateArgs) error {
	switch a.Kind {
	case "repository":
		cur, err := meta.RepositoryByPulpID(ctx, tx, a.ID)
		if err != nil {
			return err
		}
		next, err := s.applyRepo(ctx, tx, cur, cur.Type, a.Body, a.Partial)
		if err != nil {
			return err
		}
		if err := meta.UpdateRepository(ctx, tx, next); errors.Is(err, meta.ErrConflict) {
			return badField("name", "This field must be unique.")
		} else if err != nil {
			return err
		}
	case "remote":
		cur, err := meta.RemoteByPulpID(ctx, tx, a.ID)
		if err != nil {
			return err
		}
		next, err := s.applyRemote(cur, cur.Type, a.Body, a.Partial)
		if err != nil {
			return err
		}
		if err := meta.UpdateRemote(ctx, tx, next); errors.Is(err, meta.ErrConflict) {
			return badField("name", "This field must be unique.")
		} else if err != nil {
			return err
		}
	case "distribution":
		cur, err := meta.DistributionByPulpID(ctx, tx, a.ID)
		if err != nil {
			return err
		}
		next, err := s.applyDist(ctx, tx, cur, cur.Type, a.Body, a.Partial)
		if err != nil {
			return err
		}
		if err := meta.UpdateDistribution(ctx, tx, next, meta.Now()+s.cfg.GracePeriod.Microseconds()); err != nil {
			return distError(err)
		}
	default:
		return fmt.Errorf("update of unknown kind %q", a.Kind)
	}
	tx.AfterCommit(s.cfg.Content.Invalidate)
	return nil
}

type deleteArgs struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

func (s *Server) deleteHandler(kind string, resources func(*http.Request) ([]string, error)) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		a := deleteArgs{Kind: kind, ID: r.PathValue("id")}
		var err error
		switch kind {
		case "repository":
			_, err = meta.RepositoryByPulpID(r.Context(), s.db, a.ID)
		case "remote":
			_, err = meta.RemoteByPulpID(r.Context(), s.db, a.ID)
		case "distribution":
			_, err = meta.DistributionByPulpID(r.Context(), s.db, a.ID)
		}
		if err != nil {
			return err
		}
		locks, err := resources(r)
		if err != nil {
			return err
		}
		t, err := s.dispatch(r, task.Spec{Name: "pulpcore.app.tasks.base.general_delete", Args: a, Exclusive: locks})
		if err != nil {
			return err
		}
		return accepted(w, t)
	}
}

func (s *Server) applyDelete(ctx context.Context, tx *meta.Tx, a deleteArgs) error {
	switch a.Kind {
	case "repository":
		x, err := meta.RepositoryByPulpID(ctx, tx, a.ID)
		if err != nil {
			return err
		}
		if err := meta.DeleteRepository(ctx, tx, x.ID); err != nil {
			return err
		}
	case "remote":
		x, err := meta.RemoteByPulpID(ctx, tx, a.ID)
		if err != nil {
			return err
		}
		if err := meta.DeleteRemote(ctx, tx, x.ID); err != nil {
			return err
		}
	case "distribution":
		x, err := meta.DistributionByPulpID(ctx, tx, a.ID)
		if err != nil {
			return err
		}
		if err := meta.DeleteDistribution(ctx, tx, x.ID); err != nil {
			return err
		}
	default:
		return fmt.Errorf("delete of unknown kind %q", a.Kind)
	}
	tx.AfterCommit(s.cfg.Content.Invalidate)
	return nil
}

// selfLock is the resource list of a request on one resource: its own href.
func selfLock(collection string) func(r *http.Request) ([]string, error) {
	return func(r *http.Request) ([]string, error) {
		return []string{apiPath + collection + r.PathValue("id") + "/"}, nil
	}
}

// syncRemote resolves the remote a sync uses: the one given (of the repository's type)
// or the repository's own.
func (s *Server) syncRemote(r *http.Request, repo meta.Repository, remote *string) (string, error) {
	switch {
	case remote != nil:
		id, err := hrefOf("remote", *remote, "remotes/"+typeSegment(repo.Type)+"/")
		if err != nil {
			return "", err
		}
		if _, err := meta.RemoteByPulpID(r.Context(), s.db, id); err != nil {
			return "", badField("remote", "Invalid hyperlink - Object does not exist.")
		}
		return id, nil
	case repo.RemotePulpID != nil:
		return *repo.RemotePulpID, nil
	}
	return "", badField("remote", "This field is required since a remote is not set on the repository.")
}

func (s *Server) fileRepoSync(w http.ResponseWriter, r *http.Request) error {
	repo, err := s.repoByPath(r)
	if err != nil {
		return err
	}
	var in fileSyncIn
	raw, err := readBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := decode(raw, &in); err != nil {
		return err
	}
	remoteID, err := s.syncRemote(r, repo, in.Remote)
	if err != nil {
		return err
	}
	t, err := s.dispatch(r, task.Spec{
		Name:      file.SyncTask,
		Args:      file.SyncArgs{Repository: repo.PulpID, Remote: remoteID, Mirror: in.Mirror},
		Exclusive: []string{repoHref(repo.Type, repo.PulpID)},
		Shared:    []string{remoteHref(repo.Type, remoteID)},
	})
	if err != nil {
		return err
	}
	return accepted(w, t)
}

// ModifyArgs are the arguments of the add_and_remove task.
type ModifyArgs struct {
	Repository string  `json:"repository"`
	Add        []int64 `json:"add"`
	Remove     []int64 `json:"remove"`
	RemoveAll  bool    `json:"remove_all"`
	Base       *int64  `json:"base"`
}

func (s *Server) contentIDs(ctx context.Context, field string, hrefs []string) ([]int64, error) {
	ids := make([]string, 0, len(hrefs))
	for _, h := range hrefs {
		p, ok := parseHref(h)
		if !ok || !isContentCollection(p.collection) || p.rest != "" {
			return nil, badField(field, "Invalid hyperlink - No URL match for %q.", h)
		}
		ids = append(ids, p.id)
	}
	keys, err := meta.ContentIDsByPulpID(ctx, s.db, ids)
	if errors.Is(err, meta.ErrNotFound) {
		return nil, badField(field, "%v", err)
	}
	return keys, err
}

func isContentCollection(c string) bool {
	for _, seg := range unitSegment {
		if c == "content/"+seg+"/" {
			return true
		}
	}
	return false
}

func (s *Server) repoModify(w http.ResponseWriter, r *http.Request) error {
	repo, err := s.repoByPath(r)
	if err != nil {
		return err
	}
	var in modifyIn
	raw, err := readBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := decode(raw, &in); err != nil {
		return err
	}
	a := ModifyArgs{Repository: repo.PulpID}
	if a.Add, err = s.contentIDs(r.Context(), "add_content_units", in.AddContentUnits); err != nil {
		return err
	}
	var remove []string
	for _, h := range in.RemoveContentUnits {
		if h == "*" {
			a.RemoveAll = true
		} else {
			remove = append(remove, h)
		}
	}
	if a.Remove, err = s.contentIDs(r.Context(), "remove_content_units", remove); err != nil {
		return err
	}
	if in.BaseVersion != nil {
		id, n, err := versionOf("base_version", *in.BaseVersion, "repositories/"+typeSegment(repo.Type)+"/")
		if err != nil {
			return err
		}
		if id != repo.PulpID {
			return badField("base_version", "The base version must be a version of this repository.")
		}
		if _, err := meta.VersionByNumber(r.Context(), s.db, repo.ID, n); err != nil {
			return badField("base_version", "Version %d of this repository does not exist.", n)
		}
		a.Base = &n
	}
	t, err := s.dispatch(r, task.Spec{Name: "pulpcore.app.tasks.repository.add_and_remove", Args: a,
		Exclusive: []string{repoHref(repo.Type, repo.PulpID)}})
	if err != nil {
		return err
	}
	return accepted(w, t)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
