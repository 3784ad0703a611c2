package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"pith/api/href"
	"pith/blob"
	"pith/meta"
	"pith/task"
)

// Env is what handlers run with: the stores, the task queue, and the table for looking
// up kinds. The api package and the content types' handlers share it.
type Env struct {
	DB    *meta.DB
	Store *blob.Store
	Queue *task.Queue
	Table *Table
	// Invalidate tells the content app that what it serves may have changed.
	Invalidate func()

	collOnce              sync.Once
	byModel, byCollection map[string]string // PRN model ↔ collection (collections)
}

type cidKey struct{}

// WithCorrelationID stores a request's Correlation-ID in its context.
func WithCorrelationID(ctx context.Context, cid string) context.Context {
	return context.WithValue(ctx, cidKey{}, cid)
}

// CorrelationID is the Correlation-ID of the request ctx belongs to.
func CorrelationID(ctx context.Context) string {
	s, _ := ctx.Value(cidKey{}).(string)
	return s
}

// quickTask is how long a dispatching request waits for its task: short tasks then
// finish before the client's first read, sparing it the CLI's one-second poll.
const quickTask = 500 * time.Millisecond

// Enqueue queues a task with the request's correlation ID and waits briefly for it.
func (e *Env) Enqueue(r *http.Request, spec task.Spec) (task.Task, error) {
	spec.LoggingCID = CorrelationID(r.Context())
	spec.Profile = Diagnostics(r)
	if sub := SubjectOf(r.Context()); !sub.Anonymous() {
		spec.CreatedBy = &sub.ID
	}
	t, err := e.Queue.Dispatch(r.Context(), spec)
	if err == nil {
		e.Queue.WaitBriefly(r.Context(), t.ID, quickTask)
	}
	return t, err
}

// Bounds of the X-Task-Diagnostics header: more names, or longer ones, are ignored.
const (
	maxProfilers    = 8
	maxProfilerName = 64
)

