package contenttest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"pith/api/href"
	"pith/content"
)

// Fixture is what a content type gives the conformance suite: the types to run, which
// of their kinds to exercise, an upstream to sync from and what a sync of it gives.
type Fixture struct {
	// Types make the content types to run (Type(file.New)).
	Types []Maker
	// Repository is the repository type under test ("rpm.rpm"); Remote and Distribution
	// are its remote and distribution types, the same when empty.
	Repository, Remote, Distribution string
	// Upstream is what a fixture server on 127.0.0.1 serves: a static tree
	// (http.FileServerFS) or an API (a Galaxy); the remote's URL is its root plus
	// RemotePath.
	Upstream   http.Handler
	RemotePath string
	// Index are the paths (relative to RemotePath) a broken upstream still serves: every
	// other request fails, so a sync gets as far as reading the index and then fails.
	Index []string
	// Present is the content summary of the version a sync of Upstream makes: count by
	// unit type.
	Present map[string]int
	// Twins makes two units of the same repo key (two files at one path, two builds of
	// one package) through the type's own operations and returns their hrefs.
	Twins func(e *Env) (string, string)
	// Examples are requests of the type's own operations (content create, copy, ...) by
	// operationId, which the schema check makes; every such operation needs one.
	Examples map[string]Example
	// Elsewhere, when set, names the operations the type's own tests exercise instead of
	// the suite (ansible's Galaxy API, whose paths name a distribution and a collection
	// rather than an href, and whose legacy routes redirect): the tour, the access matrix
	// and the count of operations exercised leave them out.
	Elsewhere func(opID string) bool
	// Vars, when set, are the hrefs of objects of the type's own that the tour cannot find
	// in a list (ansible's collections, whose list shows no href), by href variable
	// ("ansible_collection_href").
	Vars func(e *Env, refs Refs) map[string]string
	// Seed, when set, makes what none of the type's operations can make and the other
	// operations need one of (ansible's namespaces, which only its Galaxy API makes); it
	// runs after the examples.
	Seed func(e *Env, refs Refs)
	// RemoteBodies, by remote kind, are the fields a good body of a remote kind other than
	// Remote needs beside a name and the upstream's url (rpm's ULN remote: a uln:// url
	// and credentials); updates send them again when a read does not show them.
	RemoteBodies map[string]map[string]any
}

// elsewhere reports whether the type's own tests exercise an operation (Fixture.Elsewhere).
func (f Fixture) elsewhere(opID string) bool { return f.Elsewhere != nil && f.Elsewhere(opID) }

// Run is the conformance suite of a content type, driven through the API as a client
// would: sync from a fixture server with version counts, retain_repo_versions,
// autopublish, publish and distribute with every published file served as stored (a
// type without publications: distribute the repository, every unit's file served),
// orphan cleanup of everything once deleted, a failed sync that leaves no version,
// overwrite, a base version of another repository, and every operation of the server
// called once with its response checked against the reference document's schema.
func Run(t *testing.T, f Fixture) {
	if f.Remote == "" {
		f.Remote = f.Repository
	}
	if f.Distribution == "" {
		f.Distribution = f.Repository
	}
	up := httptest.NewServer(f.Upstream)
	t.Cleanup(up.Close)
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slices.Contains(f.Index, strings.TrimPrefix(r.URL.Path, "/"+f.RemotePath)) {
			f.Upstream.ServeHTTP(w, r)
			return
		}
		http.Error(w, "broken upstream", http.StatusInternalServerError)
	}))
	t.Cleanup(broken.Close)
	s := &suite{f: f, url: up.URL + "/" + f.RemotePath, broken: broken.URL + "/" + f.RemotePath}

	t.Run("sync", s.sync)
	t.Run("retain_repo_versions", s.retain)
	t.Run("autopublish", s.autopublish)
	t.Run("publish, distribute and serve", s.serve)
	t.Run("orphan cleanup", s.orphans)
	t.Run("failed sync", s.failedSync)
	t.Run("overwrite", s.overwrite)
	t.Run("base version of another repository", s.otherBase)
	t.Run("every operation's response matches the reference", s.schemas)
	t.Run("every operation for every kind of caller", s.accessMatrix)
}

