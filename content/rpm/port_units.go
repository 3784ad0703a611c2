package rpm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"pith/content"
	"pith/content/rpm/comps"
	"pith/content/rpm/modulemd"
	"pith/meta"
)

// Modular documents, comps units and repo metadata files in Pulp's format. A modular
// document is imported from its snippet, as sync reads it; comps units from their
// fields, their digests computed again as sync computes them.

func (e *exporter) modulemds(ctx context.Context) error {
	type module struct {
		modulemd.Modulemd
		Snippet string `json:"snippet"`
	}
	return exportAttrs(ctx, e, ModulemdType, modulemdResource, []string{"name", "stream", "version", "context", "arch",
		"static_context", "dependencies", "artifacts", "package_ids", "profiles", "description", "digest", "snippet"},
		func(u meta.Content, m *module) []any {
			var pkgIDs []string
			for _, a := range m.Artifacts {
				pkgIDs = append(pkgIDs, e.modular[a]...)
			}
			return []any{m.Name, m.Stream, fmt.Sprint(m.Version), m.Context, m.Arch, m.StaticContext,
				content.JSON{V: m.Dependencies}, content.JSON{V: m.Artifacts}, strings.Join(pkgIDs, ","),
				content.JSON{V: m.Profiles}, m.Description, u.Digest, m.Snippet}
		})
}

func (e *exporter) defaults(ctx context.Context) error {
	type defaults struct {
		modulemd.ModulemdDefaults
		Snippet string `json:"snippet"`
	}
	return exportAttrs(ctx, e, DefaultsType, defaultsResource, []string{"module", "stream", "profiles", "digest", "snippet"},
		func(u meta.Content, d *defaults) []any {
			return []any{d.Module, d.Stream, content.JSON{V: d.Profiles}, u.Digest, d.Snippet}
		})
}

// obsoletes writes pith's own resource of module obsoletes, which Pulp does not export.
func (e *exporter) obsoletes(ctx context.Context) error {
	type obsolete struct {
		modulemd.ModulemdObsolete
		Snippet string `json:"snippet"`
	}
	return exportAttrs(ctx, e, ObsoleteType, obsoleteResource, []string{"modified", "module_name", "module_stream", "message",
		"override_previous", "module_context", "eol_date", "obsoleted_by_module_name", "obsoleted_by_module_stream", "snippet"},
		func(u meta.Content, o *obsolete) []any {
			var override *bool
			if o.OverridePrevious != nil {
				b := bool(*o.OverridePrevious)
				override = &b
			}
			return []any{o.Modified, o.ModuleName, o.ModuleStream, o.Message, override, o.ModuleContext, o.EOLDate,
				o.ObsoletedByModuleName, o.ObsoletedByModuleStream, o.Snippet}
		})
}

func (im *importer) modulemds(ctx context.Context) error {
	return im.documents(ctx, modulemdResource, "modulemd")
}

func (im *importer) defaults(ctx context.Context) error {
	return im.documents(ctx, defaultsResource, "modulemd-defaults")
}

func (im *importer) obsoletes(ctx context.Context) error {
	return im.documents(ctx, obsoleteResource, "modulemd-obsoletes")
}

