package e2e

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pith/internal/testfiles"
)

type entity map[string]any

func (e entity) str(k string) string { s, _ := e[k].(string); return s }

// presentCount reads content_summary.present."file.file".count of a version.
func presentCount(v entity) int {
	cs, _ := v["content_summary"].(map[string]any)
	present, _ := cs["present"].(map[string]any)
	ff, _ := present["file.file"].(map[string]any)
	n, _ := ff["count"].(float64)
	return int(n)
}

func writeRandom(t *testing.T, dir, name string, size int) (string, string) {
	t.Helper()
	b := make([]byte, size)
	rand.Read(b)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return p, hex.EncodeToString(sum[:])
}

// manifestEntries reads a PULP_MANIFEST from the test data.
func manifestEntries(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), ",")
		if len(parts) == 3 {
			out[parts[0]] = parts[1]
		}
	}
	return out
}

func TestFileWorkflow(t *testing.T) {
	fx := fixtures(t)
	for name, start := range installations() {
		t.Run(name, func(t *testing.T) {
			s := start(t)
			c := newCLI(t, s)
			tmp := t.TempDir()

			// Status.
			var st entity
			c.json(&st, "status")
			if db, _ := st["database_connection"].(map[string]any); db["connected"] != true {
				t.Fatalf("status: database not connected: %v", st)
			}
			if rc, _ := st["redis_connection"].(map[string]any); strings.Contains(name, "redis") && rc["connected"] != true {
				t.Errorf("status: redis not connected: %v", st["redis_connection"])
			}
			for _, k := range []string{"online_workers", "online_api_apps", "online_content_apps"} {
				if apps, _ := st[k].([]any); len(apps) == 0 {
					t.Errorf("status lists no %s", k)
				}
			}
			if !strings.Contains(c.run("status"), `"3.105.25"`) {
				t.Fatal("status does not claim core 3.105.25")
			}

			// Repository CRUD and labels.
			var repo entity
			c.json(&repo, "file", "repository", "create", "--name", "r1", "--description", "first")
			if repo.str("name") != "r1" || !strings.HasSuffix(repo.str("latest_version_href"), "/versions/0/") {
				t.Fatalf("created repository: %v", repo)
			}
			c.run("file", "repository", "update", "--name", "r1", "--description", "changed", "--retain-repo-versions", "5")
			c.json(&repo, "file", "repository", "show", "--name", "r1")
			if repo.str("description") != "changed" || repo["retain_repo_versions"] != float64(5) {
				t.Fatalf("update not applied: %v", repo)
			}
			c.run("file", "repository", "label", "set", "--repository", "r1", "--key", "env", "--value", "dev")
			c.json(&repo, "file", "repository", "show", "--name", "r1")
			if labels, _ := repo["pulp_labels"].(map[string]any); labels["env"] != "dev" {
				t.Fatalf("label set: %v", repo["pulp_labels"])
			}
			var repos []entity
			c.json(&repos, "file", "repository", "list")
			if len(repos) != 1 || repos[0].str("name") != "r1" {
				t.Fatalf("repository list: %v", repos)
			}
			c.json(&repos, "file", "repository", "list", "--label-select", "env=dev")
			if len(repos) != 1 {
				t.Fatalf("label-select list: %d repositories", len(repos))
			}
			c.run("file", "repository", "label", "unset", "--repository", "r1", "--key", "env")
			c.json(&repos, "file", "repository", "list", "--label-select", "env=dev")
			if len(repos) != 0 {
				t.Fatalf("label unset: %d repositories still match", len(repos))
			}

			// Uploads: a small file in one request, 3 MiB in 1 MiB chunks.
			small, smallSum := writeRandom(t, tmp, "small.txt", 1000)
			big, bigSum := writeRandom(t, tmp, "big.bin", 3<<20)
			var unit entity
			c.json(&unit, "file", "content", "upload", "--file", small, "--relative-path", "docs/small.txt", "--repository", "r1")
			c.json(&unit, "file", "content", "upload", "--file", big, "--relative-path", "big.bin", "--chunk-size", "1mb", "--repository", "r1")
			var units []entity
			c.json(&units, "file", "content", "list", "--sha256", bigSum)
			if len(units) != 1 || units[0].str("relative_path") != "big.bin" {
				t.Fatalf("chunked upload: %v", units)
			}
			var ver entity
			c.json(&ver, "file", "repository", "version", "show", "--repository", "r1")
			if presentCount(ver) != 2 {
				t.Fatalf("r1 latest version has %d files, want 2: %v", presentCount(ver), ver)
			}

			// Modify: remove one unit, add it back against a base version.
			c.run("file", "repository", "content", "remove", "--repository", "r1", "--sha256", smallSum, "--relative-path", "docs/small.txt")
			c.json(&ver, "file", "repository", "version", "show", "--repository", "r1")
			if presentCount(ver) != 1 {
				t.Fatalf("after remove: %d files", presentCount(ver))
			}
			c.run("file", "repository", "content", "add", "--repository", "r1", "--sha256", smallSum, "--relative-path", "docs/small.txt")
			var versions []entity
			c.json(&versions, "file", "repository", "version", "list", "--repository", "r1")
			if len(versions) != 5 {
				t.Fatalf("r1 has %d versions, want 5 (0..4)", len(versions))
			}
			c.run("file", "repository", "version", "destroy", "--repository", "r1", "--version", "3")
			c.json(&versions, "repository", "version", "list")
			if len(versions) != 4 {
				t.Fatalf("global version list: %d versions after deleting one, want 4", len(versions))
			}

			// Sync from a local mirror of real data: immediate, then publish and distribute.
			puppet := manifestEntries(t, filepath.Join(sharedData(), "file-katello-puppet", "PULP_MANIFEST"))
			c.run("file", "remote", "create", "--name", "puppet", "--url", fx+"/file-katello-puppet/PULP_MANIFEST", "--policy", "immediate")
			c.run("file", "repository", "create", "--name", "puppet", "--remote", "puppet")
			c.run("file", "repository", "sync", "--name", "puppet")
			c.json(&ver, "file", "repository", "version", "show", "--repository", "puppet")
			if presentCount(ver) != len(puppet) || len(puppet) != 12 {
				t.Fatalf("puppet sync: %d files, manifest lists %d", presentCount(ver), len(puppet))
			}
			var pub entity
			c.json(&pub, "file", "publication", "create", "--repository", "puppet")
			var dist entity
			c.json(&dist, "file", "distribution", "create", "--name", "puppet", "--base-path", "puppet", "--publication", pub.str("pulp_href"))
			base := dist.str("base_url")
			if base != s.content+"/pulp/content/puppet/" {
				t.Fatalf("base_url = %q", base)
			}
			// Downloaded with curl, as a user would, and compared with the manifest.
			for path, want := range puppet {
				out, err := exec.Command("curl", "-sfL", base+path).Output()
				sum := sha256.Sum256(out)
				if err != nil || hex.EncodeToString(sum[:]) != want {
					t.Errorf("curl %s: %v, sha256 %x, want %s", path, err, sum, want)
				}
			}
			if code, body := get(t, base+"PULP_MANIFEST"); code != 200 || strings.Count(string(body), "\n") != 12 {
				t.Errorf("published manifest: %d\n%s", code, body)
			}
			// A second sync with an unchanged manifest makes no new version.
			c.run("file", "repository", "sync", "--name", "puppet")
			c.json(&versions, "file", "repository", "version", "list", "--repository", "puppet")
			if len(versions) != 2 {
				t.Fatalf("re-sync of an unchanged manifest made a version: %d versions", len(versions))
			}

			// On-demand sync of another real repository, served from the repository.
			file1 := manifestEntries(t, filepath.Join(sharedData(), "yum-katello", "file1", "PULP_MANIFEST"))
			c.run("file", "remote", "create", "--name", "file1", "--url", fx+"/yum-katello/file1/PULP_MANIFEST", "--policy", "on_demand")
			c.run("file", "repository", "create", "--name", "file1", "--remote", "file1", "--autopublish")
			c.run("file", "repository", "sync", "--name", "file1")
			c.json(&dist, "file", "distribution", "create", "--name", "file1", "--base-path", "ondemand/file1", "--repository", "file1")
			for path, want := range file1 {
				code, body := get(t, dist.str("base_url")+path)
				sum := sha256.Sum256(body)
				if code != 200 || hex.EncodeToString(sum[:]) != want {
					t.Errorf("on-demand %s: status %d, sha256 %x, want %s", path, code, sum, want)
				}
			}
			var arts []entity
			c.json(&arts, "artifact", "list", "--sha256", file1["1.iso"])
			if len(arts) != 1 {
				t.Errorf("on-demand download did not store the artifact: %v", arts)
			}
			if code, body := get(t, s.content+"/pulp/content/ondemand/file1/"); code != 200 || !strings.Contains(string(body), "2.iso") {
				t.Errorf("directory listing: %d\n%s", code, body)
			}

			// Tasks: list, show, cancel of a sync stuck on a slow upstream.
			var tasks []entity
			c.json(&tasks, "task", "list", "--name-contains", "synchronize")
			if len(tasks) < 3 {
				t.Fatalf("task list: %d sync tasks", len(tasks))
			}
			var task entity
			c.json(&task, "task", "show", "--href", tasks[0].str("pulp_href"))
			if task.str("state") != "completed" {
				t.Fatalf("task show: %v", task)
			}
			c.run("file", "remote", "create", "--name", "slow", "--url", fx+"/slow/PULP_MANIFEST")
			c.run("file", "repository", "create", "--name", "slow")
			out := c.run("-b", "file", "repository", "sync", "--name", "slow", "--remote", "slow")
			_ = out
			c.json(&tasks, "task", "list", "--name-contains", "synchronize", "--state", "running")
			deadline := time.Now().Add(10 * time.Second)
			for len(tasks) == 0 && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
				c.json(&tasks, "task", "list", "--name-contains", "synchronize", "--state", "running")
			}
			if len(tasks) != 1 {
				t.Fatalf("slow sync is not running: %v", tasks)
			}
			c.run("task", "cancel", "--href", tasks[0].str("pulp_href"))
			c.json(&task, "task", "show", "--href", tasks[0].str("pulp_href"))
			if task.str("state") != "canceled" {
				t.Fatalf("canceled task is %q", task.str("state"))
			}

			// Orphans: delete a repository, then clean up what nothing references.
			c.run("file", "distribution", "destroy", "--name", "puppet")
			c.run("file", "repository", "destroy", "--name", "puppet")
			c.run("orphan", "cleanup", "--protection-time", "0")
			c.json(&units, "file", "content", "list", "--limit", "100")
			for _, u := range units {
				if _, ok := puppet[u.str("relative_path")]; ok {
					t.Errorf("orphan %s survived cleanup", u.str("relative_path"))
				}
			}
			if code, _ := get(t, base+"puppetlabs-ntp-4.2.0.tar.gz"); code != http.StatusNotFound {
				t.Errorf("content of a deleted distribution: status %d", code)
			}
		})
	}
}

// sharedData is the third-party test data (testdata/README.md).
func sharedData() string {
	return testfiles.Path()
}
