package api_test

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// A task dispatched with X-Task-Diagnostics has its profile files listed at
// {task_href}profile_artifacts/ and downloadable from the URLs given, under
// core.view_task_profile_artifacts; they outlive orphan cleanup and go with the task.
func TestTaskProfileArtifacts(t *testing.T) {
	e := newEnv(t)
	cleanup := func(hdr ...string) string {
		code, m, _ := e.Do("POST", "/pulp/api/v3/orphans/cleanup/", "application/json", strings.NewReader(`{"orphan_protection_time": 0}`), hdr...)
		return e.Done("orphan cleanup", code, m)["pulp_href"].(string)
	}
	plain := cleanup()
	if code, m := e.JSON("GET", plain+"profile_artifacts/", nil); code != 200 || len(m["urls"].(map[string]any)) != 0 {
		t.Fatalf("profile artifacts of a task without diagnostics: %d %v", code, m)
	}
	tk := cleanup("X-Task-Diagnostics", "memory, heap,memray")
	code, m := e.JSON("GET", tk+"profile_artifacts/", nil)
	urls, _ := m["urls"].(map[string]any)
	if code != 200 || !slices.Equal(slices.Sorted(maps.Keys(urls)), []string{"heap_profile", "memory_profile"}) {
		t.Fatalf("profile artifacts: %d %v", code, m)
	}
	check := func(user, password string, want int) {
		t.Helper()
		for name, u := range urls {
			code, b := fetch(t, u.(string), user, password)
			if code != want {
				t.Errorf("%s downloads %s: %d, want %d", user, name, code, want)
				continue
			}
			if want != 200 {
				continue
			}
			if name == "memory_profile" && !strings.HasPrefix(b, "# Seconds\tMemory in MB\n0\t") {
				t.Errorf("memory profile %q", b)
			}
			if name == "heap_profile" && !strings.HasPrefix(b, "\x1f\x8b") {
				t.Errorf("heap profile is not gzipped pprof: %q", b[:min(len(b), 8)])
			}
		}
	}
	check("admin", "pw", 200)

	// A viewer of the task sees it but not its profiles; its owner sees both.
	newUser(e, "dave")
	if code, m := e.JSON("POST", tk+"add_role/", map[string]any{"role": "core.task_viewer", "users": []string{"dave"}}); code != 201 {
		t.Fatalf("add_role: %d %v", code, m)
	}
	if code, _ := asUser(e, "dave", "GET", tk, nil); code != 200 {
		t.Fatalf("viewer dave reads the task: %d", code)
	}
	if code, m := asUser(e, "dave", "GET", tk+"profile_artifacts/", nil); code != 403 {
		t.Fatalf("viewer dave lists profile artifacts: %d %v, want 403", code, m)
	}
	check("dave", "dave has a long password", 403)
	if code, m := e.JSON("POST", tk+"add_role/", map[string]any{"role": "core.task_owner", "users": []string{"dave"}}); code != 201 {
		t.Fatalf("add_role: %d %v", code, m)
	}
	if code, m := asUser(e, "dave", "GET", tk+"profile_artifacts/", nil); code != 200 || len(m["urls"].(map[string]any)) != 2 {
		t.Fatalf("owner dave lists profile artifacts: %d %v", code, m)
	}
	check("dave", "dave has a long password", 200)
	if code, _ := fetch(t, e.URL+tk+"profile_artifacts/nothing/", "admin", "pw"); code != 404 {
		t.Errorf("an unknown profile: %d, want 404", code)
	}

	// Orphan cleanup keeps them; deleting the task lets the next cleanup take them.
	artifacts := e.Count("artifacts")
	cleanup()
	if n := e.Count("artifacts"); n != artifacts {
		t.Fatalf("orphan cleanup took profile artifacts: %d artifacts, had %d", n, artifacts)
	}
	check("admin", "pw", 200)
	if code, m := e.JSON("DELETE", tk, nil); code != 204 {
		t.Fatalf("delete task: %d %v", code, m)
	}
	blobs := e.BlobCount()
	cleanup()
	if n := e.Count("artifacts"); n != artifacts-2 {
		t.Errorf("after the task's deletion, orphan cleanup left %d artifacts of %d", n, artifacts)
	}
	if n := e.BlobCount(); n != blobs-2 {
		t.Errorf("after the task's deletion, orphan cleanup left %d blobs of %d", n, blobs)
	}
}
