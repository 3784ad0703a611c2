package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
	"pith/content"
	"pith/meta"
	"pith/task"
)

// Pulp importers (/importers/core/pulp/): an importer maps the repositories of exports
// to local ones; an import (its imports/) runs the import task (pulpimport.go) on an
// export the server can read below --allowed-import-paths; import-check says whether
// an import's paths would do. Importers have no access policy in Pulp: they are for
// administrators.

// importerModel is the PRN model of a pulp importer, importModel of an import.
const (
	importerModel = "core.pulpimporter"
	importModel   = "core.pulpimport"
)

// Bounds of an importer.
const (
	maxImporterName = 255
	maxRepoMapping  = 10000
)

type importerIn struct {
	Name        string            `json:"name" openapi:"required,minLength=1,desc=Unique name of the Importer."`
	RepoMapping map[string]string `json:"repo_mapping" openapi:"desc=Mapping of repo names in an export file to the repo names in Pulp. For example, if the export has a repo named 'foo' and the repo to import content into was 'bar', the mapping would be \"{'foo': 'bar'}\"."`
}

type importerResponse struct {
	PulpHref        string            `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string            `json:"prn" openapi:"readOnly,desc=The Pulp Resource Name (PRN)."`
	PulpCreated     string            `json:"pulp_created" openapi:"format=date-time,readOnly,desc=Timestamp of creation."`
	PulpLastUpdated string            `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	Name            string            `json:"name" openapi:"required,desc=Unique name of the Importer."`
	RepoMapping     map[string]string `json:"repo_mapping" openapi:"desc=Mapping of repo names in an export file to the repo names in Pulp. For example, if the export has a repo named 'foo' and the repo to import content into was 'bar', the mapping would be \"{'foo': 'bar'}\"."`
}

type importIn struct {
	Path               string `json:"path" openapi:"optional,minLength=1,desc=Path to export that will be imported."`
	TOC                string `json:"toc" openapi:"optional,minLength=1,desc=Path to a table-of-contents file describing chunks to be validated, reassembled, and imported."`
	CreateRepositories bool   `json:"create_repositories" openapi:"default=false,desc=If True, missing repositories will be automatically created during the import."`
}

type importResponse struct {
	PulpHref        string          `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string          `json:"prn" openapi:"readOnly,desc=The Pulp Resource Name (PRN)."`
	PulpCreated     string          `json:"pulp_created" openapi:"format=date-time,readOnly,desc=Timestamp of creation."`
	PulpLastUpdated string          `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	Task            *string         `json:"task" openapi:"required,format=uri,desc=A URI of the Task that ran the Import."`
	Params          json.RawMessage `json:"params" openapi:"required,type=object,desc=Any parameters that were used to create the import."`
}

type importCheckIn struct {
	Path        string `json:"path" openapi:"optional,minLength=1,desc=Path to export-tar-gz that will be imported."`
	TOC         string `json:"toc" openapi:"optional,minLength=1,desc=Path to a table-of-contents file describing chunks to be validated, reassembled, and imported."`
	RepoMapping string `json:"repo_mapping" openapi:"optional,minLength=1,desc=Mapping of repo names in an export file to the repo names in Pulp. For example, if the export has a repo named 'foo' and the repo to import content into was 'bar', the mapping would be \"{'foo': 'bar'}\"."`
}

// evaluation is one answer of import-check (Pulp's EvaluationResponse).
type evaluation struct {
	Context  string   `json:"context" openapi:"required,desc=Parameter value being evaluated."`
	IsValid  bool     `json:"is_valid" openapi:"required,desc=True if evaluation passed, false otherwise."`
	Messages []string `json:"messages" openapi:"required,desc=Messages describing results of all evaluations done. May be an empty list."`
}

type importCheckResponse struct {
	TOC         *evaluation `json:"toc,omitempty" openapi:"desc=Evaluation of proposed 'toc' file for PulpImport"`
	Path        *evaluation `json:"path,omitempty" openapi:"desc=Evaluation of proposed 'path' file for PulpImport"`
	RepoMapping *evaluation `json:"repo_mapping,omitempty" openapi:"desc=Evaluation of proposed 'repo_mapping' file for PulpImport"`
}

func importerHref(id string) string { return href.Root + "importers/core/pulp/" + id + "/" }

func importHref(importer, id string) string { return importerHref(importer) + "imports/" + id + "/" }

// renderImporter shows importers, their mapping by local repository name.
func renderImporter(_ *http.Request, xs []meta.Importer) ([]any, error) {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = importerResponse{PulpHref: importerHref(x.PulpID), Prn: href.PRN(importerModel, x.PulpID), PulpCreated: rest.Time(x.Created),
			PulpLastUpdated: rest.Time(x.Updated), Name: x.Name, RepoMapping: x.MappedNames}
	}
	return out, nil
}

