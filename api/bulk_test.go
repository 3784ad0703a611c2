package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pith/content/contenttest"
	"pith/meta"
)

const bulkPath = "/pulp/api/v3/repositories/bulk_modify/"

// fileUnit stores a file unit directly (no artifact, as on demand) and returns its href.
func fileUnit(e *contenttest.Env, path string) string {
	e.T.Helper()
	digest := hexsum([]byte(path))
	c, _, err := meta.PutContent(context.Background(), e.DB, meta.Content{Type: "file.file", NaturalKey: digest + ":" + path,
		RepoKey: path, RelativePath: path, Digest: digest, Attrs: json.RawMessage(`{}`)}, []meta.ContentFile{{RelativePath: path}})
	if err != nil {
		e.T.Fatal(err)
	}
	return "/pulp/api/v3/content/file/files/" + c.PulpID + "/"
}

// versions lists a repository's version numbers, newest first, with their present counts.
func versions(e *contenttest.Env, repo string) []string {
	e.T.Helper()
	code, m, _ := e.Do("GET", repo+"versions/", "", nil)
	if code != 200 {
		e.T.Fatalf("versions of %s: %d %v", repo, code, m)
	}
	var out []string
	for _, r := range m["results"].([]any) {
		v := r.(map[string]any)
		present := v["content_summary"].(map[string]any)["present"].(map[string]any)
		n := 0.0
		if f, ok := present["file.file"].(map[string]any); ok {
			n = f["count"].(float64)
		}
		out = append(out, fmt.Sprintf("%v:%v", v["number"], n))
	}
	return out
}

func waitGroup(e *contenttest.Env, href string) []map[string]any {
	e.T.Helper()
	code, g, _ := e.Do("GET", href, "", nil)
	if code != 200 {
		e.T.Fatalf("group %s: %d %v", href, code, g)
	}
	var tasks []map[string]any
	code, m, _ := e.Do("GET", "/pulp/api/v3/tasks/?task_group="+href, "", nil)
	if code != 200 {
		e.T.Fatalf("tasks of %s: %d %v", href, code, m)
	}
	for _, t := range m["results"].([]any) {
		tasks = append(tasks, e.Wait(t.(map[string]any)["pulp_href"].(string)))
	}
	return tasks
}

func TestBulkModify(t *testing.T) {
	e := newEnv(t)
	var repos []string
	for i := range 5 {
		code, m := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": fmt.Sprint("bulk", i)})
		if code != 201 {
			t.Fatalf("create repository: %d %v", code, m)
		}
		repos = append(repos, m["pulp_href"].(string))
	}
	base := fileUnit(e, "base.txt")
	unit := fileUnit(e, "promoted.txt")
	// Every repository holds base.txt at version 1; repos[2] holds the promoted unit too (v2).
	for i, r := range repos {
		add := []string{base}
		for _, u := range add {
			code, m := e.JSON("POST", r+"modify/", map[string]any{"add_content_units": []string{u}})
			if code != 202 || e.Wait(m["task"].(string))["state"] != "completed" {
				t.Fatalf("modify %s: %d %v", r, code, m)
			}
		}
		if i == 2 {
			code, m := e.JSON("POST", r+"modify/", map[string]any{"add_content_units": []string{unit}})
			if code != 202 || e.Wait(m["task"].(string))["state"] != "completed" {
				t.Fatalf("modify %s: %d %v", r, code, m)
			}
		}
	}

	// Add to repositories 0, 2, 4 in batches of 2: two tasks; 2 already has the unit.
	code, m := e.JSON("POST", bulkPath, map[string]any{"repositories": []string{repos[0], repos[2], repos[4]},
		"add_content_units": []string{unit}, "batch_size": 2})
	if code != 202 || len(m) != 1 || !strings.HasPrefix(fmt.Sprint(m["task_group"]), "/pulp/api/v3/task-groups/") {
		t.Fatalf("bulk add: %d %v", code, m)
	}
	tasks := waitGroup(e, m["task_group"].(string))
	if len(tasks) != 2 {
		t.Fatalf("%d tasks in the group, want 2", len(tasks))
	}
	var created []string
	for _, tk := range tasks {
		if tk["state"] != "completed" || tk["name"] != "pith.app.tasks.repository.bulk_modify" {
			t.Fatalf("task: %v", tk)
		}
		for _, h := range tk["created_resources"].([]any) {
			created = append(created, h.(string))
		}
	}
	slices.Sort(created)
	wantCreated := []string{repos[0] + "versions/2/", repos[4] + "versions/2/"}
	slices.Sort(wantCreated)
	if fmt.Sprint(created) != fmt.Sprint(wantCreated) {
		t.Errorf("created %v, want %v", created, wantCreated)
	}
	want := map[int][]string{0: {"2:2", "1:1", "0:0"}, 1: {"1:1", "0:0"}, 2: {"2:2", "1:1", "0:0"}, 3: {"1:1", "0:0"}, 4: {"2:2", "1:1", "0:0"}}
	for i, r := range repos {
		if got := versions(e, r); fmt.Sprint(got) != fmt.Sprint(want[i]) {
			t.Errorf("repository %d versions %v, want %v", i, got, want[i])
		}
	}
	// The new version holds the unit, and its summary says what it added.
	code, v, _ := e.Do("GET", repos[0]+"versions/2/", "", nil)
	added := v["content_summary"].(map[string]any)["added"].(map[string]any)["file.file"].(map[string]any)
	if code != 200 || added["count"] != float64(1) {
		t.Errorf("version 2 summary: %v", v["content_summary"])
	}
	code, list, _ := e.Do("GET", "/pulp/api/v3/content/file/files/?repository_version="+repos[0]+"versions/2/", "", nil)
	if code != 200 || list["count"] != float64(2) {
		t.Errorf("content of version 2: %d %v", code, list)
	}

	// Remove from 0 and 1 (1 does not hold it: no new version there).
	code, m = e.JSON("POST", bulkPath, map[string]any{"repositories": []string{repos[0], repos[1]}, "remove_content_units": []string{unit}})
	if code != 202 {
		t.Fatalf("bulk remove: %d %v", code, m)
	}
	if tasks := waitGroup(e, m["task_group"].(string)); len(tasks) != 1 || tasks[0]["state"] != "completed" {
		t.Fatalf("bulk remove tasks: %v", tasks)
	}
	if got := versions(e, repos[0]); fmt.Sprint(got) != "[3:1 2:2 1:1 0:0]" {
		t.Errorf("repository 0 after remove: %v", got)
	}
	if got := versions(e, repos[1]); fmt.Sprint(got) != "[1:1 0:0]" {
		t.Errorf("repository 1 after remove: %v", got)
	}
	// "*" removes everything.
	code, m = e.JSON("POST", bulkPath, map[string]any{"repositories": []string{repos[3]}, "remove_content_units": []string{"*"}})
	if code != 202 {
		t.Fatalf("bulk remove all: %d %v", code, m)
	}
	waitGroup(e, m["task_group"].(string))
	if got := versions(e, repos[3]); fmt.Sprint(got) != "[2:0 1:1 0:0]" {
		t.Errorf("repository 3 after remove all: %v", got)
	}
}

