package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"pith/blob"
	"pith/content"
	"pith/meta"
	"pith/task"
)

// TaskFuncs are the task functions of the core API; the process registers them with its
// queue together with the content types' functions.
func (s *Server) TaskFuncs() map[string]task.Func {
	return map[string]task.Func{
		"pulpcore.app.tasks.base.general_create":       s.runCreate,
		"pulpcore.app.tasks.base.general_update":       s.runUpdate,
		"pulpcore.app.tasks.base.general_delete":       s.runDelete,
		"pulpcore.app.tasks.repository.add_and_remove": s.runModify,
		"pulpcore.app.tasks.repository.delete_version": s.runDeleteVersion,
		"pulpcore.app.tasks.repository.repair_version": s.runRepair,
		"pulpcore.app.tasks.upload.commit":             s.runCommit,
		"pulpcore.app.tasks.orphan.orphan_cleanup":     s.runOrphans,
		"pulpcore.app.tasks.purge.purge":               s.runPurge,
		uploadCleanupTask:                              s.runUploadCleanup,
		copyTask:                                       s.runCopy,
		compsTask:                                      s.runComps,
		bulkModifyTask:                                 s.runBulkModify,
	}
}

func (s *Server) runCreate(ctx context.Context, r *task.Run) error {
	var a createArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	switch a.Kind {
	case "file_content":
		var fa FileContentArgs
		if err := decode(a.Body, &fa); err != nil {
			return err
		}
		return s.runFileContent(ctx, r, fa)
	case "rpm_advisory":
		var aa RpmAdvisoryArgs
		if err := decode(a.Body, &aa); err != nil {
			return err
		}
		return s.runRpmAdvisory(ctx, r, aa)
	case "rpm_package":
		var pa RpmPackageArgs
		if err := decode(a.Body, &pa); err != nil {
			return err
		}
		return s.runRpmPackage(ctx, r, pa)
	case "rpm_modulemd", "rpm_modulemd_defaults", "rpm_modulemd_obsolete":
		var ma RpmModuleArgs
		if err := decode(a.Body, &ma); err != nil {
			return err
		}
		return s.runRpmModule(ctx, r, a.Kind, ma)
	}
	var href string
	err := s.db.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		href, err = s.applyCreate(ctx, tx, a)
		return err
	})
	if err != nil {
		return err
	}
	r.Created(href)
	return nil
}

func (s *Server) runFileContent(ctx context.Context, r *task.Run, a FileContentArgs) error {
	return s.runContentCreate(ctx, r, a.FileURL, &a.Artifact, a.Repository, func() (meta.Content, error) { return s.createFileContent(ctx, a) })
}

// runContentCreate is the body of a content create task: download the file when a URL
// was given (into *artifact), create the unit, and add it to the repository if one was
// named.
func (s *Server) runContentCreate(ctx context.Context, r *task.Run, fileURL string, artifact *int64, repository string, create func() (meta.Content, error)) error {
	if fileURL != "" {
		if s.cfg.FetchURL == nil {
			return fmt.Errorf("file_url %s: this process cannot download", fileURL)
		}
		art, err := s.cfg.FetchURL(ctx, fileURL)
		if err != nil {
			return err
		}
		*artifact = art.ID
	}
	c, err := create()
	if err != nil {
		return err
	}
	r.Created(contentHref(c.Type, c.PulpID))
	if repository == "" {
		return nil
	}
	return s.newVersion(ctx, r, repository, meta.Change{Add: []int64{c.ID}})
}

// newVersion writes a new version of a repository and reports it as created.
func (s *Server) newVersion(ctx context.Context, r *task.Run, repoID string, ch meta.Change) error {
	repo, err := meta.RepositoryByPulpID(ctx, s.db, repoID)
	if err != nil {
		return err
	}
	var v meta.Version
	var created bool
	err = s.db.Tx(ctx, func(tx *meta.Tx) error {
		v, created, err = meta.NewVersion(ctx, tx, repo.ID, ch)
		return err
	})
	if err != nil {
		return fmt.Errorf("new version of repository %q: %w", repo.Name, err)
	}
	if created {
		s.cfg.Content.Invalidate()
		return s.versionMade(ctx, r, repo, v)
	}
	return nil
}

// versionMade reports a version a task made as created and applies its repository's
// retention and autopublish settings (after the content cache was invalidated).
func (s *Server) versionMade(ctx context.Context, r *task.Run, repo meta.Repository, v meta.Version) error {
	r.Created(versionHref(repo.Type, repo.PulpID, v.Number))
	return s.afterVersion(ctx, r, repo, v)
}

// afterVersion applies a repository's retention and autopublish settings to a version
// that was just made. AfterVersion is set by the process when a content type publishes.
func (s *Server) afterVersion(ctx context.Context, r *task.Run, repo meta.Repository, v meta.Version) error {
	if s.cfg.AfterVersion != nil {
		return s.cfg.AfterVersion(ctx, r, repo, v)
	}
	return nil
}

func (s *Server) runUpdate(ctx context.Context, r *task.Run) error {
	var a updateArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	return s.db.Tx(ctx, func(tx *meta.Tx) error { return s.applyUpdate(ctx, tx, a) })
}

func (s *Server) runDelete(ctx context.Context, r *task.Run) error {
	var a deleteArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	return s.db.Tx(ctx, func(tx *meta.Tx) error { return s.applyDelete(ctx, tx, a) })
}

func (s *Server) runModify(ctx context.Context, r *task.Run) error {
	var a ModifyArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	return s.newVersion(ctx, r, a.Repository, meta.Change{Base: a.Base, RemoveAll: a.RemoveAll, Remove: a.Remove, Add: a.Add})
}