type suite struct {
	f           Fixture
	url, broken string
}

func (s *suite) env(t *testing.T) *Env { return New(t, s.f.Types...) }

// collection is the collection path of a kind type: "repositories", "rpm.rpm" →
// /pulp/api/v3/repositories/rpm/rpm/.
func collection(what, typ string) string { return href.Root + what + "/" + href.Segment(typ) + "/" }

// create POSTs a body that must answer 201 and returns the object.
func (e *Env) create(what, typ string, body map[string]any) map[string]any {
	e.T.Helper()
	code, m := e.JSON("POST", collection(what, typ), body)
	if code != http.StatusCreated {
		e.T.Fatalf("create %s %s: %d %v", typ, what, code, m)
	}
	return m
}

// repository makes a remote of the fixture's upstream (url) and a repository of it with
// extra settings.
func (s *suite) repository(e *Env, name, url string, extra map[string]any) map[string]any {
	remote := e.create("remotes", s.f.Remote, map[string]any{"name": name, "url": url, "policy": "immediate"})
	body := map[string]any{"name": name, "remote": remote["pulp_href"]}
	for k, v := range extra {
		body[k] = v
	}
	return e.create("repositories", s.f.Repository, body)
}

// syncTask syncs a repository from its remote and returns the finished task.
func (s *suite) syncTask(e *Env, repo map[string]any) map[string]any {
	e.T.Helper()
	code, m := e.JSON("POST", repo["pulp_href"].(string)+"sync/", map[string]any{})
	if code != http.StatusAccepted {
		e.T.Fatalf("sync: %d %v", code, m)
	}
	return e.Wait(m["task"].(string))
}

// read GETs an href that must answer 200.
func (e *Env) read(h string) map[string]any {
	e.T.Helper()
	code, m, _ := e.Do("GET", h, "", nil)
	if code != http.StatusOK {
		e.T.Fatalf("read %s: %d %v", h, code, m)
	}
	return m
}

// versions are a repository's version numbers, newest first.
func (e *Env) versions(repo map[string]any) []int {
	e.T.Helper()
	page := e.read(repo["versions_href"].(string) + "?limit=1000")
	var out []int
	for _, v := range page["results"].([]any) {
		out = append(out, int(v.(map[string]any)["number"].(float64)))
	}
	return out
}

// present is a version's content summary of what it holds: count by unit type.
func present(v map[string]any) map[string]int {
	out := map[string]int{}
	for typ, x := range v["content_summary"].(map[string]any)["present"].(map[string]any) {
		out[typ] = int(x.(map[string]any)["count"].(float64))
	}
	return out
}

func (s *suite) sync(t *testing.T) {
	e := s.env(t)
	repo := s.repository(e, "sync", s.url, nil)
	if tk := s.syncTask(e, repo); tk["state"] != "completed" {
		t.Fatalf("sync: %v %v", tk["state"], tk["error"])
	}
	repo = e.read(repo["pulp_href"].(string))
	v := e.read(repo["latest_version_href"].(string))
	if v["number"].(float64) != 1 {
		t.Fatalf("sync made version %v, want 1", v["number"])
	}
	if got := present(v); fmt.Sprint(got) != fmt.Sprint(s.f.Present) {
		t.Errorf("version 1 holds %v, want %v", got, s.f.Present)
	}
	// Each unit type's list filtered by the version shows as many as the summary says.
	for typ, n := range s.f.Present {
		sum, ok := v["content_summary"].(map[string]any)["present"].(map[string]any)[typ].(map[string]any)
		if !ok {
			continue // reported above
		}
		page := e.read(sum["href"].(string))
		if int(page["count"].(float64)) != n {
			t.Errorf("%s: the summary's list has %v units, want %d", typ, page["count"], n)
		}
	}
	// Syncing an unchanged upstream makes no version.
	if tk := s.syncTask(e, repo); tk["state"] != "completed" {
		t.Fatalf("second sync: %v %v", tk["state"], tk["error"])
	}
	if vs := e.versions(repo); fmt.Sprint(vs) != "[1 0]" {
		t.Errorf("versions after an unchanged sync: %v, want [1 0]", vs)
	}
}

