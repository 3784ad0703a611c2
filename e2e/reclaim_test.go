package e2e

import (
	"bytes"
	"io"
	"strings"

	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"path/filepath"
	"pith/blob"
	"pith/blob/driver/fs"
	"pith/blob/driver/s3"
	"pith/blob/driver/sqlblob"
	"pith/meta"
	"testing"
)

// `pulp repository reclaim` drops the stored files of a synced repository and the
// content app fetches one again on request; repair of every artifact finds a blob
// overwritten in its storage (on disk, in the database, in S3) and fetches it again
// from the remote.
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

			// The blob overwritten where the installation keeps it (a file, a database row,
			// an S3 object), as a failing disk or a careless operator would.
			corruptBlob(t, s, puppet[name])
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

// corruptBlob replaces a stored blob's bytes with others, under the same name, in the
// storage of an installation, through pith's own blob driver.
func corruptBlob(t *testing.T, s *server, sha string) {
	t.Helper()
	ctx := t.Context()
	var drv blob.Driver
	var err error
	switch {
	case s.storage == "database":
		db, err := meta.Open(ctx, s.database)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		drv, err = sqlblob.New(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
	case strings.HasPrefix(s.storage, "s3://"):
		cfg, err := s3.ParseURL(s.storage)
		if err != nil {
			t.Fatal(err)
		}
		if drv, err = s3.New(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	default:
		if drv, err = fs.New(filepath.Join(s.data, "blobs")); err != nil {
			t.Fatal(err)
		}
	}
	r, err := drv.Open(ctx, sha)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := drv.Delete(ctx, sha); err != nil {
		t.Fatal(err)
	}
	tmp, err := drv.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmp.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := tmp.Commit(ctx, sha); err != nil {
		t.Fatal(err)
	}
}