// Bad bulk requests get a 400 naming the field and index, and dispatch nothing.
func TestBulkModifyBadInput(t *testing.T) {
	e := newEnv(t)
	var repos []string
	for i := range 2 {
		_, m := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": fmt.Sprint("r", i)})
		repos = append(repos, m["pulp_href"].(string))
	}
	_, rpmRepo := e.JSON("POST", "/pulp/api/v3/repositories/rpm/rpm/", map[string]any{"name": "rpm"})
	unit := fileUnit(e, "a.txt")
	const missingRepo = "/pulp/api/v3/repositories/file/file/00000000-0000-0000-0000-000000000000/"
	const missingUnit = "/pulp/api/v3/content/file/files/00000000-0000-0000-0000-000000000000/"
	for _, tc := range []struct {
		name string
		body map[string]any
		want string
	}{
		{"no repositories field", map[string]any{"add_content_units": []string{unit}}, "repositories"},
		{"empty repositories", map[string]any{"repositories": []string{}, "add_content_units": []string{unit}}, "repositories"},
		{"unknown repository", map[string]any{"repositories": []string{repos[0], missingRepo}, "add_content_units": []string{unit}}, "Item 1"},
		{"malformed repository", map[string]any{"repositories": []string{"/pulp/api/v3/tasks/x/"}, "add_content_units": []string{unit}}, "Item 0"},
		{"repository under the wrong type", map[string]any{"repositories": []string{strings.Replace(repos[0], "file/file", "rpm/rpm", 1)}, "add_content_units": []string{unit}}, "Item 0"},
		{"duplicate repository", map[string]any{"repositories": []string{repos[0], repos[1], repos[0]}, "add_content_units": []string{unit}}, "Item 2"},
		{"unknown unit", map[string]any{"repositories": repos, "add_content_units": []string{unit, missingUnit}}, "add_content_units"},
		{"unknown unit to remove", map[string]any{"repositories": repos, "remove_content_units": []string{missingUnit}}, "remove_content_units"},
		{"no change", map[string]any{"repositories": repos, "add_content_units": []string{}}, "add_content_units"},
		{"batch size 0", map[string]any{"repositories": repos, "add_content_units": []string{unit}, "batch_size": 0}, "batch_size"},
		{"batch size too big", map[string]any{"repositories": repos, "add_content_units": []string{unit}, "batch_size": 5001}, "batch_size"},
		{"unit of the wrong type", map[string]any{"repositories": []string{repos[0], rpmRepo["pulp_href"].(string)}, "add_content_units": []string{unit}}, "repositories item 1"},
		{"unknown field", map[string]any{"repositories": repos, "add_content_units": []string{unit}, "base_version": "x"}, "base_version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := [3]int{e.Count("tasks"), e.Count("task_groups"), e.Count("repository_versions")}
			code, m := e.JSON("POST", bulkPath, tc.body)
			if code != 400 {
				t.Fatalf("status %d, want 400: %v", code, m)
			}
			if b, _ := json.Marshal(m); !strings.Contains(string(b), tc.want) {
				t.Errorf("error %s does not name %q", b, tc.want)
			}
			after := [3]int{e.Count("tasks"), e.Count("task_groups"), e.Count("repository_versions")}
			if after != before {
				t.Errorf("tasks, groups, versions %v → %v", before, after)
			}
		})
	}
}
