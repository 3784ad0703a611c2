package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"pith/api/openapi"
	"pith/blob"
	"pith/content/rpm"
	"pith/content/rpm/repodata"
	"pith/content/rpm/rpmfile"
	"pith/meta"
	"pith/task"
)

// rpmPackageFilters are the package list's own filters (attrs members).
func rpmPackageFilters() []filter {
	str := []string{"exact", "contains", "in", "ne", "startswith"}
	return []filter{
		{name: "arch", attr: "arch", lookups: str},
		{name: "checksum_type", attr: "checksum_type", lookups: []string{"exact", "in", "ne"}},
		{name: "epoch", attr: "epoch", lookups: []string{"exact", "in", "ne"}},
		{name: "filename", kind: kCustom, lookups: []string{"exact"}, apply: func(l *meta.List, d meta.Dialect, v string) error {
			l.And("(c.relative_path = ? OR substr(c.relative_path, length(c.relative_path) - length(?)) = ?)", v, v, "/"+v)
			return nil
		}},
		{name: "name", attr: "name", lookups: str},
		{name: "pkgId", attr: "pkgId", lookups: []string{"exact", "in"}},
		{name: "release", attr: "release", lookups: str},
		{name: "sha256", col: "c.digest", lookups: []string{"exact"}},
		{name: "version", attr: "version", lookups: []string{"exact", "in", "ne"}},
	}
}

func rpmPackageOrdering() map[string]string {
	out := map[string]string{"pk": "c.id", "pulp_id": "c.pulp_id", "pulp_created": "c.created", "pulp_last_updated": "c.updated",
		"pulp_type": "c.type", "timestamp_of_interest": "c.timestamp_of_interest", "location_href": "c.relative_path",
		"pulp_labels": "c.labels", "upstream_id": "c.pulp_id"}
	for _, k := range []string{"arch", "changelogs", "checksum_type", "conflicts", "description", "enhances", "epoch", "evr", "files",
		"is_modular", "location_base", "name", "obsoletes", "pkgId", "provides", "recommends", "release", "requires", "rpm_buildhost",
		"rpm_group", "rpm_header_end", "rpm_header_start", "rpm_license", "rpm_packager", "rpm_sourcerpm", "rpm_vendor", "size_archive",
		"size_installed", "size_package", "suggests", "summary", "supplements", "time_build", "time_file", "url", "version"} {
		out[k] = "attr:" + k
	}
	return out
}

