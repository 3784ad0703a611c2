package ansible_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"pith/blob"
	"pith/content/contenttest"
)

// One pith syncs from another (issue 16): pith A serves the test data's collections
// through its Galaxy API; pith B's remote names A's API root for that distribution,
// with admin's password and a requirements file naming only cisco.iosxr, and its sync
// takes cisco.iosxr and the two collections it needs, byte for byte, or none of their
// bytes on demand (served through B's content app when asked). Syncing again changes
// nothing; a new cisco.iosxr published on A is taken by B's next sync.
func TestSyncFromPith(t *testing.T) {
	a := newEnv(t)
	galaxyDist(t, a, "up")
	api := "/pulp_ansible/galaxy/up/api/"
	files := []string{"ansible-utils-2.7.0.tar.gz", "ansible-netcommon-4.1.0.tar.gz", "cisco-iosxr-4.0.2.tar.gz",
		"foo-bar-1.0.0.tar.gz", "pulp-testing_asset-1.0.0.tar.gz", "pulp-testing_asset-1.0.1.tar.gz"}
	for _, f := range files {
		if imp := publish(t, a, api, f); imp["state"] != "completed" {
			t.Fatalf("import of %s: %v", f, imp)
		}
	}
	needed := map[string]string{} // sha256 → file, of the three B needs
	for _, f := range files[:3] {
		needed[hexSum(string(tarball(t, f)))] = f
	}
	for sha, f := range needed {
		if got := blobs(t, a)[sha]; got != sha {
			t.Fatalf("A stores %s as %q", f, got)
		}
	}
	req := "collections:\n  - name: cisco.iosxr\n    version: '>=4.0.0,<5.0.0'\n"
	repos := map[string]string{}
	bs := map[string]*syncEnv{}
	for _, policy := range []string{"immediate", "on_demand"} {
		b := &syncEnv{Env: newEnv(t)}
		remote := b.create("/pulp/api/v3/remotes/ansible/collection/", map[string]any{
			"name": "a", "url": a.URL + api, "username": "admin", "password": "pw",
			"policy": policy, "max_retries": 0, "requirements_file": req,
		})
		repo := b.repo("r", remote)
		bs[policy], repos[policy] = b, repo
		b.syncOK(repo, nil)
		want(t, policy+": synced", b.held(repo), "ansible.netcommon 4.1.0", "ansible.utils 2.7.0", "cisco.iosxr 4.0.2")
		for sha, f := range needed {
			full, version := collectionOf(f)
			cv := b.cv(repo, full, version)
			if cv["sha256"] != sha {
				t.Errorf("%s: %s: sha256 %v, want A's %s", policy, f, cv["sha256"], sha)
			}
			acv := aUnit(t, a, full, version)
			for _, k := range []string{"namespace", "name", "version", "requires_ansible", "dependencies", "description", "tags", "authors", "license", "repository", "documentation", "homepage", "issues"} {
				if fmt.Sprint(cv[k]) != fmt.Sprint(acv[k]) {
					t.Errorf("%s: %s: %s %.200v, A has %.200v", policy, f, k, cv[k], acv[k])
				}
			}
		}
		stored := blobs(t, b.Env)
		var got, wantSums []string
		for k, v := range stored {
			if k != v {
				t.Errorf("%s: B's blob %s holds bytes of sha256 %s", policy, k, v)
			}
			got = append(got, k)
		}
		if policy == "immediate" {
			wantSums = slices.Collect(maps.Keys(needed))
		}
		sort.Strings(got)
		sort.Strings(wantSums)
		if !slices.Equal(got, wantSums) {
			t.Errorf("%s: B stores %q, want %q", policy, got, wantSums)
		}

		// B serves what it synced, through its Galaxy API and its content app; on
		// demand, fetched from A the first time.
		code, m := b.JSON("POST", "/pulp/api/v3/distributions/ansible/ansible/", map[string]any{"name": "down", "base_path": "down", "repository": repo})
		b.Done("distribution", code, m)
		// B's Galaxy API tells what A's does of each version.
		for _, f := range files[:3] {
			full, version := collectionOf(f)
			p := "v3/collections/" + strings.Replace(full, ".", "/", 1) + "/versions/" + version + "/"
			for _, sub := range []string{"", "docs-blob/"} {
				ac, av, _ := a.Do("GET", api+p+sub, "", nil)
				bc, bv, _ := b.Do("GET", "/pulp_ansible/galaxy/down/api/"+p+sub, "", nil)
				if ac != 200 || bc != 200 || av["manifest"] == nil && av["docs_blob"] == nil {
					t.Fatalf("%s: %s%s: A %d, B %d, %.200v", policy, p, sub, ac, bc, av)
				}
				for _, k := range []string{"metadata", "manifest", "files", "docs_blob", "requires_ansible", "name"} {
					if fmt.Sprint(av[k]) != fmt.Sprint(bv[k]) {
						t.Errorf("%s: %s%s: %s %.200v, A has %.200v", policy, p, sub, k, bv[k], av[k])
					}
				}
			}
		}
		// Either way B's version detail names the download route and the artifact, as the
		// remote declared it for a version synced on demand, so that what B holds can be
		// installed or synced from B's Galaxy API before anyone has fetched it.
		dl := "/pulp_ansible/galaxy/default/api/v3/plugin/ansible/content/down/collections/artifacts/" + files[2]
		code, v, _ := b.Do("GET", "/pulp_ansible/galaxy/down/api/v3/collections/cisco/iosxr/versions/4.0.2/", "", nil)
		if code != 200 || v["download_url"] != b.URL+dl {
			t.Errorf("%s: B's version detail: %d, download_url %v, want %s", policy, code, v["download_url"], b.URL+dl)
		}
		if art, _ := v["artifact"].(map[string]any); art == nil || art["sha256"] != hexSum(string(tarball(t, files[2]))) || art["filename"] != files[2] {
			t.Errorf("%s: B's version detail: artifact %v", policy, v["artifact"])
		}
		for u, f := range map[string]string{dl: files[2], "/pulp/content/down/" + files[0]: files[0]} {
			if code, body, _ := b.Do("GET", u, "", nil); code != 200 || body["_raw"] != string(tarball(t, f)) {
				t.Errorf("%s: GET %s from B: %d, not A's bytes", policy, u, code)
			}
		}
		version := b.latest(repo)
		if task := b.syncOK(repo, map[string]any{"optimize": true}); !skipped(task) {
			t.Errorf("%s: syncing an unchanged A with optimize was not skipped", policy)
		}
		b.syncOK(repo, map[string]any{"optimize": false})
		if got := b.latest(repo); got != version {
			t.Errorf("%s: syncing an unchanged A again made %s", policy, got)
		}
	}

	// A's Galaxy API needs the credentials.
	b := &syncEnv{Env: newEnv(t)}
	anon := b.create("/pulp/api/v3/remotes/ansible/collection/", map[string]any{"name": "anon", "url": a.URL + api, "max_retries": 0, "requirements_file": req})
	if task := b.sync(b.repo("anon", anon), nil); task["state"] != "failed" || !strings.Contains(fmt.Sprint(task["error"]), "401") {
		t.Errorf("a sync without A's credentials: %v %v", task["state"], task["error"])
	}

	// A publishes cisco.iosxr 4.1.0: B's next sync takes it (its artifact, immediate).
	iosxr41 := buildCollection(t, "cisco", "iosxr", "4.1.0", map[string]string{"ansible.netcommon": ">=2.5.1"})
	if imp := publishBytes(t, a, api, "cisco-iosxr-4.1.0.tar.gz", iosxr41); imp["state"] != "completed" {
		t.Fatalf("import of cisco.iosxr 4.1.0: %v", imp)
	}
	for policy, b := range bs {
		b.syncOK(repos[policy], nil)
		want(t, policy+": after A's new version", b.held(repos[policy]),
			"ansible.netcommon 4.1.0", "ansible.utils 2.7.0", "cisco.iosxr 4.0.2", "cisco.iosxr 4.1.0")
		_, stored := blobs(t, b.Env)[hexSum(string(iosxr41))]
		if stored != (policy == "immediate") {
			t.Errorf("%s: cisco.iosxr 4.1.0's artifact stored: %v", policy, stored)
		}
	}
}

