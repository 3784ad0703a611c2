package rpm

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"pith/blob"
	"pith/content"
	"pith/meta"
)

// Export and import in Pulp's format (docs/research/pulp-export-import.md §1.6, §1.7):
// one resource file per pulp_rpm model resource, in pulp_rpm's IMPORT_ORDER, rows keyed
// by the exporter's unit ids (upstream_id), every cell a string as Pulp writes it. An
// import rebuilds each unit as a sync of the same metadata builds it, so that its
// natural key finds the unit a sync made.

// resource is the member name of a pulp_rpm model resource's file.
func resource(class string) string { return "pulp_rpm.app.modelresource." + class + ".json" }

// The resource files, in pulp_rpm's IMPORT_ORDER (the repository's first).
var (
	repositoryResource   = resource("RpmRepositoryResource")
	packageResource      = resource("PackageResource")
	modulemdResource     = resource("ModulemdResource")
	defaultsResource     = resource("ModulemdDefaultsResource")
	groupResource        = resource("PackageGroupResource")
	categoryResource     = resource("PackageCategoryResource")
	environmentResource  = resource("PackageEnvironmentResource")
	langpacksResource    = resource("PackageLangpacksResource")
	advisoryResource     = resource("UpdateRecordResource")
	metadataResource     = resource("RepoMetadataFileResource")
	treeResource         = resource("DistributionTreeResource")
	treeRepoResource     = resource("DistributionTreeRepositoryResource")
	checksumResource     = resource("ChecksumResource")
	imageResource        = resource("ImageResource")
	addonResource        = resource("AddonResource")
	variantResource      = resource("VariantResource")
	referenceResource    = resource("UpdateReferenceResource")
	collectionResource   = resource("UpdateCollectionResource")
	collectionPkgResoure = resource("UpdateCollectionPackageResource")
	// obsoleteResource is pith's own: pulp_rpm exports no module obsoletes (its
	// importer reads only the files of IMPORT_ORDER, so it ignores this one).
	obsoleteResource = resource("ModulemdObsoleteResource")
)

// rpmRepositoryColumns are RpmRepositoryResource's own columns.
var rpmRepositoryColumns = []string{"metadata_signing_service", "package_signing_service", "package_signing_fingerprint",
	"last_sync_details", "retain_package_versions", "autopublish", "checksum_type", "compression_type", "layout",
	"metadata_checksum_type", "package_checksum_type", "repo_config"}

// Port says how rpm repository versions are exported and imported in Pulp's format.
func (p *Plugin) Port() content.Port {
	return content.Port{
		App:                "rpm",
		RepositoryResource: repositoryResource,
		RepositoryColumns:  rpmRepositoryColumns,
		RepositoryRow:      repositoryRow,
		RepositoryFields:   repositoryFields,
		Export:             export,
		Import: func(ctx context.Context, x content.PortIn) error {
			return importVersion(ctx, x, p.store)
		},
	}
}

// repositoryRow renders an rpm repository's own columns. Signing services are named by
// their id, as Pulp renders foreign keys; the last sync's details are pith's own and
// mean nothing to another server, so they are left out.
func repositoryRow(repo meta.Repository) ([]any, error) {
	var a rpmRepoAttrs
	if len(repo.Attrs) > 0 {
		if err := json.Unmarshal(repo.Attrs, &a); err != nil {
			return nil, fmt.Errorf("attrs of repository %q: %w", repo.Name, err)
		}
	}
	var signing any
	if a.MetadataSigningService != nil {
		signing = lastSegment(*a.MetadataSigningService)
	}
	var config any
	if len(a.RepoConfig) > 0 {
		if err := json.Unmarshal(a.RepoConfig, &config); err != nil {
			return nil, fmt.Errorf("repo_config of repository %q: %w", repo.Name, err)
		}
	}
	return []any{signing, nil, a.PackageSigningFingerprint, content.JSON{}, a.RetainPackageVersions, a.Autopublish,
		a.ChecksumType, a.CompressionType, a.Layout, nil, nil, content.JSON{V: config}}, nil
}

// lastSegment is the last path segment of an href (its id).
func lastSegment(h string) string {
	h = strings.TrimSuffix(h, "/")
	return h[strings.LastIndexByte(h, '/')+1:]
}

