package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"pith/api/href"
	"pith/blob"
	"pith/content"
	"pith/meta"
	"pith/task"
)

// The filesystem export tasks (Pulp's fs_publication_export and fs_repo_version_export):
// every file of a publication, or every unit file of a version, written below the
// exporter's path at its relative path, by the exporter's method. The export row is made
// first, as in Pulp (a failed export keeps it); what a failed export wrote is removed.

// errNotDownloaded is a file whose blob is not stored yet (on_demand or streamed).
var errNotDownloaded = errors.New("Cannot export artifacts that haven't been downloaded.")

// errWriteOnly is a link method asked of a store without local files.
var errWriteOnly = errors.New("Only write is supported for non-filesystem storage.")

// parseVersionArg reads a version of the export tasks' arguments ("pulp_id/number").
func parseVersionArg(s string) (string, int64, error) {
	id, num, ok := strings.Cut(s, "/")
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil {
		return "", 0, fmt.Errorf("bad repository version argument %q", s)
	}
	return id, n, nil
}

// argVersion is the repository and number of a version argument.
func argVersion(ctx context.Context, q meta.Querier, s string) (meta.Repository, int64, error) {
	id, n, err := parseVersionArg(s)
	if err != nil {
		return meta.Repository{}, 0, err
	}
	repo, err := meta.RepositoryByPulpID(ctx, q, id)
	if err != nil {
		return repo, 0, err
	}
	if _, err := meta.VersionByNumber(ctx, q, repo.ID, n); err != nil {
		return repo, 0, fmt.Errorf("repository %s: %w", repo.Name, err)
	}
	return repo, n, nil
}

// fsExport runs both filesystem export tasks.
func (c *crud) fsExport(ctx context.Context, r *task.Run) error {
	var a fsExportArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	db := c.core.DB
	x, err := exporterByID(ctx, db, fsExporters, a.Exporter)
	if err != nil {
		return fmt.Errorf("filesystem exporter %s: %w", a.Exporter, err)
	}
	var files []meta.ExportFile
	var resource string
	if a.Publication != "" {
		pub, err := meta.PublicationByPulpID(ctx, db, a.Publication)
		if err != nil {
			return err
		}
		resource = href.Publication(pub.Type, pub.PulpID)
		if files, err = meta.PublishedFiles(ctx, db, pub.ID); err != nil {
			return err
		}
	} else {
		repo, n, err := argVersion(ctx, db, a.Version)
		if err != nil {
			return err
		}
		resource = href.Version(repo.Type, repo.PulpID, n)
		if files, err = meta.VersionFiles(ctx, db, repo.ID, n); err != nil {
			return err
		}
	}
	attrs, err := json.Marshal(exportAttrs{Params: a.Params, ExportedResources: []string{resource}})
	if err != nil {
		return err
	}
	e, err := meta.CreateExport(ctx, db, meta.Export{Owner: x.ID, Task: &r.Task.PulpID, Attrs: attrs})
	if err != nil {
		return err
	}
	r.Created(fsExporters.exportHref(x.PulpID, e.PulpID))
	if a.StartVersion != "" {
		repo, n, err := argVersion(ctx, db, a.StartVersion)
		if err != nil {
			return err
		}
		before, err := meta.VersionFiles(ctx, db, repo.ID, n)
		if err != nil {
			return err
		}
		files = newFiles(files, before)
	}
	dir, err := content.AllowedPath(c.core.ExportPaths, x.Path)
	if err != nil {
		return fmt.Errorf("Path '%s' is not an allowed export path", x.Path)
	}
	return writeTree(ctx, c.core.Store, dir, x.Path, fsMethod(x), files)
}

// newFiles are the files of an incremental export: the unit files whose blobs the start
// version does not hold, and every generated file (metadata).
func newFiles(files, before []meta.ExportFile) []meta.ExportFile {
	had := map[string]bool{}
	for _, f := range before {
		if f.SHA256 != nil {
			had[*f.SHA256] = true
		}
	}
	var out []meta.ExportFile
	for _, f := range files {
		if !f.Unit || f.SHA256 == nil || !had[*f.SHA256] {
			out = append(out, f)
		}
	}
	return out
}

// writeTree writes files below dir (an exporter's path, shown as shown, resolved: one
// that does not exist or is an empty directory) by method; on failure what it wrote is
// removed.
func writeTree(ctx context.Context, store *blob.Store, dir, shown, method string, files []meta.ExportFile) (err error) {
	pather, local := store.Driver().(blob.Pather)
	if method != methodWrite && !local {
		return errWriteOnly
	}
	for _, f := range files {
		if _, err := content.CleanRelativePath(f.RelativePath); err != nil {
			return err
		}
		if f.SHA256 == nil {
			return errNotDownloaded
		}
	}
	made, err := exportDir(dir, shown)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			clearDir(dir, made)
		}
	}()
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open the export directory: %w", pathless(err))
	}
	defer root.Close()
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if d := path.Dir(f.RelativePath); d != "." {
			if err := root.MkdirAll(d, 0o775); err != nil {
				return fmt.Errorf("export %s: %w", f.RelativePath, pathless(err))
			}
		}
		if err := writeOne(ctx, store, pather, root, dir, method, f); err != nil {
			return fmt.Errorf("export %s: %w", f.RelativePath, pathless(err))
		}
	}
	return nil
}

// writeOne writes one file: a symbolic link to its blob, a hard link (a copy when the
// blob is on another device), or a copy.
func writeOne(ctx context.Context, store *blob.Store, pather blob.Pather, root *os.Root, dir, method string, f meta.ExportFile) error {
	switch method {
	case methodSymlink:
		src, ok := pather.Path(*f.SHA256)
		if !ok {
			return fmt.Errorf("bad digest %s", *f.SHA256)
		}
		return root.Symlink(src, f.RelativePath)
	case methodHardlink:
		src, ok := pather.Path(*f.SHA256)
		if !ok {
			return fmt.Errorf("bad digest %s", *f.SHA256)
		}
		err := os.Link(src, filepath.Join(dir, filepath.FromSlash(f.RelativePath)))
		if !errors.Is(err, syscall.EXDEV) {
			return err
		}
	}
	rd, err := store.Open(ctx, *f.SHA256)
	if err != nil {
		return err
	}
	defer rd.Close()
	w, err := root.OpenFile(f.RelativePath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, rd); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// exportDir makes the export directory, or checks that it is an empty one (Pulp needs
// it not to exist); made reports that it made it.
func exportDir(dir, shown string) (made bool, err error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o775); err != nil {
			return false, fmt.Errorf("make the export directory: %w", pathless(err))
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("the export directory: %w", pathless(err))
	case !fi.IsDir():
		return false, fmt.Errorf("Path '%s' must be a directory path", shown)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("read the export directory: %w", pathless(err))
	}
	if len(entries) > 0 {
		return false, errors.New("Cannot export to directories that contain existing data.")
	}
	return false, nil
}

// clearDir removes what a failed export wrote: the directory when it made it, else its
// entries (it was empty).
func clearDir(dir string, made bool) {
	if made {
		os.RemoveAll(dir)
		return
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// pathless is an operating system error without the absolute path it names, which a
// task's error must not show.
func pathless(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}
