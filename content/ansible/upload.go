package ansible

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"pith/api/href"
	"pith/api/rest"
	"pith/blob"
	"pith/content/ansible/collection"
	"pith/meta"
	"pith/task"
)

// Collection uploads: the content create operation and pulp_ansible's one-shot upload
// (/ansible/collections/) both store the tarball as an artifact, then a task reads it
// (collection.Read: every file checked against FILES.json, the metadata validated),
// checks it against what the client expected, and stores the collection version.

// cvIn is the body of content_ansible_collection_versions_create.
type cvIn struct {
	rest.ContentIn
	ExpectedName      *string `json:"expected_name" openapi:"writeOnly,minLength=1,maxLength=64,desc=The name of the collection."`
	ExpectedNamespace *string `json:"expected_namespace" openapi:"writeOnly,minLength=1,maxLength=64,desc=The namespace of the collection."`
	ExpectedVersion   *string `json:"expected_version" openapi:"writeOnly,minLength=1,maxLength=128,desc=The version of the collection."`
}

// oneShotIn is the body of upload_collection (POST /ansible/collections/).
type oneShotIn struct {
	File              string  `json:"file" openapi:"format=binary,desc=The Collection tarball."`
	SHA256            *string `json:"sha256" openapi:"minLength=1,desc=An optional sha256 checksum of the uploaded file."`
	ExpectedNamespace *string `json:"expected_namespace" openapi:"minLength=1,desc=The expected 'namespace' of the Collection to be verified against the metadata during import."`
	ExpectedName      *string `json:"expected_name" openapi:"minLength=1,desc=The expected 'name' of the Collection to be verified against the metadata during import."`
	ExpectedVersion   *string `json:"expected_version" openapi:"minLength=1,desc=The expected version of the Collection to be verified against the metadata during import."`
}

// cvKind is the general_create kind of collection versions.
const cvKind = "ansible_collection_version"

// ImportArgs are the arguments of the task that imports a collection tarball.
type ImportArgs struct {
	Artifact    int64       `json:"artifact"`
	FileURL     string      `json:"file_url,omitempty"`
	Expected    Expected    `json:"expected"`
	Labels      meta.Labels `json:"labels"`
	Repository  string      `json:"repository,omitempty"`
	NoOverwrite bool        `json:"no_overwrite,omitempty"`
	// Unique refuses a namespace.name.version the repository already holds (Galaxy's
	// publish, where publishing a version twice is an error).
	Unique bool `json:"unique,omitempty"`
}

// Expected are the namespace, name and version a client says it uploads; the import
// fails when the tarball's manifest says otherwise. Empty fields are not checked.
type Expected struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	Version   string `json:"version,omitempty"`
}

