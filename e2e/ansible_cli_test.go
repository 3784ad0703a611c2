package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pith/content/ansible/collection"
	"pith/internal/testgalaxy"
	"pith/internal/testgit"
)

// collectionNames is "namespace.name-version" of each collection version listed, sorted.
func collectionNames(units []entity) []string {
	var out []string
	for _, u := range units {
		out = append(out, u.str("namespace")+"."+u.str("name")+"-"+u.str("version"))
	}
	slices.Sort(out)
	return out
}

// ansibleCounts is a version's content_summary.present counts of the ansible types.
func ansibleCounts(v entity) [3]float64 {
	p := present(v)
	return [3]float64{p["ansible.collection_version"], p["ansible.role"], p["ansible.collection_signature"]}
}

// The Ansible issue's pulp-cli workflow, each step through `pulp ansible …` of pulp-cli
// 0.41.1: repositories with retention and a keyring, collection remotes with a
// requirements file (a range and the dependencies it pulls) syncing from a Galaxy, role
// and git remotes, collection, signature and role uploads, copies between repositories,
// signing by pith's signing service, distributions and repository versions.
func TestAnsibleCLI(t *testing.T) {
	fx := testgalaxy.New(t, testgalaxy.Config{
		Roles: []testgalaxy.Role{{Namespace: "pith", Name: "hello", Versions: []string{"1.0.0", "1.1.0"}}},
	})
	for _, f := range []string{"ansible-utils-2.7.0.tar.gz", "ansible-netcommon-4.1.0.tar.gz", "cisco-iosxr-4.0.2.tar.gz",
		"pulp-testing_asset-1.0.0.tar.gz", "pulp-testing_asset-1.0.1.tar.gz"} {
		b, err := os.ReadFile(collectionFile(f))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fx.AddCollection(b); err != nil {
			t.Fatalf("fixture galaxy: %s: %v", f, err)
		}
	}
	gitURL := testgit.Serve(t, testgit.CollectionSource)
	key := testgalaxy.NewKeyring(t)
	for name, start := range installations("--metadata-signing-key", key.PrivateKey, "--role-archive-origin", fx.URL) {
		t.Run(name, func(t *testing.T) {
			c := newCLI(t, start(t))
			ansibleCLIScenario(t, c, fx, gitURL, key)
		})
	}
}

