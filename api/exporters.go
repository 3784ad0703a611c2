package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
	"pith/content"
	"pith/meta"
)

// Exporters (/exporters/core/pulp/ and /exporters/core/filesystem/): both kinds share
// one table (meta.Exporter.Kind); an exporter of one kind is not found under the other.
// Create is synchronous, update and delete are the general tasks, as in Pulp. Their
// exports (exports.go) are sub-resources, made by tasks.

// The general tasks' kinds of exporters.
const (
	kindPulpExporter = "pulp_exporter"
	kindFSExporter   = "filesystem_exporter"
)

// Bounds of an exporter's fields.
const (
	maxExporterName  = 1000
	maxExporterPath  = 4096
	maxExporterRepos = 1000
)

// Filesystem export methods (Pulp's FS_EXPORT_CHOICES).
const (
	methodWrite    = "write"
	methodHardlink = "hardlink"
	methodSymlink  = "symlink"
)

// exporterKind is one kind of exporter as its operations need it.
type exporterKind struct {
	kind        string // meta.ExporterPulp
	crud        string // its general tasks' kind
	seg         string // "pulp": exporters/core/pulp/
	title       string // "Pulp"
	model       string // PRN model of the exporter
	exportModel string // PRN model of its exports
}

var (
	pulpExporters = exporterKind{kind: meta.ExporterPulp, crud: kindPulpExporter, seg: "pulp", title: "Pulp",
		model: "core.pulpexporter", exportModel: "core.pulpexport"}
	fsExporters = exporterKind{kind: meta.ExporterFilesystem, crud: kindFSExporter, seg: "filesystem", title: "Filesystem",
		model: "core.filesystemexporter", exportModel: "core.filesystemexport"}
)

// exporterKindOf is the kind the general tasks' kind names.
func exporterKindOf(crudKind string) (exporterKind, bool) {
	switch crudKind {
	case kindPulpExporter:
		return pulpExporters, true
	case kindFSExporter:
		return fsExporters, true
	}
	return exporterKind{}, false
}

// collection is the kind's collection below the API root.
func (k exporterKind) collection() string { return "exporters/core/" + k.seg + "/" }

func (k exporterKind) href(id string) string { return href.Root + k.collection() + id + "/" }

func (k exporterKind) exportHref(exporterID, id string) string {
	return k.href(exporterID) + "exports/" + id + "/"
}

type pulpExporterIn struct {
	Name         string   `json:"name" openapi:"required,minLength=1,desc=Unique name of the exporter."`
	Path         string   `json:"path" openapi:"required,minLength=1,desc=File system directory to store exported tar.gzs."`
	Repositories []string `json:"repositories" openapi:"required"`
	LastExport   *string  `json:"last_export" openapi:"format=uri,desc=Last attempted export for this PulpExporter"`
}

type fsExporterIn struct {
	Name   string `json:"name" openapi:"required,minLength=1,desc=Unique name of the exporter."`
	Path   string `json:"path" openapi:"required,minLength=1,desc=File system location to export to."`
	Method string `json:"method" openapi:"enum=write|hardlink|symlink,default=write,desc=Method of exporting"`
}

type exporterResponse struct {
	PulpHref        string `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string `json:"prn" openapi:"readOnly,desc=The Pulp Resource Name (PRN)."`
	PulpCreated     string `json:"pulp_created" openapi:"format=date-time,readOnly,desc=Timestamp of creation."`
	PulpLastUpdated string `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	Name            string `json:"name" openapi:"required,desc=Unique name of the exporter."`
	Path            string `json:"path" openapi:"required"`
}

type pulpExporterResponse struct {
	exporterResponse
	Repositories []string `json:"repositories" openapi:"required"`
	LastExport   *string  `json:"last_export" openapi:"format=uri,desc=Last attempted export for this PulpExporter"`
}

type fsExporterResponse struct {
	exporterResponse
	Method string `json:"method" openapi:"enum=write|hardlink|symlink,default=write,desc=Method of exporting"`
}

// exporterSettings are the fields of either kind's body.
type exporterSettings struct {
	pulpExporterIn
	Method string
}

// fsMethod is a filesystem exporter's method.
func fsMethod(x meta.Exporter) string {
	var a struct {
		Method string `json:"method"`
	}
	json.Unmarshal(x.Attrs, &a)
	if a.Method == "" {
		return methodWrite
	}
	return a.Method
}