// expectedOf takes the expected fields, and those missing from the file's name when it
// is namespace-name-version.tar.gz (as ansible-galaxy names it).
func expectedOf(ns, name, version *string, filename string) (Expected, error) {
	var e Expected
	if ns == nil || name == nil || version == nil {
		if filename == "" {
			return e, rest.NonField("Give expected_namespace, expected_name and expected_version, or upload a file named namespace-name-version.tar.gz.")
		}
		f, err := collection.ParseFilename(filename)
		if err != nil {
			return e, rest.BadField("file", "%v", err)
		}
		e = Expected{Namespace: f.Namespace, Name: f.Name, Version: f.Version}
	}
	for _, f := range []struct {
		v   *string
		dst *string
	}{{ns, &e.Namespace}, {name, &e.Name}, {version, &e.Version}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	return e, nil
}

// cvCreate is content_ansible_collection_versions_create: store the file, queue the
// import.
func (p *Plugin) cvCreate(w http.ResponseWriter, r *http.Request) error {
	env := p.core.Env()
	var in cvIn
	src, err := env.ReadContent(r, &in, RepoType, func(map[string]json.RawMessage) error {
		// An artifact or upload has no file name to take them from: refused, as by Pulp,
		// before the upload becomes an artifact.
		if (in.Artifact != nil || in.Upload != nil) && (in.ExpectedNamespace == nil || in.ExpectedName == nil || in.ExpectedVersion == nil) {
			return rest.NonField("expected_namespace, expected_name, and expected_version must be specified when using artifact or upload objects")
		}
		return nil
	})
	if err != nil {
		return err
	}
	e, err := expectedOf(in.ExpectedNamespace, in.ExpectedName, in.ExpectedVersion, src.Filename)
	if err != nil && src.FileURL == "" {
		return err
	}
	a := ImportArgs{Artifact: src.Artifact, FileURL: src.FileURL, Expected: e, Labels: src.Labels, NoOverwrite: src.NoOverwrite}
	if src.Repository != nil {
		a.Repository = src.Repository.PulpID
	}
	return env.DispatchCreate(w, r, cvKind, href.Root+"content/"+cvSegment+"/", a, src.Repository)
}

// oneShot is upload_collection: the tarball in a multipart body, imported by a task.
func (p *Plugin) oneShot(w http.ResponseWriter, r *http.Request) error {
	art, e, err := p.readOneShot(r)
	if err != nil {
		return err
	}
	return p.core.Env().DispatchCreate(w, r, cvKind, href.Root+"content/"+cvSegment+"/", ImportArgs{Artifact: art, Expected: e}, nil)
}

// readOneShot reads a one-shot upload's body (upload_collection's and Galaxy's publish)
// and stores its file as an artifact: the artifact and what the upload expects of it.
func (p *Plugin) readOneShot(r *http.Request) (int64, Expected, error) {
	env := p.core.Env()
	var pf *rest.PendingFile
	var in oneShotIn
	raw, err := rest.ReadBody(r, &in, env.ReceiveFile(r.Context(), "file", &pf))
	if err == nil {
		err = rest.Decode(raw, &in)
	}
	if err == nil && pf == nil {
		err = rest.BadField("file", "No file was submitted.")
	}
	var e Expected
	if err == nil {
		e, err = expectedOf(in.ExpectedNamespace, in.ExpectedName, in.ExpectedVersion, pf.Filename())
	}
	if err != nil {
		pf.Cancel(r.Context())
		return 0, e, err
	}
	art, err := env.CommitArtifact(r.Context(), pf, expectSHA256(in.SHA256))
	return art.ID, e, err
}

// runImport is the task that imports a collection tarball into a collection version
// (and adds it to a repository when one is named).
func (p *Plugin) runImport(ctx context.Context, r *task.Run, body json.RawMessage) error {
	var a ImportArgs
	if err := json.Unmarshal(body, &a); err != nil {
		return err
	}
	return p.core.CreateUnit(ctx, r, a.FileURL, &a.Artifact, a.Repository, !a.NoOverwrite, func() (meta.Content, error) {
		return p.importArtifact(ctx, a.Artifact, a.Expected, a.Labels, func(v *collection.Version) error {
			if !a.Unique || a.Repository == "" {
				return nil
			}
			return p.refuseExisting(ctx, a.Repository, v)
		})
	})
}

// importArtifact reads a stored tarball and stores its collection version (or finds the
// one already stored for the same artifact).
// check, when not nil, may refuse the collection before anything is stored.
func (p *Plugin) importArtifact(ctx context.Context, artifact int64, want Expected, labels meta.Labels, check func(*collection.Version) error) (meta.Content, error) {
	art, err := meta.ArtifactByID(ctx, p.db, artifact)
	if err != nil {
		return meta.Content{}, err
	}
	v, err := p.readArtifact(ctx, art)
	if err != nil {
		return meta.Content{}, fmt.Errorf("importing the collection: %w", err)
	}
	if err := want.check(v); err != nil {
		return meta.Content{}, err
	}
	if check != nil {
		if err := check(v); err != nil {
			return meta.Content{}, err
		}
	}
	c, docs, err := cvUnit(v, labels)
	if err != nil {
		return meta.Content{}, err
	}
	aid := art.ID
	var out meta.Content
	err = p.db.Tx(ctx, func(tx *meta.Tx) error {
		var created bool
		out, created, err = meta.PutContent(ctx, tx, c, []meta.ContentFile{{RelativePath: c.RelativePath, ArtifactID: &aid}})
		if err != nil || !created {
			return err
		}
		return meta.PutDocuments(ctx, tx, out.ID, docs)
	})
	return out, err
}

// refuseExisting fails when the latest version of the repository holds the collection
// version's namespace.name.version already.
func (p *Plugin) refuseExisting(ctx context.Context, repository string, v *collection.Version) error {
	repo, err := meta.RepositoryByPulpID(ctx, p.db, repository)
	if err != nil {
		return err
	}
	var n int
	err = p.db.QueryRow(ctx, `SELECT COUNT(*) FROM repository_content rc JOIN contents c ON c.id = rc.content_id
		WHERE rc.repository_id = ? AND `+meta.InVersion("rc", "?")+` AND c.type = ? AND c.repo_key = ?`,
		repo.ID, repo.LatestVersion, repo.LatestVersion, CollectionVersionType, repoKey(v.Namespace, v.Name, v.Version)).Scan(&n)
	if err != nil {
		return err
	}
	if n > 0 {
		return fmt.Errorf("collection version %s.%s %s already exists in repository %s; publish a new version instead", v.Namespace, v.Name, v.Version, repo.Name)
	}
	return nil
}

// readArtifact reads a stored collection tarball.
func (p *Plugin) readArtifact(ctx context.Context, art meta.Artifact) (*collection.Version, error) {
	rc, err := p.core.Store.Open(ctx, art.SHA256)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return collection.Read(rc, collection.Options{})
}

// check fails when the collection is not the one expected, naming both.
func (e Expected) check(v *collection.Version) error {
	for _, f := range []struct{ field, want, got string }{
		{"namespace", e.Namespace, v.Namespace}, {"name", e.Name, v.Name}, {"version", e.Version, v.Version},
	} {
		if f.want != "" && f.want != f.got {
			return fmt.Errorf("the collection's %s is %q, but the upload said %q (%s.%s %s)", f.field, f.got, f.want, v.Namespace, v.Name, v.Version)
		}
	}
	return nil
}

// expectSHA256 is what an upload that names its sha256 must match.
func expectSHA256(sum *string) blob.Expect {
	want := blob.Expect{Size: -1}
	if sum != nil {
		want.SHA256 = strings.ToLower(*sum)
	}
	return want
}