// ansibleCLIScenario runs the workflow against one installation with a fresh database.
func ansibleCLIScenario(t *testing.T, c *cli, fx *testgalaxy.Server, gitURL string, key *testgalaxy.Keyring) {
	// Repositories: create, update (retention and a keyring), show, list.
	var repo entity
	c.json(&repo, "ansible", "repository", "create", "--name", "galaxy", "--description", "from the galaxy")
	if repo.str("name") != "galaxy" || !strings.HasPrefix(repo.str("pulp_href"), "/pulp/api/v3/repositories/ansible/ansible/") ||
		!strings.HasSuffix(repo.str("latest_version_href"), "/versions/0/") || repo["gpgkey"] != nil || repo["private"] != false {
		t.Fatalf("created repository: %v", repo)
	}
	c.run("ansible", "repository", "update", "--name", "galaxy", "--retain-repo-versions", "3", "--gpgkey", key.Signer.PublicKey())
	c.json(&repo, "ansible", "repository", "show", "--name", "galaxy")
	if repo["retain_repo_versions"] != float64(3) || !strings.Contains(repo.str("gpgkey"), "BEGIN PGP PUBLIC KEY BLOCK") || repo.str("description") != "from the galaxy" {
		t.Fatalf("update not applied: %v", repo)
	}
	c.run("ansible", "repository", "create", "--name", "copy")
	c.run("ansible", "repository", "create", "--name", "roles")
	var repos []entity
	c.json(&repos, "ansible", "repository", "list")
	if got := names(repos); !slices.Equal(got, []string{"copy", "galaxy", "roles"}) {
		t.Fatalf("repository list: %v", got)
	}

	// A collection remote with a requirements file: a range that leaves out
	// pulp.testing_asset 1.0.1, and cisco.iosxr whose dependencies come along.
	reqs := "collections:\n  - name: cisco.iosxr\n    version: \">=4.0.0,<5.0.0\"\n  - name: pulp.testing_asset\n    version: \"<1.0.1\"\n"
	// pulp-cli sends the YAML re-written as a Python dict's repr (also YAML), which Pulp keeps.
	sent := "{'collections': [{'name': 'cisco.iosxr', 'version': '>=4.0.0,<5.0.0'}, {'name': 'pulp.testing_asset', 'version': '<1.0.1'}]}"
	var remote entity
	c.json(&remote, "ansible", "remote", "create", "--name", "galaxy", "--url", fx.API, "--requirements", reqs, "--policy", "immediate")
	if remote.str("requirements_file") != sent || remote["sync_dependencies"] != true || remote.str("url") != fx.API ||
		!strings.HasPrefix(remote.str("pulp_href"), "/pulp/api/v3/remotes/ansible/collection/") {
		t.Fatalf("collection remote: %v", remote)
	}
	c.json(&remote, "ansible", "remote", "show", "--name", "galaxy")
	if remote.str("requirements_file") != sent || remote.str("policy") != "immediate" {
		t.Fatalf("collection remote show: %v", remote)
	}
	// A requirements file Pulp refuses: a 400 naming the field, and no remote.
	bad := "collections:\n  - name: foo\n    version: '>=1.0.0'\n"
	if out, err := c.try("ansible", "remote", "create", "--name", "bad", "--url", fx.API, "--requirements", bad); err == nil ||
		!strings.Contains(out, `"requirements_file"`) || !strings.Contains(out, "is not a collection name") {
		t.Fatalf("remote with a bad requirements file: %v\n%s", err, out)
	}
	c.run("ansible", "repository", "update", "--name", "galaxy", "--remote", "galaxy")
	c.run("ansible", "repository", "sync", "--name", "galaxy")
	var units []entity
	c.json(&units, "ansible", "content", "list", "--repository-version", "/pulp/api/v3/repositories/ansible/ansible/"+hrefID(repo)+"/versions/1/")
	wantSynced := []string{"ansible.netcommon-4.1.0", "ansible.utils-2.7.0", "cisco.iosxr-4.0.2", "pulp.testing_asset-1.0.0"}
	if got := collectionNames(units); !slices.Equal(got, wantSynced) {
		t.Fatalf("synced collections: %v, want %v", got, wantSynced)
	}
	var ver entity
	c.json(&ver, "ansible", "repository", "version", "show", "--repository", "galaxy")
	if ver["number"] != float64(1) || ansibleCounts(ver) != [3]float64{4, 0, 0} {
		t.Fatalf("version after sync: %v", ver)
	}
	// Syncing again from the unchanged upstream makes no version (optimize).
	c.run("ansible", "repository", "sync", "--name", "galaxy")
	c.json(&ver, "ansible", "repository", "version", "show", "--repository", "galaxy")
	if ver["number"] != float64(1) {
		t.Fatalf("a second sync of an unchanged upstream made version %v", ver["number"])
	}
	c.run("ansible", "remote", "update", "--name", "galaxy", "--rate-limit", "5", "--download-concurrency", "2")
	c.json(&remote, "ansible", "remote", "show", "--name", "galaxy")
	if remote["rate_limit"] != float64(5) || remote["download_concurrency"] != float64(2) || remote.str("requirements_file") != sent {
		t.Fatalf("remote after update: %v", remote)
	}
	// Content show by namespace, name and version.
	var cv entity
	c.json(&cv, "ansible", "content", "show", "--namespace", "cisco", "--name", "iosxr", "--version", "4.0.2")
	if deps, _ := cv["dependencies"].(map[string]any); cv.str("namespace") != "cisco" || deps["ansible.netcommon"] == nil || cv.str("requires_ansible") == "" {
		t.Fatalf("content show cisco.iosxr: %v", cv)
	}
	c.json(&units, "ansible", "content", "list", "--namespace", "pulp", "--name", "testing_asset")
	if got := collectionNames(units); !slices.Equal(got, []string{"pulp.testing_asset-1.0.0"}) {
		t.Fatalf("content list --namespace pulp: %v", got)
	}

	// pulp_ansible's access policy for collection versions has no set_label statement, and
	// Pulp grants an administrator nothing beyond the policy: refused, as by Pulp.
	if out, err := c.try("ansible", "content", "label", "set", "--href", cv.str("pulp_href"), "--key", "env", "--value", "x"); err == nil ||
		!strings.Contains(out, "content_ansible_collection_versions_set_label is not authorized") {
		t.Fatalf("label set on a collection version: %v\n%s", err, out)
	}

	// Upload: pulp.testing_asset 1.0.1 into the repository (a new version).
	var up entity
	c.json(&up, "ansible", "content", "upload", "--file", collectionFile("pulp-testing_asset-1.0.1.tar.gz"), "--repository", "galaxy")
	if up.str("namespace") != "pulp" || up.str("name") != "testing_asset" || up.str("version") != "1.0.1" {
		t.Fatalf("uploaded collection: %v", up)
	}
	c.json(&units, "ansible", "content", "list", "--namespace", "pulp", "--ordering", "-version", "--limit", "1")
	if got := collectionNames(units); !slices.Equal(got, []string{"pulp.testing_asset-1.0.1"}) {
		t.Fatalf("content list --ordering -version --limit 1: %v", got)
	}
	// --latest sends is_highest, a filter pulp_ansible 0.30.3 no longer declares: the CLI
	// refuses it before asking, as against Pulp.
	if out, err := c.try("ansible", "content", "list", "--latest"); err == nil || !strings.Contains(out, "Parameter 'is_highest' not available") {
		t.Fatalf("content list --latest: %v\n%s", err, out)
	}
	c.json(&ver, "ansible", "repository", "version", "show", "--repository", "galaxy")
	if ver["number"] != float64(2) || ansibleCounts(ver) != [3]float64{5, 0, 0} {
		t.Fatalf("version after upload: %v", ver)
	}

	// A signature by the repository's keyring, uploaded; one by another key is refused.
	var utils entity
	c.json(&utils, "ansible", "content", "show", "--namespace", "ansible", "--name", "utils", "--version", "2.7.0")
	sig := detachedManifestSignature(t, key, "ansible-utils-2.7.0.tar.gz")
	var sigUnit entity
	c.json(&sigUnit, "ansible", "content", "--type", "signature", "upload", "--file", sig, "--collection", utils.str("pulp_href"), "--repository", "galaxy")
	if sigUnit.str("signed_collection") != utils.str("pulp_href") || sigUnit.str("pubkey_fingerprint") != key.Signer.Fingerprint() {
		t.Fatalf("uploaded signature: %v (fingerprint %s)", sigUnit, key.Signer.Fingerprint())
	}
	other := detachedManifestSignature(t, testgalaxy.NewKeyring(t), "ansible-netcommon-4.1.0.tar.gz")
	var netcommon entity
	c.json(&netcommon, "ansible", "content", "show", "--namespace", "ansible", "--name", "netcommon", "--version", "4.1.0")
	if out, err := c.try("ansible", "content", "--type", "signature", "upload", "--file", other, "--collection", netcommon.str("pulp_href"), "--repository", "galaxy"); err == nil ||
		!strings.Contains(out, "Signature verification failed") {
		t.Fatalf("a signature by a key the repository lacks: %v\n%s", err, out)
	}
	c.json(&ver, "ansible", "repository", "version", "show", "--repository", "galaxy")
	if ver["number"] != float64(3) || ansibleCounts(ver) != [3]float64{5, 0, 1} {
		t.Fatalf("version after the signature upload: %v", ver)
	}

	// Sign with pith's signing service: every collection without a signature by it.
	c.run("ansible", "repository", "sign", "--name", "galaxy", "--signing-service", "pith-metadata")
	var sigs []entity
	c.json(&sigs, "ansible", "content", "--type", "signature", "list", "--repository-version", "/pulp/api/v3/repositories/ansible/ansible/"+hrefID(repo)+"/versions/4/")
	if len(sigs) != 5 {
		t.Fatalf("signatures after sign: %d, want 5 (every collection once: the key is the same as the uploaded one's) %v", len(sigs), sigs)
	}
	byService := 0
	for _, sg := range sigs {
		if sg.str("pubkey_fingerprint") != key.Signer.Fingerprint() {
			t.Errorf("signature %v: not by the service's key", sg)
		}
		if strings.HasPrefix(sg.str("signing_service"), "/pulp/api/v3/signing-services/") {
			byService++
		}
	}
	if byService != 4 {
		t.Errorf("%d signatures name the signing service, want 4 (the uploaded one names none): %v", byService, sigs)
	}
	var tasks []entity
	c.json(&tasks, "task", "list", "--name", "pulp_ansible.app.tasks.signature.sign")
	if len(tasks) != 1 || tasks[0].str("state") != "completed" || progressDone(tasks[0], "sign.new.signature") != 4 ||
		progressDone(tasks[0], "sign.present.signature") != 0 || progressDone(tasks[0], "associating.content") != 4 {
		t.Fatalf("sign task: %v", tasks)
	}
	if cr, _ := tasks[0]["created_resources"].([]any); len(cr) != 1 || !strings.HasSuffix(cr[0].(string), "/versions/4/") {
		t.Fatalf("sign task created %v, want the repository's version 4", tasks[0]["created_resources"])
	}
	c.json(&sigs, "ansible", "content", "--type", "signature", "list", "--collection", utils.str("pulp_href"))
	if len(sigs) != 1 || sigs[0].str("pulp_href") != sigUnit.str("pulp_href") {
		t.Fatalf("signatures of ansible.utils: %v, want the uploaded one", sigs)
	}
	var shown entity
	c.json(&shown, "ansible", "content", "--type", "signature", "show", "--href", sigUnit.str("pulp_href"))
	if shown.str("signed_collection") != utils.str("pulp_href") || shown["signing_service"] != nil {
		t.Fatalf("signature show: %v", shown)
	}

	// Copies: one collection by name into another repository, then everything of a
	// version of galaxy (a base version) into it.
	c.run("ansible", "repository", "content", "add", "--repository", "copy", "--namespace", "cisco", "--name", "iosxr", "--version", "4.0.2")
	c.json(&units, "ansible", "repository", "content", "list", "--repository", "copy")
	if got := collectionNames(units); !slices.Equal(got, []string{"cisco.iosxr-4.0.2"}) {
		t.Fatalf("copy after content add: %v", got)
	}
	// galaxy keeps 3 versions (2, 3 and 4): version 1 is gone.
	modify := []string{"ansible", "repository", "content", "modify", "--repository", "copy", "--base-repository", "galaxy",
		"--remove-content", `[{"namespace": "ansible", "name": "utils", "version": "2.7.0"}]`, "--base-version"}
	if out, err := c.try(append(modify, "1")...); err == nil || !strings.Contains(out, "Not found") {
		t.Fatalf("modify on a version retention removed: %v\n%s", err, out)
	}
	c.run(append(modify, "2")...)
	c.json(&units, "ansible", "repository", "content", "list", "--repository", "copy")
	wantCopy := []string{"ansible.netcommon-4.1.0", "cisco.iosxr-4.0.2", "pulp.testing_asset-1.0.0", "pulp.testing_asset-1.0.1"}
	if got := collectionNames(units); !slices.Equal(got, wantCopy) {
		t.Fatalf("copy after modify on galaxy's version 2: %v, want %v", got, wantCopy)
	}
	c.run("ansible", "repository", "content", "remove", "--repository", "copy", "--namespace", "pulp", "--name", "testing_asset", "--version", "1.0.0")
	c.json(&ver, "ansible", "repository", "version", "show", "--repository", "copy")
	if ver["number"] != float64(3) || ansibleCounts(ver) != [3]float64{3, 0, 0} {
		t.Fatalf("copy's latest version: %v", ver)
	}

	// A chunked upload: pulp-cli 0.41.1 sends the upload without expected_namespace,
	// expected_name and expected_version, which pulp_ansible 0.30.3 requires with one: it
	// fails as against Pulp, and the upload stays. In one piece, community.general imports.
	big := collectionFile("community-general-5.7.0.tar.gz")
	c.run("ansible", "repository", "create", "--name", "big")
	if out, err := c.try("ansible", "content", "upload", "--file", big, "--chunk-size", "1MB", "--repository", "big"); err == nil ||
		!strings.Contains(out, "expected_namespace, expected_name, and expected_version must be specified when using artifact or upload objects") {
		t.Fatalf("chunked upload: %v\n%s", err, out)
	}
	var uploads []entity
	c.json(&uploads, "upload", "list")
	if len(uploads) != 1 || uploads[0]["size"] != float64(fileSize(t, big)) {
		t.Fatalf("uploads after the refused chunked upload: %v", uploads)
	}
	c.json(&up, "ansible", "content", "upload", "--file", big, "--repository", "big")
	if up.str("namespace") != "community" || up.str("name") != "general" || up.str("version") != "5.7.0" {
		t.Fatalf("community.general upload: %v", up)
	}
	c.json(&units, "ansible", "repository", "content", "list", "--repository", "big")
	if got := collectionNames(units); !slices.Equal(got, []string{"community.general-5.7.0"}) {
		t.Fatalf("big after the upload: %v", got)
	}

	// Labels on a repository select it in lists.
	c.run("ansible", "repository", "label", "set", "--repository", "galaxy", "--key", "env", "--value", "prod")
	c.json(&repos, "ansible", "repository", "list", "--label-select", "env=prod")
	if got := names(repos); !slices.Equal(got, []string{"galaxy"}) {
		t.Fatalf("repositories labelled env=prod: %v", got)
	}

	// Roles: a role remote syncs a v1 roles list (archives from the fixture standing in
	// for GitHub); a role uploads.
	var roleRemote entity
	c.json(&roleRemote, "ansible", "remote", "--type", "role", "create", "--name", "roles", "--url", fx.API+"v1/roles/?owner__username=pith")
	if roleRemote.str("policy") != "immediate" || !strings.HasPrefix(roleRemote.str("pulp_href"), "/pulp/api/v3/remotes/ansible/role/") {
		t.Fatalf("role remote: %v", roleRemote)
	}
	c.run("ansible", "repository", "sync", "--name", "roles", "--remote", "ansible:role:roles")
	var roles []entity
	var role entity
	c.json(&roles, "ansible", "content", "--type", "role", "list", "--namespace", "pith", "--name", "hello")
	if got := collectionNames(roles); !slices.Equal(got, []string{"pith.hello-1.0.0", "pith.hello-1.1.0"}) {
		t.Fatalf("synced roles: %v", got)
	}
	c.json(&role, "ansible", "content", "--type", "role", "show", "--namespace", "pith", "--name", "hello", "--version", "1.1.0")
	if role.str("version") != "1.1.0" || role.str("artifact") == "" || !strings.HasPrefix(role.str("pulp_href"), "/pulp/api/v3/content/ansible/roles/") {
		t.Fatalf("role show: %v", role)
	}
	archive := filepath.Join(t.TempDir(), "role.tar.gz")
	os.WriteFile(archive, testgalaxy.RoleArchive(testgalaxy.Role{Namespace: "pith", Name: "bye"}, "2.0.0"), 0o644)
	c.json(&role, "ansible", "content", "--type", "role", "upload", "--file", archive, "--namespace", "pith", "--name", "bye", "--version", "2.0.0")
	if role.str("namespace") != "pith" || role.str("name") != "bye" || role.str("version") != "2.0.0" || role.str("artifact") == "" {
		t.Fatalf("uploaded role: %v", role)
	}
	c.run("ansible", "repository", "content", "--type", "role", "add", "--repository", "roles", "--href", role.str("pulp_href"))
	c.json(&ver, "ansible", "repository", "version", "show", "--repository", "roles")
	if ver["number"] != float64(2) || ansibleCounts(ver) != [3]float64{0, 3, 0} {
		t.Fatalf("roles' latest version: %v", ver)
	}

	// A git remote: a collection built from a git repository's galaxy.yml.
	var gitRemote entity
	c.json(&gitRemote, "ansible", "remote", "--type", "git", "create", "--name", "git", "--url", gitURL)
	if !strings.HasPrefix(gitRemote.str("pulp_href"), "/pulp/api/v3/remotes/ansible/git/") || gitRemote.str("git_ref") != "" {
		t.Fatalf("git remote: %v", gitRemote)
	}
	c.run("ansible", "repository", "create", "--name", "git", "--remote", "ansible:git:git")
	c.run("ansible", "repository", "sync", "--name", "git")
	c.json(&units, "ansible", "repository", "content", "list", "--repository", "git")
	if got := collectionNames(units); !slices.Equal(got, []string{"acme.tools-1.2.3"}) {
		t.Fatalf("git sync: %v", got)
	}
	var remotes []entity
	for typ, want := range map[string][]string{"collection": {"galaxy"}, "role": {"roles"}, "git": {"git"}} {
		c.json(&remotes, "ansible", "remote", "--type", typ, "list")
		if got := names(remotes); !slices.Equal(got, want) {
			t.Errorf("%s remotes: %v, want %v", typ, got, want)
		}
	}

	// Distributions: create on the latest version, update to a fixed one, destroy.
	var dist entity
	c.json(&dist, "ansible", "distribution", "create", "--name", "galaxy", "--base-path", "galaxy", "--repository", "galaxy")
	if dist.str("base_path") != "galaxy" || dist.str("repository") != repo.str("pulp_href") || dist["repository_version"] != nil {
		t.Fatalf("distribution: %v", dist)
	}
	if !strings.HasSuffix(dist.str("client_url"), "/pulp_ansible/galaxy/galaxy/") {
		t.Fatalf("distribution's client_url: %v", dist["client_url"])
	}
	c.run("ansible", "distribution", "update", "--name", "galaxy", "--base-path", "galaxy/v2", "--repository", "galaxy", "--version", "2")
	c.json(&dist, "ansible", "distribution", "show", "--name", "galaxy")
	if dist.str("base_path") != "galaxy/v2" || dist.str("repository_version") != repo.str("pulp_href")+"versions/2/" || dist["repository"] != nil {
		t.Fatalf("distribution after update: %v", dist)
	}
	var dists []entity
	c.json(&dists, "ansible", "distribution", "list")
	if got := names(dists); !slices.Equal(got, []string{"galaxy"}) {
		t.Fatalf("distribution list: %v", got)
	}
	c.run("ansible", "distribution", "update", "--name", "galaxy", "--repository", "")
	c.json(&dist, "ansible", "distribution", "show", "--name", "galaxy")
	if dist["repository"] != nil || dist["repository_version"] != nil {
		t.Fatalf("distribution after --repository \"\": %v", dist)
	}
	c.run("ansible", "distribution", "destroy", "--name", "galaxy")
	c.json(&dists, "ansible", "distribution", "list")
	if len(dists) != 0 {
		t.Fatalf("distribution list after destroy: %v", dists)
	}

	// Versions: retention kept the last 3 of galaxy's 5; one destroyed.
	var versions []entity
	c.json(&versions, "ansible", "repository", "version", "list", "--repository", "galaxy")
	if got := versionNumbers(versions); !slices.Equal(got, []float64{4, 3, 2}) {
		t.Fatalf("galaxy's versions with retain 3: %v", got)
	}
	c.run("ansible", "repository", "version", "destroy", "--repository", "galaxy", "--version", "3")
	c.json(&versions, "ansible", "repository", "version", "list", "--repository", "galaxy")
	if got := versionNumbers(versions); !slices.Equal(got, []float64{4, 2}) {
		t.Fatalf("galaxy's versions after destroying 3: %v", got)
	}
	// The latest version may go (the one before becomes latest), the only one may not.
	c.run("ansible", "repository", "version", "destroy", "--repository", "galaxy", "--version", "4")
	c.json(&repo, "ansible", "repository", "show", "--name", "galaxy")
	if !strings.HasSuffix(repo.str("latest_version_href"), "/versions/2/") {
		t.Fatalf("latest version after destroying 4: %v", repo["latest_version_href"])
	}
	if out, err := c.try("ansible", "repository", "version", "destroy", "--repository", "galaxy", "--version", "2"); err == nil ||
		!strings.Contains(out, "failed") {
		t.Fatalf("destroying the only version: %v\n%s", err, out)
	}
	c.run("ansible", "repository", "destroy", "--name", "copy")
	c.json(&repos, "ansible", "repository", "list")
	if got := names(repos); !slices.Equal(got, []string{"big", "galaxy", "git", "roles"}) {
		t.Fatalf("repository list after destroy: %v", got)
	}
}

