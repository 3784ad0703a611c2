package promote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pith/bench"
	"pith/internal/testfiles"
	"pith/meta"
)

const password = "promote-secret"

var pithBin string

func TestMain(m *testing.M) {
	if pithBin = os.Getenv("PITH_BIN"); pithBin != "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "pith-promote-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pithBin = filepath.Join(dir, "pith")
	cmd := exec.Command("go", "build", "-o", pithBin, "pith/cmd/pith")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build pith:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startPith runs `pith serve` on SQLite in a temporary directory and returns its URL
// and database path.
func startPith(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	cl, err := bench.StartCluster(context.Background(), bench.ClusterConfig{Binary: pithBin, Dir: dir, Password: password, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	return cl.API, filepath.Join(dir, "pith.db")
}

type page struct {
	Count   int               `json:"count"`
	Results []json.RawMessage `json:"results"`
}

func get(t *testing.T, c *bench.Client, path string, out any) {
	t.Helper()
	if err := c.JSON(context.Background(), "GET", path, nil, out); err != nil {
		t.Fatal(err)
	}
}

// Every targeted repository gets exactly one new version per step and way of promoting
// (bulk_modify, a modify per repository) holding that step's unit; the others are
// unchanged; pith's API reads the generated versions and content, of each type.
func TestPromote(t *testing.T) {
	for _, typ := range []string{FileType, AnsibleType} {
		t.Run(typ, func(t *testing.T) { testPromote(t, typ) })
	}
}

func testPromote(t *testing.T, typ string) {
	k, err := kindOf(typ)
	if err != nil {
		t.Fatal(err)
	}
	url, db := startPith(t)
	cfg := Config{Type: typ, URL: url, User: "admin", Password: password, DB: db, Repos: 50, Versions: 200, Units: 30, Steps: []int{10, 20}, BatchSize: 4, Seed: 1}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	Markdown(&md, res)
	t.Logf("\n%s", md.String())
	per := perRepo(cfg.Units)
	if len(res.Servers) != 2 || !res.Servers[0].Bulk || res.Servers[1].Bulk || res.Servers[1].Peer {
		t.Fatalf("result %+v: want pith's two rows", res)
	}
	// What each repository should hold: its generated versions, then one per step of
	// each row.
	promoted := map[string][]string{}
	sizes := append(append([]int{}, cfg.Steps...), cfg.Steps[0])
	for _, pith := range res.Servers {
		if res.PerRepo != per || pith.Memberships != int64(cfg.Repos*per) || res.Versions != cfg.Versions || len(pith.Steps) != 3 {
			t.Fatalf("result %+v (per repository %d)", res, per)
		}
		for i, st := range pith.Steps {
			tasks := st.Repos
			if pith.Bulk {
				tasks = (st.Repos + cfg.BatchSize - 1) / cfg.BatchSize
			}
			if st.Repos != sizes[i] || st.Tasks != tasks || st.Repeat != (i == len(sizes)-1) {
				t.Errorf("%s, step %d: %+v", pith.Name, i, st)
			}
			for _, h := range st.Targets {
				promoted[h] = append(promoted[h], st.Unit)
			}
		}
	}
	c := bench.NewClient(bench.Target{URL: url, User: "admin", Password: password})
	var repos page
	get(t, c, "/pulp/api/v3/repositories/"+k.repoSegment+"/?limit=1000", &repos)
	if repos.Count != cfg.Repos {
		t.Fatalf("%d repositories listed, want %d", repos.Count, cfg.Repos)
	}
	extra := cfg.Versions - cfg.Repos
	untouched := 0
	for _, raw := range repos.Results {
		var r struct {
			Href   string `json:"pulp_href"`
			Name   string `json:"name"`
			Latest string `json:"latest_version_href"`
		}
		json.Unmarshal(raw, &r)
		var i int
		fmt.Sscanf(r.Name[strings.LastIndex(r.Name, "-")+1:], "%d", &i)
		n := extra / cfg.Repos
		if i < extra%cfg.Repos {
			n++
		}
		units := promoted[r.Href]
		if want := fmt.Sprintf("%sversions/%d/", r.Href, n+len(units)); r.Latest != want {
			t.Errorf("%s: latest %s, want %s", r.Name, r.Latest, want)
			continue
		}
		var versions page
		get(t, c, r.Href+"versions/?limit=100", &versions)
		if versions.Count != n+1+len(units) {
			t.Errorf("%s: %d versions, want %d", r.Name, versions.Count, n+1+len(units))
		}
		var latest struct {
			Summary struct {
				Present map[string]struct {
					Count int `json:"count"`
				} `json:"present"`
			} `json:"content_summary"`
		}
		get(t, c, r.Latest, &latest)
		var content page
		get(t, c, "/pulp/api/v3/content/"+k.unitSegment+"/?limit=1000&repository_version="+r.Latest, &content)
		if n := latest.Summary.Present[k.unitType].Count; content.Count != per+len(units) || n != content.Count {
			t.Errorf("%s: latest version lists %d units, summary says %d, want %d", r.Name, content.Count, n, per+len(units))
		}
		for j, u := range units {
			// The unit came in the version its step made, and only then.
			v := fmt.Sprintf("%sversions/%d/", r.Href, n+1+j)
			var added page
			get(t, c, "/pulp/api/v3/content/"+k.unitSegment+"/?repository_version_added="+v, &added)
			if added.Count != 1 || !strings.Contains(string(added.Results[0]), u) {
				t.Errorf("%s: version %s added %d units, want only %s", r.Name, v, added.Count, u)
			}
		}
		if len(units) == 0 {
			untouched++
		}
	}
	if untouched == 0 {
		t.Errorf("every repository was promoted to; the check of unchanged ones saw none")
	}
}

// Generated collection versions and ansible repositories are stored as the API stores
// its own: the same attrs (keys, kinds of values), files and documents as a
// collection imported through the API (keys sorted: JSON objects have no order), the
// same repository attrs as a repository
// created through it, and the API lists both with the same fields.
func TestAnsibleUnitsAsImported(t *testing.T) {
	url, dbPath := startPith(t)
	ctx := context.Background()
	cfg := Config{Type: AnsibleType, DB: dbPath, Repos: 3, Versions: 6, Units: 10}
	if _, err := load(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	c := bench.NewClient(bench.Target{URL: url, User: "admin", Password: password})
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "foo-bar-1.0.0.tar.gz")
	tarball, err := testfiles.ReadFile("ansible-collections", "foo-bar-1.0.0.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(tarball)
	mw.Close()
	var task struct {
		Task string `json:"task"`
	}
	if err := c.Do(ctx, "POST", "/pulp/api/v3/content/ansible/collection_versions/", mw.FormDataContentType(), &body, &task); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(ctx, task.Task); err != nil {
		t.Fatal(err)
	}
	var repo struct {
		Href string `json:"pulp_href"`
	}
	if err := c.JSON(ctx, "POST", "/pulp/api/v3/repositories/ansible/ansible/", map[string]any{"name": "made-by-the-api"}, &repo); err != nil {
		t.Fatal(err)
	}

	db, err := meta.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// shape is what a unit's rows look like, values aside.
	shape := func(where string) string {
		t.Helper()
		var attrs, docs string
		var files int
		err := db.QueryRow(ctx, `SELECT c.attrs, (SELECT count(*) FROM content_artifacts ca WHERE ca.content_id = c.id AND ca.relative_path = c.relative_path),
			(SELECT group_concat(name) FROM (SELECT name FROM content_documents d WHERE d.content_id = c.id ORDER BY name))
			FROM contents c WHERE c.type = 'ansible.collection_version' AND `+where).Scan(&attrs, &files, &docs)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(strings.NewReader(attrs))
		var keys []string
		dec.Token()
		for dec.More() {
			k, _ := dec.Token()
			var v json.RawMessage
			dec.Decode(&v)
			keys = append(keys, fmt.Sprintf("%s:%c", k, v[0]))
		}
		slices.Sort(keys)
		return fmt.Sprintf("attrs %s; files %d; documents %s", strings.Join(keys, ","), files, docs)
	}
	imported, generated := shape(`c.repo_key = 'foo.bar:1.0.0'`), shape(`c.repo_key <> 'foo.bar:1.0.0' LIMIT 1`)
	if imported != generated {
		t.Errorf("generated unit\n%s\nimported one\n%s", generated, imported)
	}
	var apiAttrs string
	if err := db.QueryRow(ctx, `SELECT attrs FROM repositories WHERE name = 'made-by-the-api'`).Scan(&apiAttrs); err != nil {
		t.Fatal(err)
	}
	k, _ := kindOf(AnsibleType)
	if apiAttrs != k.repoAttrs {
		t.Errorf("generated repositories' attrs %s, the API's %s", k.repoAttrs, apiAttrs)
	}

	var units struct {
		Results []map[string]any `json:"results"`
	}
	get(t, c, "/pulp/api/v3/content/ansible/collection_versions/?limit=100&ordering=pulp_created", &units)
	if len(units.Results) != cfg.Units+1 {
		t.Fatalf("%d collection versions listed, want %d", len(units.Results), cfg.Units+1)
	}
	fields := func(m map[string]any) string {
		ks := make([]string, 0, len(m))
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return strings.Join(ks, ",")
	}
	for _, u := range units.Results[:cfg.Units] {
		if a, b := fields(u), fields(units.Results[cfg.Units]); a != b {
			t.Fatalf("generated unit listed with %s, imported one with %s", a, b)
		}
	}
}
