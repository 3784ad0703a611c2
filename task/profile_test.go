package task_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"pith/config"
	"pith/meta"
	"pith/task"
)

// profiles collects what the Profile hook stores, by task and name.
type profiles struct {
	mu    sync.Mutex
	files map[string]map[string][]byte
}

func (p *profiles) store(ctx context.Context, t task.Task, name string, data []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.files[t.PulpID] == nil {
		p.files[t.PulpID] = map[string][]byte{}
	}
	p.files[t.PulpID][name] = data
	return nil
}

func (p *profiles) of(id string) map[string][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.files[id])
}

var gzipMagic = []byte{0x1f, 0x8b}

// A task runs the profilers its request asked for that the setting enables; the others
// are logged as unavailable and ignored. Not parallel: a CPU profile is the process's.
func TestTaskProfiles(t *testing.T) {
	for _, tc := range []struct {
		name     string
		setting  []string
		header   []string
		want     []string
		logged   string
		unlogged string
		fail     bool
	}{
		{"all", []string{"memory", "pprof", "heap"}, []string{"memory", "pprof", "heap"}, []string{"heap_profile", "memory_profile", "pprof_profile"}, "", "not available", false},
		{"no setting", nil, []string{"memory"}, nil, "not available", "", false},
		{"no header", []string{"memory"}, nil, nil, "", "not available", false},
		{"failed task", []string{"memory"}, []string{"memory"}, []string{"memory_profile"}, "", "", true},
		{"unavailable ignored", []string{"memory", "heap"}, []string{"memory", "memray", "pprof"}, []string{"memory_profile"}, `profilers="[memray pprof]"`, "", false},
	} {
		for _, engine := range []string{"sqlite", "postgres"} {
			t.Run(tc.name+"/"+engine, func(t *testing.T) {
				db := openDB(t, engine)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var log logs
				got := &profiles{files: map[string]map[string][]byte{}}
				q := task.New(db, map[string]task.Func{"work": func(ctx context.Context, r *task.Run) error {
					if tc.fail {
						return errors.New("the work failed")
					}
					return nil
				}}, task.Options{Workers: 1, Diagnostics: tc.setting, Logger: slog.New(slog.NewTextHandler(&log, nil))})
				q.SetHooks(task.Hooks{Profile: got.store})
				if err := q.Start(ctx); err != nil {
					t.Fatal(err)
				}
				tk, err := q.Dispatch(ctx, task.Spec{Name: "work", Profile: tc.header})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(tk.ProfileOptions, tc.header) {
					t.Errorf("stored profile options %q, want %q", tk.ProfileOptions, tc.header)
				}
				state := task.Completed
				if tc.fail {
					state = task.Failed
				}
				waitState(t, db, tk.PulpID, state)
				files := got.of(tk.PulpID)
				if names := slices.Sorted(maps.Keys(files)); !slices.Equal(names, tc.want) {
					t.Fatalf("profiles %q, want %q", names, tc.want)
				}
				if b, ok := files["memory_profile"]; ok && !strings.HasPrefix(string(b), "# Seconds\tMemory in MB\n0\t") {
					t.Errorf("memory profile %q", b)
				}
				for _, n := range []string{"pprof_profile", "heap_profile"} {
					if b, ok := files[n]; ok && !bytes.HasPrefix(b, gzipMagic) {
						t.Errorf("%s is not a gzipped pprof profile: % x", n, b[:min(len(b), 8)])
					}
				}
				log.mu.Lock()
				out := log.buf.String()
				log.mu.Unlock()
				if tc.logged != "" && !strings.Contains(out, tc.logged) {
					t.Errorf("log lacks %q:\n%s", tc.logged, out)
				}
				if tc.unlogged != "" && strings.Contains(out, tc.unlogged) {
					t.Errorf("log has %q:\n%s", tc.unlogged, out)
				}
			})
		}
	}
}

