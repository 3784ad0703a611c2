package file

import (
	"context"
	_ "embed"
	"encoding/json"
	"net/http"

	"pith/api/access"
	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
	"pith/content"
	"pith/meta"
	"pith/task"
)

// The file type's REST declarations: its kinds with their shapes, and its own
// operations (sync, publish, content create and upload).

// segment is where file units live: /pulp/api/v3/content/file/files/.
const segment = "file/files"

// Declare adds the file type's kinds and operations to the table.
func (p *Plugin) Declare(t *rest.Table) error {
	env := t.Env
	t.Unit(rest.UnitKind{Type: Type, Segment: segment, PRN: "file.filecontent", Href: "{file_file_content_href}", Tag: "Content: Files",
		Schema: "file.FileContentResponse", View: contentResponse{}, Reclaimable: true,
		Filters: []rest.Filter{
			{Name: "relative_path", Col: "c.relative_path", Lookups: []string{"exact"}},
			{Name: "sha256", Col: "c.digest", Lookups: []string{"exact"}},
		},
		Ordering: rest.Ordering("c", map[string]string{
			"pk": "id", "pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated", "relative_path": "relative_path",
			"digest": "digest", "pulp_type": "type", "timestamp_of_interest": "timestamp_of_interest",
		}),
		Render: p.renderFiles, LabelStatus: 201})
	t.Repository(rest.RepoKind{Type: Type, Title: "File", Schema: "file.File", PRN: "file.filerepository",
		Body: func() rest.RepoBody {
			m := "PULP_MANIFEST"
			return &repositoryIn{repoSettings: repoSettings{Manifest: &m}}
		},
		View: func() rest.RepoView { return &repositoryResponse{} }, Remotes: []string{Type, GitRemoteType},
		Sync: &rest.Action{Body: syncIn{}, BodyName: "RepositorySyncURL", Handler: p.syncHandler(env)}})
	t.Remote(rest.RemoteKind{Type: Type, Title: "File", Schema: "file.File", PRN: "file.fileremote",
		Body: func() rest.RemoteBody { return &rest.RemoteIn{} }, View: func() rest.RemoteView { return &rest.RemoteResponse{} }})
	t.Remote(rest.RemoteKind{Type: GitRemoteType, Title: "Git", Schema: "file.FileGit", PRN: "file.filegitremote",
		Body: func() rest.RemoteBody { return &gitRemoteIn{GitRef: "HEAD"} }, View: func() rest.RemoteView { return &gitRemoteResponse{} }})
	t.Distribution(rest.DistKind{Type: Type, Title: "File", Schema: "file.File", PRN: "file.filedistribution",
		Body: func() rest.DistBody { return &rest.DistIn{} }, View: func() rest.DistView { return &rest.DistResponse{} },
		Repositories: Type, Publications: Type})
	t.ACS(rest.ACSKind{Type: Type, Title: "File", Schema: "file.File", PRN: "file.filealternatecontentsource", Remote: Type, Refresh: RefreshTask})
	t.Publication(rest.PubKind{Type: Type, Title: "File", Schema: "file.File", PRN: "file.filepublication", View: publicationResponse{},
		Render: renderPublication, Create: rest.Action{Body: publicationIn{}, BodyName: "file.FilePublication", Handler: publishHandler(env)}})

	unit := t.Schema("file.FileContentResponse", contentResponse{})
	const cpat = href.Root + "content/" + segment + "/"
	t.Add(rest.Op{ID: "content_file_files_create", Viewset: "content/" + segment, Method: "POST", Path: cpat, Pattern: cpat + "{$}", Tag: "Content: Files",
		Body: contentIn{}, BodyName: "file.FileContent", Media: rest.FileForms, Responses: []openapi.Response{rest.Resp(202, t.Async())},
		Handler: p.createHandler(env)})
	t.Add(rest.Op{ID: "content_file_files_upload", Viewset: "content/" + segment, Action: "upload", Method: "POST", Path: cpat + "upload/", Pattern: cpat + "upload/{$}", Tag: "Content: Files",
		Body: contentIn{}, BodyName: "file.FileContent", Media: rest.FileForms, Responses: []openapi.Response{rest.Resp(201, unit)},
		Handler: p.uploadHandler(env)})
	d, err := access.Parse(accessJSON)
	if err != nil {
		return err
	}
	if err := t.Access(d); err != nil {
		return err
	}
	return t.Create(createKind, p.createTask)
}

