package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// asUser is a pulp CLI configured with another user's credentials.
func asUser(t *testing.T, s *server, user, password string) *cli {
	t.Helper()
	c := newCLI(t, s)
	var home string
	for _, e := range c.env {
		if h, ok := strings.CutPrefix(e, "HOME="); ok {
			home = h
		}
	}
	toml := fmt.Sprintf("[cli]\nbase_url = %q\nusername = %q\npassword = %q\nverify_ssl = false\nformat = \"json\"\ntimeout = 120\n", s.url, user, password)
	if err := os.WriteFile(filepath.Join(home, "config", "pulp", "cli.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAccessControl drives access control with the pulp CLI as Katello and galaxy_ng
// operators do: users, a group, a custom role, role assignments, object roles and an
// access policy; a user who may create repositories owns what it creates, a user with
// only a viewer role (through its group) reads and may not change, a user without roles
// sees nothing.
func TestAccessControl(t *testing.T) {
	for name, start := range installations() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := start(t)
			admin := newCLI(t, s)
			const pw = "a long enough passphrase"
			for _, u := range []string{"maker", "looker", "outsider"} {
				admin.run("user", "create", "--username", u, "--password", pw)
			}
			var users map[string]any
			admin.json(&users, "user", "show", "--username", "looker")
			if users["username"] != "looker" {
				t.Fatalf("user show: %v", users)
			}
			admin.run("group", "create", "--name", "ops")
			admin.run("group", "user", "add", "--group", "ops", "--username", "looker")
			var members []map[string]any
			admin.json(&members, "group", "user", "list", "--group", "ops")
			if len(members) != 1 || members[0]["username"] != "looker" {
				t.Fatalf("group members: %v", members)
			}
			admin.run("role", "create", "--name", "pith.e2e_remote_reader", "--permission", "file.view_fileremote")
			var role map[string]any
			admin.json(&role, "role", "show", "--name", "pith.e2e_remote_reader")
			if role["locked"] != false || fmt.Sprint(role["permissions"]) != "[file.view_fileremote]" {
				t.Fatalf("custom role: %v", role)
			}
			admin.run("user", "role-assignment", "add", "--username", "maker", "--role", "file.filerepository_creator", "--object", "")
			var assignments []map[string]any
			admin.json(&assignments, "user", "role-assignment", "list", "--username", "maker")
			if len(assignments) != 1 || assignments[0]["role"] != "file.filerepository_creator" {
				t.Fatalf("maker's roles: %v", assignments)
			}

			// The maker creates a repository and owns it.
			maker := asUser(t, s, "maker", pw)
			maker.run("file", "repository", "create", "--name", "makers")
			var perms map[string]any
			maker.json(&perms, "file", "repository", "role", "my-permissions", "--name", "makers")
			if !strings.Contains(fmt.Sprint(perms["permissions"]), "file.delete_filerepository") {
				t.Fatalf("the maker's permissions on its repository: %v", perms)
			}
			if out, err := maker.try("file", "remote", "create", "--name", "nope", "--url", "http://127.0.0.1:1/"); err == nil {
				t.Fatalf("the maker created a remote without the remote creator role: %s", out)
			}
			maker.run("file", "repository", "role", "add", "--name", "makers", "--role", "file.filerepository_viewer", "--group", "ops")
			var roles map[string]any
			admin.json(&roles, "file", "repository", "role", "list", "--name", "makers")
			if s := fmt.Sprint(roles); !strings.Contains(s, "file.filerepository_owner") || !strings.Contains(s, "maker") || !strings.Contains(s, "ops") {
				t.Fatalf("the repository's roles: %v", roles)
			}

			// The looker reads through its group, and may not change.
			looker := asUser(t, s, "looker", pw)
			var repo map[string]any
			looker.json(&repo, "file", "repository", "show", "--name", "makers")
			if repo["name"] != "makers" {
				t.Fatalf("the looker reads: %v", repo)
			}
			if out, err := looker.try("file", "repository", "update", "--name", "makers", "--description", "mine now"); err == nil || !strings.Contains(out, "not authorized") {
				t.Fatalf("the looker changed the repository: %v %s", err, out)
			}
			if out, err := looker.try("file", "repository", "destroy", "--name", "makers"); err == nil {
				t.Fatalf("the looker deleted the repository: %s", out)
			}

			// The outsider sees nothing.
			outsider := asUser(t, s, "outsider", pw)
			var list []map[string]any
			outsider.json(&list, "file", "repository", "list")
			if len(list) != 0 {
				t.Fatalf("the outsider lists repositories: %v", list)
			}
			if out, err := outsider.try("user", "list"); err == nil {
				t.Fatalf("the outsider listed users: %s", out)
			}

			// An access policy, customized and reset.
			var policy map[string]any
			admin.json(&policy, "access-policy", "show", "--viewset-name", "repositories/file/file")
			if policy["customized"] != false {
				t.Fatalf("policy: %v", policy)
			}
			admin.run("access-policy", "update", "--viewset-name", "repositories/file/file", "--statements",
				`[{"action": ["*"], "principal": "admin", "effect": "allow"}]`)
			if out, err := looker.try("file", "repository", "show", "--name", "makers"); err == nil {
				t.Fatalf("the looker read under an administrators-only policy: %s", out)
			}
			admin.run("access-policy", "reset", "--viewset-name", "repositories/file/file")
			looker.run("file", "repository", "show", "--name", "makers")

			// The owner deletes its repository; the group and users go.
			maker.run("file", "repository", "destroy", "--name", "makers")
			admin.run("group", "destroy", "--name", "ops")
			admin.run("role", "destroy", "--name", "pith.e2e_remote_reader")
			admin.run("user", "destroy", "--username", "outsider")
		})
	}
}