// documents stores the modular documents of a resource from their snippets, each as
// sync stores the document; typ is the document type the resource must hold.
func (im *importer) documents(ctx context.Context, name, typ string) error {
	var units []meta.Content
	var upstream []string
	flush := func() error {
		err := im.storeUnits(ctx, units, upstream)
		units, upstream = units[:0], upstream[:0]
		return err
	}
	err := im.rows(name, func(c *cells) error {
		id, snippet := c.upstreamID(), c.need("snippet")
		if c.err != nil {
			return c.err
		}
		doc, err := modulemd.ParseSnippet("snippet", snippet)
		if err != nil {
			return fmt.Errorf("column snippet: %w", err)
		}
		if doc.Type != typ {
			return fmt.Errorf("column snippet: a %s document, not %s", doc.Type, typ)
		}
		u, err := DocumentUnit(doc)
		if err != nil {
			return fmt.Errorf("column snippet: %w", err)
		}
		units, upstream = append(units, u), append(upstream, id)
		if len(units) == batchSize {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// displayOrder renders a comps display_order.
func displayOrder(n *int) any {
	if n == nil {
		return nil
	}
	return *n
}

func (e *exporter) groups(ctx context.Context) error {
	return exportAttrs(ctx, e, GroupType, groupResource, []string{"id", "default", "user_visible", "display_order", "name",
		"description", "packages", "biarch_only", "desc_by_lang", "name_by_lang", "digest"},
		func(u meta.Content, g *comps.Group) []any {
			return []any{g.ID, g.Default, g.UserVisible, displayOrder(g.DisplayOrder), g.Name, g.Description,
				content.JSON{V: g.Packages}, g.BiarchOnly, content.JSON{V: g.DescByLang}, content.JSON{V: g.NameByLang}, u.NaturalKey}
		})
}

func (e *exporter) categories(ctx context.Context) error {
	return exportAttrs(ctx, e, CategoryType, categoryResource, []string{"id", "name", "description", "display_order",
		"group_ids", "desc_by_lang", "name_by_lang", "digest"},
		func(u meta.Content, x *comps.Category) []any {
			return []any{x.ID, x.Name, x.Description, displayOrder(x.DisplayOrder), content.JSON{V: x.GroupIDs},
				content.JSON{V: x.DescByLang}, content.JSON{V: x.NameByLang}, u.NaturalKey}
		})
}

func (e *exporter) environments(ctx context.Context) error {
	return exportAttrs(ctx, e, EnvironmentType, environmentResource, []string{"id", "name", "description", "display_order",
		"group_ids", "option_ids", "desc_by_lang", "name_by_lang", "digest"},
		func(u meta.Content, x *comps.Environment) []any {
			return []any{x.ID, x.Name, x.Description, displayOrder(x.DisplayOrder), content.JSON{V: x.GroupIDs},
				content.JSON{V: x.OptionIDs}, content.JSON{V: x.DescByLang}, content.JSON{V: x.NameByLang}, u.NaturalKey}
		})
}

func (e *exporter) langpacks(ctx context.Context) error {
	return exportAttrs(ctx, e, LangpacksType, langpacksResource, []string{"matches", "digest"},
		func(u meta.Content, x *comps.Langpacks) []any {
			return []any{content.JSON{V: x.Matches}, u.NaturalKey}
		})
}

// comps stores the comps units of the four comps resources, in one batch per resource
// (a comps.xml has few).
func (im *importer) comps(ctx context.Context) error {
	order := func(c *cells) *int {
		n, ok := c.int("display_order")
		if !ok {
			return nil
		}
		v := int(n)
		return &v
	}
	// Empty lists and maps are empty, not null, as the comps parser leaves them.
	byLang := func(c *cells, col string) map[string]string {
		m := map[string]string{}
		c.json(col, &m)
		return m
	}
	groupIDs := func(c *cells, col string) []comps.GroupID {
		ids := []comps.GroupID{}
		c.json(col, &ids)
		return ids
	}
	resources := []struct {
		name string
		unit func(c *cells) (*comps.Comps, error)
	}{
		{groupResource, func(c *cells) (*comps.Comps, error) {
			g := comps.Group{ID: c.need("id"), Default: c.flag("default"), UserVisible: c.flag("user_visible"),
				DisplayOrder: order(c), Name: c.str("name"), Description: c.str("description"), BiarchOnly: c.flag("biarch_only"),
				DescByLang: byLang(c, "desc_by_lang"), NameByLang: byLang(c, "name_by_lang"), Packages: []comps.Package{}}
			c.json("packages", &g.Packages)
			g.Digest = g.Sum()
			return &comps.Comps{Groups: []comps.Group{g}}, nil
		}},
		{categoryResource, func(c *cells) (*comps.Comps, error) {
			x := comps.Category{ID: c.need("id"), Name: c.str("name"), Description: c.str("description"), DisplayOrder: order(c),
				GroupIDs: groupIDs(c, "group_ids"), DescByLang: byLang(c, "desc_by_lang"), NameByLang: byLang(c, "name_by_lang")}
			x.Digest = x.Sum()
			return &comps.Comps{Categories: []comps.Category{x}}, nil
		}},
		{environmentResource, func(c *cells) (*comps.Comps, error) {
			x := comps.Environment{ID: c.need("id"), Name: c.str("name"), Description: c.str("description"), DisplayOrder: order(c),
				GroupIDs: groupIDs(c, "group_ids"), OptionIDs: groupIDs(c, "option_ids"), DescByLang: byLang(c, "desc_by_lang"),
				NameByLang: byLang(c, "name_by_lang")}
			x.Digest = x.Sum()
			return &comps.Comps{Environments: []comps.Environment{x}}, nil
		}},
		{langpacksResource, func(c *cells) (*comps.Comps, error) {
			x := comps.Langpacks{Matches: byLang(c, "matches")}
			x.Digest = x.Sum()
			return &comps.Comps{Langpacks: &x}, nil
		}},
	}
	for _, r := range resources {
		var units []meta.Content
		var upstream []string
		err := im.rows(r.name, func(c *cells) error {
			id := c.upstreamID()
			doc, err := r.unit(c)
			if err != nil || c.err != nil {
				return errors.Join(err, c.err)
			}
			us, err := compsUnits(doc)
			if err != nil {
				return err
			}
			units, upstream = append(units, us...), append(upstream, id)
			return nil
		})
		if err != nil {
			return err
		}
		if err := im.storeUnits(ctx, units, upstream); err != nil {
			return err
		}
	}
	return nil
}

func (e *exporter) metadataFiles(ctx context.Context) error {
	return exportAttrs(ctx, e, RepoMetadataFileType, metadataResource, []string{"data_type", "checksum_type", "checksum", "relative_path"},
		func(u meta.Content, f *repoMetadataFile) []any {
			return []any{f.DataType, f.ChecksumType, f.Checksum, f.RelativePath}
		})
}

// metadataFiles stores repo metadata files with their exported files; the unit's digest
// is its file's sha256, as sync records it.
func (im *importer) metadataFiles(ctx context.Context) error {
	return im.rows(metadataResource, func(c *cells) error {
		id := c.upstreamID()
		f := repoMetadataFile{DataType: c.need("data_type"), ChecksumType: c.str("checksum_type"), Checksum: c.need("checksum"),
			RelativePath: c.need("relative_path")}
		if c.err != nil {
			return c.err
		}
		if _, err := content.CleanRelativePath(f.RelativePath); err != nil {
			return fmt.Errorf("column relative_path: %w", err)
		}
		files := im.x.Files(id)
		digest, err := fileSHA256(ctx, im.x.Tx(), files, f.RelativePath)
		if err != nil {
			return err
		}
		if digest == "" && f.ChecksumType == "sha256" {
			digest = strings.ToLower(f.Checksum) // the same file's
		}
		attrs, err := json.Marshal(f)
		if err != nil {
			return err
		}
		u, _, err := meta.PutContent(ctx, im.x.Tx(), meta.Content{Type: RepoMetadataFileType, NaturalKey: f.DataType + " " + f.Checksum + " " + f.RelativePath,
			RepoKey: f.DataType, RelativePath: f.RelativePath, Digest: digest, Attrs: attrs}, files)
		if err != nil {
			return fmt.Errorf("store repo metadata file %s: %w", f.RelativePath, err)
		}
		im.x.Imported(id, u.ID)
		return nil
	})
}

// fileSHA256 is the sha256 of the file at path among a unit's files, "" when it has no
// artifact.
func fileSHA256(ctx context.Context, q meta.Querier, files []meta.ContentFile, path string) (string, error) {
	for _, f := range files {
		if f.RelativePath != path {
			continue
		}
		if f.SHA256 != "" || f.ArtifactID == nil {
			return f.SHA256, nil
		}
		a, err := meta.ArtifactByID(ctx, q, *f.ArtifactID)
		if err != nil {
			return "", fmt.Errorf("artifact of %s: %w", path, err)
		}
		return a.SHA256, nil
	}
	return "", nil
}
