package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// `pulp repository reclaim` drops the stored files of a synced repository and the
// content app fetches one again on request; repair of every artifact finds a blob
// overwritten on disk and fetches it again from the remote.
func TestReclaimAndRepair(t *testing.T) {
	fx := fixtures(t)
	puppet := manifestEntries(t, filepath.Join(sharedData(), "file-katello-puppet", "PULP_MANIFEST"))
	const name = "puppetlabs-ntp-4.2.0.tar.gz"
	for inst, start := range installations() {
		t.Run(inst, func(t *testing.T) {
			s := start(t)
			c := newCLI(t, s)
			c.run("file", "remote", "create", "--name", "puppet", "--url", fx+"/file-katello-puppet/PULP_MANIFEST", "--policy", "immediate")
			c.run("file", "repository", "create", "--name", "puppet", "--remote", "puppet")
			c.run("file", "repository", "sync", "--name", "puppet")
			var dist entity
			c.json(&dist, "file", "distribution", "create", "--name", "puppet", "--base-path", "puppet", "--repository", "puppet")
			url := dist.str("base_url") + name
			fetch := func(when string) {
				t.Helper()
				code, body := get(t, url)
				if sum := sha256.Sum256(body); code != 200 || hex.EncodeToString(sum[:]) != puppet[name] {
					t.Fatalf("%s: %d, sha256 %x, want %s", when, code, sum, puppet[name])
				}
			}
			artifacts := func() int {
				var arts []entity
				c.json(&arts, "artifact", "list", "--sha256", puppet[name])
				return len(arts)
			}
			fetch("before reclaim")

			c.run("repository", "reclaim", "--repository", "file:file:puppet")
			if n := artifacts(); n != 0 {
				t.Fatalf("%d artifacts of %s after reclaim", n, name)
			}
			fetch("after reclaim")
			if n := artifacts(); n != 1 {
				t.Fatalf("%d artifacts of %s after the refetch, want 1", n, name)
			}

			// Blobs on disk are the sqlite installation's; the others keep theirs in the
			// database and in S3.
			if inst != "sqlite" {
				return
			}
			sha := puppet[name]
			blob := filepath.Join(s.data, "blobs", "artifact", sha[:2], sha[2:])
			data, err := os.ReadFile(blob)
			if err != nil {
				t.Fatal(err)
			}
			data[len(data)/2] ^= 0xff
			if err := os.WriteFile(blob, data, 0o644); err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest("POST", s.url+"/pulp/api/v3/repair/", bytes.NewReader([]byte(`{"verify_checksums": true}`)))
			req.Header.Set("Content-Type", "application/json")
			req.SetBasicAuth("admin", adminPassword)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var ref struct{ Task string }
			json.NewDecoder(resp.Body).Decode(&ref)
			resp.Body.Close()
			if resp.StatusCode != 202 {
				t.Fatalf("repair: %d", resp.StatusCode)
			}
			var task entity
			c.json(&task, "task", "show", "--href", ref.Task, "--wait")
			done := map[string]any{}
			for _, r := range task["progress_reports"].([]any) {
				r := r.(map[string]any)
				done[r["code"].(string)] = r["done"]
			}
			if task.str("state") != "completed" || done["repair.corrupted"] != float64(1) || done["repair.repaired"] != float64(1) {
				t.Fatalf("repair task: %v", task)
			}
			fetch("after repair")
		})
	}
}