// repositoryFields are the API fields of a repository an import creates, from its row.
// Signing services are left out: an id of the exporting server names nothing here.
func repositoryFields(row content.Row) (map[string]any, error) {
	c := cells{row: row}
	out := map[string]any{}
	if b, ok := c.bool("autopublish"); ok {
		out["autopublish"] = b
	}
	if n, ok := c.int("retain_package_versions"); ok {
		if n < 0 {
			return nil, fmt.Errorf("column retain_package_versions: %d is negative", n)
		}
		out["retain_package_versions"] = n
	}
	for col, allowed := range map[string]map[string]bool{"checksum_type": checksumTypes, "compression_type": compressionTypes, "layout": layouts} {
		v := c.str(col)
		if v == "" {
			continue
		}
		if !allowed[v] {
			return nil, fmt.Errorf("column %s: %q is not one of the values allowed", col, v)
		}
		out[col] = v
	}
	if v := c.str("package_signing_fingerprint"); v != "" {
		out["package_signing_fingerprint"] = v
	}
	var config map[string]any
	if c.json("repo_config", &config) {
		out["repo_config"] = config
	}
	if c.err != nil {
		return nil, c.err
	}
	return out, nil
}

// export writes the rpm resource files of one version, in IMPORT_ORDER, and maps its
// units (and those of its distribution trees' sub-repositories, under their names).
func export(ctx context.Context, x content.PortOut) error {
	e, err := newExporter(ctx, x)
	if err != nil {
		return err
	}
	return inTurn(ctx, e.packages, e.modulemds, e.defaults, e.groups, e.categories, e.environments,
		e.langpacks, e.advisories, e.metadataFiles, e.trees, e.advisoryParts, e.obsoletes)
}