// artifactUnit is the head of a unit with one artifact as Pulp shows it: identity,
// labels and the artifact with its digests.
type artifactUnit struct {
	PulpHref        string            `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string            `json:"prn" openapi:"readOnly"`
	PulpCreated     string            `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated string            `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	MD5             *string           `json:"md5" openapi:"readOnly"`
	SHA1            *string           `json:"sha1" openapi:"readOnly"`
	SHA224          *string           `json:"sha224" openapi:"readOnly"`
	SHA256          *string           `json:"sha256" openapi:"readOnly"`
	SHA384          *string           `json:"sha384" openapi:"readOnly"`
	SHA512          *string           `json:"sha512" openapi:"readOnly"`
	PulpLabels      map[string]string `json:"pulp_labels"`
	VulnReport      *string           `json:"vuln_report" openapi:"format=uri,readOnly"`
	Artifact        *string           `json:"artifact" openapi:"format=uri"`
}

// newArtifactUnit fills the head of unit c (prn type prnType), with its artifact when it
// has one.
func newArtifactUnit(c meta.Content, prnType string, a *meta.Artifact) artifactUnit {
	out := artifactUnit{PulpHref: contentHref(c.Type, c.PulpID), Prn: prn(prnType, c.PulpID), PulpCreated: ts(c.Created),
		PulpLastUpdated: ts(c.Updated), PulpLabels: c.Labels}
	if a != nil {
		h := artifactHref(a.PulpID)
		out.Artifact = &h
		sha := a.SHA256
		out.MD5, out.SHA1, out.SHA224, out.SHA256, out.SHA384, out.SHA512 = a.MD5, a.SHA1, a.SHA224, &sha, a.SHA384, a.SHA512
	}
	return out
}

type rpmPackageResponse struct {
	artifactUnit
	Name           string  `json:"name" openapi:"readOnly"`
	Epoch          string  `json:"epoch" openapi:"readOnly"`
	Version        string  `json:"version" openapi:"readOnly"`
	Release        string  `json:"release" openapi:"readOnly"`
	Arch           string  `json:"arch" openapi:"readOnly"`
	PkgID          string  `json:"pkgId" openapi:"readOnly"`
	ChecksumType   string  `json:"checksum_type" openapi:"readOnly"`
	Summary        string  `json:"summary" openapi:"readOnly"`
	Description    string  `json:"description" openapi:"readOnly"`
	URL            string  `json:"url" openapi:"readOnly"`
	Changelogs     [][]any `json:"changelogs" openapi:"readOnly"`
	Files          [][]any `json:"files" openapi:"readOnly"`
	Requires       [][]any `json:"requires" openapi:"readOnly"`
	Provides       [][]any `json:"provides" openapi:"readOnly"`
	Conflicts      [][]any `json:"conflicts" openapi:"readOnly"`
	Obsoletes      [][]any `json:"obsoletes" openapi:"readOnly"`
	Suggests       [][]any `json:"suggests" openapi:"readOnly"`
	Enhances       [][]any `json:"enhances" openapi:"readOnly"`
	Recommends     [][]any `json:"recommends" openapi:"readOnly"`
	Supplements    [][]any `json:"supplements" openapi:"readOnly"`
	LocationBase   string  `json:"location_base" openapi:"readOnly"`
	LocationHref   string  `json:"location_href" openapi:"readOnly"`
	RPMBuildhost   string  `json:"rpm_buildhost" openapi:"readOnly"`
	RPMGroup       string  `json:"rpm_group" openapi:"readOnly"`
	RPMLicense     string  `json:"rpm_license" openapi:"readOnly"`
	RPMPackager    string  `json:"rpm_packager" openapi:"readOnly"`
	RPMSourcerpm   string  `json:"rpm_sourcerpm" openapi:"readOnly"`
	RPMVendor      string  `json:"rpm_vendor" openapi:"readOnly"`
	RPMHeaderStart int64   `json:"rpm_header_start" openapi:"readOnly"`
	RPMHeaderEnd   int64   `json:"rpm_header_end" openapi:"readOnly"`
	IsModular      bool    `json:"is_modular" openapi:"readOnly"`
	SizeArchive    int64   `json:"size_archive" openapi:"readOnly"`
	SizeInstalled  int64   `json:"size_installed" openapi:"readOnly"`
	SizePackage    int64   `json:"size_package" openapi:"readOnly"`
	TimeBuild      int64   `json:"time_build" openapi:"readOnly"`
	TimeFile       int64   `json:"time_file" openapi:"readOnly"`
}

// deps renders dependencies as Pulp does: [name, flags, epoch, version, release, pre].
func deps(ds []repodata.Dep) [][]any {
	out := make([][]any, 0, len(ds))
	for _, d := range ds {
		var flags, epoch, version, release any
		if d.Flags != "" {
			flags, epoch, version, release = d.Flags, d.Epoch, d.Version, d.Release
		}
		out = append(out, []any{d.Name, flags, epoch, version, release, d.Pre})
	}
	return out
}

// rpmPackageDetails reads the files and changelogs of packages from their stored
// filelists and other fragments.
func (s *Server) rpmPackageDetails(ctx context.Context, ids []int64) (map[int64]*repodata.Package, error) {
	out := map[int64]*repodata.Package{}
	if len(ids) == 0 {
		return out, nil
	}
	marks, args := strings.TrimSuffix(strings.Repeat("?,", len(ids)), ","), make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.db.Query(ctx, `SELECT content_id, filelists_xml, other_xml FROM rpm_fragments WHERE content_id IN (`+marks+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var fl, ot string
		if err := rows.Scan(&id, &fl, &ot); err != nil {
			return nil, err
		}
		p := &repodata.Package{}
		for i, frag := range []string{fl, ot} {
			kind := []repodata.Kind{repodata.Filelists, repodata.Other}[i]
			var doc bytes.Buffer
			dw := repodata.NewDocumentWriter(&doc, kind, 1)
			dw.WriteFragment([]byte(frag))
			dw.Close()
			got, err := repodata.NewReader(&doc, fmt.Sprintf("stored %s of unit %d", kind, id), kind).Next()
			if err != nil {
				return nil, err
			}
			if kind == repodata.Filelists {
				p.Files = got.Files
			} else {
				p.Changelogs = got.Changelogs
			}
		}
		out[id] = p
	}
	return out, rows.Err()
}

func renderRpmPackage(c meta.Content, a *meta.Artifact, detail *repodata.Package) rpmPackageResponse {
	var p repodata.Package
	json.Unmarshal(c.Attrs, &p)
	out := rpmPackageResponse{
		artifactUnit: newArtifactUnit(c, "rpm.package", a), Name: p.Name, Epoch: p.Epoch, Version: p.Version, Release: p.Release, Arch: p.Arch, PkgID: p.PkgID,
		ChecksumType: p.ChecksumType, Summary: p.Summary, Description: p.Description, URL: p.URL,
		Requires: deps(p.Requires), Provides: deps(p.Provides), Conflicts: deps(p.Conflicts), Obsoletes: deps(p.Obsoletes),
		Suggests: deps(p.Suggests), Enhances: deps(p.Enhances), Recommends: deps(p.Recommends), Supplements: deps(p.Supplements),
		LocationBase: p.LocationBase, LocationHref: p.LocationHref, RPMBuildhost: p.BuildHost, RPMGroup: p.Group, RPMLicense: p.License,
		RPMPackager: p.Packager, RPMSourcerpm: p.SourceRPM, RPMVendor: p.Vendor, RPMHeaderStart: p.HeaderStart, RPMHeaderEnd: p.HeaderEnd,
		IsModular: p.IsModular, SizeArchive: p.SizeArchive, SizeInstalled: p.SizeInstalled, SizePackage: p.SizePackage, TimeBuild: p.TimeBuild, TimeFile: p.TimeFile,
		Files: [][]any{}, Changelogs: [][]any{},
	}
	if detail != nil {
		for _, f := range detail.Files {
			dir, name := f.Path, ""
			if i := strings.LastIndexByte(f.Path, '/'); i >= 0 {
				dir, name = f.Path[:i+1], f.Path[i+1:]
			}
			var typ any
			if f.Type != "" {
				typ = f.Type
			}
			out.Files = append(out.Files, []any{typ, dir, name})
		}
		for _, cl := range detail.Changelogs {
			out.Changelogs = append(out.Changelogs, []any{cl.Author, cl.Date, cl.Text})
		}
	}
	return out
}

// renderUnits renders a page of units of one rpm type.
func (s *Server) renderUnits(ctx context.Context, typ string, cs []meta.Content) ([]any, error) {
	items := make([]any, len(cs))
	ids := make([]int64, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	switch typ {
	case rpm.PackageType:
		arts, err := meta.ArtifactsOf(ctx, s.db, ids)
		if err != nil {
			return nil, err
		}
		details, err := s.rpmPackageDetails(ctx, ids)
		if err != nil {
			return nil, err
		}
		for i, c := range cs {
			var ap *meta.Artifact
			if a, ok := arts[c.ID]; ok {
				ap = &a
			}
			items[i] = renderRpmPackage(c, ap, details[c.ID])
		}
	case rpm.RepoMetadataFileType:
		arts, err := meta.ArtifactsOf(ctx, s.db, ids)
		if err != nil {
			return nil, err
		}
		for i, c := range cs {
			var ap *meta.Artifact
			if a, ok := arts[c.ID]; ok {
				ap = &a
			}
			out := rpmRepoMetadataFileResponse{artifactUnit: newArtifactUnit(c, "rpm.repometadatafile", ap)}
			if err := json.Unmarshal(c.Attrs, &out); err != nil {
				return nil, fmt.Errorf("repo metadata file %s: %w", c.PulpID, err)
			}
			items[i] = out
		}
	case rpm.ModulemdType:
		// A synced module's packages are the stored packages whose NEVRA its artifacts
		// list, as Pulp links them at sync; a created one shows the packages it was given.
		outs := make([]map[string]any, len(cs))
		arts := make([][]string, len(cs)) // of the modules whose packages are found here
		var nevras []string
		for i, c := range cs {
			outs[i] = renderAttrsUnit(c)
			if outs[i]["packages"] == nil {
				var m struct {
					Artifacts []string `json:"artifacts"`
				}
				json.Unmarshal(c.Attrs, &m)
				arts[i] = append([]string{}, m.Artifacts...)
				nevras = append(nevras, m.Artifacts...)
			}
		}
		byNEVRA, err := s.packageHrefsByNEVRA(ctx, nevras)
		if err != nil {
			return nil, err
		}
		for i, out := range outs {
			if arts[i] != nil {
				hrefs := []string{}
				for _, a := range arts[i] {
					hrefs = append(hrefs, byNEVRA[a]...)
				}
				out["packages"] = hrefs
			}
			items[i] = out
		}
	default:
		for i, c := range cs {
			items[i] = renderAttrsUnit(c)
		}
	}
	return items, nil
}

// packageHrefsByNEVRA finds the stored packages with the given NEVRAs (their repo keys),
// in batches of 500.
func (s *Server) packageHrefsByNEVRA(ctx context.Context, nevras []string) (map[string][]string, error) {
	out := map[string][]string{}
	slices.Sort(nevras)
	nevras = slices.Compact(nevras)
	for len(nevras) > 0 {
		n := min(500, len(nevras))
		args := []any{rpm.PackageType}
		for _, v := range nevras[:n] {
			args = append(args, v)
		}
		rows, err := s.db.Query(ctx, `SELECT repo_key, pulp_id FROM contents WHERE type = ? AND repo_key IN (`+
			strings.TrimSuffix(strings.Repeat("?,", n), ",")+`) ORDER BY repo_key, id`, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var nevra, id string
			if err := rows.Scan(&nevra, &id); err != nil {
				rows.Close()
				return nil, err
			}
			out[nevra] = append(out[nevra], contentHref(rpm.PackageType, id))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		nevras = nevras[n:]
	}
	return out, nil
}

// rpmRepoMetadataFileResponse documents a repo metadata file: its stored attrs and its
// artifact's digests.
type rpmRepoMetadataFileResponse struct {
	artifactUnit
	RelativePath string `json:"relative_path"`
	DataType     string `json:"data_type"`
	ChecksumType string `json:"checksum_type"`
	Checksum     string `json:"checksum"`
}

// renderAttrsUnit renders a unit whose attrs are its API fields (advisories, comps
// units, modules): the common fields, then the attrs.
func renderAttrsUnit(c meta.Content) map[string]any {
	out := map[string]any{}
	json.Unmarshal(c.Attrs, &out)
	delete(out, "snippet")
	delete(out, "treeinfo")
	out["pulp_href"] = contentHref(c.Type, c.PulpID)
	out["prn"] = prn(strings.ReplaceAll(c.Type, "_", ""), c.PulpID)
	out["pulp_created"] = ts(c.Created)
	out["pulp_last_updated"] = ts(c.Updated)
	out["pulp_labels"] = c.Labels
	out["vuln_report"] = nil
	return out
}

// rpmUnitRead shows one unit of an rpm type.
func (s *Server) rpmUnitRead(typ string) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := meta.ContentByPulpID(r.Context(), s.db, r.PathValue("id"))
		if err != nil {
			return err
		}
		if c.Type != typ {
			return errNotFound
		}
		items, err := s.renderUnits(r.Context(), typ, []meta.Content{c})
		if err != nil {
			return err
		}
		return writeOne(w, r, http.StatusOK, items[0])
	}
}

func rpmAdvisoryFilters() []filter {
	three := []string{"exact", "in", "ne"}
	return []filter{
		{name: "id", attr: "id", lookups: []string{"exact", "in"}},
		{name: "severity", attr: "severity", lookups: three},
		{name: "status", attr: "status", lookups: three},
		{name: "type", attr: "type", lookups: three},
	}
}

func rpmAdvisoryOrdering() map[string]string {
	out := map[string]string{"pk": "c.id", "pulp_id": "c.pulp_id", "pulp_created": "c.created", "pulp_last_updated": "c.updated",
		"pulp_type": "c.type", "timestamp_of_interest": "c.timestamp_of_interest", "pulp_labels": "c.labels", "upstream_id": "c.pulp_id",
		"digest": "c.natural_key"}
	for _, k := range []string{"description", "fromstr", "id", "issued_date", "pushcount", "reboot_suggested", "release", "rights",
		"severity", "solution", "status", "summary", "title", "type", "updated_date", "version"} {
		out[k] = "attr:" + k
	}
	return out
}

// rpmContentTable adds the rpm content operations implemented so far.
func (s *Server) rpmContentTable(reg *openapi.Registry, add func(opDef)) {
	pg := reg.Paginated
	setLabel := reg.Add("SetLabelResponse", setLabelResponse{})
	unsetLabel := reg.Add("UnsetLabelResponse", unsetLabelResponse{})
	r := func(code int, schema string) []openapi.Response { return []openapi.Response{resp(code, schema)} }
	for _, u := range []struct {
		typ, seg, idName, href, tag, schema string
		view                                any
		labelCode                           int // what set/unset_label answer: Pulp differs by type
	}{
		{rpm.PackageType, "packages", "packages", "{rpm_package_href}", "Content: Packages", "rpm.PackageResponse", rpmPackageResponse{}, 201},
		{rpm.AdvisoryType, "advisories", "advisories", "{rpm_update_record_href}", "Content: Advisories", "rpm.UpdateRecordResponse", rpmAdvisoryResponse{}, 201},
		{rpm.DistributionTreeType, "distribution_trees", "distribution_trees", "{rpm_distribution_tree_href}", "Content: Distribution_Trees", "rpm.DistributionTreeResponse", rpmTreeResponse{}, 200},
		{rpm.ModulemdType, "modulemds", "modulemds", "{rpm_modulemd_href}", "Content: Modulemds", "rpm.ModulemdResponse", rpmUnitResponse{}, 201},
		{rpm.DefaultsType, "modulemd_defaults", "modulemd_defaults", "{rpm_modulemd_defaults_href}", "Content: Modulemd_Defaults", "rpm.ModulemdDefaultsResponse", rpmUnitResponse{}, 201},
		{rpm.ObsoleteType, "modulemd_obsoletes", "modulemd_obsoletes", "{rpm_modulemd_obsolete_href}", "Content: Modulemd_Obsoletes", "rpm.ModulemdObsoleteResponse", rpmUnitResponse{}, 201},
		{rpm.GroupType, "packagegroups", "packagegroups", "{rpm_package_group_href}", "Content: Packagegroups", "rpm.PackageGroupResponse", rpmUnitResponse{}, 200},
		{rpm.CategoryType, "packagecategories", "packagecategories", "{rpm_package_category_href}", "Content: Packagecategories", "rpm.PackageCategoryResponse", rpmUnitResponse{}, 200},
		{rpm.EnvironmentType, "packageenvironments", "packageenvironments", "{rpm_package_environment_href}", "Content: Packageenvironments", "rpm.PackageEnvironmentResponse", rpmUnitResponse{}, 200},
		{rpm.LangpacksType, "packagelangpacks", "packagelangpacks", "{rpm_package_langpacks_href}", "Content: Packagelangpacks", "rpm.PackageLangpacksResponse", rpmUnitResponse{}, 200},
		{rpm.RepoMetadataFileType, "repo_metadata_files", "repo_metadata_files", "{rpm_repo_metadata_file_href}", "Content: Repo_Metadata_Files", "rpm.RepoMetadataFileResponse", rpmRepoMetadataFileResponse{}, 200},
	} {
		contentSet, contentUnset := s.labelHandlers(u.labelCode, s.contentLabels)
		schema := reg.Add(u.schema, u.view)
		l := contentListSpec(u.typ)
		pat := "/pulp/api/v3/content/rpm/" + u.seg + "/"
		id := "content_rpm_" + u.idName
		add(opDef{id: id + "_list", method: "GET", path: pat, pattern: pat + "{$}", tag: u.tag,
			list: &l, responses: r(200, pg(schema)), h: s.contentList(u.typ)})
		add(opDef{id: id + "_read", method: "GET", path: u.href, pattern: pat + "{id}/{$}", tag: u.tag, detail: true,
			responses: r(200, schema), h: s.rpmUnitRead(u.typ)})
		if u.typ == rpm.AdvisoryType {
			async := reg.Add("AsyncOperationResponse", taskRef{})
			add(opDef{id: id + "_create", method: "POST", path: pat, pattern: pat + "{$}", tag: u.tag,
				body: contentIn{}, bodyName: "rpm.UpdateRecord", media: fileForms, responses: r(202, async), h: s.rpmAdvisoryCreate})
		}
		if body, bodyName, h := s.rpmModuleCreate(u.typ); h != nil {
			async := reg.Add("AsyncOperationResponse", taskRef{})
			add(opDef{id: id + "_create", method: "POST", path: pat, pattern: pat + "{$}", tag: u.tag,
				body: body, bodyName: bodyName, media: jsonForms, responses: r(202, async), h: h})
		}
		if u.typ == rpm.PackageType {
			async := reg.Add("AsyncOperationResponse", taskRef{})
			add(opDef{id: id + "_create", method: "POST", path: pat, pattern: pat + "{$}", tag: u.tag,
				body: rpmPackageIn{}, bodyName: "rpm.Package", media: fileForms, responses: r(202, async), h: s.rpmPackageCreate})
			add(opDef{id: id + "_upload", method: "POST", path: pat + "upload/", pattern: pat + "upload/{$}", tag: u.tag,
				body: rpmPackageIn{}, bodyName: "RPMPackageUpload", media: fileForms, responses: r(201, schema), h: s.rpmPackageUpload})
		}
		add(opDef{id: id + "_set_label", method: "POST", path: u.href + "set_label/", pattern: pat + "{id}/set_label/{$}", tag: u.tag,
			body: setLabelIn{}, bodyName: "SetLabel", media: jsonForms, responses: r(u.labelCode, setLabel), h: contentSet})
		add(opDef{id: id + "_unset_label", method: "POST", path: u.href + "unset_label/", pattern: pat + "{id}/unset_label/{$}", tag: u.tag,
			body: unsetLabelIn{}, bodyName: "UnsetLabel", media: jsonForms, responses: r(u.labelCode, unsetLabel), h: contentUnset})
	}
}

// rpmAdvisoryResponse documents an advisory; advisories are rendered from their stored
// updateinfo.Update (renderAttrsUnit), which has these fields.
type rpmAdvisoryResponse struct {
	PulpHref        string            `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string            `json:"prn" openapi:"readOnly"`
	PulpCreated     string            `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated string            `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	PulpLabels      map[string]string `json:"pulp_labels"`
	VulnReport      *string           `json:"vuln_report" openapi:"format=uri,readOnly"`
	ID              string            `json:"id" openapi:"readOnly"`
	UpdatedDate     string            `json:"updated_date" openapi:"readOnly"`
	Description     string            `json:"description" openapi:"readOnly"`
	IssuedDate      string            `json:"issued_date" openapi:"readOnly"`
	Fromstr         string            `json:"fromstr" openapi:"readOnly"`
	Status          string            `json:"status" openapi:"readOnly"`
	Title           string            `json:"title" openapi:"readOnly"`
	Summary         string            `json:"summary" openapi:"readOnly"`
	Version         string            `json:"version" openapi:"readOnly"`
	Type            string            `json:"type" openapi:"readOnly"`
	Severity        string            `json:"severity" openapi:"readOnly"`
	Solution        string            `json:"solution" openapi:"readOnly"`
	Release         string            `json:"release" openapi:"readOnly"`
	Rights          string            `json:"rights" openapi:"readOnly"`
	Pushcount       string            `json:"pushcount" openapi:"readOnly"`
	Pkglist         []json.RawMessage `json:"pkglist" openapi:"readOnly"`
	References      []json.RawMessage `json:"references" openapi:"readOnly"`
	RebootSuggested bool              `json:"reboot_suggested" openapi:"readOnly"`
}

type rpmPackageIn struct {
	contentIn
	RelativePath *string `json:"relative_path" openapi:"writeOnly,minLength=1"`
}

// RpmPackageArgs are the arguments of the task that creates an rpm package unit.
type RpmPackageArgs struct {
	Artifact     int64       `json:"artifact"`
	RelativePath string      `json:"relative_path,omitempty"`
	Labels       meta.Labels `json:"labels"`
	Repository   string      `json:"repository,omitempty"`
	FileURL      string      `json:"file_url,omitempty"`
}

// readRpmPackage reads a package create body; a stored file is read as an rpm now (its
// header is returned), so a bad one is a 400 naming the problem.
func (s *Server) readRpmPackage(r *http.Request) (RpmPackageArgs, *meta.Repository, *rpmfile.Header, error) {
	var in rpmPackageIn
	src, err := s.readContent(r, &in, "repositories/rpm/rpm/", func(map[string]json.RawMessage) error { return nil })
	if err != nil {
		return RpmPackageArgs{}, nil, nil, err
	}
	a := RpmPackageArgs{Artifact: src.Artifact, Labels: src.Labels, FileURL: src.FileURL}
	if in.RelativePath != nil {
		a.RelativePath = *in.RelativePath
	}
	if src.Repository != nil {
		a.Repository = src.Repository.PulpID
	}
	if a.FileURL == "" {
		art, err := meta.ArtifactByID(r.Context(), s.db, a.Artifact)
		if err != nil {
			return a, nil, nil, err
		}
		h, err := rpm.ReadPackage(r.Context(), s.cfg.Store, art, a.RelativePath)
		if err != nil {
			return a, nil, nil, badField("file", "%v", err)
		}
		return a, src.Repository, h, nil
	}
	return a, src.Repository, nil, nil
}

// createRpmPackage creates (or finds) the package unit of an artifact.
func (s *Server) createRpmPackage(ctx context.Context, a RpmPackageArgs) (meta.Content, error) {
	art, err := meta.ArtifactByID(ctx, s.db, a.Artifact)
	if err != nil {
		return meta.Content{}, err
	}
	h, err := rpm.ReadPackage(ctx, s.cfg.Store, art, a.RelativePath)
	if err != nil {
		return meta.Content{}, err
	}
	return rpm.StoreUploadedPackage(ctx, s.db, h, a.Labels)
}

func (s *Server) rpmPackageCreate(w http.ResponseWriter, r *http.Request) error {
	a, repo, _, err := s.readRpmPackage(r)
	if err != nil {
		return err
	}
	return s.dispatchCreate(w, r, "rpm_package", "/pulp/api/v3/content/rpm/packages/", a, repo)
}

// rpmPackageUpload creates a package synchronously (content_rpm_packages_upload, 201).
func (s *Server) rpmPackageUpload(w http.ResponseWriter, r *http.Request) error {
	a, repo, h, err := s.readRpmPackage(r)
	if err != nil {
		return err
	}
	if repo != nil || h == nil {
		return fieldError{"non_field_errors": {"The synchronous upload takes no 'repository' or 'file_url'; use the create operation."}}
	}
	c, err := rpm.StoreUploadedPackage(r.Context(), s.db, h, a.Labels)
	if err != nil {
		return err
	}
	items, err := s.renderUnits(r.Context(), rpm.PackageType, []meta.Content{c})
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusCreated, items[0])
}

