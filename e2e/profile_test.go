package e2e

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A task dispatched by `pulp --header "X-Task-Diagnostics:…"` on a pith whose
// --task-diagnostics enables the profilers has their files, listed by `pulp task
// profile-artifact-urls` and saved by its --download; a profiler the setting does not
// enable is ignored.
func TestTaskProfileArtifactsCLI(t *testing.T) {
	for inst, start := range installations("--task-diagnostics", "memory,heap,pprof") {
		t.Run(inst, func(t *testing.T) {
			s := start(t)
			c := newCLI(t, s)
			c.dir = t.TempDir()
			c.run("--header", "X-Task-Diagnostics:memory,heap,pprof,memray", "orphan", "cleanup", "--protection-time", "0")
			var tasks []entity
			c.json(&tasks, "task", "list", "--name", "pulpcore.app.tasks.orphan.orphan_cleanup", "--limit", "1")
			if len(tasks) != 1 || tasks[0].str("state") != "completed" {
				t.Fatalf("orphan cleanup task: %v", tasks)
			}
			h := tasks[0].str("pulp_href")
			var urls map[string]string
			c.json(&urls, "task", "profile-artifact-urls", "--href", h)
			if names := slices.Sorted(maps.Keys(urls)); !slices.Equal(names, []string{"heap_profile", "memory_profile", "pprof_profile"}) {
				t.Fatalf("profile artifact urls: %v", urls)
			}
			c.run("task", "profile-artifact-urls", "--href", h, "--download")
			dir := filepath.Join(c.dir, "task_profile-pulpcore.app.tasks.orphan.orphan_cleanup-"+strings.TrimSuffix(h[strings.Index(h, "/tasks/")+len("/tasks/"):], "/"))
			for name := range urls {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatalf("downloaded %s: %v", name, err)
				}
				if name == "memory_profile" && !strings.HasPrefix(string(b), "# Seconds\tMemory in MB\n0\t") {
					t.Errorf("memory profile %q", b)
				}
				if name != "memory_profile" && !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
					t.Errorf("%s is not a gzipped pprof profile: % x", name, b[:min(len(b), 8)])
				}
			}

			// Without the header, a task has none.
			c.run("orphan", "cleanup", "--protection-time", "0")
			c.json(&tasks, "task", "list", "--name", "pulpcore.app.tasks.orphan.orphan_cleanup", "--limit", "1")
			urls = nil
			c.json(&urls, "task", "profile-artifact-urls", "--href", tasks[0].str("pulp_href"))
			if tasks[0].str("pulp_href") == h || len(urls) != 0 {
				t.Fatalf("a task without diagnostics (%s): %v", tasks[0].str("pulp_href"), urls)
			}
		})
	}
}
