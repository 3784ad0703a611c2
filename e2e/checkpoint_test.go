package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Two checkpoint publications made with the pulp CLI, and a checkpoint distribution:
// its base path lists both timestamps, each serves its own publication's file, and a
// time between them redirects to the earlier one.
func TestCheckpointDistribution(t *testing.T) {
	for inst, start := range installations() {
		t.Run(inst, func(t *testing.T) {
			s := start(t)
			c := newCLI(t, s)
			tmp := t.TempDir()
			c.run("file", "repository", "create", "--name", "cp")
			checkpoint := func(data string) string {
				t.Helper()
				p := filepath.Join(tmp, "f")
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
				c.run("file", "content", "upload", "--file", p, "--relative-path", "f", "--repository", "cp")
				var pub entity
				c.json(&pub, "file", "publication", "create", "--repository", "cp", "--checkpoint")
				if pub["checkpoint"] != true {
					t.Fatalf("publication made with --checkpoint: %v", pub)
				}
				at, err := time.Parse(time.RFC3339Nano, pub.str("pulp_created"))
				if err != nil {
					t.Fatal(err)
				}
				return at.UTC().Format("20060102T150405Z")
			}
			ts1 := checkpoint("first\n")
			// Checkpoints are named to the second: the next one two seconds on, so that a
			// second between them names neither.
			first, _ := time.Parse("20060102T150405Z", ts1)
			time.Sleep(time.Until(first.Add(2 * time.Second)))
			ts2 := checkpoint("second\n")
			second, _ := time.Parse("20060102T150405Z", ts2)
			between := second.Add(-time.Second).Format("20060102T150405Z")
			if between <= ts1 {
				t.Fatalf("checkpoints %s and %s have no second between them", ts1, ts2)
			}

			var dist entity
			c.json(&dist, "file", "distribution", "create", "--name", "cp", "--base-path", "cp", "--repository", "cp", "--checkpoint")
			if dist["checkpoint"] != true {
				t.Fatalf("distribution made with --checkpoint: %v", dist)
			}
			base := dist.str("base_url")
			code, body := get(t, base)
			if code != 200 || !strings.Contains(string(body), `href="`+ts1+`/"`) || !strings.Contains(string(body), `href="`+ts2+`/"`) {
				t.Fatalf("GET %s: %d\n%s", base, code, body)
			}
			for ts, want := range map[string]string{ts1: "first\n", ts2: "second\n"} {
				if code, body := get(t, base+ts+"/f"); code != 200 || string(body) != want {
					t.Errorf("GET %s%s/f: %d %q, want %q", base, ts, code, body, want)
				}
			}
			noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := noFollow.Get(base + between + "/f")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if loc := resp.Header.Get("Location"); resp.StatusCode != 301 || !strings.HasSuffix(loc, "/pulp/content/cp/"+ts1+"/f") {
				t.Errorf("GET %s/f: %d to %q, want a 301 to %s/f", between, resp.StatusCode, loc, ts1)
			}
			if code, body := get(t, base+between+"/f"); code != 200 || string(body) != "first\n" {
				t.Errorf("GET %s/f following the redirect: %d %q", between, code, body)
			}
			for _, bad := range []string{"20240230T000000Z", "29990101T000000Z", "latest"} {
				if code, _ := get(t, base+bad+"/f"); code != 404 {
					t.Errorf("GET %s/f: %d, want 404", bad, code)
				}
			}
		})
	}
}