// runRpmPackage is the package create task.
func (s *Server) runRpmPackage(ctx context.Context, r *task.Run, a RpmPackageArgs) error {
	return s.runContentCreate(ctx, r, a.FileURL, &a.Artifact, a.Repository, func() (meta.Content, error) { return s.createRpmPackage(ctx, a) })
}

// rpmTreeResponse documents a distribution tree, rendered from its stored
// treeinfo.DistributionTree (renderAttrsUnit).
type rpmTreeResponse struct {
	PulpHref           string            `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn                string            `json:"prn" openapi:"readOnly"`
	HeaderVersion      string            `json:"header_version"`
	ReleaseName        string            `json:"release_name"`
	ReleaseShort       string            `json:"release_short"`
	ReleaseVersion     string            `json:"release_version"`
	ReleaseIsLayered   bool              `json:"release_is_layered"`
	BaseProductName    *string           `json:"base_product_name" openapi:"nullable"`
	BaseProductShort   *string           `json:"base_product_short" openapi:"nullable"`
	BaseProductVersion *string           `json:"base_product_version" openapi:"nullable"`
	Arch               string            `json:"arch"`
	BuildTimestamp     float64           `json:"build_timestamp"`
	Instimage          *string           `json:"instimage" openapi:"nullable"`
	Mainimage          *string           `json:"mainimage" openapi:"nullable"`
	Discnum            *int64            `json:"discnum" openapi:"nullable"`
	Totaldiscs         *int64            `json:"totaldiscs" openapi:"nullable"`
	Addons             []json.RawMessage `json:"addons"`
	Checksums          []json.RawMessage `json:"checksums"`
	Images             []json.RawMessage `json:"images"`
	Variants           []json.RawMessage `json:"variants"`
}

// rpmUnitResponse documents the fields every rpm unit rendered from its attrs shows;
// the type's own fields follow, under Pulp's names (see content/rpm's model types).
type rpmUnitResponse struct {
	PulpHref        string            `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string            `json:"prn" openapi:"readOnly"`
	PulpCreated     string            `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated string            `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	PulpLabels      map[string]string `json:"pulp_labels"`
}

