package api_test

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
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
	// The URLs carry their authorization, as Pulp's preauthenticated ones do.
	check := func() {
		t.Helper()
		for name, u := range urls {
			code, b := fetch(t, u.(string), "", "")
			if code != 200 {
				t.Errorf("download %s: %d %s", name, code, b)
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
	check()

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
	if code, m := e.JSON("POST", tk+"add_role/", map[string]any{"role": "core.task_owner", "users": []string{"dave"}}); code != 201 {
		t.Fatalf("add_role: %d %v", code, m)
	}
	if code, m := asUser(e, "dave", "GET", tk+"profile_artifacts/", nil); code != 200 || len(m["urls"].(map[string]any)) != 2 {
		t.Fatalf("owner dave lists profile artifacts: %d %v", code, m)
	}

	// Without a token, or with one for another file, expired or forged, nothing is served.
	memURL := urls["memory_profile"].(string)
	path, query, _ := strings.Cut(memURL, "?")
	taskID := strings.TrimSuffix(strings.TrimPrefix(tk, "/pulp/api/v3/tasks/"), "/")
	expired := e.DB.Keys().Seal(fmt.Sprintf("profile_artifact %s memory_profile %d", taskID, time.Now().Add(-time.Minute).Unix()))
	for what, u := range map[string]string{
		"no token":      path,
		"another file":  strings.Replace(path, "memory_profile", "heap_profile", 1) + "?" + query,
		"expired token": path + "?token=" + url.QueryEscape(expired),
		"forged token":  path + "?token=pith:v1:x:AAAA",
		"admin without": path,
	} {
		user, pw := "", ""
		if what == "admin without" {
			user, pw = "admin", "pw"
		}
		if code, body := fetch(t, u, user, pw); code != 403 {
			t.Errorf("%s: %d %s, want 403", what, code, body)
		}
	}
	if code, _ := fetch(t, memURL, "", ""); code != 200 {
		t.Errorf("the URL itself: %d", code)
	}

	// Orphan cleanup keeps them; deleting the task lets the next cleanup take them.
	artifacts := e.Count("artifacts")
	cleanup()
	if n := e.Count("artifacts"); n != artifacts {
		t.Fatalf("orphan cleanup took profile artifacts: %d artifacts, had %d", n, artifacts)
	}
	check()
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