// inTurn runs steps one after the other, up to the first failure.
func inTurn(ctx context.Context, steps ...func(context.Context) error) error {
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// exporter is one version's export.
type exporter struct {
	x content.PortOut
	// subs are the sub-repositories of the version's distribution trees, by tree unit
	// id: their latest versions are exported with the version, as Pulp exports them.
	subs map[int64]map[string]meta.Repository
	// modular are the NEVRAs the version's modules list as artifacts, each with the
	// pkgIds of the exported packages of that NEVRA (ModulemdResource's package_ids).
	modular map[string][]string
}

func newExporter(ctx context.Context, x content.PortOut) (*exporter, error) {
	e := &exporter{x: x, subs: map[int64]map[string]meta.Repository{}, modular: map[string][]string{}}
	err := x.Units(ctx, func(units []meta.Content) error {
		for _, u := range units {
			subs, err := meta.SubRepositories(ctx, x.Q(), u.ID)
			if err != nil {
				return fmt.Errorf("sub-repositories of distribution tree %s: %w", u.PulpID, err)
			}
			if len(subs) > 0 {
				e.subs[u.ID] = subs
			}
		}
		return nil
	}, DistributionTreeType)
	if err != nil {
		return nil, err
	}
	err = e.each(ctx, ModulemdType, false, func(u meta.Content) error {
		var m struct {
			Artifacts []string `json:"artifacts"`
		}
		if err := json.Unmarshal(u.Attrs, &m); err != nil {
			return fmt.Errorf("modulemd %s: %w", u.PulpID, err)
		}
		for _, a := range m.Artifacts {
			if _, ok := e.modular[a]; !ok {
				e.modular[a] = nil
			}
		}
		return nil
	})
	return e, err
}

// eachBatch calls fn with the units of typ of the version, then with those of the
// sub-repositories' latest versions it does not hold, in batches; with mapped, each
// batch is listed in content_mapping.json under its repository's name.
func (e *exporter) eachBatch(ctx context.Context, typ string, mapped bool, fn func([]meta.Content) error) error {
	var seen map[int64]bool
	if len(e.subs) > 0 {
		seen = map[int64]bool{}
	}
	err := e.x.Units(ctx, func(units []meta.Content) error {
		for _, u := range units {
			if seen != nil {
				seen[u.ID] = true
			}
		}
		if mapped {
			e.x.Map(e.x.Repository().Name, units)
		}
		return fn(units)
	}, typ)
	if err != nil {
		return err
	}
	for _, tree := range slices.Sorted(maps.Keys(e.subs)) {
		for _, path := range slices.Sorted(maps.Keys(e.subs[tree])) {
			sub := e.subs[tree][path]
			err := subUnits(ctx, e.x.Q(), sub, typ, func(units []meta.Content) error {
				if mapped {
					e.x.Map(sub.Name, units)
				}
				fresh := units[:0:0]
				for _, u := range units {
					if !seen[u.ID] {
						seen[u.ID] = true
						fresh = append(fresh, u)
					}
				}
				return fn(fresh)
			})
			if err != nil {
				return fmt.Errorf("sub-repository %q: %w", sub.Name, err)
			}
		}
	}
	return nil
}

// each is eachBatch one unit at a time.
func (e *exporter) each(ctx context.Context, typ string, mapped bool, fn func(meta.Content) error) error {
	return e.eachBatch(ctx, typ, mapped, func(units []meta.Content) error {
		for _, u := range units {
			if err := fn(u); err != nil {
				return err
			}
		}
		return nil
	})
}

// subUnits calls fn with the units of typ in a sub-repository's latest version, in
// batches of 500, by id.
func subUnits(ctx context.Context, q meta.Querier, repo meta.Repository, typ string, fn func([]meta.Content) error) error {
	var after int64
	for {
		l := meta.List{Limit: 500}
		l.And("c.type = ?", typ)
		l.And("c.id > ?", after)
		l.And(inVersion, repo.ID, repo.LatestVersion, repo.LatestVersion)
		units, _, err := meta.ListContent(ctx, q, l)
		if err != nil || len(units) == 0 {
			return err
		}
		if err := fn(units); err != nil {
			return err
		}
		after = units[len(units)-1].ID
	}
}

// contentColumns are the columns of a content resource: Pulp's BaseContentResource
// ones around the type's own.
func contentColumns(own ...string) []string {
	return append(append([]string{"pulp_type", "upstream_id", "pulp_domain"}, own...), "_pulp_domain")
}

// contentResource starts the resource file of a content type; its Row takes the unit
// and the values of its own columns.
func (e *exporter) contentResource(name string, own ...string) (*unitWriter, error) {
	w, err := e.x.Resource(name, contentColumns(own...)...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &unitWriter{w: w, domain: e.x.Domain(), name: name}, nil
}

// unitWriter writes the rows of a content resource.
type unitWriter struct {
	w      content.RowWriter
	domain string
	name   string
}

func (w *unitWriter) Row(u meta.Content, values ...any) error {
	row := make([]any, 0, len(values)+4)
	row = append(append(append(row, u.Type, u.PulpID, w.domain), values...), w.domain)
	if err := w.w.Row(row...); err != nil {
		return fmt.Errorf("%s: %s %s: %w", w.name, u.Type, u.PulpID, err)
	}
	return nil
}

func (w *unitWriter) Close() error { return w.w.Close() }

// exportAttrs writes one row per unit of typ from its attrs, decoded as T.
func exportAttrs[T any](ctx context.Context, e *exporter, typ, name string, columns []string, row func(u meta.Content, v *T) []any) error {
	w, err := e.contentResource(name, columns...)
	if err != nil {
		return err
	}
	err = e.each(ctx, typ, true, func(u meta.Content) error {
		v := new(T)
		if err := json.Unmarshal(u.Attrs, v); err != nil {
			return fmt.Errorf("%s %s: %w", typ, u.PulpID, err)
		}
		return w.Row(u, row(u, v)...)
	})
	if err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// importVersion stores the units of one version's rpm resource files, in the order of
// the files.
func importVersion(ctx context.Context, x content.PortIn, store *blob.Store) error {
	im := &importer{x: x, store: store}
	return inTurn(ctx, im.packages, im.modulemds, im.defaults, im.comps, im.readAdvisories,
		im.metadataFiles, im.trees, im.advisoryParts, im.storeAdvisories, im.obsoletes, im.subVersions)
}

// importer is one version's import.
type importer struct {
	x     content.PortIn
	store *blob.Store // the artifacts imported, read for a tree's .treeinfo
	// pending are the advisories read, by digest, waiting for their references,
	// collections and packages, which come in later files; order is their order.
	pending map[string]*pendingAdvisory
	order   []*pendingAdvisory
	parts   int // rows of the advisories' parts held
	// subs are the sub-repositories of the trees imported, by upstream name.
	subs map[string]meta.Repository
}

// rows reads a resource file's rows, each error naming the row (PortIn.Rows names the
// file and row; cells' errors name the column).
func (im *importer) rows(name string, fn func(c *cells) error) error {
	return im.x.Rows(name, func(r content.Row) error {
		c := &cells{row: r}
		if err := fn(c); err != nil {
			return err
		}
		return c.err
	})
}

// upstreamID is a content row's upstream_id, required.
func (c *cells) upstreamID() string { return c.need("upstream_id") }

// storeUnits stores units without files, reporting each with its upstream id.
func (im *importer) storeUnits(ctx context.Context, units []meta.Content, upstream []string) error {
	for i, u := range units {
		c, _, err := meta.PutContent(ctx, im.x.Tx(), u, im.x.Files(upstream[i]))
		if err != nil {
			return fmt.Errorf("store %s %s: %w", u.Type, u.NaturalKey, err)
		}
		im.x.Imported(upstream[i], c.ID)
	}
	return nil
}

// subVersions gives each sub-repository of the trees imported a version of what the
// export's content_mapping lists under its upstream name (the engine makes the
// destination's own version).
func (im *importer) subVersions(ctx context.Context) error {
	for name, repo := range im.subs {
		ids, err := im.x.Mapped(name)
		if err != nil {
			return fmt.Errorf("sub-repository %q: %w", name, err)
		}
		if _, _, err := meta.NewVersion(ctx, im.x.Tx(), repo.ID, meta.Change{RemoveAll: true, Add: ids}); err != nil {
			return fmt.Errorf("version of sub-repository %q: %w", repo.Name, err)
		}
	}
	return nil
}