func rpmModuleFilters(typ string) []filter {
	two := []string{"exact", "in"}
	if typ == rpm.DefaultsType {
		return []filter{{name: "module", attr: "module", lookups: two}, {name: "sha256", col: "c.digest", lookups: []string{"exact"}},
			{name: "stream", attr: "stream", lookups: two}}
	}
	return []filter{{name: "arch", attr: "arch", lookups: two}, {name: "context", attr: "context", lookups: two}, {name: "name", attr: "name", lookups: two},
		{name: "sha256", col: "c.digest", lookups: []string{"exact"}}, {name: "stream", attr: "stream", lookups: two}, {name: "version", attr: "version", lookups: two}}
}

func rpmModuleOrdering(typ string) map[string]string {
	out := map[string]string{"pk": "c.id", "pulp_id": "c.pulp_id", "pulp_created": "c.created", "pulp_last_updated": "c.updated",
		"pulp_type": "c.type", "timestamp_of_interest": "c.timestamp_of_interest", "pulp_labels": "c.labels", "upstream_id": "c.pulp_id",
		"digest": "c.digest"}
	keys := []string{"module", "profiles", "snippet", "stream"}
	if typ == rpm.ModulemdType {
		keys = []string{"arch", "artifacts", "context", "dependencies", "description", "name", "profiles", "snippet", "static_context", "stream", "version"}
	}
	for _, k := range keys {
		out[k] = "attr:" + k
	}
	return out
}