func (s *Server) runDeleteVersion(ctx context.Context, r *task.Run) error {
	var a VersionArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	repo, err := meta.RepositoryByPulpID(ctx, s.db, a.Repository)
	if err != nil {
		return err
	}
	err = s.db.Tx(ctx, func(tx *meta.Tx) error {
		v, err := meta.VersionByNumber(ctx, tx, repo.ID, a.Number)
		if err != nil {
			return err
		}
		return meta.DeleteVersion(ctx, tx, v)
	})
	if err == nil {
		s.cfg.Content.Invalidate()
	}
	return err
}

// runRepair checks every stored file of a version against its digest and size, and
// fetches missing or corrupt ones again from their remote when one is known.
func (s *Server) runRepair(ctx context.Context, r *task.Run) error {
	var a VersionArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	repo, err := meta.RepositoryByPulpID(ctx, s.db, a.Repository)
	if err != nil {
		return err
	}
	ids, err := meta.VersionContentIDs(ctx, s.db, repo.ID, a.Number)
	if err != nil {
		return err
	}
	p := r.Progress("repair.verifying", "Verifying and repairing artifacts", int64(len(ids)))
	var bad, repaired int64
	for _, id := range ids {
		files, err := meta.ContentFiles(ctx, s.db, id)
		if err != nil {
			return err
		}
		for _, f := range files {
			if f.Artifact == nil {
				continue
			}
			ok, err := s.verifyBlob(ctx, *f.Artifact, a.VerifyChecksums)
			if err != nil {
				return err
			}
			if ok {
				continue
			}
			bad++
			if s.cfg.Refetch != nil {
				if err := s.cfg.Refetch(ctx, f); err == nil {
					repaired++
					continue
				}
			}
		}
		p.Add(1)
	}
	p.Finish(nil)
	r.SetResult(map[string]int64{"corrupted_or_missing": bad, "repaired": repaired})
	if bad > repaired {
		return fmt.Errorf("%d of %d corrupted or missing files could not be repaired (no remote source)", bad-repaired, bad)
	}
	return nil
}

func (s *Server) verifyBlob(ctx context.Context, a meta.Artifact, checksums bool) (bool, error) {
	info, err := s.cfg.Store.Stat(ctx, a.SHA256)
	if errors.Is(err, blob.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if info.Size != a.Size {
		return false, nil
	}
	if !checksums {
		return true, nil
	}
	rd, err := s.cfg.Store.Open(ctx, a.SHA256)
	if err != nil {
		return false, nil
	}
	defer rd.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rd); err != nil {
		return false, nil
	}
	return hex.EncodeToString(h.Sum(nil)) == a.SHA256, nil
}

func (s *Server) runCommit(ctx context.Context, r *task.Run) error {
	var a commitArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	u, err := meta.UploadByPulpID(ctx, s.db, a.Upload)
	if err != nil {
		return err
	}
	// The handler verified and stored the blob before dispatching; record it.
	if _, err := s.cfg.Store.Stat(ctx, a.Digests.SHA256); err != nil {
		return fmt.Errorf("upload %s: stored file %s: %w", a.Upload, a.Digests.SHA256, err)
	}
	art, _, err := meta.PutArtifact(ctx, s.db, content.Artifact(a.Digests))
	if err != nil {
		return err
	}
	if err := s.deleteUpload(ctx, u); err != nil {
		return err
	}
	r.Created(artifactHref(art.PulpID))
	return nil
}

func (s *Server) runOrphans(ctx context.Context, r *task.Run) error {
	var a OrphanArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	before := time.Now().Add(-time.Duration(a.ProtectionMins) * time.Minute).UnixMicro()
	var ids []int64
	if a.HasContentHrefs {
		ids = a.ContentIDs
		if ids == nil {
			ids = []int64{}
		}
	}
	var units int64
	var digests []string
	err := s.db.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		units, digests, err = meta.DeleteOrphans(ctx, tx, before, ids)
		return err
	})
	if err != nil {
		return err
	}
	pc := r.Progress("clean-up.content", "Clean up orphan Content", units)
	pc.Add(units)
	pc.Finish(nil)
	pa := r.Progress("clean-up.artifacts", "Clean up orphan Artifacts", int64(len(digests)))
	for _, d := range digests {
		if err := s.cfg.Store.Delete(ctx, d); err != nil && !errors.Is(err, blob.ErrNotFound) {
			return fmt.Errorf("delete orphan blob %s: %w", d, err)
		}
		pa.Add(1)
	}
	pa.Finish(nil)
	// Blobs without an artifact row (left by failed syncs or uploads) go too, once they
	// are older than the protection time.
	var stray []string
	err = s.cfg.Store.Walk(ctx, func(sha string, info blob.Info) error {
		if info.ModTime.UnixMicro() >= before {
			return nil
		}
		if _, err := meta.ArtifactBySHA256(ctx, s.db, sha); errors.Is(err, meta.ErrNotFound) {
			stray = append(stray, sha)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("walk blobs: %w", err)
	}
	for _, sha := range stray {
		// Check again: an upload may have recorded it meanwhile.
		if _, err := meta.ArtifactBySHA256(ctx, s.db, sha); errors.Is(err, meta.ErrNotFound) {
			s.cfg.Store.Delete(ctx, sha)
		}
	}
	s.cfg.Content.Invalidate()
	return nil
}

func (s *Server) runPurge(ctx context.Context, r *task.Run) error {
	var a purgeArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	if a.OlderThanMins > 0 {
		a.Before = time.Now().Add(-time.Duration(a.OlderThanMins) * time.Minute).UnixMicro()
	}
	n, err := task.Purge(ctx, s.db, a.Before, a.States)
	if err != nil {
		return err
	}
	p := r.Progress("purge.tasks.total", "Purged task-related objects total", n)
	p.Add(n)
	p.Finish(nil)
	return nil
}
