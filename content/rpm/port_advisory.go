package rpm

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"pith/content"
	"pith/content/rpm/updateinfo"
	"pith/meta"
)

// Advisories in Pulp's format: UpdateRecordResource holds the advisories; their
// references, collections and collections' packages are rows of three later files,
// linked by the advisory's digest (a package by "<collection name>|<digest>"). pith's
// digest is the advisory's Sum, the second half of its natural key; an import computes
// it again from the advisory put back together, as sync computes it.

// sumTypes are createrepo_c's checksum types by number (cr_ChecksumType), as pulp_rpm
// stores a collection package's sum_type.
var sumTypes = []string{"", "md5", "sha", "sha1", "sha224", "sha256", "sha384", "sha512"}

// sumTypeNumber is the number of a sum type, 0 (unknown) when it has none.
func sumTypeNumber(s string) int {
	for i, t := range sumTypes {
		if t == strings.ToLower(s) {
			return i
		}
	}
	return 0
}

// maxAdvisoryParts bounds the references, collections and packages an import holds
// until the advisories they belong to are stored.
const maxAdvisoryParts = 5_000_000

// advisoryDigest is an advisory unit's digest: the end of its natural key.
func advisoryDigest(u meta.Content) string {
	return u.NaturalKey[strings.LastIndexByte(u.NaturalKey, ' ')+1:]
}

func (e *exporter) advisories(ctx context.Context) error {
	return exportAttrs(ctx, e, AdvisoryType, advisoryResource, []string{"id", "updated_date", "description", "issued_date",
		"fromstr", "status", "title", "summary", "version", "type", "severity", "solution", "release", "rights",
		"reboot_suggested", "pushcount", "digest"},
		func(c meta.Content, u *updateinfo.Update) []any {
			return []any{u.ID, u.UpdatedDate, u.Description, u.IssuedDate, u.FromStr, u.Status, u.Title, u.Summary,
				u.Version, u.Type, u.Severity, u.Solution, u.Release, u.Rights, u.RebootSuggested, u.PushCount, advisoryDigest(c)}
		})
}

