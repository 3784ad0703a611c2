package e2e

// The upstream-Pulp harness: tests of interoperation with Pulp itself (a sync from it,
// replication, export/import) run against a real Pulp when one answers and skip
// otherwise, so CI, which runs none, stays green. ../shared/tools/pulp-peer installs one
// (pulpcore 3.123.1, pulp_ansible 0.30.3, pulp_rpm 3.39.4) on 127.0.0.1:24817:
//
//	PITH_PULP_PEER=http://127.0.0.1:24817 go test -run TestAnsibleSyncFromPulp ./e2e/
//
// PITH_PULP_PEER_USER and PITH_PULP_PEER_PASSWORD are its credentials (default admin /
// pulp-peer-admin, pulp-peer's). Its database is shared and long-lived: a test makes its
// objects under names of its own (pulpPeer.name) and deletes them when it ends.

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"pith/bench"
)

// pulpPeer is a running upstream Pulp; its Client speaks the REST API with basic auth
// and waits for tasks.
type pulpPeer struct {
	*bench.Client
	target bench.Target // for the bench package's helpers
}

// needPulpPeer is the upstream Pulp named by PITH_PULP_PEER, or skips the test when the
// variable is unset or that Pulp does not answer its status.
func needPulpPeer(t *testing.T) *pulpPeer {
	t.Helper()
	origin := os.Getenv("PITH_PULP_PEER")
	if origin == "" {
		t.Skip("upstream Pulp is needed: set PITH_PULP_PEER (../shared/tools/pulp-peer runs one at http://127.0.0.1:24817)")
	}
	target := bench.Target{Name: "Pulp", URL: origin, User: envOr("PITH_PULP_PEER_USER", "admin"),
		Password: envOr("PITH_PULP_PEER_PASSWORD", "pulp-peer-admin")}
	p := &pulpPeer{Client: bench.NewClient(target), target: target}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var status struct {
		Versions []struct {
			Component, Version string
		} `json:"versions"`
	}
	if err := p.JSON(ctx, "GET", "/pulp/api/v3/status/", nil, &status); err != nil {
		t.Skipf("upstream Pulp at PITH_PULP_PEER=%s does not answer: %v", origin, err)
	}
	for _, v := range status.Versions {
		if v.Component == "core" || v.Component == "ansible" {
			t.Logf("upstream Pulp at %s: %s %s", origin, v.Component, v.Version)
		}
	}
	return p
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// name is a name no other run uses, for the objects a test makes on the shared Pulp.
func (p *pulpPeer) name(what string) string {
	return fmt.Sprintf("pith-e2e-%s-%d", what, time.Now().UnixNano())
}

// call sends in as JSON and waits for the task the answer names; a failure fails the test.
func (p *pulpPeer) call(t *testing.T, method, href string, in any) {
	t.Helper()
	if err := p.Call(t.Context(), method, href, in); err != nil {
		t.Fatalf("upstream Pulp: %v", err)
	}
}

// deleteAtEnd deletes, when the test ends, the objects named name in the list at
// listHref (/pulp/api/v3/repositories/ansible/ansible/): registered before the object is
// made, it removes whatever a failing test got as far as making. Cleanups run last
// first, so register a repository before the distribution of it.
func (p *pulpPeer) deleteAtEnd(t *testing.T, listHref, name string) {
	t.Cleanup(func() {
		// The test's context has ended by now.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var list struct {
			Results []struct {
				Href string `json:"pulp_href"`
			} `json:"results"`
		}
		if err := p.JSON(ctx, "GET", listHref+"?name="+url.QueryEscape(name), nil, &list); err != nil {
			t.Errorf("upstream Pulp: cleaning up %s: %v", name, err)
			return
		}
		for _, o := range list.Results {
			if err := p.Call(ctx, "DELETE", o.Href, nil); err != nil {
				t.Errorf("upstream Pulp: cleaning up %s: %v", name, err)
			}
		}
	})
}
