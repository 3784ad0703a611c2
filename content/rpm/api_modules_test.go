package rpm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"

	"pith/content/contenttest"
	"pith/content/rpm"
	"pith/content/rpm/modulemd"
	"pith/meta"
)

var zooModules = data + "/yum-katello/zoo/modules.yaml"

// zooDocument cuts the document of zoo's modules.yaml that starts with a "---" line
// followed by "document: <typ>" and contains every one of has, markers included.
func zooDocument(t *testing.T, typ string, has ...string) string {
	t.Helper()
	b, err := os.ReadFile(zooModules)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range strings.Split(string(b), "\n...\n") {
		i := strings.Index(part, "---\n")
		if i < 0 {
			continue
		}
		doc := part[i:] + "\n..."
		if !strings.HasPrefix(doc, "---\ndocument: "+typ+"\n") {
			continue
		}
		all := true
		for _, h := range has {
			all = all && strings.Contains(doc, h)
		}
		if all {
			return doc
		}
	}
	t.Fatalf("no %s document with %q in %s", typ, has, zooModules)
	return ""
}

// obsoleteSnippet is a modulemd-obsoletes document; zoo has none.
const obsoleteSnippet = `---
document: modulemd-obsoletes
version: 1
data:
  modified: 2022-01-24T08:54Z
  reset: false
  module: kangaroo
  stream: 0
  context: deadbeef
  eol_date: 2021-06-01T00:00Z
  message: Module stream kangaroo:0 is no longer supported. Please switch to kangaroo:1
  obsoleted_by:
    module: kangaroo
    stream: 1
...`

