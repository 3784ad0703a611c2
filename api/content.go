package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"pith/blob"
	"pith/content"
	"pith/content/rpm"
	"pith/meta"
	"pith/task"
)

// versionUnits filters units (alias c) by a version href: present in it, added by it,
// or removed by it.
func versionUnits(name, cond string) filter {
	return filter{name: name, kind: kCustom, lookups: []string{"exact"}, apply: func(l *meta.List, d meta.Dialect, v string) error {
		repo, n, err := versionFilterArgs(v, name)
		if err != nil {
			return err
		}
		args := []any{repo}
		for i := 0; i < strings.Count(cond, "?"); i++ {
			args = append(args, n)
		}
		l.And(`EXISTS (SELECT 1 FROM repository_content rc WHERE rc.content_id = c.id
			AND rc.repository_id = (SELECT rr.id FROM repositories rr WHERE rr.pulp_id = ?) AND `+cond+`)`, args...)
		return nil
	}}
}

func contentListSpec(typ string) listSpec {
	fs := []filter{
		{name: "orphaned_for", kind: kCustom, number: true, lookups: []string{"exact"}, apply: func(l *meta.List, d meta.Dialect, v string) error {
			mins, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return badField("orphaned_for", "A valid number is required.")
			}
			l.And(`NOT EXISTS (SELECT 1 FROM repository_content rc WHERE rc.content_id = c.id) AND c.created < ?`,
				time.Now().Add(-time.Duration(mins*float64(time.Minute))).UnixMicro())
			return nil
		}},
		labelSelect("c.labels"),
		versionUnits("repository_version", "rc.version_added <= ? AND (rc.version_removed IS NULL OR rc.version_removed > ?)"),
		versionUnits("repository_version_added", "rc.version_added = ?"),
		versionUnits("repository_version_removed", "rc.version_removed = ?"),
	}
	switch typ {
	case "":
		fs = append(fs, filter{name: "pulp_type", col: "c.type", lookups: []string{"exact", "in"}})
	case fileType:
		fs = append(fs,
			filter{name: "relative_path", col: "c.relative_path", lookups: []string{"exact"}},
			filter{name: "sha256", col: "c.digest", lookups: []string{"exact"}})
	case rpm.PackageType:
		fs = append(fs, rpmPackageFilters()...)
		return listSpec{filters: append(fs, identityFilters("c.pulp_id")...), ordering: rpmPackageOrdering()}
	case rpm.AdvisoryType:
		fs = append(fs, rpmAdvisoryFilters()...)
		return listSpec{filters: append(fs, identityFilters("c.pulp_id")...), ordering: rpmAdvisoryOrdering()}
	case rpm.DistributionTreeType, rpm.RepoMetadataFileType, rpm.ObsoleteType, rpm.GroupType, rpm.CategoryType, rpm.EnvironmentType, rpm.LangpacksType:
		return listSpec{filters: append(fs, identityFilters("c.pulp_id")...), ordering: map[string]string{"pk": "c.id"}}
	case rpm.ModulemdType, rpm.DefaultsType:
		fs = append(fs, rpmModuleFilters(typ)...)
		return listSpec{filters: append(fs, identityFilters("c.pulp_id")...), ordering: rpmModuleOrdering(typ)}
	}
	fs = append(fs, identityFilters("c.pulp_id")...)
	if typ == "" {
		return listSpec{filters: fs, ordering: map[string]string{"pk": "c.id"}}
	}
	return listSpec{filters: fs, ordering: ordering("c", map[string]string{
		"pk": "id", "pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated", "relative_path": "relative_path",
		"digest": "digest", "pulp_type": "type", "timestamp_of_interest": "timestamp_of_interest",
	})}
}

func renderFileContent(c meta.Content, a *meta.Artifact) fileContentResponse {
	out := fileContentResponse{
		PulpHref: contentHref(c.Type, c.PulpID), Prn: prn("file.filecontent", c.PulpID), PulpCreated: ts(c.Created), PulpLastUpdated: ts(c.Updated),
		PulpLabels: c.Labels, RelativePath: c.RelativePath, SHA256: &c.Digest,
	}
	if a != nil {
		h := artifactHref(a.PulpID)
		out.Artifact = &h
		out.MD5, out.SHA1, out.SHA224, out.SHA384, out.SHA512 = a.MD5, a.SHA1, a.SHA224, a.SHA384, a.SHA512
	}
	return out
}