// units are the hrefs of the units in a version.
func (e *Env) units(version string) []string {
	e.T.Helper()
	page := e.read(href.Root + "content/?limit=1000&repository_version=" + version)
	var out []string
	for _, u := range page["results"].([]any) {
		out = append(out, u.(map[string]any)["pulp_href"].(string))
	}
	slices.Sort(out)
	return out
}

// modify adds and removes units and returns the finished task.
func (e *Env) modify(repo map[string]any, add, remove []string) map[string]any {
	e.T.Helper()
	code, m := e.JSON("POST", repo["pulp_href"].(string)+"modify/", map[string]any{"add_content_units": add, "remove_content_units": remove})
	return e.Done("modify", code, m)
}

func (s *suite) retain(t *testing.T) {
	e := s.env(t)
	repo := s.repository(e, "retain", s.url, map[string]any{"retain_repo_versions": 1})
	if tk := s.syncTask(e, repo); tk["state"] != "completed" {
		t.Fatalf("sync: %v %v", tk["state"], tk["error"])
	}
	if vs := e.versions(repo); fmt.Sprint(vs) != "[1]" {
		t.Errorf("versions after a sync with retain_repo_versions 1: %v, want [1]", vs)
	}
	repo = e.read(repo["pulp_href"].(string))
	units := e.units(repo["latest_version_href"].(string))
	if len(units) == 0 {
		t.Fatal("the sync stored no units")
	}
	// Three modifies: one version remains, the latest.
	e.modify(repo, nil, units[:1])
	e.modify(repo, units[:1], nil)
	e.modify(repo, nil, units[:1])
	if vs := e.versions(repo); fmt.Sprint(vs) != "[4]" {
		t.Errorf("versions after three modifies with retain_repo_versions 1: %v, want [4]", vs)
	}
	// Raising the limit keeps more.
	code, m := e.JSON("PATCH", repo["pulp_href"].(string), map[string]any{"retain_repo_versions": 2})
	e.Done("update", code, m)
	e.modify(repo, units[:1], nil)
	e.modify(repo, nil, units[:1])
	if vs := e.versions(repo); fmt.Sprint(vs) != "[6 5]" {
		t.Errorf("versions with retain_repo_versions 2: %v, want [6 5]", vs)
	}
}

func (s *suite) autopublish(t *testing.T) {
	e := s.env(t)
	typ, _ := e.Core.TypeOf(s.f.Repository)
	if _, ok := typ.(content.Autopublisher); !ok {
		t.Skipf("content type %s does not publish", typ.Name())
	}
	repo := s.repository(e, "autopublish", s.url, map[string]any{"autopublish": true})
	tk := s.syncTask(e, repo)
	if tk["state"] != "completed" {
		t.Fatalf("sync: %v %v", tk["state"], tk["error"])
	}
	repo = e.read(repo["pulp_href"].(string))
	check := func(tk map[string]any, version string) {
		t.Helper()
		var pubs []string
		for _, h := range tk["created_resources"].([]any) {
			if strings.HasPrefix(h.(string), collection("publications", s.f.Repository)) {
				pubs = append(pubs, h.(string))
			}
		}
		if len(pubs) != 1 {
			t.Fatalf("task %s created %v: want one publication", tk["name"], tk["created_resources"])
		}
		if pub := e.read(pubs[0]); pub["repository_version"] != version {
			t.Errorf("the autopublished publication is of %v, want %s", pub["repository_version"], version)
		}
	}
	check(tk, repo["latest_version_href"].(string))
	units := e.units(repo["latest_version_href"].(string))
	tk = e.modify(repo, nil, units[:1])
	repo = e.read(repo["pulp_href"].(string))
	check(tk, repo["latest_version_href"].(string))
}