// accessJSON are pulp_file's default access policies, built-in roles and permissions
// (scripts/pulp-access.py).
//
//go:embed access.json
var accessJSON []byte

// repoSettings are what a file repository adds (its attrs).
type repoSettings struct {
	Autopublish bool    `json:"autopublish" openapi:"default=false"`
	Manifest    *string `json:"manifest" openapi:"nullable,minLength=1,default=PULP_MANIFEST"`
}

type repositoryIn struct {
	rest.RepoIn
	repoSettings
}

// Validate checks the file type's own fields.
func (f *repositoryIn) Validate() error {
	if f.Manifest != nil && *f.Manifest == "" {
		return rest.BadField("manifest", "This field may not be blank.")
	}
	return nil
}

type repositoryResponse struct {
	rest.RepoResponse
	Autopublish bool    `json:"autopublish"`
	Manifest    *string `json:"manifest" openapi:"nullable"`
}

type syncIn struct {
	Remote *string `json:"remote" openapi:"format=uri"`
	Mirror bool    `json:"mirror" openapi:"default=false"`
	// Optimize (Pulp 3.106+) false syncs even when nothing changed upstream.
	Optimize *bool `json:"optimize" openapi:"newer"`
}

// syncHandler dispatches a sync of the repository from its remote or the one given.
func (p *Plugin) syncHandler(env *rest.Env) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		repo, err := env.RepoByPath(r)
		if err != nil {
			return err
		}
		var in syncIn
		if _, err := rest.DecodeBody(r, &in); err != nil {
			return err
		}
		remote, err := env.SyncRemote(r, repo, in.Remote)
		if err != nil {
			return err
		}
		return env.Dispatch(w, r, task.Spec{
			Name:      SyncTask,
			Args:      SyncArgs{Repository: repo.PulpID, Remote: remote.PulpID, Mirror: in.Mirror, Optimize: in.Optimize == nil || *in.Optimize},
			Exclusive: []string{href.Repository(repo.Type, repo.PulpID)},
			Shared:    []string{href.Remote(remote.Type, remote.PulpID)},
		})
	}
}

type publicationIn struct {
	rest.PublicationIn
	Manifest *string `json:"manifest" openapi:"nullable,minLength=1,default=PULP_MANIFEST"`
}

type publicationResponse struct {
	rest.PublicationResponse
	Distributions []string `json:"distributions" openapi:"readOnly"`
	Manifest      *string  `json:"manifest" openapi:"nullable"`
	Checkpoint    bool     `json:"checkpoint"`
}

// pubAttrs are what a file publication records (its attrs).
type pubAttrs struct {
	Manifest *string `json:"manifest"`
}

func renderPublication(pub meta.Publication, dists []string) any {
	var a pubAttrs
	json.Unmarshal(pub.Attrs, &a)
	if dists == nil {
		dists = []string{}
	}
	return publicationResponse{PublicationResponse: rest.NewPublicationResponse(pub, "file.filepublication"), Distributions: dists, Manifest: a.Manifest, Checkpoint: pub.Checkpoint}
}

// publishHandler dispatches a publication of a version, with the manifest the body
// names (null for none) or else the repository's.
func publishHandler(env *rest.Env) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var in publicationIn
		raw, err := rest.DecodeBody(r, &in)
		if err != nil {
			return err
		}
		repo, n, err := env.PubSource(r, Type, in.PublicationIn)
		if err != nil {
			return err
		}
		manifest := manifestOf(repo)
		if rest.Has(raw, "manifest") {
			manifest = ""
			if in.Manifest != nil {
				manifest = *in.Manifest
			}
		}
		return env.Dispatch(w, r, task.Spec{Name: PublishTask, Args: PublishArgs{Repository: repo.PulpID, Version: n, Manifest: manifest, Checkpoint: in.Checkpoint},
			Shared: []string{href.Repository(repo.Type, repo.PulpID)}})
	}
}

type contentIn struct {
	rest.ContentIn
	RelativePath string `json:"relative_path" openapi:"minLength=1"`
}

type contentResponse struct {
	rest.ArtifactUnit
	RelativePath string `json:"relative_path"`
}