// renderExporter shows an exporter of kind k; a pulp exporter's repositories and last
// export are read.
func (s *Server) renderExporter(ctx context.Context, k exporterKind, x meta.Exporter) (any, error) {
	base := exporterResponse{PulpHref: k.href(x.PulpID), Prn: href.PRN(k.model, x.PulpID), PulpCreated: rest.Time(x.Created),
		PulpLastUpdated: rest.Time(x.Updated), Name: x.Name, Path: x.Path}
	if k.kind == meta.ExporterFilesystem {
		return fsExporterResponse{exporterResponse: base, Method: fsMethod(x)}, nil
	}
	out := pulpExporterResponse{exporterResponse: base, Repositories: []string{}}
	for _, id := range x.Repositories {
		repo, err := meta.RepositoryByID(ctx, s.db, id)
		if err != nil {
			return nil, err
		}
		out.Repositories = append(out.Repositories, href.Repository(repo.Type, repo.PulpID))
	}
	slices.Sort(out.Repositories)
	if x.LastExport != nil {
		e, err := meta.ExportByID(ctx, s.db, *x.LastExport)
		if err != nil {
			return nil, err
		}
		h := k.exportHref(x.PulpID, e.PulpID)
		out.LastExport = &h
	}
	return out, nil
}

// applyExporter applies a create or update body to an exporter of kind k, validating it
// as Pulp does: a unique name, a path below an allowed export path, a pulp exporter's
// repositories of types that can be exported, a filesystem exporter's method. With
// partial, fields not sent keep their values.
func (c *crud) applyExporter(ctx context.Context, q meta.Querier, k exporterKind, cur meta.Exporter, raw map[string]json.RawMessage, partial bool) (meta.Exporter, error) {
	if !partial {
		need := []string{"name", "path"}
		if k.kind == meta.ExporterPulp {
			need = append(need, "repositories")
		}
		if err := rest.Require(raw, need...); err != nil {
			return cur, err
		}
	}
	var in exporterSettings
	if k.kind == meta.ExporterPulp {
		if err := rest.Decode(raw, &in.pulpExporterIn); err != nil {
			return cur, err
		}
	} else {
		var fs fsExporterIn
		if err := rest.Decode(raw, &fs); err != nil {
			return cur, err
		}
		in.Name, in.Path, in.Method = fs.Name, fs.Path, fs.Method
	}
	out := cur
	out.Kind = k.kind
	sent := func(name string) bool { return !partial || rest.Has(raw, name) }
	if sent("name") {
		if err := checkText("name", in.Name, maxExporterName); err != nil {
			return cur, err
		}
		out.Name = in.Name
	}
	if sent("path") {
		if err := checkText("path", in.Path, maxExporterPath); err != nil {
			return cur, err
		}
		if _, err := content.AllowedPath(c.core.ExportPaths, in.Path); err != nil {
			return cur, rest.BadField("path", "Path '%s' is not an allowed export path", in.Path)
		}
		out.Path = in.Path
	}
	if k.kind == meta.ExporterFilesystem {
		if sent("method") {
			m := in.Method
			switch m {
			case "":
				m = methodWrite
			case methodWrite, methodHardlink, methodSymlink:
			default:
				return cur, rest.BadField("method", "%q is not a valid choice.", in.Method)
			}
			var err error
			if out.Attrs, err = json.Marshal(map[string]string{"method": m}); err != nil {
				return cur, err
			}
		}
		return out, nil
	}
	if sent("repositories") {
		if len(in.Repositories) > maxExporterRepos {
			return cur, rest.BadField("repositories", "Ensure this field has no more than %d elements.", maxExporterRepos)
		}
		out.Repositories = nil
		for _, h := range in.Repositories {
			repo, err := c.exportableRepo(ctx, q, "repositories", h)
			if err != nil {
				return cur, err
			}
			if !slices.Contains(out.Repositories, repo.ID) {
				out.Repositories = append(out.Repositories, repo.ID)
			}
		}
	}
	if rest.Has(raw, "last_export") {
		out.LastExport = nil
		if in.LastExport != nil {
			id, ok := strings.CutPrefix(*in.LastExport, k.href(cur.PulpID)+"exports/")
			e, err := meta.Export{}, meta.ErrNotFound
			if ok && cur.ID != 0 {
				e, err = meta.ExportByPulpID(ctx, q, cur.ID, strings.TrimSuffix(id, "/"))
			}
			if errors.Is(err, meta.ErrNotFound) {
				return cur, rest.BadField("last_export", "Invalid hyperlink - Object does not exist.")
			} else if err != nil {
				return cur, err
			}
			out.LastExport = &e.ID
		}
	}
	return out, nil
}

