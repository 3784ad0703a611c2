package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An export made by upstream Pulp imports into pith: Pulp exports a file and an rpm
// repository (whole, then in chunks); pith imports the tar with create_repositories and
// the chunks through their table of contents into repositories of other names, and
// holds the same content: the same counts by type as Pulp's versions, the same bytes,
// and dnf installs from the imported rpm repository.
//
// Pulp writes the export where its ALLOWED_EXPORT_PATHS allows: PITH_PULP_PEER_EXPORTS
// (default /tmp/pulp-peer/exports) must be one of them, on this machine, for pith to
// read. pulp-peer's settings do not allow exports by default; add
// ALLOWED_EXPORT_PATHS = ["/tmp/pulp-peer/exports"] to /tmp/pulp-peer/etc/settings.py
// and restart it.
func TestImportFromPulp(t *testing.T) {
	p := needPulpPeer(t)
	fx := fixtures(t)
	ctx := t.Context()
	dir := envOr("PITH_PULP_PEER_EXPORTS", "/tmp/pulp-peer/exports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	n := p.name("export")
	var repos []string
	for _, k := range []struct{ typ, segment, url string }{
		{"file", "file/file", fx + "/file-katello-puppet/PULP_MANIFEST"},
		{"rpm", "rpm/rpm", fx + "/yum-katello/zoo/"},
	} {
		name := k.typ + "-" + n
		p.deleteAtEnd(t, "/pulp/api/v3/remotes/"+k.segment+"/", name)
		p.deleteAtEnd(t, "/pulp/api/v3/repositories/"+k.segment+"/", name)
		var remote, repo entity
		must(t, p.JSON(ctx, "POST", "/pulp/api/v3/remotes/"+k.segment+"/", map[string]any{"name": name, "url": k.url, "policy": "immediate"}, &remote))
		must(t, p.JSON(ctx, "POST", "/pulp/api/v3/repositories/"+k.segment+"/", map[string]any{"name": name, "remote": remote.str("pulp_href")}, &repo))
		must(t, p.Call(ctx, "POST", repo.str("pulp_href")+"sync/", map[string]any{}))
		repos = append(repos, repo.str("pulp_href"))
	}
	p.deleteAtEnd(t, "/pulp/api/v3/exporters/core/pulp/", n)
	var exporter entity
	err := p.JSON(ctx, "POST", "/pulp/api/v3/exporters/core/pulp/", map[string]any{"name": n, "path": filepath.Join(dir, n), "repositories": repos}, &exporter)
	if err != nil && strings.Contains(err.Error(), "not an allowed export path") {
		t.Skipf("upstream Pulp does not allow exports to %s (its ALLOWED_EXPORT_PATHS): %v", dir, err)
	}
	must(t, err)
	// pulpExport runs an export on Pulp and reads the export its task made.
	pulpExport := func(body map[string]any) entity {
		var task struct {
			Task string `json:"task"`
		}
		must(t, p.JSON(ctx, "POST", exporter.str("pulp_href")+"exports/", body, &task))
		must(t, p.Wait(ctx, task.Task))
		var done struct {
			Created []string `json:"created_resources"`
		}
		must(t, p.JSON(ctx, "GET", task.Task, nil, &done))
		var export entity
		must(t, p.JSON(ctx, "GET", done.Created[0], nil, &export))
		return export
	}
	full := pulpExport(map[string]any{})
	chunked := pulpExport(map[string]any{"chunk_size": "20KB"})

	s := startPith(t, "", "--allowed-import-paths", dir)
	c := newCLI(t, s)
	c.run("importer", "pulp", "create", "--name", "whole")
	importInto(t, c, s, "whole", map[string]any{"path": exportFile(t, full, ".tar"), "create_repositories": true})
	c.run("file", "repository", "create", "--name", "files-chunked")
	c.run("rpm", "repository", "create", "--name", "zoo-chunked")
	c.run("importer", "pulp", "create", "--name", "chunked", "--repo-map", "file-"+n, "files-chunked", "--repo-map", "rpm-"+n, "zoo-chunked")
	importInto(t, c, s, "chunked", map[string]any{"toc": chunked["toc_info"].(map[string]any)["file"].(string)})

	// Pulp's counts by type, against pith's.
	pulpCounts := func(repoHref string) string {
		var repo, version entity
		must(t, p.JSON(ctx, "GET", repoHref, nil, &repo))
		must(t, p.JSON(ctx, "GET", repo.str("latest_version_href"), nil, &version))
		return presentCounts(version)
	}
	pithCounts := func(typ, name string) string {
		var v entity
		c.json(&v, typ, "repository", "version", "show", "--repository", name)
		return presentCounts(v)
	}
	for i, typ := range []string{"file", "rpm"} {
		want := pulpCounts(repos[i])
		for _, name := range []string{typ + "-" + n, map[string]string{"file": "files-chunked", "rpm": "zoo-chunked"}[typ]} {
			if got := pithCounts(typ, name); got != want {
				t.Errorf("%s repository %s: %s, Pulp's %s", typ, name, got, want)
			}
		}
	}
	// The files' bytes, and dnf.
	c.run("file", "publication", "create", "--repository", "files-chunked")
	c.run("file", "distribution", "create", "--name", "files", "--base-path", "files", "--repository", "files-chunked")
	for f := range manifestEntries(t, filepath.Join(sharedData(), "file-katello-puppet", "PULP_MANIFEST")) {
		code, got := get(t, s.content+"/pulp/content/files/"+f)
		want, err := os.ReadFile(filepath.Join(sharedData(), "file-katello-puppet", f))
		if err != nil {
			t.Fatal(err)
		}
		if code != 200 || string(got) != string(want) {
			t.Errorf("files/%s: %d, same bytes %v", f, code, string(got) == string(want))
		}
	}
	c.run("rpm", "publication", "create", "--repository", "rpm-"+n)
	c.run("rpm", "distribution", "create", "--name", "zoo", "--base-path", "zoo", "--repository", "rpm-"+n)
	var dist entity
	c.json(&dist, "rpm", "distribution", "show", "--name", "zoo")
	root := filepath.Join(t.TempDir(), "root")
	os.MkdirAll(root, 0o755)
	if out, err := dnf(t, root, dist.str("base_url"), "install", "kangaroo"); err != nil {
		t.Fatalf("dnf install kangaroo from Pulp's export imported: %v\n%s", err, out)
	}
}

// presentCounts renders a version's counts of units by type.
func presentCounts(version entity) string {
	s, _ := version["content_summary"].(map[string]any)
	counts := map[string]any{}
	for k, x := range s["present"].(map[string]any) {
		counts[k] = x.(map[string]any)["count"]
	}
	b, _ := json.Marshal(counts)
	return string(b)
}

// An export made by pith imports into upstream Pulp: pith, told Pulp's component
// versions (--export-versions, since Pulp imports only exports of its own X.Y), exports
// a file and an rpm repository; Pulp imports them with create_repositories and holds
// the same counts by type.
func TestPulpImportsPith(t *testing.T) {
	p := needPulpPeer(t)
	fx := fixtures(t)
	ctx := t.Context()
	dir := envOr("PITH_PULP_PEER_EXPORTS", "/tmp/pulp-peer/exports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	var status struct {
		Versions []struct{ Component, Version string } `json:"versions"`
	}
	must(t, p.JSON(ctx, "GET", "/pulp/api/v3/status/", nil, &status))
	var stamps []string
	for _, v := range status.Versions {
		if v.Component == "core" || v.Component == "file" || v.Component == "rpm" {
			stamps = append(stamps, v.Component+"="+v.Version)
		}
	}
	n := p.name("import")
	s := startPith(t, "", "--allowed-export-paths", dir, "--export-versions", strings.Join(stamps, ","))
	c := newCLI(t, s)
	for _, k := range []struct{ typ, url, policy string }{
		{"file", fx + "/file-katello-puppet/PULP_MANIFEST", "immediate"},
		{"rpm", fx + "/yum-katello/zoo/", "immediate"},
	} {
		name := k.typ + "-" + n
		c.run(k.typ, "remote", "create", "--name", name, "--url", k.url, "--policy", k.policy)
		c.run(k.typ, "repository", "create", "--name", name, "--remote", name)
		c.run(k.typ, "repository", "sync", "--name", name)
	}
	c.run("exporter", "pulp", "create", "--name", "to-pulp", "--path", filepath.Join(dir, n), "--repository", "file:file:file-"+n, "--repository", "rpm:rpm:rpm-"+n)
	var export entity
	c.json(&export, "export", "pulp", "run", "--exporter", "to-pulp")

	for _, seg := range []string{"file/file", "rpm/rpm"} {
		p.deleteAtEnd(t, "/pulp/api/v3/repositories/"+seg+"/", strings.Split(seg, "/")[0]+"-"+n)
	}
	p.deleteAtEnd(t, "/pulp/api/v3/importers/core/pulp/", n)
	var importer entity
	must(t, p.JSON(ctx, "POST", "/pulp/api/v3/importers/core/pulp/", map[string]any{"name": n}, &importer))
	var group struct {
		TaskGroup string `json:"task_group"`
	}
	err := p.JSON(ctx, "POST", importer.str("pulp_href")+"imports/", map[string]any{"path": exportFile(t, export, ".tar"), "create_repositories": true}, &group)
	if err != nil && strings.Contains(err.Error(), "not an allowed import path") {
		t.Skipf("upstream Pulp does not allow imports from %s (its ALLOWED_IMPORT_PATHS): %v", dir, err)
	}
	must(t, err)
	deadline := time.Now().Add(10 * time.Minute)
	for {
		var g struct {
			Waiting, Running, Canceling, Failed, Canceled int
			Tasks                                         []struct {
				Href string `json:"pulp_href"`
			} `json:"tasks"`
		}
		must(t, p.JSON(ctx, "GET", group.TaskGroup, nil, &g))
		if g.Waiting+g.Running+g.Canceling == 0 && (len(g.Tasks) > 1 || g.Failed+g.Canceled > 0) {
			if g.Failed+g.Canceled > 0 {
				for _, tk := range g.Tasks {
					var task entity
					must(t, p.JSON(ctx, "GET", tk.Href, nil, &task))
					t.Logf("Pulp's import task %s: %v %v", tk.Href, task["state"], task["error"])
				}
				t.Fatalf("Pulp's import of pith's export failed")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Pulp's import did not finish: %+v", g)
		}
		time.Sleep(time.Second)
	}
	for _, typ := range []string{"file", "rpm"} {
		name := typ + "-" + n
		var page struct {
			Results []entity `json:"results"`
		}
		must(t, p.JSON(ctx, "GET", "/pulp/api/v3/repositories/"+typ+"/"+typ+"/?name="+name, nil, &page))
		if len(page.Results) != 1 {
			t.Fatalf("Pulp has %d %s repositories named %s", len(page.Results), typ, name)
		}
		var version entity
		must(t, p.JSON(ctx, "GET", page.Results[0].str("latest_version_href"), nil, &version))
		var mine entity
		c.json(&mine, typ, "repository", "version", "show", "--repository", name)
		if got, want := presentCounts(version), presentCounts(mine); got != want {
			t.Errorf("%s: Pulp imported %s, pith exported %s", name, got, want)
		}
	}
}