// published is what a distribution serves: relative path → sha256 of the stored file.
func (e *Env) published(base string) map[string]string {
	e.T.Helper()
	rows, err := e.DB.Query(context.Background(), `SELECT pf.relative_path, COALESCE(a1.sha256, a2.sha256) FROM published_files pf
		LEFT JOIN artifacts a1 ON a1.id = pf.artifact_id LEFT JOIN content_artifacts ca ON ca.id = pf.content_artifact_id
		LEFT JOIN artifacts a2 ON a2.id = ca.artifact_id
		WHERE pf.publication_id = (SELECT p.id FROM publications p JOIN distributions d ON d.publication_id = p.id WHERE d.base_path = ?)`, base)
	if err != nil {
		e.T.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var path, sha string
		if err := rows.Scan(&path, &sha); err != nil {
			e.T.Fatal(err)
		}
		out[path] = sha
	}
	return out
}

// publish publishes a repository's latest version, distributes the publication at
// "served", checks that every unit's files are published and returns the published files.
func (s *suite) publish(e *Env, repo map[string]any) map[string]string {
	e.T.Helper()
	code, m := e.JSON("POST", collection("publications", s.f.Repository), map[string]any{"repository": repo["pulp_href"]})
	tk := e.Done("publish", code, m)
	pub := tk["created_resources"].([]any)[0].(string)
	s.distribute(e, "served", map[string]any{"publication": pub})
	files := e.published("served")
	// Every unit's files are published.
	ids := map[string]bool{}
	for _, u := range e.units(repo["latest_version_href"].(string)) {
		p, _ := href.Parse(u)
		ids[p.ID] = true
	}
	// (A type may publish a unit's file as its artifact, under another name: rpm's repo
	// metadata files get the name their checksum gives.)
	rows, err := e.DB.Query(context.Background(), `SELECT c.pulp_id, ca.relative_path FROM content_artifacts ca JOIN contents c ON c.id = ca.content_id
		WHERE NOT EXISTS (SELECT 1 FROM published_files pf JOIN distributions d ON d.publication_id = pf.publication_id
			WHERE d.base_path = 'served' AND (pf.content_artifact_id = ca.id OR pf.artifact_id = ca.artifact_id))`)
	if err != nil {
		e.T.Fatal(err)
	}
	for rows.Next() {
		var id, path string
		rows.Scan(&id, &path)
		if ids[id] {
			e.T.Errorf("unit %s's file %s is not published", id, path)
		}
	}
	rows.Close()
	return files
}

// filesOf is what a unit holds: relative path → sha256 of each of its stored files.
func (e *Env) filesOf(unit string) map[string]string {
	e.T.Helper()
	p, _ := href.Parse(unit)
	rows, err := e.DB.Query(context.Background(), `SELECT ca.relative_path, a.sha256 FROM content_artifacts ca
		JOIN contents c ON c.id = ca.content_id JOIN artifacts a ON a.id = ca.artifact_id WHERE c.pulp_id = ?`, p.ID)
	if err != nil {
		e.T.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var path, sha string
		if err := rows.Scan(&path, &sha); err != nil {
			e.T.Fatal(err)
		}
		out[path] = sha
	}
	return out
}

// distribute makes a distribution at base of what body names (a publication, a
// repository or a repository version).
func (s *suite) distribute(e *Env, base string, body map[string]any) {
	e.T.Helper()
	body["name"], body["base_path"] = base, base
	code, m := e.JSON("POST", collection("distributions", s.f.Distribution), body)
	e.Done("distribute", code, m)
}

// get fetches a file of the distribution at base: status and sha256 of the body.
func (e *Env) get(base, path string) (int, string) {
	e.T.Helper()
	resp, err := http.Get(e.URL + "/pulp/content/" + base + "/" + escapePath(path))
	if err != nil {
		e.T.Fatal(err)
	}
	defer resp.Body.Close()
	h := sha256.New()
	io.Copy(h, resp.Body)
	return resp.StatusCode, hex.EncodeToString(h.Sum(nil))
}

