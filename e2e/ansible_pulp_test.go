package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"pith/bench"
	"pith/internal/testgalaxy"
)

// pith syncs collections from upstream Pulp's Galaxy API with a requirements file naming
// only cisco.iosxr, and gets it with its dependencies ansible.netcommon and ansible.utils
// (and none of the other collections the distribution holds), byte for byte, with each
// policy; then serves them to ansible-galaxy.
func TestAnsibleSyncFromPulp(t *testing.T) {
	p := needPulpPeer(t)
	basePath := p.name("ansible")
	p.deleteAtEnd(t, "/pulp/api/v3/repositories/ansible/ansible/", basePath)
	p.deleteAtEnd(t, "/pulp/api/v3/distributions/ansible/ansible/", basePath)
	var files []string
	for _, f := range galaxyCollections {
		files = append(files, collectionFile(f))
	}
	if err := bench.GalaxyDistribution(t.Context(), p.target, basePath, files); err != nil {
		t.Fatalf("upstream Pulp: %v", err)
	}
	upstream := testgalaxy.DistributionURL(p.target.URL, basePath)

	want := map[string]string{} // "namespace.name version" → sha256 of the testdata tarball
	for _, f := range []string{"cisco-iosxr-4.0.2.tar.gz", "ansible-netcommon-4.1.0.tar.gz", "ansible-utils-2.7.0.tar.gz"} {
		b, err := os.ReadFile(collectionFile(f))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		ns, rest, _ := strings.Cut(strings.TrimSuffix(f, ".tar.gz"), "-")
		name, version, _ := strings.Cut(rest, "-")
		want[ns+"."+name+" "+version] = hex.EncodeToString(sum[:])
	}

	for _, policy := range []string{"immediate", "on_demand"} {
		t.Run(policy, func(t *testing.T) {
			// A pith of its own: on one that already stored the artifacts, on_demand
			// would prove nothing.
			s := startPith(t, "")
			c := bench.NewClient(bench.Target{URL: s.url, User: "admin", Password: adminPassword})
			ctx := t.Context()
			var remote, repo struct {
				Href string `json:"pulp_href"`
			}
			must(t, c.JSON(ctx, "POST", "/pulp/api/v3/remotes/ansible/collection/", map[string]any{
				"name": "pulp", "url": upstream, "policy": policy,
				"username": p.target.User, "password": p.target.Password,
				"requirements_file": "collections:\n  - name: cisco.iosxr\n    version: \">=4.0.0,<5.0.0\"\n",
			}, &remote))
			must(t, c.JSON(ctx, "POST", "/pulp/api/v3/repositories/ansible/ansible/", map[string]any{"name": "from-pulp"}, &repo))
			must(t, c.Call(ctx, "POST", repo.Href+"sync/", map[string]any{"remote": remote.Href}))

			latest := latestVersion(t, c, repo.Href)
			held := syncedVersions(t, c, latest)
			if got, w := slices.Sorted(maps.Keys(held)), slices.Sorted(maps.Keys(want)); !slices.Equal(got, w) {
				t.Fatalf("synced %q, want %q", got, w)
			}
			for k, cv := range held {
				if cv.SHA256 != want[k] {
					t.Errorf("%s: sha256 %s, want the tarball's %s", k, cv.SHA256, want[k])
				}
				if policy == "on_demand" {
					if cv.Artifact != "" {
						t.Errorf("%s: artifact %s before anything asked for it", k, cv.Artifact)
					}
					continue
				}
				var artifact struct {
					SHA256 string `json:"sha256"`
				}
				if cv.Artifact == "" {
					t.Errorf("%s: no artifact after an immediate sync", k)
					continue
				}
				must(t, c.JSON(ctx, "GET", cv.Artifact, nil, &artifact))
				if artifact.SHA256 != want[k] {
					t.Errorf("%s: artifact sha256 %s, want %s", k, artifact.SHA256, want[k])
				}
			}

			// Pulp has not changed: syncing again makes no new version.
			must(t, c.Call(ctx, "POST", repo.Href+"sync/", map[string]any{"remote": remote.Href}))
			if again := latestVersion(t, c, repo.Href); again != latest {
				t.Errorf("syncing again made %s after %s", again, latest)
			}

			// pith serves what it synced (on demand: fetched from Pulp now), to
			// ansible-galaxy first so that it is the first to ask.
			must(t, c.Call(ctx, "POST", "/pulp/api/v3/distributions/ansible/ansible/", map[string]any{
				"name": "from-pulp", "base_path": "from-pulp", "repository": repo.Href}))
			t.Run("ansible-galaxy", func(t *testing.T) {
				g := newGalaxyClient(t, s, pithGalaxy(s, "from-pulp"))
				out := g.Install("cisco.iosxr")
				for k := range want {
					full, version, _ := strings.Cut(k, " ")
					ns, name, _ := strings.Cut(full, ".")
					if v, ok := g.Installed(ns, name); !ok || v != version {
						t.Errorf("%s after installing cisco.iosxr: version %q, installed %v\n%s", full, v, ok, out)
					}
				}
			})
			for k, sha := range want {
				full, version, _ := strings.Cut(k, " ")
				var detail struct {
					DownloadURL string `json:"download_url"`
				}
				must(t, c.JSON(ctx, "GET", fmt.Sprintf("%sv3/collections/%s/versions/%s/", testgalaxy.DistributionURL("", "from-pulp"),
					strings.Replace(full, ".", "/", 1), version), nil, &detail))
				if got := downloadSum(t, detail.DownloadURL); got != sha {
					t.Errorf("%s: pith serves bytes of sha256 %s, want %s", k, got, sha)
				}
			}
		})
	}
}

// syncedCV is what the test reads of a collection version.
type syncedCV struct {
	Namespace, Name, Version string
	SHA256                   string `json:"sha256"`
	Artifact                 string `json:"artifact"`
}

// latestVersion is the href of a repository's latest version.
func latestVersion(t *testing.T, c *bench.Client, repoHref string) string {
	t.Helper()
	var repo struct {
		Latest string `json:"latest_version_href"`
	}
	must(t, c.JSON(t.Context(), "GET", repoHref, nil, &repo))
	return repo.Latest
}

// syncedVersions are the collection versions of a repository version, by
// "namespace.name version".
func syncedVersions(t *testing.T, c *bench.Client, version string) map[string]syncedCV {
	t.Helper()
	var list struct {
		Count   int        `json:"count"`
		Results []syncedCV `json:"results"`
	}
	must(t, c.JSON(t.Context(), "GET", "/pulp/api/v3/content/ansible/collection_versions/?limit=100&repository_version="+version, nil, &list))
	if list.Count != len(list.Results) {
		t.Fatalf("%s holds %d collection versions, more than a page", version, list.Count)
	}
	out := map[string]syncedCV{}
	for _, cv := range list.Results {
		out[cv.Namespace+"."+cv.Name+" "+cv.Version] = cv
	}
	return out
}

// downloadSum is the sha256 of what url serves, following redirects.
func downloadSum(t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("admin", adminPassword)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	h := sha256.New()
	if _, err := io.Copy(h, resp.Body); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// must fails the test with err, if any.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