// checkText checks a required text field: not blank, at most max bytes.
func checkText(field, v string, max int) error {
	switch {
	case v == "":
		return rest.BadField(field, "This field may not be blank.")
	case len(v) > max:
		return rest.BadField(field, "Ensure this field has no more than %d characters.", max)
	}
	return nil
}

// exportableRepo resolves a repository href to a repository whose type can be exported
// (a content.Porter); any other repository is a 400 on field naming it.
func (c *crud) exportableRepo(ctx context.Context, q meta.Querier, field, h string) (meta.Repository, error) {
	p, ok := href.Parse(h)
	if !ok || p.Rest != "" || !strings.HasPrefix(p.Collection, "repositories/") {
		return meta.Repository{}, rest.BadField(field, "Invalid hyperlink - No URL match for %q.", h)
	}
	repo, err := meta.RepositoryByPulpID(ctx, q, p.ID)
	if errors.Is(err, meta.ErrNotFound) || err == nil && "repositories/"+href.Segment(repo.Type)+"/" != p.Collection {
		return meta.Repository{}, rest.BadField(field, "Invalid hyperlink - Object does not exist.")
	}
	if err != nil {
		return meta.Repository{}, err
	}
	typ, ok := c.core.TypeOf(repo.Type)
	if _, porter := typ.(content.Porter); !ok || !porter {
		return meta.Repository{}, rest.BadField(field, "Repository %s (%s) is of type %s, which cannot be exported.", repo.Name, h, repo.Type)
	}
	return repo, nil
}

// exporterByID is an exporter of kind k; one of the other kind is not found.
func exporterByID(ctx context.Context, q meta.Querier, k exporterKind, id string) (meta.Exporter, error) {
	x, err := meta.ExporterByPulpID(ctx, q, id)
	if err == nil && x.Kind != k.kind {
		err = rest.ErrNotFound
	}
	return x, err
}

// writeExporter stores an exporter a body made; a taken name is a 400.
func writeExporter(ctx context.Context, q meta.Querier, x meta.Exporter) (meta.Exporter, error) {
	var err error
	if x.ID == 0 {
		x, err = meta.CreateExporter(ctx, q, x)
	} else {
		err = meta.UpdateExporter(ctx, q, x)
	}
	if errors.Is(err, meta.ErrConflict) {
		return x, rest.BadField("name", "This field must be unique.")
	}
	return x, err
}

// applyExporterUpdate is the general update task's body for an exporter.
func (c *crud) applyExporterUpdate(ctx context.Context, tx *meta.Tx, k exporterKind, a updateArgs) error {
	cur, err := exporterByID(ctx, tx, k, a.ID)
	if err != nil {
		return err
	}
	next, err := c.applyExporter(ctx, tx, k, cur, a.Body, a.Partial)
	if err != nil {
		return err
	}
	_, err = writeExporter(ctx, tx, next)
	return err
}

func exporterListSpec(k exporterKind, d meta.Dialect) rest.ListSpec {
	fs := []rest.Filter{{Name: "name", Col: "x.name", Lookups: rest.NameLookups}}
	fs = append(fs, rest.IdentityFilters("x.pulp_id")...)
	order := rest.Ordering("x", map[string]string{"pk": "id", "pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated",
		"name": "name", "path": "path", "pulp_type": "kind"})
	if k.kind == meta.ExporterFilesystem {
		order["method"] = d.JSONText("x.attrs", "method")
	}
	return rest.ListSpec{Filters: fs, Ordering: order}
}