// names is the sorted names of the entities.
func names(es []entity) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.str("name"))
	}
	slices.Sort(out)
	return out
}

func versionNumbers(vs []entity) []float64 {
	var out []float64
	for _, v := range vs {
		n, _ := v["number"].(float64)
		out = append(out, n)
	}
	return out
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// progressDone is the done count of a task's progress report with the code, or -1.
func progressDone(task entity, code string) float64 {
	reports, _ := task["progress_reports"].([]any)
	for _, r := range reports {
		if m, _ := r.(map[string]any); m["code"] == code {
			n, _ := m["done"].(float64)
			return n
		}
	}
	return -1
}

// hrefID is the last segment of an entity's pulp_href.
func hrefID(e entity) string {
	return filepath.Base(strings.TrimSuffix(e.str("pulp_href"), "/"))
}

// detachedManifestSignature signs a collection artifact's MANIFEST.json with the key,
// as `ansible-sign` or a signing service does, and returns the signature's file.
func detachedManifestSignature(t *testing.T, key *testgalaxy.Keyring, artifact string) string {
	t.Helper()
	f, err := os.Open(collectionFile(artifact))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := collection.Read(f, collection.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sig, err := key.Signer.Detach(bytes.NewReader(v.Manifest))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), artifact+".asc")
	if err := os.WriteFile(p, sig, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
