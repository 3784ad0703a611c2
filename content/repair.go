package content

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"pith/blob"
	"pith/meta"
	"pith/task"
)

// RepairAllTask is Pulp's name of the repair of every stored artifact.
const RepairAllTask = "pulpcore.app.tasks.repository.repair_all_artifacts"

// RepairAllArgs are the arguments of the repair of every stored artifact.
type RepairAllArgs struct {
	VerifyChecksums bool `json:"verify_checksums"`
}

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
	rp := c.newRepair(r, a.VerifyChecksums)
	for _, id := range ids {
		files, err := meta.ContentFiles(ctx, c.DB, id)
		if err != nil {
			return err
		}
		for _, f := range files {
			if err := rp.check(ctx, f); err != nil {
				return err
			}
		}
	}
	rp.finish()
	return nil
}

// runRepairAll is runRepair over every unit file that has a stored artifact, in pages.
func (c *Core) runRepairAll(ctx context.Context, r *task.Run) error {
	var a RepairAllArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	rp := c.newRepair(r, a.VerifyChecksums)
	for after := int64(0); ; {
		files, err := meta.StoredFiles(ctx, c.DB, after, 500)
		if err != nil {
			return err
		}
		if len(files) == 0 {
			break
		}
		for _, f := range files {
			if err := rp.check(ctx, f); err != nil {
				return err
			}
		}
		after = files[len(files)-1].ContentArtifactID
	}
	rp.finish()
	return nil
}

// repair is one repair task's progress.
type repair struct {
	c                            *Core
	checksums                    bool
	missing, corrupted, repaired *task.Progress
}

func (c *Core) newRepair(r *task.Run, checksums bool) *repair {
	return &repair{c: c, checksums: checksums,
		missing:   r.Progress("repair.missing", "Identify missing units", -1),
		corrupted: r.Progress("repair.corrupted", "Identify corrupted units", -1),
		repaired:  r.Progress("repair.repaired", "Repair corrupted units", -1)}
}

// check verifies one unit file's blob and, when it is missing or corrupt, fetches it
// again from a remote source. A corrupt blob is deleted only once there is a source to
// fetch it from (the store keeps a digest's first blob); a file with none is reported
// and left as it is.
func (rp *repair) check(ctx context.Context, f meta.FileRef) error {
	if f.Artifact == nil {
		return nil
	}
	state, err := rp.c.verifyBlob(ctx, *f.Artifact, rp.checksums)
	if err != nil {
		return err
	}
	switch state {
	case blobGood:
		return nil
	case blobMissing:
		rp.missing.Add(1)
	case blobCorrupt:
		rp.corrupted.Add(1)
	}
	if len(f.Remote) == 0 {
		if f.Remote, err = meta.RemoteSources(ctx, rp.c.DB, f.ContentArtifactID); err != nil {
			return err
		}
	}
	if len(f.Remote) > 0 && state == blobCorrupt {
		if err := rp.c.Store.Delete(ctx, f.Artifact.SHA256); err != nil && !errors.Is(err, blob.ErrNotFound) {
			return fmt.Errorf("delete corrupt blob %s: %w", f.Artifact.SHA256, err)
		}
	}
	if err := Refetch(ctx, rp.c.DB, rp.c.Store, f); err != nil {
		rp.c.Log.Warn("repair: file is unrepairable", "content", f.ContentID, "path", f.RelativePath, "sha256", f.Artifact.SHA256, "err", err)
		return nil
	}
	rp.repaired.Add(1)
	return nil
}

func (rp *repair) finish() {
	rp.missing.Finish(nil)
	rp.corrupted.Finish(nil)
	rp.repaired.Finish(nil)
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
