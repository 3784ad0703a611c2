package content

import (
	"context"
	"fmt"
	"time"

	"pith/api/href"
	"pith/api/rest"
	"pith/blob"
	"pith/meta"
	"pith/task"
)

// CommitArgs are the arguments of the upload commit task: the upload and the digests of
// the blob the request stored from its chunks.
type CommitArgs struct {
	Upload  string       `json:"upload"`
	Digests blob.Digests `json:"digests"`
}

// runCommit records the artifact of a committed upload (the request verified and
// stored its blob) and deletes the upload.
func (c *Core) runCommit(ctx context.Context, r *task.Run) error {
	var a CommitArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	u, err := meta.UploadByPulpID(ctx, c.DB, a.Upload)
	if err != nil {
		return err
	}
	if _, err := c.Store.Stat(ctx, a.Digests.SHA256); err != nil {
		return fmt.Errorf("upload %s: stored file %s: %w", a.Upload, a.Digests.SHA256, err)
	}
	art, _, err := meta.PutArtifact(ctx, c.DB, meta.ArtifactOf(a.Digests))
	if err != nil {
		return err
	}
	if err := rest.DeleteUpload(ctx, c.DB, c.Store, u); err != nil {
		return err
	}
	r.Created(href.Artifact(art.PulpID))
	return nil
}

// CleanupArgs are the arguments of the upload cleanup task.
type CleanupArgs struct {
	OlderThanMins int64 `json:"older_than_minutes"`
}

// runUploadCleanup deletes uploads whose last chunk came longer ago than the upload
// protection time, with their stored chunks.
func (c *Core) runUploadCleanup(ctx context.Context, r *task.Run) error {
	var a CleanupArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	l := meta.List{}
	l.And("u.updated < ?", time.Now().Add(-time.Duration(a.OlderThanMins)*time.Minute).UnixMicro())
	us, _, err := meta.ListUploads(ctx, c.DB, l)
	if err != nil {
		return err
	}
	p := r.Progress("clean-up.uploads", "Clean up abandoned uploads", int64(len(us)))
	for _, u := range us {
		if err := rest.DeleteUpload(ctx, c.DB, c.Store, u); err != nil {
			return err
		}
		p.Add(1)
	}
	p.Finish(nil)
	return nil
}
