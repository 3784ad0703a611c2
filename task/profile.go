package task

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"pith/meta"
)

// Profilers are the profilers a task can ask for (X-Task-Diagnostics) and the
// task-diagnostics setting can enable, with the name each one's file is linked to the
// task under. "memory" is Pulp's profiler and file format; the others are Go's.
var Profilers = map[string]string{
	"memory": "memory_profile", // "# Seconds\tMemory in MB", then a line every 2 s
	"pprof":  "pprof_profile",  // a CPU profile of the process while the task runs
	"heap":   "heap_profile",   // the process's heap profile at the task's end
}

// memoryEvery is the memory profiler's sampling period, Pulp's 2 s.
var memoryEvery = 2 * time.Second

// profiler is one running profiler of a task; stop ends it and gives its file.
type profiler struct {
	name string
	stop func() ([]byte, error)
}

// profiled wraps a task's function with the profilers its task asked for that this
// process enables; a requested profiler that is not enabled is logged, as Pulp does.
func (q *Queue) profiled(t Task, fn Func) Func {
	if len(t.ProfileOptions) == 0 || fn == nil {
		return fn
	}
	var use, unavailable []string
	for _, n := range t.ProfileOptions {
		if _, ok := Profilers[n]; ok && slices.Contains(q.opt.Diagnostics, n) {
			use = append(use, n)
		} else {
			unavailable = append(unavailable, n)
		}
	}
	if len(unavailable) > 0 {
		q.opt.Logger.Warn("requested task diagnostic profilers are not available", "task", t.PulpID, "profilers", unavailable)
	}
	if len(use) == 0 || q.hooks.Profile == nil {
		return fn
	}
	return func(ctx context.Context, r *Run) error {
		var running []profiler
		for _, n := range use {
			stop, err := startProfiler(n)
			if err != nil {
				q.opt.Logger.Warn("task profiler skipped", "task", t.PulpID, "profiler", n, "err", err)
				continue
			}
			running = append(running, profiler{name: Profilers[n], stop: stop})
		}
		// Deferred so that a panicking task still ends its profilers (a CPU profile
		// left running would refuse every later one).
		defer func() {
			for _, p := range running {
				data, err := p.stop()
				if err == nil {
					err = q.hooks.Profile(r.ctx, r.Task, p.name, data)
				}
				if err != nil {
					q.opt.Logger.Error("task profile not stored", "task", t.PulpID, "profile", p.name, "err", err)
				}
			}
		}()
		return fn(ctx, r)
	}
}

// startProfiler starts the profiler named n.
func startProfiler(n string) (func() ([]byte, error), error) {
	switch n {
	case "memory":
		return startMemory(), nil
	case "pprof":
		// Go runs one CPU profile at a time in a process: a task that overlaps another's
		// gets none rather than a profile that misses part of its run.
		var buf bytes.Buffer
		if err := pprof.StartCPUProfile(&buf); err != nil {
			return nil, fmt.Errorf("another task's CPU profile is running: %w", err)
		}
		return func() ([]byte, error) {
			pprof.StopCPUProfile()
			return buf.Bytes(), nil
		}, nil
	case "heap":
		return func() ([]byte, error) {
			runtime.GC() // the profile then shows the heap as of the task's end
			var buf bytes.Buffer
			err := pprof.Lookup("heap").WriteTo(&buf, 0)
			return buf.Bytes(), err
		}, nil
	}
	return nil, fmt.Errorf("no profiler named %q", n)
}

// startMemory samples the process's memory every memoryEvery until stopped, writing
// Pulp's memory_profile format.
func startMemory() func() ([]byte, error) {
	var buf bytes.Buffer
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		tick := time.NewTicker(memoryEvery)
		defer tick.Stop()
		writeMemory(&buf, done, tick.C, rss)
	}()
	return func() ([]byte, error) {
		close(done)
		<-exited
		return buf.Bytes(), nil
	}
}

// writeMemory writes the header, then a sample at once and one per tick until done.
// Seconds count the ticks, two each, as Pulp's do.
func writeMemory(w io.Writer, done <-chan struct{}, tick <-chan time.Time, sample func() int64) {
	fmt.Fprint(w, "# Seconds\tMemory in MB\n")
	for seconds := 0; ; seconds += 2 {
		fmt.Fprintf(w, "%d\t%.2f\n", seconds, float64(sample())/(1<<20))
		select {
		case <-done:
			return
		case <-tick:
		}
	}
}

// rss is the resident memory of the process in bytes (Linux's /proc/self/statm), or
// what Go holds from the system where that cannot be read. The process runs many tasks
// at once: the sample is the process's, not the task's alone.
func rss() int64 {
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 1 {
			if pages, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				return pages * int64(os.Getpagesize())
			}
		}
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.Sys)
}

// LinkProfile links an artifact to a task as its profile file name, replacing an
// earlier link of that name.
func LinkProfile(ctx context.Context, q meta.Querier, taskID int64, name string, artifactID int64) error {
	_, err := q.Exec(ctx, `INSERT INTO task_profile_artifacts (task_id, name, artifact_id) VALUES (?, ?, ?)
		ON CONFLICT (task_id, name) DO UPDATE SET artifact_id = excluded.artifact_id`, taskID, name, artifactID)
	if err != nil {
		return fmt.Errorf("link profile %s of task %d: %w", name, taskID, err)
	}
	return nil
}

// ProfileArtifacts maps the names of a task's profile files to their artifacts' sha256.
func ProfileArtifacts(ctx context.Context, q meta.Querier, taskID int64) (map[string]string, error) {
	rows, err := q.Query(ctx, `SELECT p.name, a.sha256 FROM task_profile_artifacts p JOIN artifacts a ON a.id = p.artifact_id
		WHERE p.task_id = ? ORDER BY p.name`, taskID)
	if err != nil {
		return nil, fmt.Errorf("profile artifacts of task %d: %w", taskID, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, sha string
		if err := rows.Scan(&name, &sha); err != nil {
			return nil, fmt.Errorf("profile artifacts of task %d: %w", taskID, err)
		}
		out[name] = sha
	}
	return out, rows.Err()
}