func renderImport(importer string, m meta.Import) importResponse {
	out := importResponse{PulpHref: importHref(importer, m.PulpID), Prn: href.PRN(importModel, m.PulpID), PulpCreated: rest.Time(m.Created),
		PulpLastUpdated: rest.Time(m.Updated), Params: m.Attrs}
	var a struct {
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(m.Attrs, &a) == nil && len(a.Params) > 0 {
		out.Params = a.Params
	}
	if m.Task != nil {
		t := href.Task(*m.Task)
		out.Task = &t
	}
	return out
}

func importerListSpec() rest.ListSpec {
	fs := []rest.Filter{{Name: "name", Col: "i.name", Lookups: rest.NameLookups}}
	fs = append(fs, rest.IdentityFilters("i.pulp_id")...)
	return rest.ListSpec{Filters: fs, Ordering: rest.Ordering("i", map[string]string{
		"pk": "id", "pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated", "name": "name", "pulp_type": "id",
	})}
}

func (s *Server) importerRead(w http.ResponseWriter, r *http.Request) error {
	x, err := meta.ImporterByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	out, err := renderImporter(r, []meta.Importer{x})
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, out[0])
}

// importerWrite creates an importer (create) or changes one (partial: what the body
// sends). Every repository the mapping names must exist, as in Pulp.
func (s *Server) importerWrite(create, partial bool) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var cur meta.Importer
		if !create {
			var err error
			if cur, err = meta.ImporterByPulpID(r.Context(), s.db, r.PathValue("id")); err != nil {
				return err
			}
		}
		raw, err := rest.ReadBody(r, &importerIn{}, nil)
		if err != nil {
			return err
		}
		if !partial {
			if err := rest.Require(raw, "name"); err != nil {
				return err
			}
			cur.Mapping = nil
		}
		var in importerIn
		if err := rest.Decode(raw, &in); err != nil {
			return err
		}
		if _, ok := raw["name"]; ok {
			switch {
			case in.Name == "":
				return rest.BadField("name", "This field may not be blank.")
			case len(in.Name) > maxImporterName:
				return rest.BadField("name", "Ensure this field has no more than %d characters.", maxImporterName)
			}
			cur.Name = in.Name
		}
		if _, ok := raw["repo_mapping"]; ok {
			if cur.Mapping, err = s.repoMapping(r, in.RepoMapping); err != nil {
				return err
			}
		}
		status := http.StatusOK
		err = s.db.Tx(r.Context(), func(tx *meta.Tx) error {
			if create {
				status = http.StatusCreated
				cur, err = meta.CreateImporter(r.Context(), tx, cur)
				return err
			}
			if err := meta.UpdateImporter(r.Context(), tx, cur); err != nil {
				return err
			}
			cur, err = meta.ImporterByPulpID(r.Context(), tx, cur.PulpID)
			return err
		})
		if errors.Is(err, meta.ErrConflict) {
			return rest.BadField("name", "This field must be unique.")
		}
		if err != nil {
			return err
		}
		out, err := renderImporter(r, []meta.Importer{cur})
		if err != nil {
			return err
		}
		return rest.WriteOne(w, r, status, out[0])
	}
}

// repoMapping resolves a repo_mapping's local repository names.
func (s *Server) repoMapping(r *http.Request, m map[string]string) (map[string]int64, error) {
	if len(m) > maxRepoMapping {
		return nil, rest.BadField("repo_mapping", "Ensure this field has no more than %d entries.", maxRepoMapping)
	}
	out := map[string]int64{}
	var missing []string
	for src, dest := range m {
		if src == "" || dest == "" {
			return nil, rest.BadField("repo_mapping", "Repository names may not be blank.")
		}
		found, _, err := meta.ListRepositories(r.Context(), s.db, meta.List{Where: []string{"r.name = ?", "r.sub_of IS NULL"}, Args: []any{dest}})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			missing = append(missing, dest)
			continue
		}
		out[src] = found[0].ID
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, rest.BadField("repo_mapping", "Failed to find repositories from repo_mapping: names: %q", missing)
	}
	return out, nil
}