// renderUnit shows a file unit; its sha256 is the unit's digest, stored or not.
func renderUnit(c meta.Content, a *meta.Artifact) contentResponse {
	out := contentResponse{ArtifactUnit: rest.NewArtifactUnit(c, segment, "file.filecontent", a), RelativePath: c.RelativePath}
	out.SHA256 = &c.Digest
	return out
}

func (p *Plugin) renderFiles(ctx context.Context, cs []meta.Content) ([]any, error) {
	arts, err := meta.UnitArtifacts(ctx, p.core.DB, cs)
	if err != nil {
		return nil, err
	}
	items := make([]any, len(cs))
	for i, c := range cs {
		items[i] = renderUnit(c, arts[i])
	}
	return items, nil
}

// createKind is the general_create kind of file units.
const createKind = "file_content"

// createArgs are the arguments of the task that creates a file unit.
type createArgs struct {
	Artifact     int64       `json:"artifact"`
	RelativePath string      `json:"relative_path"`
	Labels       meta.Labels `json:"labels"`
	Repository   string      `json:"repository,omitempty"`
	FileURL      string      `json:"file_url,omitempty"`
	NoOverwrite  bool        `json:"no_overwrite,omitempty"`
}

// readContent reads a file-content create body and returns the task arguments.
func readContent(env *rest.Env, r *http.Request) (createArgs, *meta.Repository, error) {
	var in contentIn
	src, err := env.ReadContent(r, &in, Type, func(raw map[string]json.RawMessage) error {
		if err := rest.Require(raw, "relative_path"); err != nil {
			return err
		}
		if _, err := content.CleanRelativePath(in.RelativePath); err != nil {
			return rest.BadField("relative_path", "%v", err)
		}
		return nil
	})
	if err != nil {
		return createArgs{}, nil, err
	}
	a := createArgs{RelativePath: in.RelativePath, Labels: src.Labels, Artifact: src.Artifact, FileURL: src.FileURL, NoOverwrite: src.NoOverwrite}
	if src.Repository != nil {
		a.Repository = src.Repository.PulpID
	}
	return a, src.Repository, nil
}

func (p *Plugin) createHandler(env *rest.Env) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		a, repo, err := readContent(env, r)
		if err != nil {
			return err
		}
		return env.DispatchCreate(w, r, createKind, href.Root+"content/"+segment+"/", a, repo)
	}
}

// uploadHandler creates a unit synchronously (content_file_files_upload, 201).
func (p *Plugin) uploadHandler(env *rest.Env) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		a, repo, err := readContent(env, r)
		if err != nil {
			return err
		}
		if repo != nil || a.FileURL != "" {
			return rest.NonField("The synchronous upload takes no 'repository' or 'file_url'; use the create operation.")
		}
		c, err := p.createUnit(r.Context(), a)
		if err != nil {
			return err
		}
		items, err := p.renderFiles(r.Context(), []meta.Content{c})
		if err != nil {
			return err
		}
		return rest.WriteOne(w, r, http.StatusCreated, items[0])
	}
}

// createTask is the general_create task of a file unit.
func (p *Plugin) createTask(ctx context.Context, r *task.Run, body json.RawMessage) error {
	var a createArgs
	if err := json.Unmarshal(body, &a); err != nil {
		return err
	}
	return p.core.CreateUnit(ctx, r, a.FileURL, &a.Artifact, a.Repository, !a.NoOverwrite, func() (meta.Content, error) { return p.createUnit(ctx, a) })
}

// createUnit creates (or finds) the file unit for an artifact and path.
func (p *Plugin) createUnit(ctx context.Context, a createArgs) (meta.Content, error) {
	art, err := meta.ArtifactByID(ctx, p.core.DB, a.Artifact)
	if err != nil {
		return meta.Content{}, err
	}
	attrs, _ := json.Marshal(map[string]string{"relative_path": a.RelativePath, "digest": art.SHA256})
	aid := art.ID
	c, _, err := meta.PutContent(ctx, p.core.DB, meta.Content{
		Type: Type, NaturalKey: art.SHA256 + ":" + a.RelativePath, RepoKey: a.RelativePath,
		RelativePath: a.RelativePath, Digest: art.SHA256, Attrs: attrs, Labels: a.Labels,
	}, []meta.ContentFile{{RelativePath: a.RelativePath, ArtifactID: &aid}})
	return c, err
}
