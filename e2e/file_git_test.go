package e2e

import (
	"strings"
	"testing"

	"pith/internal/testgit"
)

// A file repository synced from a git remote with pulp-cli 0.41.1 (`pulp file remote
// --type git`, `pulp file repository sync --remote file:git:<name>`), published,
// distributed and served: the tree's files at their paths, a link as its target.
func TestFileGitCLI(t *testing.T) {
	files := map[string]string{"README.md": "# from git\n", "docs/guide.txt": "read me\n", "latest": "->docs/guide.txt"}
	gitURL := testgit.Serve(t, files)
	for name, start := range installations() {
		t.Run(name, func(t *testing.T) {
			s := start(t)
			c := newCLI(t, s)
			var remote entity
			c.json(&remote, "file", "remote", "--type", "git", "create", "--name", "g", "--url", gitURL, "--git-ref", "main")
			if remote.str("git_ref") != "main" || !strings.HasPrefix(remote.str("pulp_href"), "/pulp/api/v3/remotes/file/git/") {
				t.Fatalf("git remote: %v", remote)
			}
			c.run("file", "repository", "create", "--name", "fromgit")
			c.run("file", "repository", "sync", "--name", "fromgit", "--remote", "file:git:g")
			var ver entity
			c.json(&ver, "file", "repository", "version", "show", "--repository", "fromgit")
			if presentCount(ver) != len(files) {
				t.Fatalf("sync: %d files, the tree has %d: %v", presentCount(ver), len(files), ver)
			}
			var pub, dist entity
			c.json(&pub, "file", "publication", "create", "--repository", "fromgit")
			c.json(&dist, "file", "distribution", "create", "--name", "fromgit", "--base-path", "fromgit", "--publication", pub.str("pulp_href"))
			for path, want := range map[string]string{"docs/guide.txt": "read me\n", "README.md": "# from git\n", "latest": "docs/guide.txt"} {
				if code, body := get(t, dist.str("base_url")+path); code != 200 || string(body) != want {
					t.Errorf("GET %s: %d %q, want %q", path, code, body, want)
				}
			}
			// A ref the repository does not have fails the sync, naming it.
			c.run("file", "remote", "--type", "git", "update", "--name", "g", "--git-ref", "nope")
			out, err := c.try("file", "repository", "sync", "--name", "fromgit", "--remote", "file:git:g")
			if err == nil || !strings.Contains(out, `"nope"`) {
				t.Errorf("sync of a missing ref: %v\n%s", err, out)
			}
		})
	}
}