func (s *Server) importerDelete(w http.ResponseWriter, r *http.Request) error {
	x, err := meta.ImporterByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := s.db.Tx(r.Context(), func(tx *meta.Tx) error { return meta.DeleteImporter(r.Context(), tx, x.ID) }); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// importCreate checks an import's paths and dispatches the import task in a task group
// of its own, as Pulp does.
func (s *Server) importCreate(w http.ResponseWriter, r *http.Request) error {
	x, err := meta.ImporterByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	var in importIn
	raw, err := rest.DecodeBody(r, &in)
	if err != nil {
		return err
	}
	_, hasPath := raw["path"]
	_, hasTOC := raw["toc"]
	switch {
	case hasPath && hasTOC:
		return rest.BadField("non_field_errors", "Only one of 'path' and 'toc' may be specified.")
	case !hasPath && !hasTOC:
		return rest.BadField("non_field_errors", "One of 'path' or 'toc' must be specified.")
	case in.CreateRepositories && len(x.Mapping) > 0:
		return rest.BadField("non_field_errors", "The option 'create_repositories' is not compatible with 'repo_mapping'.")
	}
	field, p := "path", in.Path
	if hasTOC {
		field, p = "toc", in.TOC
	}
	real, err := content.AllowedPath(s.core.ImportPaths, p)
	if err != nil {
		return rest.BadField(field, "%s '%s' is not an allowed import path", field, p)
	}
	g, err := task.CreateGroup(r.Context(), s.db, "Import of "+real)
	if err != nil {
		return err
	}
	if _, err := s.env.Enqueue(r, task.Spec{Name: pulpImportTask, Args: pulpImportArgs{Importer: x.PulpID, Path: real, TOC: hasTOC,
		CreateRepositories: in.CreateRepositories}, Exclusive: []string{importerHref(x.PulpID)}, GroupID: &g.ID}); err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusAccepted, rest.TaskGroupRef{TaskGroup: href.Group(g.PulpID)})
}

func (s *Server) importList(w http.ResponseWriter, r *http.Request) error {
	x, err := meta.ImporterByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return lister(s, rest.ListSpec{}, func(_ *http.Request, l *meta.List) error { l.And("m.importer_id = ?", x.ID); return nil }, meta.ListImports,
		each(func(m meta.Import) any { return renderImport(x.PulpID, m) }))(w, r)
}

func (s *Server) importRead(w http.ResponseWriter, r *http.Request) error {
	x, err := meta.ImporterByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	m, err := meta.ImportByPulpID(r.Context(), s.db, x.ID, r.PathValue("import"))
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, renderImport(x.PulpID, m))
}