// serves checks that the distribution at base serves each file as stored.
func (e *Env) serves(base string, files map[string]string) {
	e.T.Helper()
	for path, sha := range files {
		if code, got := e.get(base, path); code != http.StatusOK || got != sha {
			e.T.Errorf("GET %s/%s: %d, sha256 %s, want 200 and %s", base, path, code, got, sha)
		}
	}
}

func (s *suite) serve(t *testing.T) {
	e := s.env(t)
	repo := s.repository(e, "served", s.url, nil)
	if tk := s.syncTask(e, repo); tk["state"] != "completed" {
		t.Fatalf("sync: %v %v", tk["state"], tk["error"])
	}
	repo = e.read(repo["pulp_href"].(string))
	if _, ok := e.Core.Table().PubKind(s.f.Repository); ok {
		files := s.publish(e, repo)
		if len(files) == 0 {
			t.Fatal("the publication has no files")
		}
		e.serves("served", files)
		return
	}
	// A type without publications: a distribution of the repository serves its latest
	// version, each unit's files at their relative paths.
	s.distribute(e, "served", map[string]any{"repository": repo["pulp_href"]})
	latest := repo["latest_version_href"].(string)
	all := map[string]string{}
	var gone string // a unit with files, removed below
	for _, u := range e.units(latest) {
		files := e.filesOf(u)
		maps.Copy(all, files)
		if gone == "" && len(files) > 0 {
			gone = u
		}
	}
	if len(all) == 0 {
		t.Fatal("the repository's units have no files")
	}
	e.serves("served", all)
	// One of a version keeps serving it when the repository moves on.
	pinned := false
	for _, k := range e.Core.Table().Distributions() {
		pinned = pinned || k.Type == s.f.Distribution && k.Versions
	}
	if pinned {
		s.distribute(e, "pinned", map[string]any{"repository_version": latest})
	}
	e.modify(repo, nil, []string{gone})
	for path, sha := range e.filesOf(gone) {
		if code, _ := e.get("served", path); code != http.StatusNotFound {
			t.Errorf("GET served/%s of a removed unit: %d, want 404", path, code)
		}
		if pinned {
			e.serves("pinned", map[string]string{path: sha})
		}
	}
}

func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "%", "%25"), "#", "%23")
	}
	return strings.Join(parts, "/")
}

func (s *suite) orphans(t *testing.T) {
	e := s.env(t)
	repo := s.repository(e, "orphans", s.url, nil)
	if tk := s.syncTask(e, repo); tk["state"] != "completed" {
		t.Fatalf("sync: %v %v", tk["state"], tk["error"])
	}
	if e.Count("contents") == 0 || e.BlobCount() == 0 {
		t.Fatal("the sync stored nothing")
	}
	// Units in a repository are not orphans.
	code, m := e.JSON("POST", href.Root+"orphans/cleanup/", map[string]any{"orphan_protection_time": 0})
	e.Done("orphan cleanup", code, m)
	if e.Count("contents") == 0 {
		t.Fatal("orphan cleanup deleted units of a repository")
	}
	code, m, _ = e.Do("DELETE", repo["pulp_href"].(string), "", nil)
	e.Done("delete repository", code, m)
	code, m = e.JSON("POST", href.Root+"orphans/cleanup/", map[string]any{"orphan_protection_time": 0})
	e.Done("orphan cleanup", code, m)
	for _, table := range []string{"contents", "content_artifacts", "artifacts", "repositories"} {
		if n := e.Count(table); n != 0 {
			t.Errorf("%d rows left in %s", n, table)
		}
	}
	if n := e.BlobCount(); n != 0 {
		t.Errorf("%d blobs left", n)
	}
}