func (s *Server) contentList(typ string) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		q, err := parseList(r, s.db.Dialect(), contentListSpec(typ))
		if err != nil {
			return err
		}
		if typ != "" {
			q.list.And("c.type = ?", typ)
		}
		cs, total, err := meta.ListContent(r.Context(), s.db, q.list)
		if err != nil {
			return err
		}
		items := make([]any, len(cs))
		if typ == "" {
			for i, c := range cs {
				items[i] = contentResponse{PulpHref: contentHref(c.Type, c.PulpID), Prn: prn(c.Type+"content", c.PulpID),
					PulpCreated: ts(c.Created), PulpLastUpdated: ts(c.Updated), PulpLabels: c.Labels}
			}
			return writePage(w, r, q, total, items)
		}
		if typ != fileType {
			items, err := s.renderUnits(r.Context(), typ, cs)
			if err != nil {
				return err
			}
			return writePage(w, r, q, total, items)
		}
		ids := make([]int64, len(cs))
		for i, c := range cs {
			ids[i] = c.ID
		}
		arts, err := meta.ArtifactsOf(r.Context(), s.db, ids)
		if err != nil {
			return err
		}
		for i, c := range cs {
			var ap *meta.Artifact
			if a, ok := arts[c.ID]; ok {
				ap = &a
			}
			items[i] = renderFileContent(c, ap)
		}
		return writePage(w, r, q, total, items)
	}
}

func (s *Server) oneFileContent(ctx context.Context, id string) (fileContentResponse, meta.Content, error) {
	c, err := meta.ContentByPulpID(ctx, s.db, id)
	if err != nil {
		return fileContentResponse{}, c, err
	}
	if c.Type != fileType {
		return fileContentResponse{}, c, errNotFound
	}
	arts, err := meta.ArtifactsOf(ctx, s.db, []int64{c.ID})
	if err != nil {
		return fileContentResponse{}, c, err
	}
	var ap *meta.Artifact
	if a, ok := arts[c.ID]; ok {
		ap = &a
	}
	return renderFileContent(c, ap), c, nil
}

func (s *Server) fileContentRead(w http.ResponseWriter, r *http.Request) error {
	out, _, err := s.oneFileContent(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusOK, out)
}

// FileContentArgs are the arguments of the task that creates a file unit.
type FileContentArgs struct {
	Artifact     int64       `json:"artifact"`
	RelativePath string      `json:"relative_path"`
	Labels       meta.Labels `json:"labels"`
	Repository   string      `json:"repository,omitempty"`
	FileURL      string      `json:"file_url,omitempty"`
}

// contentBody is a content type's create body; it embeds contentIn.
type contentBody interface{ common() *contentIn }

// contentSource is where a content create body's file is: a stored artifact, or a URL
// for the task to download.
type contentSource struct {
	Artifact   int64
	FileURL    string
	Labels     meta.Labels
	Repository *meta.Repository
}

