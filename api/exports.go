package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
	"pith/blob"
	"pith/content"
	"pith/meta"
	"pith/task"
)

// Exports ({exporter_href}exports/): list, read and delete (the row only: the files
// stay, as in Pulp) for both kinds; create checks the body as Pulp does and dispatches
// the export task, which makes the export row.

// Bounds of an export request.
const (
	maxExportMeta = 64 << 10 // meta, as JSON
	maxChunkSize  = 1 << 40  // Pulp's 1 TB
)

type exportResponse struct {
	PulpHref          string   `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn               string   `json:"prn" openapi:"readOnly,desc=The Pulp Resource Name (PRN)."`
	PulpCreated       string   `json:"pulp_created" openapi:"format=date-time,readOnly,desc=Timestamp of creation."`
	PulpLastUpdated   string   `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	Task              *string  `json:"task" openapi:"format=uri,desc=A URI of the task that ran the Export."`
	ExportedResources []string `json:"exported_resources" openapi:"readOnly,desc=Resources that were exported."`
	Params            any      `json:"params" openapi:"type=object,readOnly,desc=Any additional parameters that were used to create the export."`
}

type pulpExportResponse struct {
	exportResponse
	OutputFileInfo any `json:"output_file_info" openapi:"type=object,readOnly,desc=Dictionary of filename: sha256hash entries for export-output-file(s)"`
	TocInfo        any `json:"toc_info" openapi:"type=object,readOnly,desc=Filename, sha256-checksum and meta of table-of-contents for this export"`
}

// exportAttrs are what an export row's attrs hold, by Pulp's names.
type exportAttrs struct {
	Params            json.RawMessage `json:"params,omitempty"`
	ExportedResources []string        `json:"exported_resources,omitempty"`
	OutputFileInfo    json.RawMessage `json:"output_file_info,omitempty"`
	TocInfo           json.RawMessage `json:"toc_info,omitempty"`
}

func renderExport(k exporterKind, x meta.Exporter, e meta.Export) any {
	var a exportAttrs
	json.Unmarshal(e.Attrs, &a)
	out := exportResponse{PulpHref: k.exportHref(x.PulpID, e.PulpID), Prn: href.PRN(k.exportModel, e.PulpID), PulpCreated: rest.Time(e.Created),
		PulpLastUpdated: rest.Time(e.Updated), ExportedResources: a.ExportedResources, Params: a.Params}
	if out.ExportedResources == nil {
		out.ExportedResources = []string{}
	}
	if a.Params == nil {
		out.Params = map[string]any{}
	}
	if e.Task != nil {
		h := href.Task(*e.Task)
		out.Task = &h
	}
	if k.kind == meta.ExporterFilesystem {
		return out
	}
	return pulpExportResponse{exportResponse: out, OutputFileInfo: a.OutputFileInfo, TocInfo: a.TocInfo}
}

// exportByPath is the export the request's {eid} names, of the exporter of kind k its
// {id} names.
func (s *Server) exportByPath(r *http.Request, k exporterKind) (meta.Exporter, meta.Export, error) {
	x, err := exporterByID(r.Context(), s.db, k, r.PathValue("id"))
	if err != nil {
		return x, meta.Export{}, err
	}
	e, err := meta.ExportByPulpID(r.Context(), s.db, x.ID, r.PathValue("eid"))
	return x, e, err
}

func (s *Server) exportList(k exporterKind) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		x, err := exporterByID(r.Context(), s.db, k, r.PathValue("id"))
		if err != nil {
			return err
		}
		mine := func(_ *http.Request, l *meta.List) error {
			l.And("e.exporter_id = ?", x.ID)
			return nil
		}
		return lister(s, rest.ListSpec{}, mine, meta.ListExports, each(func(e meta.Export) any { return renderExport(k, x, e) }))(w, r)
	}
}

func (s *Server) exportRead(k exporterKind) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		x, e, err := s.exportByPath(r, k)
		if err != nil {
			return err
		}
		return rest.WriteOne(w, r, http.StatusOK, renderExport(k, x, e))
	}
}

func (s *Server) exportDelete(k exporterKind) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		_, e, err := s.exportByPath(r, k)
		if err != nil {
			return err
		}
		if err := s.db.Tx(r.Context(), func(tx *meta.Tx) error { return meta.DeleteExport(r.Context(), tx, e.ID) }); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// exportOps are the operations of the exports of one kind of exporter.
