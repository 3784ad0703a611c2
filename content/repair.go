package content

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"

	"pith/blob"
	"pith/meta"
	"pith/task"
)

// runRepair checks every stored file of a version (its size, and its sha256 when asked)
// and fetches missing or corrupt ones again from a remote that had them. As Pulp's
// repair, it has no result and completes even when some file could not be repaired:
// its three progress reports (missing, corrupted, repaired) say what it found and did,
// and the log names each file it could not repair.
func (c *Core) runRepair(ctx context.Context, r *task.Run) error {
	var a VersionArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	repo, err := meta.RepositoryByPulpID(ctx, c.DB, a.Repository)
	if err != nil {
		return err
	}
	ids, err := meta.VersionContentIDs(ctx, c.DB, repo.ID, a.Number)
	if err != nil {
		return err
	}
	missing := r.Progress("repair.missing", "Identify missing units", -1)
	corrupted := r.Progress("repair.corrupted", "Identify corrupted units", -1)
	repaired := r.Progress("repair.repaired", "Repair corrupted units", -1)
	for _, id := range ids {
		files, err := meta.ContentFiles(ctx, c.DB, id)
		if err != nil {
			return err
		}
		for _, f := range files {
			if f.Artifact == nil {
				continue
			}
			state, err := c.verifyBlob(ctx, *f.Artifact, a.VerifyChecksums)
			if err != nil {
				return err
			}
			switch state {
			case blobGood:
				continue
			case blobMissing:
				missing.Add(1)
			case blobCorrupt:
				corrupted.Add(1)
			}
			if err := Refetch(ctx, c.DB, c.Store, f); err != nil {
				c.Log.Warn("repair: file is unrepairable", "repository", repo.Name, "path", f.RelativePath, "sha256", f.Artifact.SHA256, "err", err)
				continue
			}
			repaired.Add(1)
		}
	}
	missing.Finish(nil)
	corrupted.Finish(nil)
	repaired.Finish(nil)
	return nil
}

type blobState int

const (
	blobGood blobState = iota
	blobMissing
	blobCorrupt
)

// verifyBlob says whether an artifact's blob is there and whole.
func (c *Core) verifyBlob(ctx context.Context, a meta.Artifact, checksums bool) (blobState, error) {
	info, err := c.Store.Stat(ctx, a.SHA256)
	if errors.Is(err, blob.ErrNotFound) {
		return blobMissing, nil
	}
	if err != nil {
		return blobGood, err
	}
	if info.Size != a.Size {
		return blobCorrupt, nil
	}
	if !checksums {
		return blobGood, nil
	}
	rd, err := c.Store.Open(ctx, a.SHA256)
	if err != nil {
		return blobMissing, nil
	}
	defer rd.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rd); err != nil {
		return blobCorrupt, nil
	}
	if hex.EncodeToString(h.Sum(nil)) != a.SHA256 {
		return blobCorrupt, nil
	}
	return blobGood, nil
}