// moduleBodies are good create bodies for each of the three operations.
func moduleBodies(t *testing.T) (mod, def, obs map[string]any) {
	mod = map[string]any{
		"name": "kangaroo", "stream": "0", "version": "20180730223407", "context": "deadbeef", "arch": "noarch",
		"description": "A module for the kangaroo 0.3 package", "artifacts": []string{"kangaroo-0:0.3-1.noarch"},
		"dependencies": []any{}, "profiles": map[string]any{"default": []string{"kangaroo"}},
		"snippet": zooDocument(t, "modulemd", "version: 20180730223407"),
	}
	def = map[string]any{
		"module": "duck", "stream": "0", "profiles": map[string]any{"0": []string{"default"}},
		"snippet": zooDocument(t, "modulemd-defaults", "module: duck"),
	}
	obs = map[string]any{
		"modified": "2022-01-24T08:54Z", "module_name": "kangaroo", "module_stream": "0",
		"message": "Module stream kangaroo:0 is no longer supported. Please switch to kangaroo:1", "override_previous": "False",
		"module_context": "deadbeef", "eol_date": "2021-06-01T00:00Z", "obsoleted_by_module_name": "kangaroo",
		"obsoleted_by_module_stream": "1", "snippet": obsoleteSnippet,
	}
	return mod, def, obs
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

// uploadPackage stores an rpm of zoo synchronously and returns its href.
func uploadPackage(e *contenttest.Env, name string) string {
	e.T.Helper()
	b, err := os.ReadFile(data + "/yum-katello/zoo/" + name)
	if err != nil {
		e.T.Fatal(err)
	}
	ct, body := contenttest.Multipart(nil, "file", name, b)
	code, m, _ := e.Do("POST", "/pulp/api/v3/content/rpm/packages/upload/", ct, body)
	if code != 201 {
		e.T.Fatalf("upload %s: %d %v", name, code, m)
	}
	return m["pulp_href"].(string)
}

// createModule posts a create body and waits for its task; it returns the created
// resources.
func createModule(e *contenttest.Env, seg string, body map[string]any) []any {
	e.T.Helper()
	code, m := e.JSON("POST", "/pulp/api/v3/content/rpm/"+seg+"/", body)
	if code != 202 {
		e.T.Fatalf("create %s: %d %v", seg, code, m)
	}
	tk := e.Wait(m["task"].(string))
	if tk["state"] != "completed" {
		e.T.Fatalf("create %s: task %v", seg, tk)
	}
	return tk["created_resources"].([]any)
}

// Each of the three modular units is created from a snippet cut from zoo's
// modules.yaml (an obsolete from its own), added to a repository, rendered with the
// snippet's fields, and stored as sync stores it; creating the modulemd again finds it.
func TestRpmModuleCreate(t *testing.T) {
	e := apiEnv(t)
	code, repo := e.JSON("POST", "/pulp/api/v3/repositories/rpm/rpm/", map[string]any{"name": "r"})
	if code != 201 {
		t.Fatalf("repository: %d %v", code, repo)
	}
	repoHref := repo["pulp_href"].(string)
	pkg := uploadPackage(e, "kangaroo-0.3-1.noarch.rpm")
	mod, def, obs := moduleBodies(t)
	mod = with(mod, "repository", repoHref, "packages", []string{pkg}, "pulp_labels", map[string]string{"k": "v"})

	created := createModule(e, "modulemds", mod)
	if len(created) != 2 || !strings.Contains(created[0].(string), "/content/rpm/modulemds/") || !strings.Contains(created[1].(string), "/versions/1/") {
		t.Fatalf("created: %v", created)
	}
	modHref := created[0].(string)
	code, m, _ := e.Do("GET", modHref, "", nil)
	if code != 200 || m["name"] != "kangaroo" || m["stream"] != "0" || m["version"] != "20180730223407" || m["context"] != "deadbeef" ||
		m["arch"] != "noarch" || m["description"] != "A module for the kangaroo 0.3 package" ||
		toJSON(m["artifacts"]) != `["kangaroo-0:0.3-1.noarch"]` || toJSON(m["profiles"]) != `{"default":["kangaroo"]}` ||
		toJSON(m["packages"]) != toJSON([]string{pkg}) || toJSON(m["pulp_labels"]) != `{"k":"v"}` || m["snippet"] != nil {
		t.Errorf("modulemd: %d %v", code, m)
	}

	created = createModule(e, "modulemd_defaults", with(def, "repository", repoHref))
	if len(created) != 2 || !strings.Contains(created[0].(string), "/content/rpm/modulemd_defaults/") {
		t.Fatalf("created: %v", created)
	}
	defHref := created[0].(string)
	if code, m, _ := e.Do("GET", defHref, "", nil); code != 200 || m["module"] != "duck" || m["stream"] != "0" || toJSON(m["profiles"]) != `{"0":["default"]}` {
		t.Errorf("defaults: %d %v", code, m)
	}

	created = createModule(e, "modulemd_obsoletes", with(obs, "repository", repoHref))
	if len(created) != 2 || !strings.Contains(created[0].(string), "/content/rpm/modulemd_obsoletes/") {
		t.Fatalf("created: %v", created)
	}
	obsHref := created[0].(string)
	if code, m, _ := e.Do("GET", obsHref, "", nil); code != 200 || m["module_name"] != "kangaroo" || m["module_stream"] != "0" ||
		m["override_previous"] != "False" || m["eol_date"] != "2021-06-01T00:00Z" || m["obsoleted_by_module_stream"] != "1" {
		t.Errorf("obsolete: %d %v", code, m)
	}

	want := map[string]float64{"rpm.modulemd": 1, "rpm.modulemd_defaults": 1, "rpm.modulemd_obsolete": 1}
	if got := versionPresent(e, repoHref); toJSON(got) != toJSON(want) {
		t.Errorf("version: %v, want %v", got, want)
	}

	// The units are those sync stores from the same modules.yaml: same natural key,
	// digest and snippet.
	b, err := os.ReadFile(zooModules)
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modulemd.Parse(bytes.NewReader(b), "modules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var synced []meta.Content
	for i := range mf.Modules {
		if mf.Modules[i].Version == 20180730223407 {
			u, _ := rpm.ModulemdUnit(&mf.Modules[i])
			synced = append(synced, u)
		}
	}
	for i := range mf.Defaults {
		if mf.Defaults[i].Module == "duck" {
			u, _ := rpm.ModulemdDefaultsUnit(&mf.Defaults[i])
			synced = append(synced, u)
		}
	}
	for i, href := range []string{modHref, defHref} {
		parts := strings.Split(strings.TrimSuffix(href, "/"), "/")
		c, err := meta.ContentByPulpID(context.Background(), e.DB, parts[len(parts)-1])
		if err != nil {
			t.Fatal(err)
		}
		var got, want map[string]any
		json.Unmarshal(c.Attrs, &got)
		json.Unmarshal(synced[i].Attrs, &want)
		if c.NaturalKey != synced[i].NaturalKey || c.Digest != synced[i].Digest || got["snippet"] != want["snippet"] {
			t.Errorf("%s: key %q digest %s, sync would store key %q digest %s (snippets equal: %v)",
				href, c.NaturalKey, c.Digest, synced[i].NaturalKey, synced[i].Digest, got["snippet"] == want["snippet"])
		}
	}

	// The same modulemd again (without repository or packages, its version as a JSON
	// number) finds the unit.
	again := createModule(e, "modulemds", with(mod, "repository", nil, "packages", nil, "pulp_labels", nil, "version", 20180730223407))
	if len(again) != 1 || again[0] != modHref {
		t.Errorf("created again: %v, want [%s]", again, modHref)
	}

	// A form body (as the pulp CLI sends): JSON fields as JSON text.
	form := url.Values{"module": {"kangaroo"}, "stream": {"0"}, "profiles": {`{"0": ["default"]}`},
		"snippet": {zooDocument(t, "modulemd-defaults", "module: kangaroo")}, "repository": {repoHref}}
	code, m, _ = e.Do("POST", "/pulp/api/v3/content/rpm/modulemd_defaults/", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if code != 202 {
		t.Fatalf("form create: %d %v", code, m)
	}
	if tk := e.Wait(m["task"].(string)); tk["state"] != "completed" || len(tk["created_resources"].([]any)) != 2 {
		t.Fatalf("form create: %v", tk)
	}
	if got := versionPresent(e, repoHref)["rpm.modulemd_defaults"]; got != 2 {
		t.Errorf("after the form create: %v defaults, want 2", got)
	}
}

// Bad modular create bodies are a 400 naming the field, and queue nothing.
func TestRpmModuleCreateBadInput(t *testing.T) {
	e := apiEnv(t)
	mod, def, obs := moduleBodies(t)
	otherModule := zooDocument(t, "modulemd", "version: 20180704111719")
	missingPkg := "/pulp/api/v3/content/rpm/packages/00000000-0000-0000-0000-000000000000/"
	_, tasks, _ := e.Do("GET", "/pulp/api/v3/tasks/", "", nil)
	before := tasks["count"]
	for _, tc := range []struct {
		name, seg string
		body      map[string]any
		field     string
		want      []string // in the field's message
	}{
		{"missing name", "modulemds", with(mod, "name", nil), "name", []string{"This field is required."}},
		{"missing artifacts", "modulemds", with(mod, "artifacts", nil), "artifacts", []string{"This field is required."}},
		{"missing snippet", "modulemds", with(mod, "snippet", nil), "snippet", []string{"This field is required."}},
		{"missing override_previous", "modulemd_obsoletes", with(obs, "override_previous", nil), "override_previous", []string{"This field is required."}},
		{"missing profiles", "modulemd_defaults", with(def, "profiles", nil), "profiles", []string{"This field is required."}},
		{"null name", "modulemds", with(mod, "name", json.RawMessage("null")), "name", []string{"may not be null"}},
		{"disagreeing name", "modulemds", with(mod, "name", "foo"), "name", []string{`"foo"`, `"kangaroo"`}},
		{"disagreeing version", "modulemds", with(mod, "snippet", otherModule), "version", []string{"20180730223407", "20180704111719"}},
		{"disagreeing artifacts", "modulemds", with(mod, "artifacts", []string{"x-0:1-1.noarch"}), "artifacts", []string{"x-0:1-1.noarch", "kangaroo-0:0.3-1.noarch"}},
		{"disagreeing stream", "modulemd_defaults", with(def, "stream", "1"), "stream", []string{`"1"`, `"0"`}},
		{"disagreeing eol_date", "modulemd_obsoletes", with(obs, "eol_date", json.RawMessage("null")), "eol_date", []string{"null", "2021-06-01T00:00Z"}},
		{"disagreeing override_previous", "modulemd_obsoletes", with(obs, "override_previous", "True"), "override_previous", []string{`"True"`, `"False"`}},
		{"unparsable snippet", "modulemds", with(mod, "snippet", "---\ndocument: modulemd\nversion: 2\ndata: [\n..."), "snippet", []string{"snippet"}},
		{"snippet without a document", "modulemds", with(mod, "snippet", "---\n# nothing\n..."), "snippet", []string{"no document"}},
		{"snippet of another kind", "modulemds", with(mod, "snippet", def["snippet"]), "snippet", []string{"modulemd-defaults"}},
		{"modulemd snippet for defaults", "modulemd_defaults", with(def, "snippet", mod["snippet"]), "snippet", []string{`"modulemd"`}},
		{"two documents", "modulemds", with(mod, "snippet", mod["snippet"].(string)+"\n"+otherModule), "snippet", []string{"more than one document"}},
		{"missing package", "modulemds", with(mod, "packages", []string{missingPkg}), "packages", []string{missingPkg}},
		{"not a package href", "modulemds", with(mod, "packages", []string{"/pulp/api/v3/repositories/rpm/rpm/00000000-0000-0000-0000-000000000000/"}), "packages", []string{"No URL match"}},
		{"missing repository", "modulemds", with(mod, "repository", "/pulp/api/v3/repositories/rpm/rpm/00000000-0000-0000-0000-000000000000/"), "repository", []string{"does not exist"}},
		{"unknown field", "modulemd_defaults", with(def, "modul", "duck"), "modul", []string{"Unexpected field."}},
	} {
		code, m := e.JSON("POST", "/pulp/api/v3/content/rpm/"+tc.seg+"/", tc.body)
		msg := ""
		if l, ok := m[tc.field].([]any); ok {
			for _, x := range l {
				s, _ := x.(string)
				msg += s + " "
			}
		}
		ok := code == 400 && m[tc.field] != nil
		for _, w := range tc.want {
			ok = ok && strings.Contains(msg, w)
		}
		if !ok {
			t.Errorf("%s: %d %v, want a 400 on %s naming %q", tc.name, code, m, tc.field, tc.want)
		}
		t.Logf("%s: %s: %s", tc.name, tc.field, msg)
	}
	if _, tasks, _ := e.Do("GET", "/pulp/api/v3/tasks/", "", nil); tasks["count"] != before {
		t.Errorf("bad bodies queued tasks: %v, then %v", before, tasks["count"])
	}
}
