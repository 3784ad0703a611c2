package rpm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
	"pith/blob"
	"pith/content/rpm/repodata"
	"pith/content/rpm/rpmfile"
	"pith/meta"
	"pith/task"
)

// rpmPackageFilters are the package list's own filters (attrs members).
func rpmPackageFilters() []rest.Filter {
	str := []string{"exact", "contains", "in", "ne", "startswith"}
	return []rest.Filter{
		{Name: "arch", Attr: "arch", Lookups: str},
		{Name: "checksum_type", Attr: "checksum_type", Lookups: []string{"exact", "in", "ne"}},
		{Name: "epoch", Attr: "epoch", Lookups: []string{"exact", "in", "ne"}},
		{Name: "filename", Type: rest.Custom, Lookups: []string{"exact"}, Apply: func(l *meta.List, d meta.Dialect, v string) error {
			l.And("(c.relative_path = ? OR substr(c.relative_path, length(c.relative_path) - length(?)) = ?)", v, v, "/"+v)
			return nil
		}},
		{Name: "name", Attr: "name", Lookups: str},
		{Name: "pkgId", Attr: "pkgId", Lookups: []string{"exact", "in"}},
		{Name: "release", Attr: "release", Lookups: str},
		{Name: "sha256", Col: "c.digest", Lookups: []string{"exact"}},
		{Name: "version", Attr: "version", Lookups: []string{"exact", "in", "ne"}},
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

type rpmPackageResponse struct {
	rest.ArtifactUnit
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

// packageDetails reads the files and changelogs of packages from their stored
// filelists and other fragments.
func packageDetails(ctx context.Context, q meta.Querier, ids []int64) (map[int64]*repodata.Package, error) {
	out := map[int64]*repodata.Package{}
	if len(ids) == 0 {
		return out, nil
	}
	marks, args := strings.TrimSuffix(strings.Repeat("?,", len(ids)), ","), make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := q.Query(ctx, `SELECT content_id, filelists_xml, other_xml FROM rpm_fragments WHERE content_id IN (`+marks+`)`, args...)
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
		ArtifactUnit: rest.NewArtifactUnit(c, segmentOf(PackageType), "rpm.package", a), Name: p.Name, Epoch: p.Epoch, Version: p.Version, Release: p.Release, Arch: p.Arch, PkgID: p.PkgID,
		ChecksumType: p.ChecksumType, Summary: p.Summary, Description: p.Description, URL: p.URL,
		Requires: deps(p.Requires), Provides: deps(p.Provides), Conflicts: deps(p.Conflicts), Obsoletes: deps(p.Obsoletes),
		Suggests: deps(p.Suggests), Enhances: deps(p.Enhances), Recommends: deps(p.Recommends), Supplements: deps(p.Supplements),
		LocationBase: p.LocationBase, LocationHref: p.LocationHref, RPMBuildhost: p.BuildHost, RPMGroup: p.Group, RPMLicense: p.License,
		RPMPackager: p.Packager, RPMSourcerpm: p.SourceRPM, RPMVendor: p.Vendor, RPMHeaderStart: p.HeaderStart, RPMHeaderEnd: p.HeaderEnd,
		IsModular: p.IsModular, SizeArchive: p.SizeArchive, SizeInstalled: p.SizeInstalled, SizePackage: p.SizePackage, TimeBuild: p.TimeBuild, TimeFile: p.TimeFile,
		Files: [][]any{}, Changelogs: [][]any{},
	}
	if detail != nil {
		out.Files, out.Changelogs = fileCells(detail.Files), changelogCells(detail.Changelogs)
	}
	return out
}

// fileCells renders a package's files as Pulp does: [type, directory, name], the type null
// for a regular file.
func fileCells(fs []repodata.File) [][]any {
	out := make([][]any, 0, len(fs))
	for _, f := range fs {
		dir, name := "", f.Path
		if i := strings.LastIndexByte(f.Path, '/'); i >= 0 {
			dir, name = f.Path[:i+1], f.Path[i+1:]
		}
		var typ any
		if f.Type != "" {
			typ = f.Type
		}
		out = append(out, []any{typ, dir, name})
	}
	return out
}

// changelogCells renders a package's changelogs as Pulp does: [author, date, text].
func changelogCells(cs []repodata.Changelog) [][]any {
	out := make([][]any, 0, len(cs))
	for _, cl := range cs {
		out = append(out, []any{cl.Author, cl.Date, cl.Text})
	}
	return out
}

// unitKind is one rpm unit kind as the table declares it, without its renderer.
type unitKind struct {
	typ, seg, href, tag, schema, prn string
	view                             any
	labelCode                        int // what set/unset_label answer: Pulp differs by type
	filters                          []rest.Filter
	ordering                         map[string]string
}

// unitKinds are the rpm unit kinds: where they live, their shapes and filters.
var unitKinds = []unitKind{
	{PackageType, "rpm/packages", "{rpm_package_href}", "Content: Packages", "rpm.PackageResponse", "rpm.package", rpmPackageResponse{}, 201,
		rpmPackageFilters(), rpmPackageOrdering()},
	{AdvisoryType, "rpm/advisories", "{rpm_update_record_href}", "Content: Advisories", "rpm.UpdateRecordResponse", "rpm.updaterecord", rpmAdvisoryResponse{}, 201,
		rpmAdvisoryFilters(), rpmAdvisoryOrdering()},
	{DistributionTreeType, "rpm/distribution_trees", "{rpm_distribution_tree_href}", "Content: Distribution_Trees", "rpm.DistributionTreeResponse", "rpm.distributiontree", rpmTreeResponse{}, 200,
		nil, pkOrdering},
	{ModulemdType, "rpm/modulemds", "{rpm_modulemd_href}", "Content: Modulemds", "rpm.ModulemdResponse", "rpm.modulemd", rpmUnitResponse{}, 201,
		rpmModuleFilters(ModulemdType), rpmModuleOrdering(ModulemdType)},
	{DefaultsType, "rpm/modulemd_defaults", "{rpm_modulemd_defaults_href}", "Content: Modulemd_Defaults", "rpm.ModulemdDefaultsResponse", "rpm.modulemddefaults", rpmUnitResponse{}, 201,
		rpmModuleFilters(DefaultsType), rpmModuleOrdering(DefaultsType)},
	{ObsoleteType, "rpm/modulemd_obsoletes", "{rpm_modulemd_obsolete_href}", "Content: Modulemd_Obsoletes", "rpm.ModulemdObsoleteResponse", "rpm.modulemdobsolete", rpmUnitResponse{}, 201,
		nil, pkOrdering},
	{GroupType, "rpm/packagegroups", "{rpm_package_group_href}", "Content: Packagegroups", "rpm.PackageGroupResponse", "rpm.packagegroup", rpmUnitResponse{}, 200,
		nil, pkOrdering},
	{CategoryType, "rpm/packagecategories", "{rpm_package_category_href}", "Content: Packagecategories", "rpm.PackageCategoryResponse", "rpm.packagecategory", rpmUnitResponse{}, 200,
		nil, pkOrdering},
	{EnvironmentType, "rpm/packageenvironments", "{rpm_package_environment_href}", "Content: Packageenvironments", "rpm.PackageEnvironmentResponse", "rpm.packageenvironment", rpmUnitResponse{}, 200,
		nil, pkOrdering},
	{LangpacksType, "rpm/packagelangpacks", "{rpm_package_langpacks_href}", "Content: Packagelangpacks", "rpm.PackageLangpacksResponse", "rpm.packagelangpacks", rpmUnitResponse{}, 200,
		nil, pkOrdering},
	{RepoMetadataFileType, "rpm/repo_metadata_files", "{rpm_repo_metadata_file_href}", "Content: Repo_Metadata_Files", "rpm.RepoMetadataFileResponse", "rpm.repometadatafile", rpmRepoMetadataFileResponse{}, 200,
		nil, pkOrdering},
}

// pkOrdering is the ordering of the kinds Pulp orders by pk only.
var pkOrdering = map[string]string{"pk": "c.id"}

// segmentOf is the href segment of an rpm unit type.
func segmentOf(typ string) string {
	for _, k := range unitKinds {
		if k.typ == typ {
			return k.seg
		}
	}
	return ""
}

// declareUnits adds the rpm unit kinds with their renderers, and their create and
// upload operations.
func (p *Plugin) declareUnits(t *rest.Table) {
	async := t.Async()
	for _, k := range unitKinds {
		render := p.attrsRenderer(k)
		switch k.typ {
		case PackageType:
			render = p.renderPackages
		case RepoMetadataFileType:
			render = p.renderMetadataFiles
		case ModulemdType:
			render = p.renderModulemds
		}
		t.Unit(rest.UnitKind{Type: k.typ, Segment: k.seg, PRN: k.prn, Href: k.href, Tag: k.tag, Schema: k.schema, View: k.view,
			Filters: k.filters, Ordering: k.ordering, Render: render, LabelStatus: k.labelCode,
			Reclaimable: k.typ == PackageType}) // pulp_rpm's only unit not protected from reclaim
		pat := href.Root + "content/" + k.seg + "/"
		id := "content_" + strings.ReplaceAll(k.seg, "/", "_")
		switch k.typ {
		case PackageType:
			unit := t.Schema(k.schema, k.view)
			t.Add(rest.Op{ID: id + "_create", Viewset: "content/" + k.seg, Method: "POST", Path: pat, Pattern: pat + "{$}", Tag: k.tag,
				Body: rpmPackageIn{}, BodyName: "rpm.Package", Media: rest.FileForms, Responses: []openapi.Response{rest.Resp(202, async)}, Handler: p.rpmPackageCreate},
				rest.Op{ID: id + "_upload", Viewset: "content/" + k.seg, Action: "upload", Method: "POST", Path: pat + "upload/", Pattern: pat + "upload/{$}", Tag: k.tag,
					Body: rpmPackageIn{}, BodyName: "RPMPackageUpload", Media: rest.FileForms, Responses: []openapi.Response{rest.Resp(201, unit)}, Handler: p.rpmPackageUpload})
		case AdvisoryType:
			t.Add(rest.Op{ID: id + "_create", Viewset: "content/" + k.seg, Method: "POST", Path: pat, Pattern: pat + "{$}", Tag: k.tag,
				Body: rest.ContentIn{}, BodyName: "rpm.UpdateRecord", Media: rest.FileForms, Responses: []openapi.Response{rest.Resp(202, async)}, Handler: p.rpmAdvisoryCreate})
		case ModulemdType, DefaultsType, ObsoleteType:
			mk := rpmModuleKinds[k.typ]
			t.Add(rest.Op{ID: id + "_create", Viewset: "content/" + k.seg, Method: "POST", Path: pat, Pattern: pat + "{$}", Tag: k.tag,
				Body: reflect.ValueOf(mk.body()).Elem().Interface(), BodyName: mk.bodyName, Media: rest.JSONForms,
				Responses: []openapi.Response{rest.Resp(202, async)}, Handler: p.moduleCreateHandler(mk)})
		}
	}
}

// artifactsOf loads the artifacts of units, by unit.
func (p *Plugin) artifactsOf(ctx context.Context, cs []meta.Content) (map[int64]meta.Artifact, []int64, error) {
	ids := make([]int64, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	arts, err := meta.ArtifactsOf(ctx, p.db, ids)
	return arts, ids, err
}

func artifactOf(arts map[int64]meta.Artifact, id int64) *meta.Artifact {
	if a, ok := arts[id]; ok {
		return &a
	}
	return nil
}

func (p *Plugin) renderPackages(ctx context.Context, cs []meta.Content) ([]any, error) {
	arts, ids, err := p.artifactsOf(ctx, cs)
	if err != nil {
		return nil, err
	}
	details, err := packageDetails(ctx, p.db, ids)
	if err != nil {
		return nil, err
	}
	items := make([]any, len(cs))
	for i, c := range cs {
		items[i] = renderRpmPackage(c, artifactOf(arts, c.ID), details[c.ID])
	}
	return items, nil
}

func (p *Plugin) renderMetadataFiles(ctx context.Context, cs []meta.Content) ([]any, error) {
	arts, _, err := p.artifactsOf(ctx, cs)
	if err != nil {
		return nil, err
	}
	items := make([]any, len(cs))
	for i, c := range cs {
		out := rpmRepoMetadataFileResponse{ArtifactUnit: rest.NewArtifactUnit(c, segmentOf(RepoMetadataFileType), "rpm.repometadatafile", artifactOf(arts, c.ID))}
		if err := json.Unmarshal(c.Attrs, &out); err != nil {
			return nil, fmt.Errorf("repo metadata file %s: %w", c.PulpID, err)
		}
		items[i] = out
	}
	return items, nil
}

// renderModulemds shows modules. A synced module's packages are the stored packages
// whose NEVRA its artifacts list, as Pulp links them at sync; a created one shows the
// packages it was given.
func (p *Plugin) renderModulemds(ctx context.Context, cs []meta.Content) ([]any, error) {
	k := unitKinds[slices.IndexFunc(unitKinds, func(k unitKind) bool { return k.typ == ModulemdType })]
	outs := make([]map[string]any, len(cs))
	arts := make([][]string, len(cs)) // of the modules whose packages are found here
	var nevras []string
	for i, c := range cs {
		outs[i] = renderAttrsUnit(c, k)
		if outs[i]["packages"] == nil {
			var m struct {
				Artifacts []string `json:"artifacts"`
			}
			json.Unmarshal(c.Attrs, &m)
			arts[i] = append([]string{}, m.Artifacts...)
			nevras = append(nevras, m.Artifacts...)
		}
	}
	byNEVRA, err := p.packageHrefsByNEVRA(ctx, nevras)
	if err != nil {
		return nil, err
	}
	items := make([]any, len(cs))
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
	return items, nil
}

// attrsRenderer renders units of kind k whose attrs are their API fields.
func (p *Plugin) attrsRenderer(k unitKind) func(context.Context, []meta.Content) ([]any, error) {
	return func(_ context.Context, cs []meta.Content) ([]any, error) {
		items := make([]any, len(cs))
		for i, c := range cs {
			items[i] = renderAttrsUnit(c, k)
		}
		return items, nil
	}
}

// packageHrefsByNEVRA finds the stored packages with the given NEVRAs (their repo keys),
// in batches of 500.
func (p *Plugin) packageHrefsByNEVRA(ctx context.Context, nevras []string) (map[string][]string, error) {
	out := map[string][]string{}
	slices.Sort(nevras)
	nevras = slices.Compact(nevras)
	for len(nevras) > 0 {
		n := min(500, len(nevras))
		args := []any{PackageType}
		for _, v := range nevras[:n] {
			args = append(args, v)
		}
		rows, err := p.db.Query(ctx, `SELECT repo_key, pulp_id FROM contents WHERE type = ? AND repo_key IN (`+
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
			out[nevra] = append(out[nevra], href.Content(segmentOf(PackageType), id))
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
	rest.ArtifactUnit
	RelativePath string `json:"relative_path"`
	DataType     string `json:"data_type"`
	ChecksumType string `json:"checksum_type"`
	Checksum     string `json:"checksum"`
}

// renderAttrsUnit renders a unit of kind k whose attrs are its API fields (advisories,
// comps units, modules): the common fields, then the attrs.
func renderAttrsUnit(c meta.Content, k unitKind) map[string]any {
	out := map[string]any{}
	json.Unmarshal(c.Attrs, &out)
	delete(out, "snippet")
	delete(out, "treeinfo")
	out["pulp_href"] = href.Content(k.seg, c.PulpID)
	out["prn"] = href.PRN(k.prn, c.PulpID)
	out["pulp_created"] = rest.Time(c.Created)
	out["pulp_last_updated"] = rest.Time(c.Updated)
	out["pulp_labels"] = c.Labels
	out["vuln_report"] = nil
	return out
}

func rpmAdvisoryFilters() []rest.Filter {
	three := []string{"exact", "in", "ne"}
	return []rest.Filter{
		{Name: "id", Attr: "id", Lookups: []string{"exact", "in"}},
		{Name: "severity", Attr: "severity", Lookups: three},
		{Name: "status", Attr: "status", Lookups: three},
		{Name: "type", Attr: "type", Lookups: three},
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
	rest.ContentIn
	RelativePath *string `json:"relative_path" openapi:"writeOnly,minLength=1"`
}

// RpmPackageArgs are the arguments of the task that creates an rpm package unit.
type RpmPackageArgs struct {
	Artifact     int64       `json:"artifact"`
	RelativePath string      `json:"relative_path,omitempty"`
	Labels       meta.Labels `json:"labels"`
	Repository   string      `json:"repository,omitempty"`
	FileURL      string      `json:"file_url,omitempty"`
	NoOverwrite  bool        `json:"no_overwrite,omitempty"`
}

// readRpmPackage reads a package create body; a stored file is read as an rpm now (its
// header is returned), so a bad one is a 400 naming the problem.
func (p *Plugin) readRpmPackage(r *http.Request) (RpmPackageArgs, *meta.Repository, *rpmfile.Header, error) {
	var in rpmPackageIn
	src, err := p.core.Env().ReadContent(r, &in, RepoType, func(map[string]json.RawMessage) error { return nil })
	if err != nil {
		return RpmPackageArgs{}, nil, nil, err
	}
	a := RpmPackageArgs{Artifact: src.Artifact, Labels: src.Labels, FileURL: src.FileURL, NoOverwrite: src.NoOverwrite}
	if in.RelativePath != nil {
		a.RelativePath = *in.RelativePath
	}
	if src.Repository != nil {
		a.Repository = src.Repository.PulpID
	}
	if a.FileURL == "" {
		art, err := meta.ArtifactByID(r.Context(), p.db, a.Artifact)
		if err != nil {
			return a, nil, nil, err
		}
		h, err := ReadPackage(r.Context(), p.store, art, a.RelativePath)
		if err != nil {
			return a, nil, nil, rest.BadField("file", "%v", err)
		}
		return a, src.Repository, h, nil
	}
	return a, src.Repository, nil, nil
}

// createRpmPackage creates (or finds) the package unit of an artifact.
func (p *Plugin) createRpmPackage(ctx context.Context, a RpmPackageArgs) (meta.Content, error) {
	art, err := meta.ArtifactByID(ctx, p.db, a.Artifact)
	if err != nil {
		return meta.Content{}, err
	}
	h, err := ReadPackage(ctx, p.store, art, a.RelativePath)
	if err != nil {
		return meta.Content{}, err
	}
	return StoreUploadedPackage(ctx, p.db, h, a.Labels)
}

func (p *Plugin) rpmPackageCreate(w http.ResponseWriter, r *http.Request) error {
	a, repo, _, err := p.readRpmPackage(r)
	if err != nil {
		return err
	}
	return p.core.Env().DispatchCreate(w, r, packageKind, href.Root+"content/"+segmentOf(PackageType)+"/", a, repo)
}

// rpmPackageUpload creates a package synchronously (content_rpm_packages_upload, 201).
func (p *Plugin) rpmPackageUpload(w http.ResponseWriter, r *http.Request) error {
	a, repo, h, err := p.readRpmPackage(r)
	if err != nil {
		return err
	}
	if repo != nil || h == nil {
		return rest.FieldErrors{"non_field_errors": {"The synchronous upload takes no 'repository' or 'file_url'; use the create operation."}}
	}
	c, err := StoreUploadedPackage(r.Context(), p.db, h, a.Labels)
	if err != nil {
		return err
	}
	items, err := p.renderPackages(r.Context(), []meta.Content{c})
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusCreated, items[0])
}

// packageKind is the general_create kind of packages.
const packageKind = "rpm_package"

// runRpmPackage is the package create task.
func (p *Plugin) runRpmPackage(ctx context.Context, r *task.Run, body json.RawMessage) error {
	var a RpmPackageArgs
	if err := json.Unmarshal(body, &a); err != nil {
		return err
	}
	return p.core.CreateUnit(ctx, r, a.FileURL, &a.Artifact, a.Repository, !a.NoOverwrite, func() (meta.Content, error) { return p.createRpmPackage(ctx, a) })
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

func rpmModuleFilters(typ string) []rest.Filter {
	two := []string{"exact", "in"}
	if typ == DefaultsType {
		return []rest.Filter{{Name: "module", Attr: "module", Lookups: two}, {Name: "sha256", Col: "c.digest", Lookups: []string{"exact"}},
			{Name: "stream", Attr: "stream", Lookups: two}}
	}
	return []rest.Filter{{Name: "arch", Attr: "arch", Lookups: two}, {Name: "context", Attr: "context", Lookups: two}, {Name: "name", Attr: "name", Lookups: two},
		{Name: "sha256", Col: "c.digest", Lookups: []string{"exact"}}, {Name: "stream", Attr: "stream", Lookups: two}, {Name: "version", Attr: "version", Lookups: two}}
}

func rpmModuleOrdering(typ string) map[string]string {
	out := map[string]string{"pk": "c.id", "pulp_id": "c.pulp_id", "pulp_created": "c.created", "pulp_last_updated": "c.updated",
		"pulp_type": "c.type", "timestamp_of_interest": "c.timestamp_of_interest", "pulp_labels": "c.labels", "upstream_id": "c.pulp_id",
		"digest": "c.digest"}
	keys := []string{"module", "profiles", "snippet", "stream"}
	if typ == ModulemdType {
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
	Artifact    int64       `json:"artifact"`
	Labels      meta.Labels `json:"labels"`
	Repository  string      `json:"repository,omitempty"`
	FileURL     string      `json:"file_url,omitempty"`
	NoOverwrite bool        `json:"no_overwrite,omitempty"`
}

// advisoryFileName is what errors call an uploaded advisory.
const advisoryFileName = "the advisory JSON"

// rpmAdvisoryCreate creates an advisory from a JSON file (content_rpm_advisories_create).
// A stored file is read now, so a bad one is a 400 naming the problem.
func (p *Plugin) rpmAdvisoryCreate(w http.ResponseWriter, r *http.Request) error {
	var in rest.ContentIn
	src, err := p.core.Env().ReadContent(r, &in, RepoType, func(map[string]json.RawMessage) error { return nil })
	if err != nil {
		return err
	}
	a := RpmAdvisoryArgs{Artifact: src.Artifact, Labels: src.Labels, FileURL: src.FileURL, NoOverwrite: src.NoOverwrite}
	if src.Repository != nil {
		a.Repository = src.Repository.PulpID
	}
	if a.FileURL == "" {
		art, err := meta.ArtifactByID(r.Context(), p.db, a.Artifact)
		if err != nil {
			return err
		}
		if _, err := ReadAdvisory(r.Context(), p.store, art, advisoryFileName); err != nil {
			return rest.BadField("file", "%v", err)
		}
	}
	return p.core.Env().DispatchCreate(w, r, advisoryKind, href.Root+"content/"+segmentOf(AdvisoryType)+"/", a, src.Repository)
}

// advisoryKind is the general_create kind of advisories.
const advisoryKind = "rpm_advisory"

// runRpmAdvisory is the advisory create task.
func (p *Plugin) runRpmAdvisory(ctx context.Context, r *task.Run, body json.RawMessage) error {
	var a RpmAdvisoryArgs
	if err := json.Unmarshal(body, &a); err != nil {
		return err
	}
	return p.core.CreateUnit(ctx, r, a.FileURL, &a.Artifact, a.Repository, !a.NoOverwrite, func() (meta.Content, error) {
		art, err := meta.ArtifactByID(ctx, p.db, a.Artifact)
		if err != nil {
			return meta.Content{}, err
		}
		u, err := ReadAdvisory(ctx, p.store, art, advisoryFileName)
		if err != nil {
			return meta.Content{}, err
		}
		return StoreAdvisory(ctx, p.db, u, a.Labels)
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

// CompsTask uploads a comps.xml.
const CompsTask = "pulp_rpm.app.tasks.comps.upload_comps"

// compsFileName is what errors call an uploaded comps.xml.
const compsFileName = "the uploaded comps.xml"

// rpmCompsUpload stores a comps.xml's groups, categories, environments and langpacks,
// optionally adding them to a repository (replacing its comps units with replace). The
// file is parsed before the task is queued, so a bad one is a 400 and nothing changes.
func (p *Plugin) rpmCompsUpload(w http.ResponseWriter, r *http.Request) error {
	var in compsIn
	var pf *rest.PendingFile
	raw, err := rest.ReadBody(r, &in, p.core.Env().ReceiveFile(r.Context(), "file", &pf))
	if err == nil {
		err = rest.Decode(raw, &in)
	}
	if err == nil && pf == nil {
		err = rest.BadField("file", "No file was submitted.")
	}
	var repo *meta.Repository
	if err == nil && in.Repository != nil {
		repo, err = p.core.Env().Repository(r.Context(), "repository", *in.Repository, RepoType)
	}
	if err == nil && in.Replace != nil && *in.Replace && repo == nil {
		err = rest.BadField("replace", "Replacing comps units needs a 'repository'.")
	}
	if err != nil {
		pf.Cancel(r.Context())
		return err
	}
	art, err := p.core.Env().CommitArtifact(r.Context(), pf, blob.Expect{Size: -1})
	if err != nil {
		return err
	}
	if _, err := ReadComps(r.Context(), p.store, art, compsFileName); err != nil {
		return rest.BadField("file", "%v", err)
	}
	a := CompsArgs{Artifact: art.ID, Replace: in.Replace != nil && *in.Replace}
	spec := task.Spec{Name: CompsTask, Args: &a}
	if repo != nil {
		a.Repository = repo.PulpID
		spec.Exclusive = []string{href.Repository(repo.Type, repo.PulpID)}
	}
	return p.core.Env().Dispatch(w, r, spec)
}

// runComps is the comps upload task.
func (p *Plugin) runComps(ctx context.Context, r *task.Run) error {
	var a CompsArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	art, err := meta.ArtifactByID(ctx, p.db, a.Artifact)
	if err != nil {
		return err
	}
	c, err := ReadComps(ctx, p.store, art, compsFileName)
	if err != nil {
		return err
	}
	units, err := StoreComps(ctx, p.db, c)
	if err != nil {
		return err
	}
	ch := meta.Change{}
	for _, u := range units {
		r.Created(p.core.UnitHref(u))
		ch.Add = append(ch.Add, u.ID)
	}
	if a.Repository == "" {
		return nil
	}
	if a.Replace {
		repo, err := meta.RepositoryByPulpID(ctx, p.db, a.Repository)
		if err != nil {
			return err
		}
		old, err := meta.VersionContentIDs(ctx, p.db, repo.ID, repo.LatestVersion, CompsTypes...)
		if err != nil {
			return err
		}
		for _, id := range old {
			if !slices.Contains(ch.Add, id) {
				ch.Remove = append(ch.Remove, id)
			}
		}
	}
	return p.core.NewVersion(ctx, r, a.Repository, ch)
}