func (s *suite) failedSync(t *testing.T) {
	e := s.env(t)
	repo := s.repository(e, "broken", s.broken, nil)
	tk := s.syncTask(e, repo)
	if tk["state"] != "failed" {
		t.Fatalf("sync from a broken upstream: %v, want failed", tk["state"])
	}
	if vs := e.versions(repo); fmt.Sprint(vs) != "[0]" {
		t.Errorf("versions after a failed sync: %v, want [0]", vs)
	}
	if rs := tk["created_resources"].([]any); len(rs) != 0 {
		t.Errorf("a failed sync created %v", rs)
	}
}

// overwrite: adding a unit with the repo key of one in the repository replaces it
// (Pulp's overwrite, true by default), or, with overwrite false, fails the task and
// changes nothing.
func (s *suite) overwrite(t *testing.T) {
	e := s.env(t)
	a, b := s.f.Twins(e)
	repo := e.create("repositories", s.f.Repository, map[string]any{"name": "twins"})
	e.modify(repo, []string{a}, nil)
	code, m := e.JSON("POST", repo["pulp_href"].(string)+"modify/", map[string]any{"add_content_units": []string{b}, "overwrite": false})
	if code != http.StatusAccepted {
		t.Fatalf("modify with overwrite false: %d %v", code, m)
	}
	tk := e.Wait(m["task"].(string))
	msg := fmt.Sprint(tk["error"])
	pa, _ := href.Parse(a)
	pb, _ := href.Parse(b)
	if tk["state"] != "failed" || !strings.Contains(msg, "PLP0023") || !strings.Contains(msg, pb.ID+"->"+pa.ID) {
		t.Fatalf("modify with overwrite false: %v %v; want failed naming %s->%s", tk["state"], msg, pb.ID, pa.ID)
	}
	if vs := e.versions(repo); fmt.Sprint(vs) != "[1 0]" {
		t.Errorf("versions after the refused overwrite: %v, want [1 0]", vs)
	}
	for _, overwrite := range []any{true, nil} {
		body := map[string]any{"add_content_units": []string{b}}
		if overwrite != nil {
			body["overwrite"] = overwrite
		}
		code, m = e.JSON("POST", repo["pulp_href"].(string)+"modify/", body)
		e.Done("modify with overwrite "+fmt.Sprint(overwrite), code, m)
		repo = e.read(repo["pulp_href"].(string))
		if got := e.units(repo["latest_version_href"].(string)); fmt.Sprint(got) != fmt.Sprint([]string{b}) {
			t.Errorf("overwrite %v: the version holds %v, want only %s", overwrite, got, b)
		}
		a, b = b, a
	}
	// Overwrite false with the unit it would replace removed in the same change is fine.
	code, m = e.JSON("POST", repo["pulp_href"].(string)+"modify/", map[string]any{"add_content_units": []string{b}, "remove_content_units": []string{a}, "overwrite": false})
	e.Done("modify replacing with overwrite false", code, m)
}

// otherBase: a modify may start from a version of another repository (Pulp's
// base_version, the CLI's --base-repository).
func (s *suite) otherBase(t *testing.T) {
	e := s.env(t)
	src := s.repository(e, "source", s.url, nil)
	if tk := s.syncTask(e, src); tk["state"] != "completed" {
		t.Fatalf("sync: %v %v", tk["state"], tk["error"])
	}
	src = e.read(src["pulp_href"].(string))
	dst := e.create("repositories", s.f.Repository, map[string]any{"name": "copy"})
	code, m := e.JSON("POST", dst["pulp_href"].(string)+"modify/", map[string]any{"base_version": src["latest_version_href"]})
	e.Done("modify from another repository's version", code, m)
	dst = e.read(dst["pulp_href"].(string))
	v := e.read(dst["latest_version_href"].(string))
	if v["base_version"] != src["latest_version_href"] {
		t.Errorf("base_version %v, want %v", v["base_version"], src["latest_version_href"])
	}
	if got, want := e.units(dst["latest_version_href"].(string)), e.units(src["latest_version_href"].(string)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the new version holds %d units, the base %d", len(got), len(want))
	}
}
