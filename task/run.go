package task

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"pith/meta"
	"pith/secret"
)

// Run is what a task function gets: its row, the store, and ways to report progress,
// created resources and a result.
type Run struct {
	Task Task
	DB   *meta.DB
	q    *Queue
	ctx  context.Context // for saving progress; outlives cancellation of the work

	mu       sync.Mutex
	reports  []*Progress
	created  []string
	result   json.RawMessage
	lastSave time.Time
	dirty    bool
}

// Args decodes the task's arguments into v, their secrets opened.
func (r *Run) Args(v any) error {
	args := r.Task.Args
	if r.DB != nil {
		var err error
		if args, err = meta.OpenSecrets(r.DB, args); err != nil {
			return fmt.Errorf("task %s: arguments: %w", r.Task.Name, err)
		}
	}
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("task %s: decode arguments: %w", r.Task.Name, err)
	}
	return nil
}

// Dispatch queues a child of this task: in its task group, with its logging id and its
// creator.
func (r *Run) Dispatch(ctx context.Context, s Spec) (Task, error) {
	s.GroupID, s.ParentID = r.Task.GroupID, &r.Task.ID
	s.LoggingCID, s.CreatedBy = r.Task.LoggingCID, r.Task.CreatedBy
	return r.q.Dispatch(ctx, s)
}

// Created records a resource the task created (an href). It is saved with the progress
// (at most twice a second) and in the write that marks the task finished, so a client
// that sees the task completed sees everything it created; a task that creates
// thousands of versions does not rewrite its row for each.
func (r *Run) Created(href string) {
	r.mu.Lock()
	r.created = append(r.created, href)
	r.dirty = true
	r.mu.Unlock()
	r.save(r.ctx)
	if h := r.q.hooks.Created; h != nil && r.Task.CreatedBy != nil {
		if err := h(r.ctx, r.Task, href); err != nil {
			r.q.opt.Logger.Error("task created a resource, but its creator's roles on it were not given", "task", r.Task.PulpID, "resource", href, "err", err)
		}
	}
}

// SetResult sets the task's result value (Pulp's `result`).
func (r *Run) SetResult(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.result = b
	r.mu.Unlock()
	return nil
}

// Progress is one progress report of a task.
type Progress struct {
	run *Run
	rep ProgressReport
}

// Progress starts a progress report; total < 0 means unknown.
func (r *Run) Progress(code, message string, total int64) *Progress {
	p := &Progress{run: r, rep: ProgressReport{Code: code, Message: secret.Redact(message), State: Running}}
	if total >= 0 {
		p.rep.Total = &total
	}
	r.mu.Lock()
	r.reports = append(r.reports, p)
	r.dirty = true
	r.mu.Unlock()
	r.save(r.ctx)
	return p
}

// Add advances the report by n.
func (p *Progress) Add(n int64) {
	p.run.mu.Lock()
	p.rep.Done += n
	p.run.dirty = true
	p.run.mu.Unlock()
	p.run.save(p.run.ctx)
}

// SetTotal sets the total once it is known.
func (p *Progress) SetTotal(n int64) {
	p.run.mu.Lock()
	p.rep.Total = &n
	p.run.dirty = true
	p.run.mu.Unlock()
}

// Finish marks the report completed (or failed/canceled when err != nil).
func (p *Progress) Finish(err error) {
	p.run.mu.Lock()
	p.rep.State = Completed
	if err != nil {
		p.rep.State = Failed
	}
	p.run.dirty = true
	p.run.mu.Unlock()
	p.run.save(p.run.ctx)
}

// save writes progress and created resources, at most every half second; the final
// write of the task records them whole.
func (r *Run) save(ctx context.Context) {
	r.mu.Lock()
	if !r.dirty || time.Since(r.lastSave) < 500*time.Millisecond {
		r.mu.Unlock()
		return
	}
	r.dirty = false
	r.lastSave = time.Now()
	r.mu.Unlock()
	progress, created := r.snapshot()
	if r.DB != nil {
		r.DB.Exec(ctx, `UPDATE tasks SET progress = ?, created_resources = ?, updated = ? WHERE id = ?`, progress, created, meta.Now(), r.Task.ID)
	}
}

// snapshot is the progress reports and the created resources, as stored (JSON).
func (r *Run) snapshot() (progress, created string) {
	r.mu.Lock()
	reps := make([]ProgressReport, len(r.reports))
	for i, p := range r.reports {
		reps[i] = p.rep
	}
	cj, _ := json.Marshal(append([]string{}, r.created...))
	r.mu.Unlock()
	pj, _ := json.Marshal(reps)
	return string(pj), string(cj)
}
