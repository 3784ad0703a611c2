package ansible_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"pith/meta"
)

// A whole upstream, paged and unpaginated, on demand and immediate: every version is
// synced, with what the upstream says of it (on demand) or what its artifact says
// (immediate), the docs blob and contents from the upstream in both; immediate stores
// every artifact. A mirror sync drops what the upstream no longer has, an additive one
// keeps it.
func TestSyncWholeUpstream(t *testing.T) {
	for _, tc := range []struct {
		policy      string
		unpaginated bool
	}{{"on_demand", false}, {"on_demand", true}, {"immediate", false}, {"immediate", true}} {
		t.Run(fmt.Sprintf("%s-unpaginated=%v", tc.policy, tc.unpaginated), func(t *testing.T) {
			e := newSyncEnv(t)
			e.g.unpaginated = tc.unpaginated
			var all []string
			for i := range 12 {
				v := e.g.add("acme", fmt.Sprintf("c%02d", i), "1.0.0", nil)
				all = append(all, v.full()+" 1.0.0")
			}
			e.g.add("acme", "c00", "1.1.0-beta.1", map[string]string{"acme.c01": ">=1.0.0"})
			all = append(all, "acme.c00 1.1.0-beta.1")
			remote := e.remote("up", map[string]any{"policy": tc.policy})
			repo := e.repo("r", "")
			e.syncOK(repo, map[string]any{"remote": remote})
			want(t, "synced", e.held(repo), all...)

			cv := e.cv(repo, "acme.c00", "1.1.0-beta.1")
			if cv["dependencies"].(map[string]any)["acme.c01"] != ">=1.0.0" || cv["sha256"] == nil || cv["requires_ansible"] != ">=2.14.0" {
				t.Errorf("collection version: %v", cv)
			}
			wantDescription := map[string]string{"on_demand": "upstream acme.c00", "immediate": "A fixture"}[tc.policy]
			if cv["description"] != wantDescription {
				t.Errorf("description %q, want %q (the %s source)", cv["description"], wantDescription, tc.policy)
			}
			var docs, contents string
			ctx := context.Background()
			e.DB.QueryRow(ctx, `SELECT d.body FROM content_documents d JOIN contents c ON c.id = d.content_id WHERE c.pulp_id = ? AND d.name = 'docs_blob'`,
				cv["id"]).Scan(&docs)
			e.DB.QueryRow(ctx, `SELECT attrs FROM contents WHERE pulp_id = ?`, cv["id"]).Scan(&contents)
			if !strings.Contains(docs, "from upstream acme.c00") || !strings.Contains(contents, "upstream_module") {
				t.Errorf("docs blob %.200s and attrs %.300s: not the upstream's", docs, contents)
			}
			missing := 0
			e.DB.QueryRow(ctx, `SELECT count(*) FROM content_artifacts WHERE artifact_id IS NULL`).Scan(&missing)
			if wantMissing := map[string]int{"on_demand": len(all), "immediate": 0}[tc.policy]; missing != wantMissing {
				t.Errorf("%d files without an artifact, want %d", missing, wantMissing)
			}

			// The upstream drops a collection: mirror drops it, additive keeps it.
			additive := e.repo("additive", "")
			e.syncOK(additive, map[string]any{"remote": remote})
			e.g.mu.Lock()
			e.g.versions = e.g.versions[1:]
			e.g.mu.Unlock()
			e.syncOK(repo, map[string]any{"remote": remote, "mirror": true})
			want(t, "mirrored", e.held(repo), all[1:]...)
			e.syncOK(additive, map[string]any{"remote": remote})
			want(t, "additive", e.held(additive), all...)
		})
	}
}

// On demand, the content app fetches an artifact through the remote (with its token)
// the first time it is asked for, checked against the sha256 the upstream listed.
func TestSyncOnDemandServed(t *testing.T) {
	e := newSyncEnv(t)
	v := e.g.add("acme", "web", "2.0.0", nil)
	remote := e.remote("up", map[string]any{"policy": "on_demand", "token": "s3cret"})
	repo := e.repo("r", "")
	e.syncOK(repo, map[string]any{"remote": remote})
	code, m := e.JSON("POST", "/pulp/api/v3/distributions/ansible/ansible/", map[string]any{"name": "d", "base_path": "d", "repository": repo})
	e.Done("distribution", code, m)
	before := e.g.requested("/download/")
	resp, err := http.Get(e.URL + "/pulp/content/d/" + v.filename())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(body, v.tarball) {
		t.Errorf("served %d bytes, not the artifact's %d", len(body), len(v.tarball))
	}
	if n := e.g.requested("/download/") - before; n != 1 {
		t.Errorf("the artifact was fetched %d times, want once", n)
	}
	// The content app stores the artifact once the client has the whole body: it may
	// land just after the answer.
	var err2 error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err2 = meta.ArtifactBySHA256(context.Background(), e.DB, v.sha256); err2 == nil {
			return
		}
	}
	t.Errorf("the artifact fetched on demand was not stored: %v", err2)
}