// collectionOf is the name and version of a test data file: "cisco.iosxr", "4.0.2".
func collectionOf(file string) (string, string) {
	base := strings.TrimSuffix(file, ".tar.gz")
	i := strings.LastIndex(base, "-")
	return strings.Replace(base[:i], "-", ".", 1), base[i+1:]
}

// aUnit is A's collection version of that name and version.
func aUnit(t *testing.T, a *contenttest.Env, full, version string) map[string]any {
	t.Helper()
	ns, name, _ := strings.Cut(full, ".")
	code, m, _ := a.Do("GET", "/pulp/api/v3/content/ansible/collection_versions/?namespace="+ns+"&name="+name+"&version="+version, "", nil)
	if code != 200 || m["count"] != 1.0 {
		t.Fatalf("A's %s %s: %d %v", full, version, code, m)
	}
	return m["results"].([]any)[0].(map[string]any)
}

// blobs maps each blob an env stores to the sha256 of its bytes.
func blobs(t *testing.T, e *contenttest.Env) map[string]string {
	t.Helper()
	out := map[string]string{}
	ctx := context.Background()
	var keys []string
	e.Store.Walk(ctx, func(k string, _ blob.Info) error { keys = append(keys, k); return nil })
	for _, k := range keys {
		r, err := e.Store.Open(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		io.Copy(h, r)
		r.Close()
		out[k] = hex.EncodeToString(h.Sum(nil))
	}
	return out
}
