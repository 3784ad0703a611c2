package rpm

import (
	"context"
	"encoding/json"
	"fmt"

	"pith/content"
	"pith/content/rpm/repodata"
	"pith/meta"
)

// packageColumns are PackageResource's own columns.
var packageColumns = []string{"name", "epoch", "version", "release", "arch", "evr", "pkgId", "checksum_type", "summary",
	"description", "url", "changelogs", "files", "requires", "provides", "conflicts", "obsoletes", "suggests", "enhances",
	"recommends", "supplements", "location_base", "location_href", "rpm_buildhost", "rpm_group", "rpm_license",
	"rpm_packager", "rpm_sourcerpm", "rpm_vendor", "rpm_header_start", "rpm_header_end", "size_archive", "size_installed",
	"size_package", "time_build", "time_file", "is_modular", "signing_keys"}

// depColumns are the dependency columns, with the package's lists they hold.
func depColumns(p *repodata.Package) []struct {
	col  string
	deps *[]repodata.Dep
} {
	return []struct {
		col  string
		deps *[]repodata.Dep
	}{{"requires", &p.Requires}, {"provides", &p.Provides}, {"conflicts", &p.Conflicts}, {"obsoletes", &p.Obsoletes},
		{"suggests", &p.Suggests}, {"enhances", &p.Enhances}, {"recommends", &p.Recommends}, {"supplements", &p.Supplements}}
}