// Go runs one CPU profile at a time per process: a task that asks for one while another
// task's runs gets none, and the log says so; the first task's profile is whole. One
// database only: the CPU profile is the process's.
func TestConcurrentCPUProfileSkipped(t *testing.T) {
	db := openDB(t, "sqlite")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var log logs
	got := &profiles{files: map[string]map[string][]byte{}}
	started, release := make(chan struct{}), make(chan struct{})
	q := task.New(db, map[string]task.Func{
		"long": func(ctx context.Context, r *task.Run) error {
			close(started)
			<-release
			return nil
		},
		"short": func(ctx context.Context, r *task.Run) error { return nil },
	}, task.Options{Workers: 2, Diagnostics: []string{"pprof"}, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	q.SetHooks(task.Hooks{Profile: got.store})
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	long, err := q.Dispatch(ctx, task.Spec{Name: "long", Profile: []string{"pprof"}})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	short, err := q.Dispatch(ctx, task.Spec{Name: "short", Profile: []string{"pprof"}})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, db, short.PulpID, task.Completed)
	close(release)
	waitState(t, db, long.PulpID, task.Completed)
	if files := got.of(short.PulpID); len(files) != 0 {
		t.Errorf("the overlapping task has profiles %v", slices.Collect(maps.Keys(files)))
	}
	if b := got.of(long.PulpID)["pprof_profile"]; !bytes.HasPrefix(b, gzipMagic) {
		t.Errorf("the first task's CPU profile: % x", b[:min(len(b), 8)])
	}
	log.wait(t, "task profiler skipped", 1)
}

// The setting accepts exactly the profilers the worker has.
func TestSettingNamesProfilers(t *testing.T) {
	if got, want := slices.Sorted(slices.Values(config.TaskProfilers)), slices.Sorted(maps.Keys(task.Profilers)); !slices.Equal(got, want) {
		t.Errorf("config accepts %q, the worker has %q", got, want)
	}
}

// A task's profile files are artifacts that orphan cleanup keeps while the task lives;
// deleting or purging the task lets them go.
func TestProfileArtifactsLiveWithTheirTask(t *testing.T) {
	for _, end := range []string{"delete", "purge"} {
		t.Run(end, func(t *testing.T) {
			forEachDB(t, func(t *testing.T, db *meta.DB) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				q := task.New(db, map[string]task.Func{"work": func(ctx context.Context, r *task.Run) error { return nil }},
					task.Options{Workers: 1, Diagnostics: []string{"memory"}})
				q.SetHooks(task.Hooks{Profile: func(ctx context.Context, tk task.Task, name string, data []byte) error {
					sum := sha256.Sum256(data)
					a, _, err := meta.PutArtifact(ctx, db, meta.Artifact{Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])})
					if err != nil {
						return err
					}
					return task.LinkProfile(ctx, db, tk.ID, name, a.ID)
				}})
				if err := q.Start(ctx); err != nil {
					t.Fatal(err)
				}
				tk, err := q.Dispatch(ctx, task.Spec{Name: "work", Profile: []string{"memory"}})
				if err != nil {
					t.Fatal(err)
				}
				tk = waitState(t, db, tk.PulpID, task.Completed)
				files, err := task.ProfileArtifacts(ctx, db, tk.ID)
				if err != nil || len(files) != 1 || files["memory_profile"] == "" {
					t.Fatalf("profile artifacts: %v %v", files, err)
				}
				if _, digests, err := meta.DeleteOrphans(ctx, db, meta.Now()+1, nil); err != nil || len(digests) != 0 {
					t.Fatalf("orphan cleanup with the task: %v %v", digests, err)
				}
				a, err := meta.ArtifactBySHA256(ctx, db, files["memory_profile"])
				if err != nil {
					t.Fatal(err)
				}
				if err := meta.DeleteArtifact(ctx, db, a.ID); !errors.Is(err, meta.ErrInUse) {
					t.Fatalf("delete a linked artifact: %v", err)
				}
				if end == "delete" {
					err = task.Delete(ctx, db, tk.PulpID)
				} else {
					_, err = task.Purge(ctx, db, meta.Now()+1, []string{task.Completed})
				}
				if err != nil {
					t.Fatal(err)
				}
				if _, digests, err := meta.DeleteOrphans(ctx, db, meta.Now()+1, nil); err != nil || !slices.Equal(digests, []string{files["memory_profile"]}) {
					t.Fatalf("orphan cleanup without the task: %v %v", digests, err)
				}
			})
		})
	}
}

// A task that panics still ends its profilers: its CPU profile is stored and the next
// task gets one of its own.
func TestPanickingTaskEndsItsProfiles(t *testing.T) {
	db := openDB(t, "sqlite")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := &profiles{files: map[string]map[string][]byte{}}
	q := task.New(db, map[string]task.Func{
		"boom": func(ctx context.Context, r *task.Run) error { panic("boom") },
		"work": func(ctx context.Context, r *task.Run) error { return nil },
	}, task.Options{Workers: 1, Diagnostics: []string{"pprof"}})
	q.SetHooks(task.Hooks{Profile: got.store})
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"boom", "work"} {
		tk, err := q.Dispatch(ctx, task.Spec{Name: name, Profile: []string{"pprof"}})
		if err != nil {
			t.Fatal(err)
		}
		state := task.Completed
		if name == "boom" {
			state = task.Failed
		}
		waitState(t, db, tk.PulpID, state)
		if b := got.of(tk.PulpID)["pprof_profile"]; !bytes.HasPrefix(b, gzipMagic) {
			t.Errorf("%s: CPU profile % x", name, b[:min(len(b), 8)])
		}
	}
}
