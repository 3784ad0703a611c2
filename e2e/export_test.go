package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Export and import between two piths: each installation exports file and rpm
// repositories with `pulp exporter pulp` and `pulp export pulp run` (whole, then
// incremental), an embedded pith imports them (the CLI has no import command: HTTP,
// as pulp-glue would send it) and serves the same content; then the embedded pith
// exports in chunks and the installation imports that into repositories of other names
// through a repo_mapping. Every content summary must be equal.
func TestExportImportWithCLI(t *testing.T) {
	fx := fixtures(t)
	shared := t.TempDir() // exports of both piths, where both may write and read
	paths := []string{"--allowed-export-paths", shared, "--allowed-import-paths", shared}
	for name, start := range installations(paths...) {
		t.Run(name, func(t *testing.T) {
			s := start(t)
			c := newCLI(t, s)
			c.run("file", "remote", "create", "--name", "files", "--url", fx+"/file-katello-puppet/PULP_MANIFEST")
			c.run("file", "repository", "create", "--name", "files", "--remote", "files")
			c.run("file", "repository", "sync", "--name", "files")
			c.run("rpm", "remote", "create", "--name", "zoo", "--url", fx+"/yum-katello/zoo/", "--policy", "immediate")
			c.run("rpm", "repository", "create", "--name", "zoo", "--remote", "zoo")
			c.run("rpm", "repository", "sync", "--name", "zoo")

			exports := filepath.Join(shared, "from-"+name)
			c.run("exporter", "pulp", "create", "--name", "out", "--path", exports, "--repository", "file:file:files", "--repository", "rpm:rpm:zoo")
			var full entity
			c.json(&full, "export", "pulp", "run", "--exporter", "out")
			tarPath := exportFile(t, full, ".tar")

			d := startPith(t, "", paths...)
			dc := newCLI(t, d)
			dc.run("importer", "pulp", "create", "--name", "in")
			importInto(t, dc, d, "in", map[string]any{"path": tarPath, "create_repositories": true})
			for _, r := range []string{"file:files", "rpm:zoo"} {
				typ, repo, _ := strings.Cut(r, ":")
				sameSummary(t, c, dc, typ, repo, repo)
			}
			// The imported rpm repository serves what dnf installs.
			dc.run("rpm", "publication", "create", "--repository", "zoo")
			dc.run("rpm", "distribution", "create", "--name", "zoo", "--base-path", "zoo", "--repository", "zoo")
			var dist entity
			dc.json(&dist, "rpm", "distribution", "show", "--name", "zoo")
			root := filepath.Join(t.TempDir(), "root")
			os.MkdirAll(root, 0o755)
			if out, err := dnf(t, root, dist.str("base_url"), "install", "kangaroo"); err != nil {
				t.Fatalf("dnf install kangaroo from the imported repository: %v\n%s", err, out)
			}

			// Incremental: one more file, and only its artifact travels.
			extra := filepath.Join(t.TempDir(), "extra.txt")
			os.WriteFile(extra, []byte("exported once more\n"), 0o644)
			c.run("file", "content", "upload", "--file", extra, "--relative-path", "extra.txt", "--repository", "files")
			var inc entity
			c.json(&inc, "export", "pulp", "run", "--exporter", "out", "--full", "false")
			importInto(t, dc, d, "in", map[string]any{"path": exportFile(t, inc, ".tar")})
			sameSummary(t, c, dc, "file", "files", "files")
			var listed []entity
			c.json(&listed, "export", "pulp", "list", "--exporter", "out")
			if len(listed) != 2 {
				t.Errorf("%d exports listed, want 2", len(listed))
			}

			// Back, in chunks, into repositories of other names.
			back := filepath.Join(shared, "back-"+name)
			dc.run("exporter", "pulp", "create", "--name", "back", "--path", back, "--repository", "file:file:files", "--repository", "rpm:rpm:zoo")
			var chunked entity
			dc.json(&chunked, "export", "pulp", "run", "--exporter", "back", "--chunk-size", "20KB")
			toc := chunked["toc_info"].(map[string]any)["file"].(string)
			if n := len(chunked["output_file_info"].(map[string]any)); n < 3 {
				t.Errorf("a chunked export of %d files", n)
			}
			c.run("file", "repository", "create", "--name", "files-back")
			c.run("rpm", "repository", "create", "--name", "zoo-back")
			c.run("importer", "pulp", "create", "--name", "back", "--repo-map", "files", "files-back", "--repo-map", "zoo", "zoo-back")
			importInto(t, c, s, "back", map[string]any{"toc": toc})
			sameSummary(t, dc, c, "file", "files", "files-back")
			sameSummary(t, dc, c, "rpm", "zoo", "zoo-back")
		})
	}
}

// exportFile is the file of an export whose name ends with suffix.
func exportFile(t *testing.T, export entity, suffix string) string {
	t.Helper()
	for p := range export["output_file_info"].(map[string]any) {
		if strings.HasSuffix(p, suffix) {
			return p
		}
	}
	t.Fatalf("no %s file in export %v", suffix, export)
	return ""
}

// importInto runs an import of importer and waits for its task group with the CLI;
// every task must complete.
func importInto(t *testing.T, c *cli, s *server, importer string, body map[string]any) {
	t.Helper()
	var imp entity
	c.json(&imp, "importer", "pulp", "show", "--name", importer)
	b, _ := json.Marshal(body)
	code, m := call(t, "POST", s.url+imp.str("pulp_href")+"imports/", "application/json", strings.NewReader(string(b)))
	if code != 202 {
		t.Fatalf("import %v: %d %v", body, code, m)
	}
	group, _ := m["task_group"].(string)
	c.run("task-group", "show", "--href", group, "--wait")
}

// sameSummary compares the content summaries of the latest versions of two
// repositories of a type, on two piths.
func sameSummary(t *testing.T, a, b *cli, typ, repoA, repoB string) {
	t.Helper()
	summary := func(c *cli, repo string) string {
		var v entity
		c.json(&v, typ, "repository", "version", "show", "--repository", repo)
		return presentCounts(v)
	}
	if x, y := summary(a, repoA), summary(b, repoB); x != y || x == "{}" {
		t.Errorf("%s %s: content %s, imported %s %s", typ, repoA, x, repoB, y)
	}
}