// RpmAdvisoryArgs are the arguments of the task that creates an advisory from an
// uploaded JSON file.
type RpmAdvisoryArgs struct {
	Artifact   int64       `json:"artifact"`
	Labels     meta.Labels `json:"labels"`
	Repository string      `json:"repository,omitempty"`
	FileURL    string      `json:"file_url,omitempty"`
}

// advisoryFileName is what errors call an uploaded advisory.
const advisoryFileName = "the advisory JSON"

// rpmAdvisoryCreate creates an advisory from a JSON file (content_rpm_advisories_create).
// A stored file is read now, so a bad one is a 400 naming the problem.
func (s *Server) rpmAdvisoryCreate(w http.ResponseWriter, r *http.Request) error {
	var in contentIn
	src, err := s.readContent(r, &in, "repositories/rpm/rpm/", func(map[string]json.RawMessage) error { return nil })
	if err != nil {
		return err
	}
	a := RpmAdvisoryArgs{Artifact: src.Artifact, Labels: src.Labels, FileURL: src.FileURL}
	if src.Repository != nil {
		a.Repository = src.Repository.PulpID
	}
	if a.FileURL == "" {
		art, err := meta.ArtifactByID(r.Context(), s.db, a.Artifact)
		if err != nil {
			return err
		}
		if _, err := rpm.ReadAdvisory(r.Context(), s.cfg.Store, art, advisoryFileName); err != nil {
			return badField("file", "%v", err)
		}
	}
	return s.dispatchCreate(w, r, "rpm_advisory", "/pulp/api/v3/content/rpm/advisories/", a, src.Repository)
}

