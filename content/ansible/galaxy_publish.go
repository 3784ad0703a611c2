package ansible

import (
	"encoding/json"
	"errors"
	"net/http"

	"pith/api/href"
	"pith/api/rest"
	"pith/content"
	"pith/meta"
	"pith/task"
)

// Publishing through the Galaxy API: the tarball is stored at request time, a general
// create task imports it into the distribution's repository, and the import is the task
// seen through Galaxy's eyes.

// galaxyPublish is v3/artifacts/collections/ (and content/<base>/collections/artifacts/):
// 202 {"task": <the import's href>}.
func (p *Plugin) galaxyPublish(w http.ResponseWriter, r *http.Request) error {
	d, err := p.distribution(r.Context(), distBasePath(r))
	if err != nil {
		return err
	}
	if d.Repo == nil {
		return rest.NonField("Distribution must have either repository or repository_version set")
	}
	art, e, err := p.readOneShot(r)
	if err != nil {
		return err
	}
	a := ImportArgs{Artifact: art, Expected: e, Repository: d.Repo.PulpID, Unique: true}
	t, err := p.core.Env().Enqueue(r, task.Spec{Name: rest.CreateTask, Args: rest.CreateArgs{Kind: cvKind, Body: rest.Raw(a)},
		Shared: []string{href.Root + "content/" + cvSegment + "/"}, Exclusive: []string{repoHref(d.Repo.PulpID)}})
	if err != nil {
		return err
	}
	return writeGalaxy(w, http.StatusAccepted, rest.TaskRef{Task: defaultRoot + "imports/collections/" + t.PulpID + "/"})
}

// collectionImport is an import as Galaxy shows it (CollectionImportDetailSerializer).
type collectionImport struct {
	ID         string          `json:"id"`
	State      string          `json:"state"`
	CreatedAt  string          `json:"created_at"`
	UpdatedAt  string          `json:"updated_at"`
	StartedAt  any             `json:"started_at"`
	FinishedAt any             `json:"finished_at"`
	Error      json.RawMessage `json:"error"`
	Messages   []importMessage `json:"messages"`
}

type importMessage struct {
	Time    float64 `json:"time"`
	Level   string  `json:"level"`
	Message string  `json:"message"`
}

// importDetail is imports/collections/<id>/: the task that imports a published
// collection. pith's import logs nothing worth a message: messages is empty, and a
// failure says why in error.description, as pulp_ansible's does.
func (p *Plugin) importDetail(w http.ResponseWriter, r *http.Request) error {
	t, err := task.Get(r.Context(), p.db, r.PathValue("id"))
	if errors.Is(err, meta.ErrNotFound) {
		return rest.ErrNotFound
	}
	if err != nil {
		return err
	}
	var args rest.CreateArgs
	if t.Name != rest.CreateTask || json.Unmarshal(t.Args, &args) != nil || args.Kind != cvKind {
		return rest.ErrNotFound
	}
	out := collectionImport{ID: t.PulpID, State: t.State, CreatedAt: rest.Time(t.Created), UpdatedAt: rest.Time(t.Updated),
		StartedAt: rest.TimePtr(t.Started), FinishedAt: rest.TimePtr(t.Finished), Error: t.Error, Messages: []importMessage{}}
	if len(out.Error) == 0 {
		out.Error = json.RawMessage("null")
	}
	return writeGalaxy(w, http.StatusOK, out)
}

// collectionPatch is the body of a Galaxy collection update (PatchedCollection).
type collectionPatch struct {
	Deprecated *bool `json:"deprecated"`
}

// collectionUpdate is PATCH collections/index/<ns>/<name>/ {"deprecated": …}: a task adds
// the collection's deprecation to the repository, or removes it.
func (p *Plugin) collectionUpdate(w http.ResponseWriter, r *http.Request) error {
	d, ix, err := p.served(r)
	if err != nil {
		return err
	}
	if d.Repo == nil || d.Version == 0 {
		return rest.ErrForbidden
	}
	var in collectionPatch
	if _, err := rest.DecodeBody(r, &in); err != nil {
		return err
	}
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	if ix.collection(ns, name) == nil {
		return rest.ErrNotFound
	}
	if in.Deprecated == nil || *in.Deprecated {
		repo, err := meta.RepositoryByPulpID(r.Context(), p.db, d.Repo.PulpID)
		if err != nil {
			return err
		}
		return p.core.Env().DispatchCreate(w, r, unitKind, href.Root+"content/"+deprecationSegment+"/",
			unitArgs{Unit: deprecationUnit(ns, name, nil), Repository: repo.PulpID}, &repo)
	}
	l := meta.List{}
	inServed(&l, d, DeprecationType)
	l.And("c.repo_key = ?", deprecationUnit(ns, name, nil).RepoKey)
	cs, _, err := meta.ListContent(r.Context(), p.db, l)
	if err != nil {
		return err
	}
	var remove []int64
	for _, c := range cs {
		remove = append(remove, c.ID)
	}
	return p.core.Env().Dispatch(w, r, task.Spec{Name: content.ModifyTask, Args: content.ModifyArgs{Repository: d.Repo.PulpID, Remove: remove},
		Exclusive: []string{repoHref(d.Repo.PulpID)}})
}
