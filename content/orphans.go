package content

import (
	"context"
	"errors"
	"fmt"
	"time"

	"pith/blob"
	"pith/meta"
	"pith/task"
)

// Task names of the maintenance tasks, as Pulp names them (pith's own have pith's
// prefix).
const (
	OrphanTask        = "pulpcore.app.tasks.orphan.orphan_cleanup"
	PurgeTask         = "pulpcore.app.tasks.purge.purge"
	CommitTask        = "pulpcore.app.tasks.upload.commit"
	UploadCleanupTask = "pith.app.tasks.upload.cleanup"
	TempCleanupTask   = "pith.app.tasks.blob.temp_cleanup"
)

// tempCleanupInterval is how often the maintenance schedule sweeps the blob storage's
// temporaries (each process also sweeps when it starts).
const tempCleanupInterval = time.Hour

// OrphanArgs are the arguments of the orphan cleanup task.
type OrphanArgs struct {
	ContentIDs      []int64 `json:"content_ids"`
	HasContentHrefs bool    `json:"has_content_hrefs"`
	ProtectionMins  int64   `json:"protection_minutes"`
}

// runOrphans deletes the units in no repository version and the artifacts of no unit
// and no publication, older than the protection time, then their blobs, then blobs with
// no artifact at all (left by failed syncs or uploads) of the same age.
func (c *Core) runOrphans(ctx context.Context, r *task.Run) error {
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
	err := c.DB.Tx(ctx, func(tx *meta.Tx) error {
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
		if err := c.Store.Delete(ctx, d); err != nil && !errors.Is(err, blob.ErrNotFound) {
			return fmt.Errorf("delete orphan blob %s: %w", d, err)
		}
		pa.Add(1)
	}
	pa.Finish(nil)
	var stray []string
	err = c.Store.Walk(ctx, func(sha string, info blob.Info) error {
		if info.ModTime.UnixMicro() >= before {
			return nil
		}
		if _, err := meta.ArtifactBySHA256(ctx, c.DB, sha); errors.Is(err, meta.ErrNotFound) {
			stray = append(stray, sha)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("walk blobs: %w", err)
	}
	for _, sha := range stray {
		// Check again: an upload may have recorded it meanwhile.
		if _, err := meta.ArtifactBySHA256(ctx, c.DB, sha); errors.Is(err, meta.ErrNotFound) {
			c.Store.Delete(ctx, sha)
		}
	}
	c.Invalidate()
	return nil
}

// PurgeArgs are the arguments of the task purge.
type PurgeArgs struct {
	Before        int64    `json:"before,omitempty"`             // µs
	OlderThanMins int64    `json:"older_than_minutes,omitempty"` // instead of before, for schedules
	States        []string `json:"states"`
}

func (c *Core) runPurge(ctx context.Context, r *task.Run) error {
	var a PurgeArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	if a.OlderThanMins > 0 {
		a.Before = time.Now().Add(-time.Duration(a.OlderThanMins) * time.Minute).UnixMicro()
	}
	n, err := task.Purge(ctx, c.DB, a.Before, a.States)
	if err != nil {
		return err
	}
	p := r.Progress("purge.tasks.total", "Purged task-related objects total", n)
	p.Add(n)
	p.Finish(nil)
	return nil
}

// runTempCleanup removes the temporaries that writers which died left in the blob
// storage (blob.Sweeper); the driver tells them from live writes.
func (c *Core) runTempCleanup(ctx context.Context, r *task.Run) error {
	n, err := c.Store.SweepTemp(ctx)
	p := r.Progress("clean-up.temporaries", "Clean up temporary files of writes that never ended", int64(n))
	p.Add(int64(n))
	p.Finish(err)
	return err
}

// Schedules are the maintenance schedules a process's settings ask for; 0 leaves a
// task unscheduled.
type Schedules struct {
	OrphanProtection      time.Duration // orphan cleanup's protection time
	OrphanCleanupInterval time.Duration
	TaskProtection        time.Duration // finished tasks older than this are purged
	UploadProtection      time.Duration // uploads untouched this long are deleted
}

// SetSchedules records the maintenance schedules (orphan cleanup, task purge, upload
// cleanup, and always the temporary blob cleanup); the maintenance leader dispatches
// them. A setting of 0 removes its schedule.
func (c *Core) SetSchedules(ctx context.Context, s Schedules) error {
	every := func(protection time.Duration) time.Duration {
		if protection <= 0 {
			return 0
		}
		return min(protection, time.Hour)
	}
	sets := []struct {
		name, task string
		args       any
		interval   time.Duration
	}{
		{"orphan cleanup", OrphanTask, OrphanArgs{ProtectionMins: int64(s.OrphanProtection / time.Minute)}, s.OrphanCleanupInterval},
		{"task purge", PurgeTask,
			PurgeArgs{OlderThanMins: int64(s.TaskProtection / time.Minute), States: []string{task.Completed, task.Failed, task.Canceled, task.Skipped}},
			every(s.TaskProtection)},
		{"upload cleanup", UploadCleanupTask, CleanupArgs{OlderThanMins: int64(s.UploadProtection / time.Minute)}, every(s.UploadProtection)},
		{"temporary blob cleanup", TempCleanupTask, struct{}{}, tempCleanupInterval},
	}
	for _, x := range sets {
		if err := task.SetSchedule(ctx, c.DB, x.name, x.task, x.args, x.interval); err != nil {
			return err
		}
	}
	return nil
}
