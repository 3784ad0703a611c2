package rpm_test

import (
	"encoding/json"
	"os"
	"pith/content/contenttest"
	"pith/content/rpm"
	"strings"
	"testing"
)

// apiEnv is pith with the rpm type, driven through its API.
func apiEnv(t *testing.T) *contenttest.Env { return contenttest.New(t, contenttest.Type(rpm.New)) }

// versionPresent reads a repository's latest version's content_summary.present counts.
func versionPresent(e *contenttest.Env, repoHref string) map[string]float64 {
	e.T.Helper()
	code, repo, _ := e.Do("GET", repoHref, "", nil)
	if code != 200 {
		e.T.Fatalf("%s: %d %v", repoHref, code, repo)
	}
	code, v, _ := e.Do("GET", repo["latest_version_href"].(string), "", nil)
	if code != 200 {
		e.T.Fatalf("version: %d %v", code, v)
	}
	out := map[string]float64{}
	present, _ := v["content_summary"].(map[string]any)["present"].(map[string]any)
	for typ, x := range present {
		out[typ] = x.(map[string]any)["count"].(float64)
	}
	return out
}

// An advisory uploaded as JSON becomes a unit, in a repository when one is named; a
// file that is not an advisory is a 400 naming the problem, and queues nothing.
func TestRpmAdvisoryCreate(t *testing.T) {
	e := apiEnv(t)
	code, repo := e.JSON("POST", "/pulp/api/v3/repositories/rpm/rpm/", map[string]any{"name": "r"})
	if code != 201 {
		t.Fatalf("repository: %d %v", code, repo)
	}
	adv := `{"id": "PITH-2026:1", "updated": "2026-11-23 00:00:00", "issued": "2026-11-22 00:00:00", "type": "bugfix", "title": "t",
		"pkglist": [{"name": "c", "short": "c", "packages": [{"name": "bear", "version": "4.1", "release": "1", "arch": "noarch", "filename": "bear-4.1-1.noarch.rpm"}]}]}`
	ct, body := contenttest.Multipart(map[string]string{"repository": repo["pulp_href"].(string)}, "file", "advisory.json", []byte(adv))
	code, m, _ := e.Do("POST", "/pulp/api/v3/content/rpm/advisories/", ct, body)
	if code != 202 {
		t.Fatalf("create: %d %v", code, m)
	}
	tk := e.Wait(m["task"].(string))
	if tk["state"] != "completed" {
		t.Fatalf("task: %v", tk)
	}
	created := tk["created_resources"].([]any)
	if len(created) != 2 || !strings.Contains(created[0].(string), "/content/rpm/advisories/") {
		t.Fatalf("created: %v", created)
	}
	code, a, _ := e.Do("GET", created[0].(string), "", nil)
	if code != 200 || a["id"] != "PITH-2026:1" || a["issued_date"] != "2026-11-22 00:00:00" || len(a["pkglist"].([]any)) != 1 {
		t.Errorf("advisory: %d %v", code, a)
	}
	if got := versionPresent(e, repo["pulp_href"].(string)); got["rpm.advisory"] != 1 {
		t.Errorf("version: %v", got)
	}
	_, tasks, _ := e.Do("GET", "/pulp/api/v3/tasks/", "", nil)
	before := tasks["count"]
	for _, tc := range []struct{ body, want string }{
		{`<updates/>`, "not a JSON object"},
		{`{"id": "X", "issued": "2026-01-01"}`, "updated_date is required"},
		{`{"id": "X", "updated": "2026-01-02", "issued": "2026-01-01", "severty": "x"}`, "severty"},
	} {
		ct, body := contenttest.Multipart(nil, "file", "advisory.json", []byte(tc.body))
		code, m, _ := e.Do("POST", "/pulp/api/v3/content/rpm/advisories/", ct, body)
		if code != 400 || !strings.Contains(toJSON(m["file"]), tc.want) {
			t.Errorf("%s: %d %v, want a 400 on file naming %q", tc.body, code, m, tc.want)
		}
	}
	if _, tasks, _ := e.Do("GET", "/pulp/api/v3/tasks/", "", nil); tasks["count"] != before {
		t.Errorf("bad advisories queued tasks: %v, then %v", before, tasks["count"])
	}
}

// A comps.xml upload adds its groups, categories and environments to a repository;
// with replace, they replace the repository's comps units. Bad input is a 400.
func TestRpmCompsUpload(t *testing.T) {
	e := apiEnv(t)
	code, repo := e.JSON("POST", "/pulp/api/v3/repositories/rpm/rpm/", map[string]any{"name": "r"})
	if code != 201 {
		t.Fatalf("repository: %d %v", code, repo)
	}
	href := repo["pulp_href"].(string)
	upload := func(path string, fields map[string]string) map[string]any {
		t.Helper()
		b, err := os.ReadFile(data + "/" + path)
		if err != nil {
			t.Fatal(err)
		}
		ct, body := contenttest.Multipart(fields, "file", "comps.xml", b)
		code, m, _ := e.Do("POST", "/pulp/api/v3/rpm/comps/", ct, body)
		if code != 202 {
			t.Fatalf("upload %s: %d %v", path, code, m)
		}
		tk := e.Wait(m["task"].(string))
		if tk["state"] != "completed" {
			t.Fatalf("task: %v", tk)
		}
		return tk
	}
	tk := upload("yum-katello/zoo/comps.xml", map[string]string{"repository": href})
	if n := len(tk["created_resources"].([]any)); n != 5 {
		t.Errorf("created %d resources, want 4 units and a version: %v", n, tk["created_resources"])
	}
	want := map[string]float64{"rpm.packagegroup": 2, "rpm.packagecategory": 1, "rpm.packageenvironment": 1}
	if got := versionPresent(e, href); toJSON(got) != toJSON(want) {
		t.Errorf("after zoo's comps: %v, want %v", got, want)
	}
	upload("rpm-edge-cases/comps_files/comps_00.xml", map[string]string{"repository": href, "replace": "true"})
	want = map[string]float64{"rpm.packagegroup": 1, "rpm.packagecategory": 1}
	if got := versionPresent(e, href); toJSON(got) != toJSON(want) {
		t.Errorf("after replacing with comps_00: %v, want %v", got, want)
	}
	for _, tc := range []struct {
		fields map[string]string
		data   string
		field  string
	}{
		{nil, "<comps><group>", "file"},
		{nil, "not xml at all", "file"},
		{map[string]string{"replace": "true"}, "<comps/>", "replace"},
		{map[string]string{"repository": "/pulp/api/v3/repositories/rpm/rpm/00000000-0000-0000-0000-000000000000/"}, "<comps/>", "repository"},
	} {
		ct, body := contenttest.Multipart(tc.fields, "file", "comps.xml", []byte(tc.data))
		code, m, _ := e.Do("POST", "/pulp/api/v3/rpm/comps/", ct, body)
		if code != 400 || m[tc.field] == nil {
			t.Errorf("%v %q: %d %v, want a 400 naming %s", tc.fields, tc.data, code, m, tc.field)
		}
	}
	ct, body := contenttest.Multipart(map[string]string{"repository": href}, "", "", nil)
	if code, m, _ := e.Do("POST", "/pulp/api/v3/rpm/comps/", ct, body); code != 400 || m["file"] == nil {
		t.Errorf("no file: %d %v", code, m)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
