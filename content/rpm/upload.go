package rpm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"pith/blob"
	"pith/content"
	"pith/content/rpm/rpmfile"
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
		var err error
		c, _, err = storePackage(ctx, tx, &h.Package, nil, "", false)
		if err != nil {
			return err
		}
		if len(labels) > 0 {
			return meta.UpdateContentLabels(ctx, tx, c.ID, labels)
		}
		return nil
	})
	return c, err
}