func (s *Server) exportOps(t *rest.Table, k exporterKind) []rest.Op {
	pat := href.Root + k.collection() + "{id}/exports/"
	vs := strings.TrimSuffix(k.collection(), "/") + "/exports"
	id := "exporters_core_" + k.seg + "_exports"
	h := "{" + k.seg + "_" + k.seg + "_export_href}"
	tag := "Exporters: " + k.title + " Exports"
	r := func(code int, schema string) []openapi.Response { return []openapi.Response{rest.Resp(code, schema)} }
	name := k.title + "Export"
	var view, body any = pulpExportResponse{}, &pulpExportIn{}
	create := s.pulpExportCreate
	if k.kind == meta.ExporterFilesystem {
		view, body, create = exportResponse{}, &fsExportIn{}, s.fsExportCreate
	}
	v := t.Schema(name+"Response", view)
	list := rest.ListSpec{}
	return []rest.Op{
		{ID: id + "_list", Viewset: vs, Method: "GET", Path: "{" + k.seg + "_exporter_href}exports/", Pattern: pat + "{$}", Tag: tag, List: &list,
			Responses: r(200, t.Paginated(v)), Handler: s.exportList(k)},
		{ID: id + "_create", Viewset: vs, Method: "POST", Path: "{" + k.seg + "_exporter_href}exports/", Pattern: pat + "{$}", Tag: tag,
			Body: body, BodyName: name, Media: rest.JSONForms, Responses: r(202, t.Async()), Handler: create},
		{ID: id + "_read", Viewset: vs, Method: "GET", Path: h, Pattern: pat + "{eid}/{$}", Tag: tag, Detail: true,
			Responses: r(200, v), Handler: s.exportRead(k)},
		{ID: id + "_delete", Viewset: vs, Method: "DELETE", Path: h, Pattern: pat + "{eid}/{$}", Tag: tag,
			Responses: r(204, ""), Handler: s.exportDelete(k)},
	}
}

type pulpExportIn struct {
	Task          *string        `json:"task" openapi:"format=uri,desc=A URI of the task that ran the Export."`
	Full          bool           `json:"full" openapi:"writeOnly,default=true,desc=Do a Full (true) or Incremental (false) export."`
	DryRun        bool           `json:"dry_run" openapi:"writeOnly,default=false,desc=Generate report on what would be exported and disk-space required."`
	Versions      []string       `json:"versions" openapi:"writeOnly,desc=List of explicit repo-version hrefs to export (replaces current_version)."`
	ChunkSize     string         `json:"chunk_size" openapi:"writeOnly,optional,minLength=1,desc=Chunk export-tarfile into pieces of chunk_size bytes."`
	StartVersions []string       `json:"start_versions" openapi:"writeOnly,desc=List of explicit last-exported-repo-version hrefs (replaces last_export)."`
	Meta          map[string]any `json:"meta" openapi:"writeOnly,desc=Dictionary of meta information about the export. Stored in the TOC JSON."`
}

type fsExportIn struct {
	Task                   *string `json:"task" openapi:"format=uri,desc=A URI of the task that ran the Export."`
	Publication            *string `json:"publication" openapi:"format=uri,writeOnly,desc=A URI of the publication to be exported."`
	RepositoryVersion      *string `json:"repository_version" openapi:"format=uri,writeOnly,desc=A URI of the repository version export."`
	StartRepositoryVersion *string `json:"start_repository_version" openapi:"format=uri,writeOnly,desc=The URI of the last-exported-repo-version."`
}

// checkExportPath checks, when an export is asked for, that the exporter's path is still
// below an allowed export path and, when it exists, a directory.
func (c *crud) checkExportPath(p string) error {
	real, err := content.AllowedPath(c.core.ExportPaths, p)
	if err != nil {
		return rest.BadField("path", "Path '%s' is not an allowed export path", p)
	}
	if fi, err := os.Stat(real); err == nil && !fi.IsDir() {
		return rest.BadField("path", "Path '%s' must be a directory path", p)
	}
	return nil
}