// packages writes PackageResource: the attrs of each package, its files and changelogs
// from its stored fragments, dependencies, files and changelogs in the API's forms.
// evr, pulp_rpm's read-only sort key, is left empty (its importer ignores it); so are
// signing_keys, which pith does not record.
func (e *exporter) packages(ctx context.Context) error {
	w, err := e.contentResource(packageResource, packageColumns...)
	if err != nil {
		return err
	}
	err = e.eachBatch(ctx, PackageType, true, func(units []meta.Content) error {
		ids := make([]int64, len(units))
		for i, u := range units {
			ids[i] = u.ID
		}
		details, err := packageDetails(ctx, e.x.Q(), ids)
		if err != nil {
			return err
		}
		for _, u := range units {
			var p repodata.Package
			if err := json.Unmarshal(u.Attrs, &p); err != nil {
				return fmt.Errorf("package %s: %w", u.PulpID, err)
			}
			var files, logs [][]any
			if d := details[u.ID]; d != nil {
				files, logs = fileCells(d.Files), changelogCells(d.Changelogs)
			}
			if pkgIDs, ok := e.modular[p.NEVRA()]; ok {
				e.modular[p.NEVRA()] = append(pkgIDs, p.PkgID)
			}
			err := w.Row(u, p.Name, p.Epoch, p.Version, p.Release, p.Arch, "", p.PkgID, p.ChecksumType, p.Summary,
				p.Description, p.URL, content.JSON{V: logs}, content.JSON{V: files}, content.JSON{V: deps(p.Requires)},
				content.JSON{V: deps(p.Provides)}, content.JSON{V: deps(p.Conflicts)}, content.JSON{V: deps(p.Obsoletes)},
				content.JSON{V: deps(p.Suggests)}, content.JSON{V: deps(p.Enhances)}, content.JSON{V: deps(p.Recommends)},
				content.JSON{V: deps(p.Supplements)}, p.LocationBase, p.LocationHref, p.BuildHost, p.Group, p.License,
				p.Packager, p.SourceRPM, p.Vendor, p.HeaderStart, p.HeaderEnd, p.SizeArchive, p.SizeInstalled,
				p.SizePackage, p.TimeBuild, p.TimeFile, p.IsModular, "")
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// packages stores the packages of PackageResource in batches, each built as a sync
// builds it from yum metadata (the same attrs and fragments), with its exported files.
func (im *importer) packages(ctx context.Context) error {
	var rows []packageRow
	var upstream []string
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		units, _, err := storePackages(ctx, im.x.Tx(), rows, nil, "", false)
		if err != nil {
			return err
		}
		for i, u := range units {
			im.x.Imported(upstream[i], u.ID)
		}
		rows, upstream = rows[:0], upstream[:0]
		return nil
	}
	err := im.rows(packageResource, func(c *cells) error {
		id := c.upstreamID()
		pkg := packageOf(c)
		if c.err != nil {
			return c.err
		}
		if _, err := content.CleanRelativePath(pkg.LocationHref); err != nil {
			return fmt.Errorf("column location_href: %w", err)
		}
		row, err := newPackageRow(pkg)
		if err != nil {
			return err
		}
		row.files = im.x.Files(id)
		rows, upstream = append(rows, row), append(upstream, id)
		if len(rows) == batchSize {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// packageOf is the package a PackageResource row describes.
func packageOf(c *cells) *repodata.Package {
	p := &repodata.Package{Name: c.need("name"), Epoch: c.str("epoch"), Version: c.need("version"), Release: c.need("release"),
		Arch: c.need("arch"), PkgID: c.need("pkgId"), ChecksumType: c.need("checksum_type"), Summary: c.str("summary"),
		Description: c.str("description"), URL: c.str("url"), LocationBase: c.str("location_base"),
		LocationHref: c.need("location_href"), BuildHost: c.str("rpm_buildhost"), Group: c.str("rpm_group"),
		License: c.str("rpm_license"), Packager: c.str("rpm_packager"), SourceRPM: c.str("rpm_sourcerpm"),
		Vendor: c.str("rpm_vendor"), HeaderStart: c.num("rpm_header_start"), HeaderEnd: c.num("rpm_header_end"),
		SizeArchive: c.num("size_archive"), SizeInstalled: c.num("size_installed"), SizePackage: c.num("size_package"),
		TimeBuild: c.num("time_build"), TimeFile: c.num("time_file"), IsModular: c.flag("is_modular")}
	if p.Epoch == "" {
		p.Epoch = "0"
	}
	for _, d := range depColumns(p) {
		*d.deps = depsOf(c, d.col)
	}
	var files [][3]*string
	c.json("files", &files)
	for i, f := range files {
		if f[1] == nil || f[2] == nil {
			c.fail(fmt.Errorf("column files: entry %d has no directory or name", i))
			return p
		}
		file := repodata.File{Path: *f[1] + *f[2]}
		if f[0] != nil {
			file.Type = *f[0]
		}
		p.Files = append(p.Files, file)
	}
	var raw [][]json.RawMessage
	c.json("changelogs", &raw)
	for i, r := range raw {
		var l repodata.Changelog
		if len(r) != 3 || json.Unmarshal(r[0], &l.Author) != nil || json.Unmarshal(r[1], &l.Date) != nil || json.Unmarshal(r[2], &l.Text) != nil {
			c.fail(fmt.Errorf("column changelogs: entry %d is not [author, date, text]", i))
			return p
		}
		p.Changelogs = append(p.Changelogs, l)
	}
	return p
}

// depsOf reads a dependency column: [name, flags, epoch, version, release, pre] each.
func depsOf(c *cells, col string) []repodata.Dep {
	var raw [][]json.RawMessage
	if !c.json(col, &raw) {
		return nil
	}
	out := make([]repodata.Dep, 0, len(raw))
	for i, r := range raw {
		var d repodata.Dep
		var flags, epoch, version, release *string
		ok := len(r) == 6
		for j, dst := range []any{&d.Name, &flags, &epoch, &version, &release, &d.Pre} {
			if ok && json.Unmarshal(r[j], dst) != nil {
				ok = false
			}
		}
		if !ok || d.Name == "" {
			c.fail(fmt.Errorf("column %s: entry %d is not [name, flags, epoch, version, release, pre]", col, i))
			return nil
		}
		if flags != nil && *flags != "" {
			d.Flags = *flags
			for _, f := range []struct{ dst, src *string }{{&d.Epoch, epoch}, {&d.Version, version}, {&d.Release, release}} {
				if f.src != nil {
					*f.dst = *f.src
				}
			}
		}
		out = append(out, d)
	}
	return out
}
