package e2e

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pith/bench"
)

// Replication with upstream Pulp, both ways, for file and rpm: a pith replicates the
// distributions of Pulp that carry the test's label (q_select), and Pulp replicates a
// pith's (its policy "nodelete", since Pulp's database is shared); each replica serves
// the upstream's files byte for byte. pith also replicates Pulp's ansible distribution
// (Pulp has no ansible replicator), from which ansible-galaxy then installs.
func TestReplicateWithPulp(t *testing.T) {
	p := needPulpPeer(t)
	fx := fixtures(t)
	ctx := t.Context()
	label := p.name("replica")
	files := manifestEntries(t, filepath.Join(sharedData(), "file-katello-puppet", "PULP_MANIFEST"))
	if len(files) == 0 {
		t.Fatal("no files in the fixture manifest")
	}
	const rpmFile = "Packages/k/kangaroo-0.3-1.noarch.rpm"

	// created finds the object named name in a Pulp list (creates answer with a task).
	created := func(t *testing.T, c *bench.Client, list, name string) entity {
		t.Helper()
		var page struct {
			Results []entity `json:"results"`
		}
		must(t, c.JSON(ctx, "GET", list+"?name="+url.QueryEscape(name), nil, &page))
		if len(page.Results) != 1 {
			t.Fatalf("%s?name=%s: %d results", list, name, len(page.Results))
		}
		return page.Results[0]
	}
	// serve makes, on c, a synced file and rpm repository with their distributions
	// named file-<n> and rpm-<n> under base paths of the same names, labelled.
	serve := func(t *testing.T, c *bench.Client, n string, cleanup func(list, name string)) {
		for _, k := range []struct{ typ, segment, url, policy string }{
			{"file", "file/file", fx + "/file-katello-puppet/PULP_MANIFEST", "immediate"},
			{"rpm", "rpm/rpm", fx + "/yum-katello/zoo/", "on_demand"},
		} {
			name := k.typ + "-" + n
			if cleanup != nil {
				cleanup("/pulp/api/v3/remotes/"+k.segment+"/", name)
				cleanup("/pulp/api/v3/repositories/"+k.segment+"/", name)
				cleanup("/pulp/api/v3/distributions/"+k.segment+"/", name)
			}
			var remote, repo entity
			must(t, c.JSON(ctx, "POST", "/pulp/api/v3/remotes/"+k.segment+"/", map[string]any{"name": name, "url": k.url, "policy": k.policy}, &remote))
			must(t, c.JSON(ctx, "POST", "/pulp/api/v3/repositories/"+k.segment+"/", map[string]any{"name": name, "remote": remote.str("pulp_href"), "autopublish": true}, &repo))
			must(t, c.Call(ctx, "POST", repo.str("pulp_href")+"sync/", map[string]any{}))
			must(t, c.Call(ctx, "POST", "/pulp/api/v3/distributions/"+k.segment+"/", map[string]any{"name": name, "base_path": name,
				"repository": repo.str("pulp_href"), "pulp_labels": map[string]string{"pith_e2e": label}}))
		}
	}
	// same checks that both content origins serve the same bytes under each base path.
	same := func(t *testing.T, up, down func(n string) string, n string) {
		t.Helper()
		check := func(base, rel string) {
			code, a := get(t, up(base)+rel)
			code2, b := get(t, down(base)+rel)
			if code != 200 || code2 != 200 || string(a) != string(b) {
				t.Errorf("%s%s: upstream %d, replica %d, same bytes %v", up(base), rel, code, code2, string(a) == string(b))
			}
		}
		for f := range files {
			check("file-"+n, f)
		}
		check("rpm-"+n, rpmFile)
		check("rpm-"+n, "repodata/repomd.xml")
	}
	content := func(origin string) func(string) string {
		return func(base string) string { return origin + "/pulp/content/" + base + "/" }
	}
	var pulpContent string
	{
		var dist entity
		n := label + "-probe"
		p.deleteAtEnd(t, "/pulp/api/v3/distributions/file/file/", n)
		must(t, p.Call(ctx, "POST", "/pulp/api/v3/distributions/file/file/", map[string]any{"name": n, "base_path": n}))
		dist = created(t, p.Client, "/pulp/api/v3/distributions/file/file/", n)
		pulpContent = strings.TrimSuffix(dist.str("base_url"), "/pulp/content/"+n+"/")
	}

	t.Run("pith from Pulp", func(t *testing.T) {
		n := label + "-up"
		serve(t, p.Client, n, func(list, name string) { p.deleteAtEnd(t, list, name) })
		// ansible: a Galaxy distribution of cisco.iosxr and its two dependencies, labelled.
		an := "ansible-" + n
		p.deleteAtEnd(t, "/pulp/api/v3/repositories/ansible/ansible/", an)
		p.deleteAtEnd(t, "/pulp/api/v3/distributions/ansible/ansible/", an)
		var colls []string
		for _, f := range []string{"ansible-utils-2.7.0.tar.gz", "ansible-netcommon-4.1.0.tar.gz", "cisco-iosxr-4.0.2.tar.gz"} {
			colls = append(colls, collectionFile(f))
		}
		if err := bench.GalaxyDistribution(ctx, p.target, an, colls); err != nil {
			t.Fatalf("upstream Pulp: %v", err)
		}
		must(t, p.Call(ctx, "PATCH", created(t, p.Client, "/pulp/api/v3/distributions/ansible/ansible/", an).str("pulp_href"),
			map[string]any{"pulp_labels": map[string]string{"pith_e2e": label}}))
		s := startPith(t, "")
		c := bench.NewClient(bench.Target{URL: s.url, User: "admin", Password: adminPassword})
		var up entity
		must(t, c.JSON(ctx, "POST", "/pulp/api/v3/upstream-pulps/", map[string]any{"name": "pulp", "base_url": p.target.URL, "api_root": "/pulp/",
			"username": p.target.User, "password": p.target.Password, "q_select": `pulp_label_select="pith_e2e=` + label + `"`}, &up))
		var group struct {
			Group string `json:"task_group"`
		}
		must(t, c.JSON(ctx, "POST", created(t, c, "/pulp/api/v3/upstream-pulps/", "pulp").str("pulp_href")+"replicate/", map[string]any{}, &group))
		waitGroup(t, c, group.Group)
		same(t, content(pulpContent), content(s.content), n)
		g := newGalaxyClient(t, s, pithGalaxy(s, an))
		out := g.Install("cisco.iosxr")
		for _, want := range [][3]string{{"cisco", "iosxr", "4.0.2"}, {"ansible", "netcommon", "4.1.0"}, {"ansible", "utils", "2.7.0"}} {
			if v, ok := g.Installed(want[0], want[1]); !ok || v != want[2] {
				t.Errorf("%s.%s from pith's replica of Pulp: version %q, installed %v\n%s", want[0], want[1], v, ok, out)
			}
		}
	})

	t.Run("Pulp from pith", func(t *testing.T) {
		n := label + "-down"
		s := startPith(t, "")
		c := bench.NewClient(bench.Target{URL: s.url, User: "admin", Password: adminPassword})
		serve(t, c, n, nil)
		for _, k := range []string{"file/file", "rpm/rpm"} {
			p.deleteAtEnd(t, "/pulp/api/v3/remotes/"+k+"/", strings.SplitN(k, "/", 2)[0]+"-"+n)
			p.deleteAtEnd(t, "/pulp/api/v3/repositories/"+k+"/", strings.SplitN(k, "/", 2)[0]+"-"+n)
			p.deleteAtEnd(t, "/pulp/api/v3/distributions/"+k+"/", strings.SplitN(k, "/", 2)[0]+"-"+n)
		}
		p.deleteAtEnd(t, "/pulp/api/v3/upstream-pulps/", n)
		must(t, p.JSON(ctx, "POST", "/pulp/api/v3/upstream-pulps/", map[string]any{"name": n, "base_url": s.url, "api_root": "/pulp/",
			"username": "admin", "password": adminPassword, "policy": "nodelete"}, nil))
		var group struct {
			Group string `json:"task_group"`
		}
		must(t, p.JSON(ctx, "POST", created(t, p.Client, "/pulp/api/v3/upstream-pulps/", n).str("pulp_href")+"replicate/", map[string]any{}, &group))
		waitGroup(t, p.Client, group.Group)
		same(t, content(s.content), content(pulpContent), n)
	})
}

// waitGroup waits up to 5 minutes until every task of a task group has ended, and fails
// the test when one did not complete.
func waitGroup(t *testing.T, c *bench.Client, href string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	must(t, c.WaitGroup(ctx, href, time.Second))
}
