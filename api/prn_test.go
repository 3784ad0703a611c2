package api_test

import (
	"fmt"
	"strings"
	"testing"

	"pith/content/contenttest"
)

// A PRN is accepted wherever an href is, in bodies and in filters, as Pulp 3.105 does;
// tasks record the resources they lock by PRN, and a filter on several reserved
// resources matches the tasks that locked all of them.
func TestPRNs(t *testing.T) {
	e := newEnv(t)
	ct, body := contenttest.Multipart(map[string]string{"relative_path": "a.txt"}, "file", "a.txt", []byte("a"))
	code, unit, _ := e.Do("POST", "/pulp/api/v3/content/file/files/upload/", ct, body)
	if code != 201 {
		t.Fatalf("upload: %d %v", code, unit)
	}
	var repos []map[string]any
	for _, name := range []string{"one", "two"} {
		code, repo := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": name})
		if code != 201 {
			t.Fatalf("repository: %d %v", code, repo)
		}
		repos = append(repos, repo)
	}
	// A modify adding a unit by PRN; its base version named by PRN.
	code, m := e.JSON("POST", repos[0]["pulp_href"].(string)+"modify/", map[string]any{"add_content_units": []any{unit["prn"]}})
	tk := e.Done("modify by PRN", code, m)
	_, v := e.JSON("GET", tk["created_resources"].([]any)[0].(string), nil)
	code, m = e.JSON("POST", repos[1]["pulp_href"].(string)+"modify/", map[string]any{"base_version": v["prn"]})
	e.Done("modify with a base version by PRN", code, m)
	// Filters by PRN.
	_, page := e.JSON("GET", "/pulp/api/v3/content/file/files/?repository_version="+v["prn"].(string), nil)
	if page["count"] != float64(1) {
		t.Errorf("content of a version named by PRN: %v", page)
	}
	_, page = e.JSON("GET", "/pulp/api/v3/repositories/?with_content="+unit["prn"].(string), nil)
	if page["count"] != float64(2) {
		t.Errorf("repositories with a unit named by PRN: %v", page["count"])
	}
	// A publication and a distribution named by PRN.
	code, m = e.JSON("POST", "/pulp/api/v3/publications/file/file/", map[string]any{"repository_version": v["prn"]})
	tk = e.Done("publish by PRN", code, m)
	_, pub := e.JSON("GET", tk["created_resources"].([]any)[0].(string), nil)
	code, m = e.JSON("POST", "/pulp/api/v3/distributions/file/file/", map[string]any{"name": "d", "base_path": "d", "publication": pub["prn"]})
	e.Done("distribute by PRN", code, m)

	// The modify's lock, recorded by PRN, and found by PRN or by href.
	one, two := repos[0]["prn"].(string), repos[1]["prn"].(string)
	if rec := fmt.Sprint(tk["reserved_resources_record"]); !strings.Contains(rec, "shared:"+one) {
		t.Errorf("the publish task's reserved_resources_record %s lacks shared:%s", rec, one)
	}
	for _, q := range []string{"reserved_resources=" + one, "reserved_resources=" + repos[0]["pulp_href"].(string)} {
		_, page = e.JSON("GET", "/pulp/api/v3/tasks/?"+q, nil)
		if page["count"] != float64(3) { // the two modifies and the publish
			t.Errorf("tasks?%s: %v tasks, want 3", q, page["count"])
		}
	}
	// The second modify locked repository two and, shared, repository one: only it has both.
	_, page = e.JSON("GET", "/pulp/api/v3/tasks/?reserved_resources__in="+one+","+two, nil)
	if page["count"] != float64(1) {
		t.Errorf("tasks that locked both repositories: %v, want 1", page["count"])
	}
}