func (s *Server) importDelete(w http.ResponseWriter, r *http.Request) error {
	x, err := meta.ImporterByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	m, err := meta.ImportByPulpID(r.Context(), s.db, x.ID, r.PathValue("import"))
	if err != nil {
		return err
	}
	if err := meta.DeleteImport(r.Context(), s.db, m.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// importCheck evaluates an import's paths and mapping as Pulp's import-check does:
// only what was sent is answered.
func (s *Server) importCheck(w http.ResponseWriter, r *http.Request) error {
	var in importCheckIn
	raw, err := rest.DecodeBody(r, &in)
	if err != nil {
		return err
	}
	var out importCheckResponse
	if _, ok := raw["path"]; ok {
		out.Path = s.checkImportFile(in.Path, false)
	}
	if _, ok := raw["toc"]; ok {
		out.TOC = s.checkImportFile(in.TOC, true)
	}
	if _, ok := raw["repo_mapping"]; ok {
		e := &evaluation{Context: in.RepoMapping, IsValid: true, Messages: []string{}}
		var m map[string]string
		if json.Unmarshal([]byte(in.RepoMapping), &m) != nil {
			e.IsValid, e.Messages = false, []string{"invalid JSON"}
		}
		out.RepoMapping = e
	}
	if out.Path == nil && out.TOC == nil && out.RepoMapping == nil {
		return rest.BadField("non_field_errors", "One of 'path', 'toc', or 'repo_mapping' must be specified.")
	}
	return rest.WriteOne(w, r, http.StatusOK, out)
}

// checkImportFile is import-check's evaluation of a path (Pulp's _validate_file). A
// path outside the allowed ones is answered as such and nothing more is said of it.
func (s *Server) checkImportFile(p string, toc bool) *evaluation {
	e := &evaluation{Context: p, IsValid: true, Messages: []string{}}
	bad := func(format string, args ...any) *evaluation {
		e.IsValid = false
		e.Messages = append(e.Messages, fmt.Sprintf(format, args...))
		return e
	}
	real, err := content.AllowedPath(s.core.ImportPaths, p)
	if err != nil {
		return bad("%s is not an allowed import path", filepath.Dir(p))
	}
	dir := filepath.Dir(real)
	if _, err := os.Stat(dir); err != nil {
		return bad("directory %s does not exist", dir)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return bad("file %s does not exist", real)
	}
	if !fi.Mode().IsRegular() {
		bad("%s is not a file", real)
	} else if f, err := os.Open(real); err != nil {
		bad("%s exists but cannot be read", real)
	} else {
		f.Close()
	}
	if toc && syscall.Access(dir, 2) != nil {
		bad("directory %s must allow pulp write-access", dir)
	}
	return e
}

// importerOps are the operations of /importers/core/pulp/.
func (s *Server) importerOps(t *rest.Table) []rest.Op {
	pat := href.Root + "importers/core/pulp/"
	const vs, tag, h = "importers/core/pulp", "Importers: Pulp", "{pulp_importer_href}"
	const ivs, itag, ih = "importers/core/pulp/imports", "Importers: Pulp Imports", "{pulp_pulp_import_href}"
	r := func(code int, schema string) []openapi.Response { return []openapi.Response{rest.Resp(code, schema)} }
	view := t.Schema("PulpImporterResponse", importerResponse{})
	imp := t.Schema("ImportResponse", importResponse{})
	t.Schema("EvaluationResponse", evaluation{})
	list := importerListSpec()
	imports := rest.ListSpec{}
	return []rest.Op{
		{ID: "importers_core_pulp_list", Viewset: vs, Method: "GET", Path: pat, Pattern: pat + "{$}", Tag: tag, List: &list,
			Responses: r(200, t.Paginated(view)), Handler: lister(s, list, nil, meta.ListImporters, renderImporter)},
		{ID: "importers_core_pulp_create", Viewset: vs, Method: "POST", Path: pat, Pattern: pat + "{$}", Tag: tag,
			Body: importerIn{}, BodyName: "PulpImporter", Media: rest.JSONForms, Responses: r(201, view), Handler: s.importerWrite(true, false)},
		{ID: "importers_core_pulp_read", Viewset: vs, Method: "GET", Path: h, Pattern: pat + "{id}/{$}", Tag: tag, Detail: true,
			Responses: r(200, view), Handler: s.importerRead},
		{ID: "importers_core_pulp_update", Viewset: vs, Method: "PUT", Path: h, Pattern: pat + "{id}/{$}", Tag: tag,
			Body: importerIn{}, BodyName: "PulpImporter", Media: rest.JSONForms, Responses: r(200, view), Handler: s.importerWrite(false, false)},
		{ID: "importers_core_pulp_partial_update", Viewset: vs, Method: "PATCH", Path: h, Pattern: pat + "{id}/{$}", Tag: tag,
			Body: importerIn{}, BodyName: "PatchedPulpImporter", Media: rest.JSONForms, Responses: r(200, view), Handler: s.importerWrite(false, true)},
		{ID: "importers_core_pulp_delete", Viewset: vs, Method: "DELETE", Path: h, Pattern: pat + "{id}/{$}", Tag: tag,
			Responses: r(204, ""), Handler: s.importerDelete},
		{ID: "importers_core_pulp_imports_list", Viewset: ivs, Method: "GET", Path: h + "imports/", Pattern: pat + "{id}/imports/{$}", Tag: itag, List: &imports,
			Responses: r(200, t.Paginated(imp)), Handler: s.importList},
		{ID: "importers_core_pulp_imports_create", Viewset: ivs, Method: "POST", Path: h + "imports/", Pattern: pat + "{id}/imports/{$}", Tag: itag,
			Body: importIn{}, BodyName: "PulpImport", Media: rest.JSONForms, Responses: r(202, t.Schema("TaskGroupOperationResponse", rest.TaskGroupRef{})), Handler: s.importCreate},
		{ID: "importers_core_pulp_imports_read", Viewset: ivs, Method: "GET", Path: ih, Pattern: pat + "{id}/imports/{import}/{$}", Tag: itag, Detail: true,
			Responses: r(200, imp), Handler: s.importRead},
		{ID: "importers_core_pulp_imports_delete", Viewset: ivs, Method: "DELETE", Path: ih, Pattern: pat + "{id}/imports/{import}/{$}", Tag: itag,
			Responses: r(204, ""), Handler: s.importDelete},
		{ID: "pulp_import_check_post", Viewset: "importers/core/pulp/import-check", Method: "POST", Path: pat + "import-check/", Pattern: pat + "import-check/{$}",
			Tag: "Importers: Pulp Import Check", Body: importCheckIn{}, BodyName: "PulpImportCheck", Media: rest.JSONForms,
			Responses: r(200, t.Schema("PulpImportCheckResponse", importCheckResponse{})), Handler: s.importCheck},
	}
}