func (s *Server) exporterCreate(k exporterKind) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var body any = &pulpExporterIn{}
		if k.kind == meta.ExporterFilesystem {
			body = &fsExporterIn{}
		}
		raw, err := rest.ReadBody(r, body, nil)
		if err != nil {
			return err
		}
		x, err := s.crud.applyExporter(r.Context(), s.db, k, meta.Exporter{Kind: k.kind}, raw, false)
		if err != nil {
			return err
		}
		// In one transaction: a repository that went away meanwhile leaves no exporter.
		err = s.db.Tx(r.Context(), func(tx *meta.Tx) error {
			x, err = writeExporter(r.Context(), tx, x)
			return err
		})
		if err != nil {
			return err
		}
		if err := s.created(r.Context(), strings.TrimSuffix(k.collection(), "/"), meta.Object{Type: k.model, ID: x.PulpID}); err != nil {
			return err
		}
		out, err := s.renderExporter(r.Context(), k, x)
		if err != nil {
			return err
		}
		return rest.WriteOne(w, r, http.StatusCreated, out)
	}
}

func (s *Server) exporterRead(k exporterKind) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		x, err := exporterByID(r.Context(), s.db, k, r.PathValue("id"))
		if err != nil {
			return err
		}
		out, err := s.renderExporter(r.Context(), k, x)
		if err != nil {
			return err
		}
		return rest.WriteOne(w, r, http.StatusOK, out)
	}
}

func (s *Server) exporterList(k exporterKind) rest.HandlerFunc {
	spec := exporterListSpec(k, s.db.Dialect())
	return lister(s, spec, s.scope(scoping{viewset: strings.TrimSuffix(k.collection(), "/"), id: "x.pulp_id"}, ofType("x.kind", k.kind)), meta.ListExporters,
		func(r *http.Request, xs []meta.Exporter) ([]any, error) {
			out := make([]any, len(xs))
			for i, x := range xs {
				var err error
				if out[i], err = s.renderExporter(r.Context(), k, x); err != nil {
					return nil, err
				}
			}
			return out, nil
		})
}

// exporterOps are the operations of one kind of exporter and of its exports.
func (s *Server) exporterOps(t *rest.Table, k exporterKind) []rest.Op {
	pat := href.Root + k.collection()
	vs := strings.TrimSuffix(k.collection(), "/")
	id := "exporters_core_" + k.seg
	h := "{" + k.seg + "_exporter_href}"
	tag := "Exporters: " + k.title
	r := func(code int, schema string) []openapi.Response { return []openapi.Response{rest.Resp(code, schema)} }
	var view, body any = pulpExporterResponse{}, &pulpExporterIn{}
	name := k.title + "Exporter"
	if k.kind == meta.ExporterFilesystem {
		view, body = fsExporterResponse{}, &fsExporterIn{}
	}
	v := t.Schema(name+"Response", view)
	async := t.Async()
	updated := []openapi.Response{rest.Resp(200, v), rest.Resp(202, async)}
	lock := selfLock(k.collection())
	list := exporterListSpec(k, s.db.Dialect())
	ops := []rest.Op{
		{ID: id + "_list", Viewset: vs, Method: "GET", Path: pat, Pattern: pat + "{$}", Tag: tag, List: &list,
			Responses: r(200, t.Paginated(v)), Handler: s.exporterList(k)},
		{ID: id + "_create", Viewset: vs, Method: "POST", Path: pat, Pattern: pat + "{$}", Tag: tag,
			Body: body, BodyName: name, Media: rest.JSONForms, Responses: r(201, v), Handler: s.exporterCreate(k)},
		{ID: id + "_read", Viewset: vs, Method: "GET", Path: h, Pattern: pat + "{id}/{$}", Tag: tag, Detail: true,
			Responses: r(200, v), Handler: s.exporterRead(k)},
		{ID: id + "_update", Viewset: vs, Method: "PUT", Path: h, Pattern: pat + "{id}/{$}", Tag: tag,
			Body: body, BodyName: name, Media: rest.JSONForms, Responses: updated, Handler: s.updateHandler(k.crud, body, false, lock)},
		{ID: id + "_partial_update", Viewset: vs, Method: "PATCH", Path: h, Pattern: pat + "{id}/{$}", Tag: tag,
			Body: body, BodyName: "Patched" + name, Media: rest.JSONForms, Responses: updated, Handler: s.updateHandler(k.crud, body, true, lock)},
		{ID: id + "_delete", Viewset: vs, Method: "DELETE", Path: h, Pattern: pat + "{id}/{$}", Tag: tag,
			Responses: r(202, async), Handler: s.deleteHandler(k.crud, lock)},
	}
	return append(ops, s.exportOps(t, k)...)
}
