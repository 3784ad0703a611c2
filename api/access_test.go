package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"

	"pith/content/contenttest"
	"pith/meta"
)

// newUser makes a user with a password (as admin) and returns its href.
func newUser(e *contenttest.Env, name string) string {
	e.T.Helper()
	code, m := e.JSON("POST", "/pulp/api/v3/users/", map[string]any{"username": name, "password": name + " has a long password"})
	if code != 201 {
		e.T.Fatalf("create user %s: %d %v", name, code, m)
	}
	return m["pulp_href"].(string)
}

func asUser(e *contenttest.Env, name, method, path string, body any) (int, map[string]any) {
	e.T.Helper()
	ct, b := "", []byte(nil)
	if body != nil {
		ct = "application/json"
		b, _ = json.Marshal(body)
	}
	code, m, _ := e.DoAs(name, name+" has a long password", method, path, ct, bytes.NewReader(b))
	return code, m
}

// Wrong passwords are throttled per user and per client address, after the key
// derivation has run for each: before, a wrong password after a successful login was
// compared with a cached digest, thousands of guesses a second, forever.
func TestPasswordGuessing(t *testing.T) {
	e := newEnv(t)
	newUser(e, "alice")
	if code, m := asUser(e, "alice", "GET", "/pulp/api/v3/login/", nil); code != 200 {
		t.Fatalf("alice logs in: %d %v", code, m)
	}
	statuses := map[int]int{}
	for i := range 12 {
		code, _, h := e.DoAs("alice", fmt.Sprintf("guess %d", i), "GET", "/pulp/api/v3/repositories/", "", nil)
		statuses[code]++
		if code == 401 && h.Get("WWW-Authenticate") == "" {
			t.Error("401 without WWW-Authenticate")
		}
	}
	if statuses[401] != 10 || statuses[http.StatusTooManyRequests] != 2 {
		t.Fatalf("12 wrong passwords: %v; want 10 refused and then throttled", statuses)
	}
	// The right password, verified before, still works; a guess for another user from
	// the same address is throttled (the address's failures are spent).
	if code, m := asUser(e, "alice", "GET", "/pulp/api/v3/login/", nil); code != 200 {
		t.Fatalf("alice again: %d %v", code, m)
	}
	if code, _, _ := e.DoAs("nobody", "guess", "GET", "/pulp/api/v3/repositories/", "", nil); code != http.StatusTooManyRequests {
		t.Fatalf("guess for another user from the same address: %d, want 429", code)
	}
}