// runRpmAdvisory is the advisory create task.
func (s *Server) runRpmAdvisory(ctx context.Context, r *task.Run, a RpmAdvisoryArgs) error {
	return s.runContentCreate(ctx, r, a.FileURL, &a.Artifact, a.Repository, func() (meta.Content, error) {
		art, err := meta.ArtifactByID(ctx, s.db, a.Artifact)
		if err != nil {
			return meta.Content{}, err
		}
		u, err := rpm.ReadAdvisory(ctx, s.cfg.Store, art, advisoryFileName)
		if err != nil {
			return meta.Content{}, err
		}
		return rpm.StoreAdvisory(ctx, s.db, u, a.Labels)
	})
}

// compsIn is the body of the comps.xml upload (rpm_comps_upload).
type compsIn struct {
	File       *string `json:"file" openapi:"format=binary,required"`
	Repository *string `json:"repository" openapi:"format=uri,writeOnly"`
	Replace    *bool   `json:"replace" openapi:"writeOnly"`
}

// CompsArgs are the arguments of the comps upload task.
type CompsArgs struct {
	Artifact   int64  `json:"artifact"`
	Repository string `json:"repository,omitempty"`
	Replace    bool   `json:"replace"`
}

const compsTask = "pulp_rpm.app.tasks.comps.upload_comps"