// readContent reads a content create body into body, storing an uploaded file; check
// validates the type's own fields before anything is stored. repos is the collection
// of the repositories it may add to. Nothing is stored when the body is bad.
func (s *Server) readContent(r *http.Request, body contentBody, repos string, check func(raw map[string]json.RawMessage) error) (contentSource, error) {
	in := body.common()
	var pf *pendingFile
	raw, err := readBody(r, body, s.receiveFile(r.Context(), "file", &pf))
	if err == nil {
		err = decode(raw, body)
	}
	fail := func(err error) (contentSource, error) {
		pf.cancel(r.Context())
		return contentSource{}, err
	}
	if err == nil {
		err = check(raw)
	}
	if err != nil {
		return fail(err)
	}
	labels, err := setLabels(in.PulpLabels)
	if err != nil {
		return fail(err)
	}
	src := contentSource{Labels: labels}
	if in.Repository != nil {
		if src.Repository, err = repositoryOf(r.Context(), s.db, "repository", *in.Repository, repos); err != nil {
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
		return fail(fieldError{"non_field_errors": {"Exactly one of 'file', 'artifact', 'upload' or 'file_url' must be given."}})
	}
	switch {
	case pf != nil:
		art, err := s.commitArtifact(r.Context(), pf, blob.Expect{Size: -1})
		if err != nil {
			return contentSource{}, err
		}
		src.Artifact = art.ID
	case in.Artifact != nil:
		id, err := hrefOf("artifact", *in.Artifact, "artifacts/")
		if err != nil {
			return fail(err)
		}
		art, err := meta.ArtifactByPulpID(r.Context(), s.db, id)
		if err != nil {
			return fail(badField("artifact", "Invalid hyperlink - Object does not exist."))
		}
		src.Artifact = art.ID
	case in.Upload != nil:
		id, err := hrefOf("upload", *in.Upload, "uploads/")
		if err != nil {
			return fail(err)
		}
		art, err := s.artifactFromUpload(r.Context(), id)
		if err != nil {
			return fail(err)
		}
		src.Artifact = art.ID
	case in.FileURL != nil:
		src.FileURL = *in.FileURL
	}
	return src, nil
}

// readFileContent reads a file-content create body and returns the task arguments.
func (s *Server) readFileContent(r *http.Request) (FileContentArgs, *meta.Repository, error) {
	var in fileContentIn
	src, err := s.readContent(r, &in, "repositories/file/file/", func(raw map[string]json.RawMessage) error {
		if err := requireFields(raw, "relative_path"); err != nil {
			return err
		}
		if _, err := content.CleanRelativePath(in.RelativePath); err != nil {
			return badField("relative_path", "%v", err)
		}
		return nil
	})
	if err != nil {
		return FileContentArgs{}, nil, err
	}
	a := FileContentArgs{RelativePath: in.RelativePath, Labels: src.Labels, Artifact: src.Artifact, FileURL: src.FileURL}
	if src.Repository != nil {
		a.Repository = src.Repository.PulpID
	}
	return a, src.Repository, nil
}

// artifactFromUpload stores a complete upload as an artifact and deletes the upload.
func (s *Server) artifactFromUpload(ctx context.Context, id string) (meta.Artifact, error) {
	u, err := meta.UploadByPulpID(ctx, s.db, id)
	if err != nil {
		return meta.Artifact{}, badField("upload", "Invalid hyperlink - Object does not exist.")
	}
	d, err := s.storeUpload(ctx, u, "upload", blob.Expect{Size: u.Size})
	if err != nil {
		return meta.Artifact{}, err
	}
	art, _, err := meta.PutArtifact(ctx, s.db, content.Artifact(d))
	if err != nil {
		return art, err
	}
	s.deleteUpload(ctx, u)
	return art, nil
}

func (s *Server) fileContentCreate(w http.ResponseWriter, r *http.Request) error {
	a, repo, err := s.readFileContent(r)
	if err != nil {
		return err
	}
	return s.dispatchCreate(w, r, "file_content", "/pulp/api/v3/content/file/files/", a, repo)
}

// dispatchCreate queues the general create task of a content unit, locking the
// repository it is added to.
func (s *Server) dispatchCreate(w http.ResponseWriter, r *http.Request, kind, collection string, args any, repo *meta.Repository) error {
	spec := task.Spec{Name: "pulpcore.app.tasks.base.general_create", Args: createArgs{Kind: kind, Body: rawOf(args)}, Shared: []string{collection}}
	if repo != nil {
		spec.Exclusive = []string{repoHref(repo.Type, repo.PulpID)}
	}
	t, err := s.dispatch(r, spec)
	if err != nil {
		return err
	}
	return accepted(w, t)
}

// fileContentUpload creates a unit synchronously (content_file_files_upload, 201).
func (s *Server) fileContentUpload(w http.ResponseWriter, r *http.Request) error {
	a, repo, err := s.readFileContent(r)
	if err != nil {
		return err
	}
	if repo != nil || a.FileURL != "" {
		return fieldError{"non_field_errors": {"The synchronous upload takes no 'repository' or 'file_url'; use the create operation."}}
	}
	c, err := s.createFileContent(r.Context(), a)
	if err != nil {
		return err
	}
	out, _, err := s.oneFileContent(r.Context(), c.PulpID)
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusCreated, out)
}

// createFileContent creates (or finds) the file unit for an artifact and path.
func (s *Server) createFileContent(ctx context.Context, a FileContentArgs) (meta.Content, error) {
	art, err := meta.ArtifactByID(ctx, s.db, a.Artifact)
	if err != nil {
		return meta.Content{}, err
	}
	attrs, _ := json.Marshal(map[string]string{"relative_path": a.RelativePath, "digest": art.SHA256})
	aid := art.ID
	c, _, err := meta.PutContent(ctx, s.db, meta.Content{
		Type: fileType, NaturalKey: art.SHA256 + ":" + a.RelativePath, RepoKey: a.RelativePath,
		RelativePath: a.RelativePath, Digest: art.SHA256, Attrs: attrs, Labels: a.Labels,
	}, []meta.ContentFile{{RelativePath: a.RelativePath, ArtifactID: &aid}})
	return c, err
}
