package file_test

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"pith/content"
	"pith/content/contenttest"
	"pith/content/file"
	"pith/content/gitsource"
	"pith/internal/testgit"
)

// gitEnv is a pith whose file type syncs git remotes within lim.
func gitEnv(t *testing.T, lim gitsource.Limits) *contenttest.Env {
	return contenttest.New(t, contenttest.Type(func(c *content.Core) *file.Plugin {
		p := file.New(c)
		p.GitLimits = lim
		return p
	}))
}

// gitRemote creates a git remote from body and returns its href.
func gitRemote(e *contenttest.Env, body map[string]any) string {
	e.T.Helper()
	code, m := e.JSON("POST", "/pulp/api/v3/remotes/file/git/", body)
	if code != 201 {
		e.T.Fatalf("remote: %d %v", code, m)
	}
	return m["pulp_href"].(string)
}

// fileRepo creates a file repository and returns its href.
func fileRepo(e *contenttest.Env, name string) string {
	e.T.Helper()
	code, m := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": name})
	if code != 201 {
		e.T.Fatalf("repository: %d %v", code, m)
	}
	return m["pulp_href"].(string)
}

// latestFiles are the relative paths and sha256 of the repository's latest version.
func latestFiles(e *contenttest.Env, repo string) (string, map[string]string) {
	e.T.Helper()
	_, m := e.JSON("GET", repo, nil)
	v := m["latest_version_href"].(string)
	code, m := e.JSON("GET", "/pulp/api/v3/content/file/files/?limit=100&repository_version="+v, nil)
	if code != 200 {
		e.T.Fatalf("content: %d %v", code, m)
	}
	out := map[string]string{}
	for _, r := range m["results"].([]any) {
		u := r.(map[string]any)
		out[u["relative_path"].(string)] = u["sha256"].(string)
	}
	return v, out
}

func sum(s string) string { return fmt.Sprintf("%x", sha256.Sum256([]byte(s))) }

// A git sync makes every file of the ref's tree a file unit, bytes as git stores them; a
// link is its target, never followed; mirror drops what the tree does not have.
func TestGitSync(t *testing.T) {
	url := testgit.Serve(t, map[string]string{
		"a.txt": "$Id$\na\n", "dir/sub/b.bin": "b\n", ".gitattributes": "*.txt text eol=crlf ident\n",
		"escape": "->../../../../etc/passwd", "dir/up": "->../a.txt",
	})
	e := gitEnv(t, gitsource.Limits{})
	code, m := e.JSON("POST", "/pulp/api/v3/remotes/file/git/", map[string]any{"name": "g", "url": url, "policy": "on_demand"})
	if code != 201 || m["git_ref"] != "HEAD" || m["policy"] != nil {
		t.Fatalf("remote: %d %v", code, m)
	}
	remote := m["pulp_href"].(string)
	repo := fileRepo(e, "r")
	ct, body := contenttest.Multipart(map[string]string{"relative_path": "uploaded.txt", "repository": repo}, "file", "u", []byte("uploaded"))
	code, m, _ = e.Do("POST", "/pulp/api/v3/content/file/files/", ct, body)
	e.Done("upload", code, m)

	want := map[string]string{
		"a.txt": sum("$Id$\na\n"), "dir/sub/b.bin": sum("b\n"), ".gitattributes": sum("*.txt text eol=crlf ident\n"),
		"escape": sum("../../../../etc/passwd"), "dir/up": sum("../a.txt"), "uploaded.txt": sum("uploaded"),
	}
	for _, mirror := range []bool{false, true} {
		code, m = e.JSON("POST", repo+"sync/", map[string]any{"remote": remote, "mirror": mirror})
		if task := e.Done("sync", code, m); task["name"] != file.SyncTask {
			t.Errorf("task name %v", task["name"])
		}
		if mirror {
			delete(want, "uploaded.txt")
		}
		if _, got := latestFiles(e, repo); !maps.Equal(got, want) {
			t.Errorf("mirror=%v: files %v, want %v", mirror, got, want)
		}
	}
}

// Bad input: a URL with credentials is refused; a missing ref or a tree past the bounds
// fails the sync naming it, with no new version and nothing stored.
func TestGitSyncFails(t *testing.T) {
	url := testgit.Serve(t, map[string]string{"a": "aaaa\n", "b": "bbbb\n", "c": "cccc\n"})
	e := gitEnv(t, gitsource.Limits{})
	code, m := e.JSON("POST", "/pulp/api/v3/remotes/file/git/", map[string]any{"name": "c", "url": strings.Replace(url, "http://", "http://u:p@", 1)})
	if code != 400 || !strings.Contains(fmt.Sprint(m["url"]), "username or password") {
		t.Fatalf("a url with credentials: %d %v", code, m)
	}
	for _, tc := range []struct {
		name string
		lim  gitsource.Limits
		ref  string
		want string
	}{
		{"missing ref", gitsource.Limits{}, "nope", `no branch, tag or commit named "nope"`},
		{"too many files", gitsource.Limits{Files: 2}, "", "more than 2 entries"},
		{"too many bytes", gitsource.Limits{Checkout: 12}, "", "larger than 12 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := gitEnv(t, tc.lim)
			body := map[string]any{"name": "g", "url": url}
			if tc.ref != "" {
				body["git_ref"] = tc.ref
			}
			remote, repo := gitRemote(e, body), fileRepo(e, "r")
			blobs := e.BlobCount()
			code, m := e.JSON("POST", repo+"sync/", map[string]any{"remote": remote})
			if code != 202 {
				t.Fatalf("sync: %d %v", code, m)
			}
			task := e.Wait(m["task"].(string))
			if msg := fmt.Sprint(task["error"]); task["state"] != "failed" || !strings.Contains(msg, tc.want) {
				t.Fatalf("task %v: %s, want %q", task["state"], msg, tc.want)
			}
			if v, files := latestFiles(e, repo); !strings.HasSuffix(v, "/versions/0/") || len(files) != 0 {
				t.Errorf("version %s with %v", v, slices.Collect(maps.Keys(files)))
			}
			if n := e.BlobCount(); n != blobs || e.Count("artifacts") != 0 {
				t.Errorf("stored %d blobs, %d artifacts", n-blobs, e.Count("artifacts"))
			}
		})
	}
}
