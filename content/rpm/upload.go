package rpm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"pith/blob"
	"pith/content"
	"pith/content/rpm/comps"
	"pith/content/rpm/rpmfile"
	"pith/content/rpm/updateinfo"
	"pith/meta"
)

// ErrBadPackage marks an uploaded file that is not a usable rpm.
var ErrBadPackage = errors.New("not a usable rpm package")

// ReadPackage reads the header of a stored .rpm and returns its metadata as a
// repository would list it at relativePath (its file name when empty). The file's
// sha256 must be the artifact's.
func ReadPackage(ctx context.Context, store *blob.Store, art meta.Artifact, relativePath string) (*rpmfile.Header, error) {
	r, err := store.Open(ctx, art.SHA256)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h, err := rpmfile.ReadPackage(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPackage, err)
	}
	p := &h.Package
	if p.PkgID != art.SHA256 || p.SizePackage != art.Size {
		return nil, fmt.Errorf("%w: the file read is not the stored artifact %s", ErrBadPackage, art.SHA256)
	}
	if relativePath == "" {
		relativePath = fmt.Sprintf("%s-%s-%s.%s.rpm", p.Name, p.Version, p.Release, p.Arch)
	}
	clean, err := content.CleanRelativePath(relativePath)
	if err != nil {
		return nil, fmt.Errorf("relative_path %q: %w", relativePath, err)
	}
	if !strings.HasSuffix(clean, ".rpm") {
		return nil, fmt.Errorf("relative_path %q: an rpm's path must end in .rpm", relativePath)
	}
	p.LocationHref = clean
	p.TimeFile = time.Now().Unix()
	slices.Reverse(p.Changelogs) // header order is newest first; other.xml lists oldest first
	return h, nil
}

// StoreUploadedPackage records a package read by ReadPackage as a unit (or finds the
// unit it already is), with its metadata fragments and labels.
func StoreUploadedPackage(ctx context.Context, db *meta.DB, h *rpmfile.Header, labels meta.Labels) (meta.Content, error) {
	var c meta.Content
	err := db.Tx(ctx, func(tx *meta.Tx) error {
		row, err := newPackageRow(&h.Package)
		if err != nil {
			return err
		}
		units, _, err := storePackages(ctx, tx, []packageRow{row}, nil, "", false)
		if err != nil {
			return err
		}
		c = units[0]
		if len(labels) > 0 {
			return meta.UpdateContentLabels(ctx, tx, c.ID, labels)
		}
		return nil
	})
	return c, err
}

// advisoryUnit is the unit of an advisory: one per id and content (Pulp's digest).
func advisoryUnit(u *updateinfo.Update) (meta.Content, error) {
	attrs, err := json.Marshal(u)
	return meta.Content{Type: AdvisoryType, NaturalKey: u.ID + " " + u.Sum(), RepoKey: u.ID, Attrs: attrs}, err
}

// compsUnits are the units of a comps.xml: its groups, categories, environments and
// langpacks.
func compsUnits(c *comps.Comps) ([]meta.Content, error) {
	var units []meta.Content
	add := func(typ, id, digest string, v any) error {
		attrs, err := json.Marshal(v)
		if err != nil {
			return err
		}
		units = append(units, meta.Content{Type: typ, NaturalKey: digest, RepoKey: id, Attrs: attrs})
		return nil
	}
	for _, g := range c.Groups {
		if err := add(GroupType, g.ID, g.Digest, g); err != nil {
			return nil, err
		}
	}
	for _, x := range c.Categories {
		if err := add(CategoryType, x.ID, x.Digest, x); err != nil {
			return nil, err
		}
	}
	for _, x := range c.Environments {
		if err := add(EnvironmentType, x.ID, x.Digest, x); err != nil {
			return nil, err
		}
	}
	if c.Langpacks != nil {
		if err := add(LangpacksType, "langpacks", c.Langpacks.Digest, c.Langpacks); err != nil {
			return nil, err
		}
	}
	return units, nil
}

// CompsTypes are the content types a comps.xml holds.
var CompsTypes = []string{GroupType, CategoryType, EnvironmentType, LangpacksType}

// ReadAdvisory reads a stored advisory upload (JSON, as Pulp takes it); name is what
// errors call it.
func ReadAdvisory(ctx context.Context, store *blob.Store, art meta.Artifact, name string) (*updateinfo.Update, error) {
	return readStored(ctx, store, art, func(r io.Reader) (*updateinfo.Update, error) { return updateinfo.ParseJSON(r, name) })
}

// ReadComps reads a stored comps.xml upload; name is what errors call it.
func ReadComps(ctx context.Context, store *blob.Store, art meta.Artifact, name string) (*comps.Comps, error) {
	return readStored(ctx, store, art, func(r io.Reader) (*comps.Comps, error) { return comps.Parse(r, name) })
}

// readStored parses a stored artifact.
func readStored[T any](ctx context.Context, store *blob.Store, art meta.Artifact, parse func(io.Reader) (T, error)) (T, error) {
	r, err := store.Open(ctx, art.SHA256)
	if err != nil {
		var zero T
		return zero, err
	}
	defer r.Close()
	return parse(r)
}

// StoreAdvisory records an uploaded advisory as a unit (or finds the unit it already
// is), with labels.
func StoreAdvisory(ctx context.Context, db *meta.DB, u *updateinfo.Update, labels meta.Labels) (meta.Content, error) {
	unit, err := advisoryUnit(u)
	if err != nil {
		return unit, err
	}
	return StoreUnit(ctx, db, unit, labels)
}

// StoreUnit records a unit without files built as sync builds it (advisories, modular
// documents), or finds the existing unit with its natural key, which keeps its attrs;
// labels, when given, are set on the unit either way.
func StoreUnit(ctx context.Context, db *meta.DB, unit meta.Content, labels meta.Labels) (meta.Content, error) {
	var c meta.Content
	err := db.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		if c, _, err = meta.PutContent(ctx, tx, unit, nil); err != nil {
			return err
		}
		if len(labels) > 0 {
			if err := meta.UpdateContentLabels(ctx, tx, c.ID, labels); err != nil {
				return err
			}
			c.Labels = labels
		}
		return nil
	})
	return c, err
}

// StoreComps records the units of an uploaded comps.xml (or finds them).
func StoreComps(ctx context.Context, db *meta.DB, c *comps.Comps) ([]meta.Content, error) {
	units, err := compsUnits(c)
	if err != nil {
		return nil, err
	}
	out := make([]meta.Content, 0, len(units))
	err = db.Tx(ctx, func(tx *meta.Tx) error {
		out = out[:0]
		for _, u := range units {
			c, _, err := meta.PutContent(ctx, tx, u, nil)
			if err != nil {
				return err
			}
			out = append(out, c)
		}
		return nil
	})
	return out, err
}