// Diagnostics are the profilers a request asks its tasks to run with (Pulp's
// X-Task-Diagnostics header, comma-separated). Names the worker does not run are kept:
// it logs them and runs without, as Pulp does.
func Diagnostics(r *http.Request) []string {
	var out []string
	for _, v := range r.Header.Values("X-Task-Diagnostics") {
		for _, n := range strings.Split(v, ",") {
			n = strings.TrimSpace(n)
			if n != "" && len(n) <= maxProfilerName && len(out) < maxProfilers && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// Dispatch queues a task and answers 202 with exactly {"task": href}.
func (e *Env) Dispatch(w http.ResponseWriter, r *http.Request, spec task.Spec) error {
	t, err := e.Enqueue(r, spec)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusAccepted, TaskRef{Task: href.Task(t.PulpID)})
	return nil
}

// CreateTask is Pulp's general create task: it runs a kind's Creator (or the API's own
// kinds) on a stored body.
const CreateTask = "pulpcore.app.tasks.base.general_create"

// CreateArgs are the arguments of the general create task.
type CreateArgs struct {
	Kind string                     `json:"kind"`
	Type string                     `json:"type,omitempty"`
	Body map[string]json.RawMessage `json:"body"`
}

// DispatchCreate queues the general create task of a kind with args, locking the
// collection shared and the repository the unit is added to exclusively.
func (e *Env) DispatchCreate(w http.ResponseWriter, r *http.Request, kind, collection string, args any, repo *meta.Repository) error {
	spec := task.Spec{Name: CreateTask, Args: CreateArgs{Kind: kind, Body: Raw(args)}, Shared: []string{collection}}
	if repo != nil {
		spec.Exclusive = []string{href.Repository(repo.Type, repo.PulpID)}
	}
	return e.Dispatch(w, r, spec)
}

// HrefOf parses an href expected to name a resource in collection
// ("repositories/file/file/"); a sub-path is refused.
func HrefOf(field, h, collection string) (string, error) {
	p, ok := href.Parse(h)
	if !ok || p.Collection != collection || p.Rest != "" {
		return "", BadField(field, "Invalid hyperlink - No URL match for %q.", h)
	}
	return p.ID, nil
}

// VersionOf parses a repository version href of a repository in collection.
func VersionOf(field, h, collection string) (string, int64, error) {
	p, ok := href.Parse(h)
	if ok && p.Collection == collection {
		if n, ok := p.VersionNumber(); ok {
			return p.ID, n, nil
		}
	}
	return "", 0, BadField(field, "Invalid hyperlink - No URL match for %q.", h)
}

// RepoByPath is the repository the request's {id} names.
func (e *Env) RepoByPath(r *http.Request) (meta.Repository, error) {
	return meta.RepositoryByPulpID(r.Context(), e.DB, r.PathValue("id"))
}

// Repository finds the repository a body's field names (an href of a repository of type
// typ); a bad href or a missing repository is a 400 on field.
func (e *Env) Repository(ctx context.Context, field, h, typ string) (*meta.Repository, error) {
	id, err := HrefOf(field, h, "repositories/"+href.Segment(typ)+"/")
	if err != nil {
		return nil, err
	}
	repo, err := meta.RepositoryByPulpID(ctx, e.DB, id)
	if err != nil {
		return nil, BadField(field, "Invalid hyperlink - Object does not exist.")
	}
	return &repo, nil
}

// SyncRemote resolves the remote a sync uses: the one given (of a type the repository
// syncs from) or the repository's own.
func (e *Env) SyncRemote(r *http.Request, repo meta.Repository, remote *string) (meta.Remote, error) {
	switch {
	case remote != nil:
		p, ok := href.Parse(*remote)
		kind, _ := e.Table.RepoKind(repo.Type)
		valid := false
		for _, typ := range kind.Remotes {
			valid = valid || ok && p.Rest == "" && p.Collection == "remotes/"+href.Segment(typ)+"/"
		}
		if !valid {
			return meta.Remote{}, BadField("remote", "Invalid hyperlink - No URL match for %q.", *remote)
		}
		m, err := meta.RemoteByPulpID(r.Context(), e.DB, p.ID)
		if err != nil {
			return m, BadField("remote", "Invalid hyperlink - Object does not exist.")
		}
		return m, nil
	case repo.RemotePulpID != nil:
		return meta.RemoteByPulpID(r.Context(), e.DB, *repo.RemotePulpID)
	}
	return meta.Remote{}, BadField("remote", "This field is required since a remote is not set on the repository.")
}

// PubSource resolves what a publication of repositories of type typ publishes: a
// repository version, or the latest version of a repository (the only source of a
// checkpoint publication, as in Pulp).
func (e *Env) PubSource(r *http.Request, typ string, in PublicationIn) (meta.Repository, int64, error) {
	collection := "repositories/" + href.Segment(typ) + "/"
	switch {
	case in.Repository != nil && in.RepositoryVersion != nil:
		return meta.Repository{}, 0, NonField("Only one of the attributes 'repository' and 'repository_version' may be provided.")
	case in.Checkpoint && in.RepositoryVersion != nil:
		return meta.Repository{}, 0, NonField("'checkpoint' may only be used with 'repository'")
	case in.RepositoryVersion != nil:
		id, num, err := VersionOf("repository_version", *in.RepositoryVersion, collection)
		if err != nil {
			return meta.Repository{}, 0, err
		}
		repo, err := meta.RepositoryByPulpID(r.Context(), e.DB, id)
		if err != nil {
			return repo, 0, BadField("repository_version", "Invalid hyperlink - Object does not exist.")
		}
		if _, err := meta.VersionByNumber(r.Context(), e.DB, repo.ID, num); err != nil {
			return repo, 0, BadField("repository_version", "Invalid hyperlink - Object does not exist.")
		}
		return repo, num, nil
	case in.Repository != nil:
		repo, err := e.Repository(r.Context(), "repository", *in.Repository, typ)
		if err != nil {
			return meta.Repository{}, 0, err
		}
		return *repo, repo.LatestVersion, nil
	}
	return meta.Repository{}, 0, NonField("Either the 'repository' or 'repository_version' need to be specified.")
}

// ContentIDs resolves unit hrefs (of any declared kind) to their keys; a malformed or
// unknown one is a 400 on field.
func (e *Env) ContentIDs(ctx context.Context, field string, hrefs []string) ([]int64, error) {
	ids := make([]string, 0, len(hrefs))
	for _, h := range hrefs {
		p, ok := href.Parse(h)
		if !ok || !e.IsUnitCollection(p.Collection) || p.Rest != "" {
			return nil, BadField(field, "Invalid hyperlink - No URL match for %q.", h)
		}
		ids = append(ids, p.ID)
	}
	keys, err := meta.ContentIDsByPulpID(ctx, e.DB, ids)
	if errors.Is(err, meta.ErrNotFound) {
		return nil, BadField(field, "%v", err)
	}
	return keys, err
}

// IsUnitCollection reports whether c ("content/rpm/packages/") is the collection of a
// declared unit kind.
func (e *Env) IsUnitCollection(c string) bool {
	seg, ok := strings.CutPrefix(c, "content/")
	if !ok {
		return false
	}
	_, ok = e.Table.UnitBySegment(strings.TrimSuffix(seg, "/"))
	return ok
}

// ContentSource is where a content create body's file is: a stored artifact, or a URL
// for the task to download.
type ContentSource struct {
	Artifact   int64
	FileURL    string
	Labels     meta.Labels
	Repository *meta.Repository
	// NoOverwrite is the body's overwrite false: adding the unit must not replace one.
	NoOverwrite bool
	// Filename is the name the client gave the uploaded file part ("" for none).
	Filename string
}

// ReadContent reads a content create body into body, storing an uploaded file; check
// validates the type's own fields before anything is stored. repoType is the type of
// the repositories it may add to. Nothing is stored when the body is bad.
func (e *Env) ReadContent(r *http.Request, body ContentBody, repoType string, check func(raw map[string]json.RawMessage) error) (ContentSource, error) {
	in := body.Content()
	var pf *PendingFile
	raw, err := ReadBody(r, body, e.ReceiveFile(r.Context(), "file", &pf))
	if err == nil {
		err = Decode(raw, body)
	}
	fail := func(err error) (ContentSource, error) {
		pf.Cancel(r.Context())
		return ContentSource{}, err
	}
	if err == nil {
		err = check(raw)
	}
	if err != nil {
		return fail(err)
	}
	labels, err := SetLabels(in.PulpLabels)
	if err != nil {
		return fail(err)
	}
	src := ContentSource{Labels: labels, NoOverwrite: in.Overwrite != nil && !*in.Overwrite}
	if in.Repository != nil {
		if src.Repository, err = e.Repository(r.Context(), "repository", *in.Repository, repoType); err != nil {
			return fail(err)
		}
	}
	sources := 0
	for _, set := range []bool{pf != nil, in.Artifact != nil, in.Upload != nil, in.FileURL != nil} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		return fail(NonField("Exactly one of 'file', 'artifact', 'upload' or 'file_url' must be given."))
	}
	switch {
	case pf != nil:
		art, err := e.CommitArtifact(r.Context(), pf, blob.Expect{Size: -1})
		if err != nil {
			return ContentSource{}, err
		}
		src.Artifact, src.Filename = art.ID, pf.name
	case in.Artifact != nil:
		id, err := HrefOf("artifact", *in.Artifact, "artifacts/")
		if err != nil {
			return fail(err)
		}
		art, err := meta.ArtifactByPulpID(r.Context(), e.DB, id)
		if err != nil {
			return fail(BadField("artifact", "Invalid hyperlink - Object does not exist."))
		}
		src.Artifact = art.ID
	case in.Upload != nil:
		id, err := HrefOf("upload", *in.Upload, "uploads/")
		if err != nil {
			return fail(err)
		}
		art, err := e.ArtifactFromUpload(r.Context(), id)
		if err != nil {
			return fail(err)
		}
		src.Artifact = art.ID
	case in.FileURL != nil:
		src.FileURL = *in.FileURL
	}
	return src, nil
}

// PendingFile is a file part streamed into the blob store but not yet committed: bad
// fields that arrive after it can still cancel it.
type PendingFile struct {
	w    *blob.Writer
	name string
}

// ReceiveFile returns a FileFunc that streams one file part (named field) into a blob
// writer, leaving it in *pf.
func (e *Env) ReceiveFile(ctx context.Context, field string, pf **PendingFile) FileFunc {
	return func(name, filename string, body io.Reader) error {
		if name != field {
			return BadField(name, "Unexpected file field.")
		}
		if *pf != nil {
			return BadField(name, "Only one file may be sent.")
		}
		w, err := e.Store.NewWriter(ctx)
		if err != nil {
			return err
		}
		*pf = &PendingFile{w: w, name: filename}
		if _, err := io.Copy(w, body); err != nil {
			var de *blob.DriverError
			if errors.As(err, &de) {
				return err // the store failed, not the client: 503
			}
			return Status(http.StatusBadRequest, "read file %q: %v", filename, err)
		}
		return nil
	}
}

// Cancel drops a pending file; a nil one is fine.
// Filename is the name the client gave the file part.
func (p *PendingFile) Filename() string { return p.name }

// Cancel drops the pending blob; a nil PendingFile has nothing to drop.
func (p *PendingFile) Cancel(ctx context.Context) {
	if p != nil {
		p.w.Cancel(ctx)
	}
}

// CommitArtifact commits a pending blob against expectations and records the artifact.
func (e *Env) CommitArtifact(ctx context.Context, pf *PendingFile, want blob.Expect) (meta.Artifact, error) {
	d, err := pf.w.Commit(ctx, want)
	if err != nil {
		var me *blob.MismatchError
		if errors.As(err, &me) {
			return meta.Artifact{}, BadField(me.What, "The uploaded file %q does not match: %s.", pf.name, me.Error())
		}
		return meta.Artifact{}, err
	}
	a, _, err := meta.PutArtifact(ctx, e.DB, meta.ArtifactOf(d))
	return a, err
}

// ArtifactFromUpload stores a complete upload as an artifact and deletes the upload.
func (e *Env) ArtifactFromUpload(ctx context.Context, id string) (meta.Artifact, error) {
	u, err := meta.UploadByPulpID(ctx, e.DB, id)
	if err != nil {
		return meta.Artifact{}, BadField("upload", "Invalid hyperlink - Object does not exist.")
	}
	d, err := e.StoreUpload(ctx, u, "upload", blob.Expect{Size: u.Size})
	if err != nil {
		return meta.Artifact{}, err
	}
	art, _, err := meta.PutArtifact(ctx, e.DB, meta.ArtifactOf(d))
	if err != nil {
		return art, err
	}
	DeleteUpload(ctx, e.DB, e.Store, u)
	return art, nil
}

// StoreUpload checks that the chunks of an upload cover it exactly and stores its bytes
// as a blob verified against want; problems are a 400 on field.
func (e *Env) StoreUpload(ctx context.Context, u meta.Upload, field string, want blob.Expect) (blob.Digests, error) {
	chunks, err := meta.Chunks(ctx, e.DB, u.ID)
	if err != nil {
		return blob.Digests{}, err
	}
	var next int64
	for _, c := range chunks {
		if c.Offset != next {
			return blob.Digests{}, BadField(field, "Upload %s has a gap: bytes %d-%d were never uploaded.", u.PulpID, next, c.Offset-1)
		}
		next = c.Offset + c.Size
	}
	if next != u.Size {
		return blob.Digests{}, BadField(field, "Upload %s is incomplete: %d of %d bytes received.", u.PulpID, next, u.Size)
	}
	bw, err := e.Store.NewWriter(ctx)
	if err != nil {
		return blob.Digests{}, err
	}
	defer bw.Cancel(ctx)
	for _, c := range chunks {
		pr, err := e.Store.OpenPart(ctx, u.PulpID, c.Part)
		if err != nil {
			return blob.Digests{}, fmt.Errorf("upload %s: chunk at byte %d: %w", u.PulpID, c.Offset, err)
		}
		_, err = io.Copy(bw, io.LimitReader(pr, c.Size))
		pr.Close()
		if err != nil {
			return blob.Digests{}, fmt.Errorf("upload %s: chunk at byte %d: %w", u.PulpID, c.Offset, err)
		}
	}
	d, err := bw.Commit(ctx, want)
	var me *blob.MismatchError
	if errors.As(err, &me) {
		return d, BadField(field, "The uploaded data does not match: %s.", me.Error())
	}
	return d, err
}

// DeleteUpload deletes an upload and the chunks it received. The row goes first: parts
// without a row are unreachable, a row without its parts would be a broken upload.
func DeleteUpload(ctx context.Context, db *meta.DB, store *blob.Store, u meta.Upload) error {
	if err := meta.DeleteUpload(ctx, db, u.ID); err != nil {
		return err
	}
	if err := store.DeleteParts(ctx, u.PulpID); err != nil && !errors.Is(err, blob.ErrNoStaging) {
		return err
	}
	return nil
}