// compsFileName is what errors call an uploaded comps.xml.
const compsFileName = "the uploaded comps.xml"

// rpmCompsUpload stores a comps.xml's groups, categories, environments and langpacks,
// optionally adding them to a repository (replacing its comps units with replace). The
// file is parsed before the task is queued, so a bad one is a 400 and nothing changes.
func (s *Server) rpmCompsUpload(w http.ResponseWriter, r *http.Request) error {
	var in compsIn
	var pf *pendingFile
	raw, err := readBody(r, &in, s.receiveFile(r.Context(), "file", &pf))
	if err == nil {
		err = decode(raw, &in)
	}
	if err == nil && pf == nil {
		err = badField("file", "No file was submitted.")
	}
	var repo *meta.Repository
	if err == nil && in.Repository != nil {
		repo, err = repositoryOf(r.Context(), s.db, "repository", *in.Repository, "repositories/rpm/rpm/")
	}
	if err == nil && in.Replace != nil && *in.Replace && repo == nil {
		err = badField("replace", "Replacing comps units needs a 'repository'.")
	}
	if err != nil {
		pf.cancel(r.Context())
		return err
	}
	art, err := s.commitArtifact(r.Context(), pf, blob.Expect{Size: -1})
	if err != nil {
		return err
	}
	if _, err := rpm.ReadComps(r.Context(), s.cfg.Store, art, compsFileName); err != nil {
		return badField("file", "%v", err)
	}
	a := CompsArgs{Artifact: art.ID, Replace: in.Replace != nil && *in.Replace}
	spec := task.Spec{Name: compsTask, Args: &a}
	if repo != nil {
		a.Repository = repo.PulpID
		spec.Exclusive = []string{repoHref(repo.Type, repo.PulpID)}
	}
	t, err := s.dispatch(r, spec)
	if err != nil {
		return err
	}
	return accepted(w, t)
}

// runComps is the comps upload task.
func (s *Server) runComps(ctx context.Context, r *task.Run) error {
	var a CompsArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	art, err := meta.ArtifactByID(ctx, s.db, a.Artifact)
	if err != nil {
		return err
	}
	c, err := rpm.ReadComps(ctx, s.cfg.Store, art, compsFileName)
	if err != nil {
		return err
	}
	units, err := rpm.StoreComps(ctx, s.db, c)
	if err != nil {
		return err
	}
	ch := meta.Change{}
	for _, u := range units {
		r.Created(contentHref(u.Type, u.PulpID))
		ch.Add = append(ch.Add, u.ID)
	}
	if a.Repository == "" {
		return nil
	}
	if a.Replace {
		repo, err := meta.RepositoryByPulpID(ctx, s.db, a.Repository)
		if err != nil {
			return err
		}
		old, err := meta.VersionContentIDs(ctx, s.db, repo.ID, repo.LatestVersion, rpm.CompsTypes...)
		if err != nil {
			return err
		}
		for _, id := range old {
			if !slices.Contains(ch.Add, id) {
				ch.Remove = append(ch.Remove, id)
			}
		}
	}
	return s.newVersion(ctx, r, a.Repository, ch)
}