// exportedVersion resolves a repository version href of a body's field (of any type).
func exportedVersion(ctx context.Context, q meta.Querier, field, h string) (meta.Repository, meta.Version, error) {
	p, ok := href.Parse(h)
	n, isVersion := p.VersionNumber()
	if !ok || !strings.HasPrefix(p.Collection, "repositories/") || !isVersion {
		return meta.Repository{}, meta.Version{}, rest.BadField(field, "Invalid hyperlink - No URL match for %q.", h)
	}
	missing := rest.BadField(field, "Invalid hyperlink - Object does not exist.")
	repo, err := meta.RepositoryByPulpID(ctx, q, p.ID)
	if errors.Is(err, meta.ErrNotFound) || err == nil && "repositories/"+href.Segment(repo.Type)+"/" != p.Collection {
		return repo, meta.Version{}, missing
	} else if err != nil {
		return repo, meta.Version{}, err
	}
	v, err := meta.VersionByNumber(ctx, q, repo.ID, n)
	if errors.Is(err, meta.ErrNotFound) {
		return repo, v, missing
	}
	return repo, v, err
}

// versionArg is a version as the export tasks' arguments name it.
func versionArg(repoPulpID string, n int64) string { return fmt.Sprintf("%s/%d", repoPulpID, n) }

// exportVersions resolves a pulp export's versions or start_versions: one version of
// each of the exporter's repositories (Pulp's validate_versions, whose count message
// gives the two numbers the other way round).
func exportVersions(ctx context.Context, q meta.Querier, field string, hrefs []string, x meta.Exporter) ([]string, error) {
	if len(hrefs) != len(x.Repositories) {
		return nil, rest.BadField(field, "Number of versions (%d) does not match the number of Repositories (%d) for the owning  Exporter!", len(hrefs), len(x.Repositories))
	}
	var out []string
	var repos []int64
	for _, h := range hrefs {
		repo, v, err := exportedVersion(ctx, q, field, h)
		if err != nil {
			return nil, err
		}
		repos = append(repos, repo.ID)
		out = append(out, versionArg(repo.PulpID, v.Number))
	}
	for _, id := range x.Repositories {
		if !slices.Contains(repos, id) {
			return nil, rest.BadField(field, "Requested RepositoryVersions must belong to the Repositories named by the Exporter!")
		}
	}
	return out, nil
}

// chunkPattern is Pulp's unit pattern of a chunk size (parse_human_readable_file_size).
var chunkPattern = regexp.MustCompile(`([KMGT]?B)`)

var chunkUnits = map[string]float64{"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}

// parseChunkSize reads a chunk size as Pulp does: a number and a unit of B, KB, MB, GB
// or TB (powers of 1024, any case), more than 0 and at most 1 TB; a bare number has no
// unit and is refused, as in Pulp.
func parseChunkSize(s string) (int64, error) {
	invalid := rest.BadField("chunk_size", "chunk_size '%s' is not valid (valid units are B/KB/MB/GB/TB)", s)
	u := strings.ToUpper(s)
	if !strings.HasPrefix(u, " ") {
		u = chunkPattern.ReplaceAllString(u, " $1")
	}
	parts := strings.Fields(u)
	if len(parts) != 2 {
		return 0, invalid
	}
	unit, ok := chunkUnits[parts[1]]
	f, err := strconv.ParseFloat(parts[0], 64)
	if !ok || err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, invalid
	}
	v := f * unit
	if v > maxChunkSize {
		return 0, rest.BadField("chunk_size", "Chunk size in bytes %.0f is greater than max-chunk-size %d!", math.Trunc(v), int64(maxChunkSize))
	}
	size := int64(v)
	if size <= 0 {
		return 0, rest.BadField("chunk_size", "Chunk size %d is not greater than zero!", size)
	}
	return size, nil
}

