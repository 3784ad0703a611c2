package rpm_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pith/content/rpm"
	"pith/content/rpm/repodata"
	"pith/meta"
	"pith/serve"
	"pith/task"
)

// A published version, served by the content app, is a yum repository: syncing it
// again gives the same units, and repomd.xml lists what was published.
func TestPublishRoundTrip(t *testing.T) {
	for _, policy := range []string{"immediate", "on_demand"} {
		t.Run(policy, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			repo := e.repo("zoo")
			if tk := e.sync(repo, e.remote("zoo", "yum-katello/zoo/", policy), rpm.Additive); tk.State != task.Completed {
				t.Fatalf("sync: %s %s", tk.State, tk.Error)
			}
			v := e.latest(repo)
			tk, err := e.q.Dispatch(ctx, task.Spec{Name: rpm.PublishTask, Args: rpm.PublishArgs{Repository: repo.PulpID, Version: v.Number}})
			if err != nil {
				t.Fatal(err)
			}
			if tk = e.wait(tk); tk.State != task.Completed {
				t.Fatalf("publish: %s %s", tk.State, tk.Error)
			}
			pubs, _, err := meta.ListPublications(ctx, e.db, meta.List{})
			if err != nil || len(pubs) != 1 {
				t.Fatalf("publications: %v %v", pubs, err)
			}
			if _, err := meta.CreateDistribution(ctx, e.db, meta.Distribution{Type: rpm.RepoType, Name: "zoo", BasePath: "zoo", PublicationID: &pubs[0].ID}); err != nil {
				t.Fatal(err)
			}
			if _, err := meta.CreateDistribution(ctx, e.db, meta.Distribution{Type: rpm.RepoType, Name: "zoo-cfg", BasePath: "zoo-cfg",
				PublicationID: &pubs[0].ID, Attrs: []byte(`{"generate_repo_config": true}`)}); err != nil {
				t.Fatal(err)
			}
			content := httptest.NewServer(serve.New(e.db, e.store, serve.Options{Types: e.core.TypeOf}))
			defer content.Close()
			// config.repo, only where generate_repo_config asks for it.
			resp, err := http.Get(content.URL + "/pulp/content/zoo-cfg/config.repo")
			if err != nil {
				t.Fatal(err)
			}
			cfg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(cfg), "[zoo-cfg]") || !strings.Contains(string(cfg), "baseurl="+content.URL+"/pulp/content/zoo-cfg/") ||
				!strings.Contains(string(cfg), "repo_gpgcheck=0") {
				t.Errorf("config.repo: %d\n%s", resp.StatusCode, cfg)
			}
			if resp, err := http.Get(content.URL + "/pulp/content/zoo/config.repo"); err != nil || resp.StatusCode != 404 {
				t.Errorf("config.repo without generate_repo_config: %v %v", resp.StatusCode, err)
			}
			resp, err = http.Get(content.URL + "/pulp/content/zoo/repodata/repomd.xml")
			if err != nil {
				t.Fatal(err)
			}
			md, err := repodata.ParseRepomd(resp.Body, "repomd.xml")
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, typ := range []string{"primary", "filelists", "other", "updateinfo", "group", "modules", "productid"} {
				if md.Record(typ) == nil {
					t.Errorf("repomd.xml lists no %s", typ)
				}
			}
			// productid, a repo metadata file, is published as it was synced.
			if rec := md.Record("productid"); rec != nil {
				want, _ := os.ReadFile(filepath.Join(data, "yum-katello/zoo/repodata/ba82d4c7a7c0b0a6a57506e2775aa0de0362ca6acfe5a5faded8e87599b95232-productid.gz"))
				resp, err := http.Get(content.URL + "/pulp/content/zoo/" + rec.LocationHref)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !bytes.Equal(got, want) || !strings.HasSuffix(rec.LocationHref, "-productid.gz") || rec.Size != int64(len(want)) {
					t.Errorf("productid at %s (%d bytes, record says %d): not upstream's %d bytes", rec.LocationHref, len(got), rec.Size, len(want))
				}
			}
			resp, err = http.Get(content.URL + "/pulp/content/zoo/Packages/w/walrus-5.21-1.noarch.rpm")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if policy == "immediate" && (resp.StatusCode != 200 || len(body) < 1000) {
				t.Errorf("package: %d, %d bytes", resp.StatusCode, len(body))
			}
			// The publication synced as an upstream gives back every unit.
			again := e.repo("again")
			m, err := meta.CreateRemote(ctx, e.db, meta.Remote{Type: rpm.RepoType, Name: "pub", URL: content.URL + "/pulp/content/zoo/", Policy: "on_demand"})
			if err != nil {
				t.Fatal(err)
			}
			if tk := e.sync(again, m, rpm.Additive); tk.State != task.Completed {
				t.Fatalf("sync of the publication: %s %s", tk.State, tk.Error)
			}
			got, want := e.latest(again).Summary.Present, v.Summary.Present
			for typ, n := range want {
				if got[typ] != n {
					t.Errorf("%s: %d after the round trip, want %d", typ, got[typ], n)
				}
			}
			if !strings.Contains(md.Record("primary").LocationHref, "primary.xml.gz") {
				t.Errorf("primary at %s", md.Record("primary").LocationHref)
			}
		})
	}
}