// advisoryParts writes the references, collections and collection packages of the
// advisories, one file after the other.
func (e *exporter) advisoryParts(ctx context.Context) error {
	parts := []struct {
		name    string
		columns []string
		rows    func(digest string, u *updateinfo.Update) [][]any
	}{
		{referenceResource, []string{"href", "ref_id", "title", "ref_type", "update_record"}, func(digest string, u *updateinfo.Update) [][]any {
			var out [][]any
			for _, r := range u.References {
				out = append(out, []any{r.Href, r.ID, r.Title, r.Type, digest})
			}
			return out
		}},
		{collectionResource, []string{"name", "shortname", "module", "update_record"}, func(digest string, u *updateinfo.Update) [][]any {
			var out [][]any
			for _, c := range u.Pkglist {
				var module any
				if m := c.Module; m != nil {
					module = map[string]any{"name": m.Name, "stream": m.Stream, "version": m.Version, "context": m.Context, "arch": m.Arch}
				}
				out = append(out, []any{c.Name, c.ShortName, content.JSON{V: module}, digest})
			}
			return out
		}},
		{collectionPkgResoure, []string{"arch", "epoch", "filename", "name", "reboot_suggested", "relogin_suggested",
			"restart_suggested", "release", "src", "sum", "sum_type", "version", "update_collection"}, func(digest string, u *updateinfo.Update) [][]any {
			var out [][]any
			for _, c := range u.Pkglist {
				for _, p := range c.Packages {
					out = append(out, []any{p.Arch, p.Epoch, p.Filename, p.Name, p.RebootSuggested, p.ReloginSuggested,
						p.RestartSuggested, p.Release, p.Src, p.Sum, sumTypeNumber(p.SumType), p.Version, c.Name + "|" + digest})
				}
			}
			return out
		}},
	}
	for _, part := range parts {
		w, err := e.x.Resource(part.name, part.columns...)
		if err != nil {
			return fmt.Errorf("%s: %w", part.name, err)
		}
		err = e.each(ctx, AdvisoryType, false, func(c meta.Content) error {
			var u updateinfo.Update
			if err := json.Unmarshal(c.Attrs, &u); err != nil {
				return fmt.Errorf("advisory %s: %w", c.PulpID, err)
			}
			for _, row := range part.rows(advisoryDigest(c), &u) {
				if err := w.Row(row...); err != nil {
					return fmt.Errorf("%s: advisory %s: %w", part.name, u.ID, err)
				}
			}
			return nil
		})
		if err != nil {
			w.Close()
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
	}
	return nil
}

// pendingAdvisory is an advisory read, waiting for its parts.
type pendingAdvisory struct {
	upstream string
	u        updateinfo.Update
}

// readAdvisories reads UpdateRecordResource; the advisories are stored once their parts
// are read (storeAdvisories).
func (im *importer) readAdvisories(ctx context.Context) error {
	im.pending = map[string]*pendingAdvisory{}
	return im.rows(advisoryResource, func(c *cells) error {
		a := &pendingAdvisory{upstream: c.upstreamID(), u: updateinfo.Update{ID: c.need("id"), UpdatedDate: c.str("updated_date"),
			Description: c.str("description"), IssuedDate: c.str("issued_date"), FromStr: c.str("fromstr"), Status: c.str("status"),
			Title: c.str("title"), Summary: c.str("summary"), Version: c.str("version"), Type: c.str("type"),
			Severity: c.str("severity"), Solution: c.str("solution"), Release: c.str("release"), Rights: c.str("rights"),
			RebootSuggested: c.flag("reboot_suggested"), PushCount: c.str("pushcount"),
			Pkglist: []updateinfo.Collection{}, References: []updateinfo.Reference{}}} // empty, not null, as parsed
		digest := c.need("digest")
		if c.err != nil {
			return c.err
		}
		if _, dup := im.pending[digest]; dup {
			return fmt.Errorf("column digest: %s is the digest of an advisory before", digest)
		}
		im.pending[digest] = a
		im.order = append(im.order, a)
		return nil
	})
}

// advisoryOf is the pending advisory a part's update_record names.
func (im *importer) advisoryOf(c *cells, col, digest string) *pendingAdvisory {
	if c.err != nil {
		return nil
	}
	a := im.pending[digest]
	if a == nil {
		c.fail(fmt.Errorf("column %s: no advisory has the digest %q", col, digest))
		return nil
	}
	im.parts++
	if im.parts > maxAdvisoryParts {
		c.fail(fmt.Errorf("more than %d references, collections and packages of advisories", maxAdvisoryParts))
		return nil
	}
	return a
}

// advisoryParts reads the references, collections and collection packages into the
// pending advisories, in the order of their rows.
func (im *importer) advisoryParts(ctx context.Context) error {
	err := im.rows(referenceResource, func(c *cells) error {
		r := updateinfo.Reference{Href: c.str("href"), ID: c.str("ref_id"), Title: c.str("title"), Type: c.str("ref_type")}
		if a := im.advisoryOf(c, "update_record", c.need("update_record")); a != nil {
			a.u.References = append(a.u.References, r)
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = im.rows(collectionResource, func(c *cells) error {
		col := updateinfo.Collection{Name: c.str("name"), ShortName: c.str("shortname"), Packages: []updateinfo.Package{}}
		var m struct {
			Name    string          `json:"name"`
			Stream  json.RawMessage `json:"stream"`
			Version json.RawMessage `json:"version"`
			Context string          `json:"context"`
			Arch    string          `json:"arch"`
		}
		if c.json("module", &m) {
			col.Module = &updateinfo.Module{Name: m.Name, Stream: scalar(m.Stream), Context: m.Context, Arch: m.Arch}
			if v := scalar(m.Version); v != "" {
				n, err := strconv.ParseUint(v, 10, 64)
				if err != nil {
					return fmt.Errorf("column module: version %q is not a number", v)
				}
				col.Module.Version = n
			}
		}
		a := im.advisoryOf(c, "update_record", c.need("update_record"))
		if a == nil {
			return nil
		}
		for _, x := range a.u.Pkglist {
			if x.Name == col.Name {
				return fmt.Errorf("column name: advisory %s has two collections named %q", a.u.ID, col.Name)
			}
		}
		a.u.Pkglist = append(a.u.Pkglist, col)
		return nil
	})
	if err != nil {
		return err
	}
	return im.rows(collectionPkgResoure, func(c *cells) error {
		p := updateinfo.Package{Name: c.need("name"), Epoch: c.str("epoch"), Version: c.str("version"), Release: c.str("release"),
			Arch: c.str("arch"), Src: c.str("src"), Filename: c.str("filename"), Sum: c.str("sum"),
			RebootSuggested: c.flag("reboot_suggested"), ReloginSuggested: c.flag("relogin_suggested"), RestartSuggested: c.flag("restart_suggested")}
		if p.Epoch == "" {
			p.Epoch = "0"
		}
		if n, ok := c.int("sum_type"); ok {
			if n < 0 || n >= int64(len(sumTypes)) {
				return fmt.Errorf("column sum_type: %d is not a checksum type", n)
			}
			p.SumType = sumTypes[n]
		}
		link := c.need("update_collection")
		i := strings.LastIndexByte(link, '|')
		if c.err == nil && i < 0 {
			return fmt.Errorf("column update_collection: %q is not <collection name>|<advisory digest>", link)
		}
		a := im.advisoryOf(c, "update_collection", link[i+1:])
		if a == nil {
			return nil
		}
		for j := range a.u.Pkglist {
			if a.u.Pkglist[j].Name == link[:i] {
				a.u.Pkglist[j].Packages = append(a.u.Pkglist[j].Packages, p)
				return nil
			}
		}
		return fmt.Errorf("column update_collection: advisory %s has no collection %q", a.u.ID, link[:i])
	})
}

// scalar is a JSON string or number as text.
func scalar(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// storeAdvisories stores the advisories read, in batches, as sync stores them.
func (im *importer) storeAdvisories(ctx context.Context) error {
	for len(im.order) > 0 {
		n := min(batchSize, len(im.order))
		units := make([]meta.Content, n)
		upstream := make([]string, n)
		for i, a := range im.order[:n] {
			u, err := advisoryUnit(&a.u)
			if err != nil {
				return fmt.Errorf("advisory %s: %w", a.u.ID, err)
			}
			units[i], upstream[i] = u, a.upstream
		}
		if err := im.storeUnits(ctx, units, upstream); err != nil {
			return err
		}
		im.order = im.order[n:]
	}
	im.pending = nil
	return nil
}