// A login session authenticates later requests by cookie; unsafe requests need its CSRF
// token, and logout ends it.
func TestLoginSession(t *testing.T) {
	e := newEnv(t)
	newUser(e, "bob")
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	do := func(method, path, csrf string, basic bool) (int, map[string]any) {
		req, _ := http.NewRequest(method, e.URL+path, strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		if basic {
			req.SetBasicAuth("bob", "bob has a long password")
		}
		if csrf != "" {
			req.Header.Set("X-CSRFToken", csrf)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	if code, m := do("POST", "/pulp/api/v3/login/", "", true); code != 201 || m["username"] != "bob" {
		t.Fatalf("login: %d %v", code, m)
	}
	var csrf string
	for _, c := range jar.Cookies(mustURL(t, e.URL)) {
		if c.Name == "csrftoken" {
			csrf = c.Value
		}
	}
	if csrf == "" {
		t.Fatal("no csrftoken cookie")
	}
	if code, m := do("GET", "/pulp/api/v3/login/", "", false); code != 200 || m["username"] != "bob" {
		t.Fatalf("GET login/ by cookie: %d %v", code, m)
	}
	if code, m := do("POST", "/pulp/api/v3/groups/", "", false); code != 403 || !strings.Contains(fmt.Sprint(m), "CSRF") {
		t.Fatalf("unsafe request without the CSRF token: %d %v", code, m)
	}
	if code, _ := do("POST", "/pulp/api/v3/groups/", csrf, false); code != 403 && code != 400 {
		t.Fatalf("unsafe request with the token reached the policy: got %d", code)
	}
	if code, _ := do("DELETE", "/pulp/api/v3/login/", csrf, false); code != 204 {
		t.Fatalf("logout: %d", code)
	}
	if code, _ := do("GET", "/pulp/api/v3/login/", "", false); code != 401 {
		t.Fatalf("after logout: %d, want 401", code)
	}
}

// A user granted the creator role makes a repository and owns it (creation hooks); a
// second user sees neither the repository nor the first user's tasks; the owner syncs
// and deletes; an administrator sees everything.
func TestOwnershipAndVisibility(t *testing.T) {
	e := newEnv(t)
	carol, dave := newUser(e, "carol"), newUser(e, "dave")
	for _, who := range []string{carol, dave} {
		if code, m := e.JSON("POST", who+"roles/", map[string]any{"role": "file.filerepository_creator", "content_object": nil}); code != 201 {
			t.Fatalf("grant creator: %d %v", code, m)
		}
	}
	code, repo := asUser(e, "carol", "POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": "carols"})
	if code != 201 {
		t.Fatalf("carol creates: %d %v", code, repo)
	}
	h := repo["pulp_href"].(string)
	if code, m := asUser(e, "carol", "GET", h+"my_permissions/", nil); code != 200 || !strings.Contains(fmt.Sprint(m["permissions"]), "file.delete_filerepository") {
		t.Fatalf("carol's permissions: %d %v", code, m)
	}
	if code, _ := asUser(e, "dave", "GET", h, nil); code != 404 {
		t.Fatalf("dave reads carol's repository: %d, want 404", code)
	}
	if _, m := asUser(e, "dave", "GET", "/pulp/api/v3/repositories/", nil); m["count"] != float64(0) {
		t.Fatalf("dave lists repositories: %v", m)
	}
	code, m := asUser(e, "carol", "POST", h+"modify/", map[string]any{"add_content_units": []string{}})
	if code != 202 {
		t.Fatalf("carol modifies: %d %v", code, m)
	}
	task := m["task"].(string)
	e.Wait(task)
	if code, m := asUser(e, "carol", "GET", task, nil); code != 200 || !strings.HasPrefix(fmt.Sprint(m["created_by"]), "/pulp/api/v3/users/") {
		t.Fatalf("carol reads her task: %d %v", code, m)
	}
	if code, _ := asUser(e, "dave", "GET", task, nil); code != 404 {
		t.Fatalf("dave reads carol's task: %d, want 404", code)
	}
	if _, m := asUser(e, "dave", "GET", "/pulp/api/v3/tasks/", nil); m["count"] != float64(0) {
		t.Fatalf("dave lists tasks: %v", m)
	}
	code, m = e.JSON("GET", h+"list_roles/", nil)
	if code != 200 || !strings.Contains(fmt.Sprint(m), "file.filerepository_owner") || !strings.Contains(fmt.Sprint(m), "carol") {
		t.Fatalf("list_roles: %d %v", code, m)
	}
	// Dave as a viewer: reads, may not change.
	if code, m := e.JSON("POST", h+"add_role/", map[string]any{"role": "file.filerepository_viewer", "users": []string{"dave"}}); code != 201 {
		t.Fatalf("add_role: %d %v", code, m)
	}
	if code, _ := asUser(e, "dave", "GET", h, nil); code != 200 {
		t.Fatalf("viewer dave reads: %d", code)
	}
	if code, _ := asUser(e, "dave", "DELETE", h, nil); code != 403 {
		t.Fatalf("viewer dave deletes: %d, want 403", code)
	}
	if code, m := asUser(e, "carol", "DELETE", h, nil); code != 202 {
		t.Fatalf("carol deletes: %d %v", code, m)
	} else {
		e.Wait(m["task"].(string))
	}
	// The roles held on the repository went with it.
	var n int
	if err := e.DB.QueryRow(t.Context(), `SELECT count(*) FROM user_roles WHERE object_type = 'file.filerepository'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("roles left on the deleted repository: %d %v", n, err)
	}
}

// A locked role cannot change; a custom role with a permission no model has is refused;
// a policy naming an unknown condition is refused and changes nothing; reset restores.
func TestRolesAndPolicies(t *testing.T) {
	e := newEnv(t)
	_, page := e.JSON("GET", "/pulp/api/v3/roles/?name=core.task_owner", nil)
	owner := page["results"].([]any)[0].(map[string]any)
	if code, _ := e.JSON("PATCH", owner["pulp_href"].(string), map[string]any{"description": "mine"}); code != 403 {
		t.Fatalf("patch a locked role: %d, want 403", code)
	}
	if code, m := e.JSON("POST", "/pulp/api/v3/roles/", map[string]any{"name": "x", "permissions": []string{"core.fly_task"}}); code != 400 || !strings.Contains(fmt.Sprint(m), "core.fly_task") {
		t.Fatalf("role with an unknown permission: %d %v", code, m)
	}
	_, page = e.JSON("GET", "/pulp/api/v3/access_policies/?viewset_name=tasks", nil)
	policy := page["results"].([]any)[0].(map[string]any)
	ph := policy["pulp_href"].(string)
	bad := []any{map[string]any{"action": "*", "principal": "authenticated", "effect": "allow", "condition": "has_modle_perms:core.view_task"}}
	if code, m := e.JSON("PATCH", ph, map[string]any{"statements": bad}); code != 400 || !strings.Contains(fmt.Sprint(m), "has_modle_perms") {
		t.Fatalf("unknown condition: %d %v", code, m)
	}
	if _, m := e.JSON("GET", ph, nil); m["customized"] != false {
		t.Fatalf("a refused update changed the policy: %v", m)
	}
	// Deny everyone the task list, then reset.
	deny := []any{map[string]any{"action": "*", "principal": "*", "effect": "deny"}}
	if code, m := e.JSON("PATCH", ph, map[string]any{"statements": deny}); code != 200 || m["customized"] != true {
		t.Fatalf("customize: %d %v", code, m)
	}
	if code, _ := e.JSON("GET", "/pulp/api/v3/tasks/", nil); code != 403 {
		t.Fatalf("admin lists tasks under a deny-all policy: %d, want 403", code)
	}
	if code, m := e.JSON("POST", ph+"reset/", nil); code != 200 || m["customized"] != false {
		t.Fatalf("reset: %d %v", code, m)
	}
	if code, _ := e.JSON("GET", "/pulp/api/v3/tasks/", nil); code != 200 {
		t.Fatalf("tasks after reset: %d", code)
	}
	var n int
	e.DB.QueryRow(t.Context(), `SELECT count(*) FROM access_policies WHERE viewset_name = 'domains'`).Scan(&n)
	if n != 0 {
		t.Fatal("a policy of a viewset pith does not serve is stored")
	}
	if _, err := meta.RoleByName(t.Context(), e.DB, "file.filerepository_owner"); err != nil {
		t.Fatal(err)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// A user viewing one repository sees the content its versions hold, in the content lists
// and one unit at a time, and not the content only other repositories hold.
func TestContentVisibility(t *testing.T) {
	e := newEnv(t)
	newUser(e, "erin")
	units := map[string]string{}
	for _, p := range []string{"a.txt", "b.txt", "c.txt"} {
		units[p] = fileUnit(e, p)
	}
	repos := map[string]string{}
	for name, paths := range map[string][]string{"seen": {"a.txt", "b.txt"}, "unseen": {"b.txt", "c.txt"}} {
		code, r := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": name})
		if code != 201 {
			t.Fatalf("create %s: %d %v", name, code, r)
		}
		repos[name] = r["pulp_href"].(string)
		var add []string
		for _, p := range paths {
			add = append(add, units[p])
		}
		code, m := e.JSON("POST", repos[name]+"modify/", map[string]any{"add_content_units": add})
		e.Done("modify "+name, code, m)
	}
	if code, m := e.JSON("POST", repos["seen"]+"add_role/", map[string]any{"role": "file.filerepository_viewer", "users": []string{"erin"}}); code != 201 {
		t.Fatalf("add_role: %d %v", code, m)
	}
	want := []string{units["a.txt"], units["b.txt"]}
	slices.Sort(want)
	check := func(when string) {
		t.Helper()
		for _, list := range []string{"/pulp/api/v3/content/file/files/", "/pulp/api/v3/content/"} {
			var got []string
			for _, page := range []string{"?limit=100", "?limit=1", "?limit=1&offset=1", "?limit=1&offset=2"} {
				code, m := asUser(e, "erin", "GET", list+page, nil)
				if code != 200 {
					t.Fatalf("%s: erin lists %s%s: %d %v", when, list, page, code, m)
				}
				if m["count"] != float64(2) {
					t.Errorf("%s: erin lists %s%s: count %v, want 2", when, list, page, m["count"])
				}
				for _, r := range m["results"].([]any) {
					got = append(got, r.(map[string]any)["pulp_href"].(string))
				}
			}
			// The whole list once, then each of its units once, page by page.
			slices.Sort(got)
			if w := slices.Sorted(slices.Values(slices.Concat(want, want))); !slices.Equal(got, w) {
				t.Errorf("%s: erin lists %s: %v, want a.txt and b.txt %v, from the whole list and a page each", when, list, got, want)
			}
		}
	}
	// Two units of three: a page checks unit by unit (meta.Page).
	check("2 of 3 units")
	// Two of fourteen: a page reads the units erin's repository holds.
	var more []string
	for i := range 11 {
		more = append(more, fileUnit(e, fmt.Sprintf("more-%d.txt", i)))
	}
	code, m := e.JSON("POST", repos["unseen"]+"modify/", map[string]any{"add_content_units": more})
	e.Done("modify unseen", code, m)
	check("2 of 14 units")
	for p, want := range map[string]int{"a.txt": 200, "b.txt": 200, "c.txt": 404} {
		if code, _ := asUser(e, "erin", "GET", units[p], nil); code != want {
			t.Errorf("erin reads %s: %d, want %d", p, code, want)
		}
	}
}

// A narrowed list's count follows the caller's roles and the rows: a removed role, a new
// repository with a role and a deleted repository each change it at once, whether the
// page holds the whole list (the count taken from the page) or part of it (asked of the
// database), and a page past the end still counts the list.
func TestNarrowedCount(t *testing.T) {
	e := newEnv(t)
	newUser(e, "fay")
	role := func(href, action string) {
		t.Helper()
		if code, m := e.JSON("POST", href+action+"/", map[string]any{"role": "file.filerepository_viewer", "users": []string{"fay"}}); code/100 != 2 {
			t.Fatalf("%s %s: %d %v", action, href, code, m)
		}
	}
	create := func(name string) string {
		t.Helper()
		code, r := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": name})
		if code != 201 {
			t.Fatalf("create %s: %d %v", name, code, r)
		}
		return r["pulp_href"].(string)
	}
	repos := map[string]string{}
	for _, name := range []string{"r1", "r2", "r3", "r4"} {
		repos[name] = create(name)
	}
	for _, name := range []string{"r1", "r2", "r3"} {
		role(repos[name], "add_role")
	}
	check := func(when string, want int) {
		t.Helper()
		for _, list := range []string{"/pulp/api/v3/repositories/file/file/", "/pulp/api/v3/repositories/"} {
			for _, page := range []string{"?limit=100", "?limit=1", "?limit=1&offset=1", "?limit=2&offset=1", "?limit=2&offset=50"} {
				code, m := asUser(e, "fay", "GET", list+page, nil)
				if code != 200 || m["count"] != float64(want) {
					t.Errorf("%s: fay lists %s%s: %d, count %v, want %d", when, list, page, code, m["count"], want)
				}
			}
		}
	}
	check("roles on three of four", 3)
	role(repos["r2"], "remove_role")
	check("a role removed", 2)
	repos["r5"] = create("r5")
	role(repos["r5"], "add_role")
	check("a repository added with a role", 3)
	code, m := e.JSON("DELETE", repos["r1"], nil)
	e.Done("delete r1", code, m)
	check("a repository deleted", 2)
}

// A content list of one type shows a narrowed caller the units of that type its visible
// repositories hold, and none of another type they hold, whether its roles are on each
// repository or on every repository of their types.
func TestContentVisibilityByType(t *testing.T) {
	e := newEnv(t)
	file := fileUnit(e, "f.txt")
	c, _, err := meta.PutContent(context.Background(), e.DB, meta.Content{Type: "rpm.package", NaturalKey: "p-1-1-noarch",
		RepoKey: "p", RelativePath: "p.rpm", Digest: hexsum([]byte("p.rpm")), Attrs: json.RawMessage(`{}`)}, []meta.ContentFile{{RelativePath: "p.rpm"}})
	if err != nil {
		t.Fatal(err)
	}
	pkg := "/pulp/api/v3/content/rpm/packages/" + c.PulpID + "/"
	perObject, everyRepo := newUser(e, "hal"), newUser(e, "ida")
	for _, r := range []struct{ typ, name, unit, role string }{
		{"file/file", "files", file, "file.filerepository_viewer"},
		{"rpm/rpm", "rpms", pkg, "rpm.rpmrepository_viewer"},
	} {
		code, m := e.JSON("POST", "/pulp/api/v3/repositories/"+r.typ+"/", map[string]any{"name": r.name})
		if code != 201 {
			t.Fatalf("create %s: %d %v", r.name, code, m)
		}
		repo := m["pulp_href"].(string)
		code, m = e.JSON("POST", repo+"modify/", map[string]any{"add_content_units": []string{r.unit}})
		e.Done("modify "+r.name, code, m)
		for who, object := range map[string]any{perObject: repo, everyRepo: nil} {
			if code, m := e.JSON("POST", who+"roles/", map[string]any{"role": r.role, "content_object": object}); code != 201 {
				t.Fatalf("role %s for %s: %d %v", r.role, who, code, m)
			}
		}
	}
	for _, user := range []string{"hal", "ida"} {
		for list, want := range map[string]string{"/pulp/api/v3/content/file/files/": file, "/pulp/api/v3/content/rpm/packages/": pkg} {
			for _, page := range []string{"?limit=100", "?limit=1&offset=1"} {
				code, m := asUser(e, user, "GET", list+page+"&fields=pulp_href", nil)
				var got []string
				for _, r := range m["results"].([]any) {
					got = append(got, r.(map[string]any)["pulp_href"].(string))
				}
				if code != 200 || m["count"] != float64(1) || (page == "?limit=100" && !slices.Equal(got, []string{want})) || (page != "?limit=100" && len(got) != 0) {
					t.Errorf("%s lists %s%s: %d, %v (count %v), want %s alone", user, list, page, code, got, m["count"], want)
				}
			}
		}
	}
}