// pulpExportCreate checks a pulp export's body as Pulp does and dispatches the export
// task, exclusive on the exporter, shared on its repositories.
func (s *Server) pulpExportCreate(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	x, err := exporterByID(ctx, s.db, pulpExporters, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := s.crud.checkExportPath(x.Path); err != nil {
		return err
	}
	raw, err := rest.ReadBody(r, &pulpExportIn{}, nil)
	if err != nil {
		return err
	}
	in := pulpExportIn{Full: true}
	if err := rest.Decode(raw, &in); err != nil {
		return err
	}
	args := pulpExportArgs{Exporter: x.PulpID, Full: in.Full}
	if rest.Has(raw, "versions") {
		if args.Versions, err = exportVersions(ctx, s.db, "versions", in.Versions, x); err != nil {
			return err
		}
	}
	if rest.Has(raw, "chunk_size") {
		if args.ChunkSize, err = parseChunkSize(in.ChunkSize); err != nil {
			return err
		}
	}
	if rest.Has(raw, "start_versions") {
		if args.StartVersions, err = exportVersions(ctx, s.db, "start_versions", in.StartVersions, x); err != nil {
			return err
		}
	}
	if in.Meta != nil {
		if args.Meta, err = json.Marshal(in.Meta); err != nil {
			return err
		}
		if len(args.Meta) > maxExportMeta {
			return rest.BadField("meta", "Ensure this field has no more than %d bytes of JSON.", maxExportMeta)
		}
	}
	switch {
	case len(args.StartVersions) > 0 && in.Full:
		return rest.NonField("start_versions is only valid for incremental exports (full=False)")
	case !in.Full && len(args.StartVersions) == 0 && x.LastExport == nil:
		return rest.NonField("Incremental export can only be requested when there is a previous export or start_versions= has been specified.")
	}
	latest := !rest.Has(raw, "versions")
	shared := make([]string, 0, len(x.Repositories))
	for _, id := range x.Repositories {
		repo, err := meta.RepositoryByID(ctx, s.db, id)
		if err != nil {
			return err
		}
		shared = append(shared, href.Repository(repo.Type, repo.PulpID))
		if latest {
			args.Versions = append(args.Versions, versionArg(repo.PulpID, repo.LatestVersion))
		}
	}
	if args.Params, err = json.Marshal(raw); err != nil {
		return err
	}
	return s.env.Dispatch(w, r, task.Spec{Name: pulpExportTask, Args: args, Exclusive: []string{pulpExporters.href(x.PulpID)}, Shared: shared})
}

// fsExportCreate checks a filesystem export's body as Pulp does and dispatches the task
// that writes a publication's or a version's files, exclusive on the exporter.
func (s *Server) fsExportCreate(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	x, err := exporterByID(ctx, s.db, fsExporters, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := s.crud.checkExportPath(x.Path); err != nil {
		return err
	}
	var in fsExportIn
	if _, err := rest.DecodeBody(r, &in); err != nil {
		return err
	}
	if (in.Publication == nil) == (in.RepositoryVersion == nil) {
		return rest.NonField("publication or repository_version must either be supplied but not both.")
	}
	args := fsExportArgs{Exporter: x.PulpID}
	params := map[string]string{}
	var name, repoHref string
	if in.Publication != nil {
		p, ok := href.Parse(*in.Publication)
		if !ok || p.Rest != "" || !strings.HasPrefix(p.Collection, "publications/") {
			return rest.BadField("publication", "Invalid hyperlink - No URL match for %q.", *in.Publication)
		}
		pub, err := meta.PublicationByPulpID(ctx, s.db, p.ID)
		if errors.Is(err, meta.ErrNotFound) || err == nil && "publications/"+href.Segment(pub.Type)+"/" != p.Collection {
			return rest.BadField("publication", "Invalid hyperlink - Object does not exist.")
		} else if err != nil {
			return err
		}
		name, args.Publication, params["publication"] = fsPublicationTask, pub.PulpID, pub.PulpID
		repoHref = href.Repository(pub.RepoType, pub.RepoPulpID)
	} else {
		repo, v, err := exportedVersion(ctx, s.db, "repository_version", *in.RepositoryVersion)
		if err != nil {
			return err
		}
		name, args.Version, params["repository_version"] = fsVersionTask, versionArg(repo.PulpID, v.Number), v.PulpID
		repoHref = href.Repository(repo.Type, repo.PulpID)
	}
	if in.StartRepositoryVersion != nil {
		repo, v, err := exportedVersion(ctx, s.db, "start_repository_version", *in.StartRepositoryVersion)
		if err != nil {
			return err
		}
		args.StartVersion, params["start_repository_version"] = versionArg(repo.PulpID, v.Number), v.PulpID
	}
	if _, local := s.core.Store.Driver().(blob.Pather); fsMethod(x) != methodWrite && !local {
		return rest.NonField("Only write is supported for non-filesystem storage.")
	}
	if args.Params, err = json.Marshal(params); err != nil {
		return err
	}
	return s.env.Dispatch(w, r, task.Spec{Name: name, Args: args, Exclusive: []string{fsExporters.href(x.PulpID)}, Shared: []string{repoHref}})
}
