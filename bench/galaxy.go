package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pith/bench/load"
)

// PublishConfig is scenario (c) of the Ansible study: a collection published to a Galaxy
// distribution the way ansible-galaxy publishes it, timed until its import task has
// finished. Every round publishes into a repository of its own, and the round's
// repository, distribution and the collection are removed after it (orphan cleanup
// without protection), so every round imports the collection anew on every server.
type PublishConfig struct {
	Target   Target
	Artifact string // path of the collection tarball
	Rounds   int
}

// PublishRow is a server's line of the publish table.
type PublishRow struct {
	Server      string
	Artifact    string
	Size        int64
	Rounds      int
	Median, Min time.Duration
	Max         time.Duration
	PeakRSSMiB  float64
}

// Publish runs the scenario on one target.
func Publish(ctx context.Context, cfg PublishConfig, data []byte) (PublishRow, error) {
	c := NewClient(cfg.Target)
	row := PublishRow{Server: cfg.Target.Name, Artifact: filepath.Base(cfg.Artifact), Size: int64(len(data)), Rounds: cfg.Rounds}
	ctype, body := galaxyForm(filepath.Base(cfg.Artifact), data)
	var times []time.Duration
	s := load.StartSampler(100*time.Millisecond, cfg.Target.Procs)
	defer s.Stop()
	for i := range cfg.Rounds {
		stamp := fmt.Sprintf("bench-publish-%s-%d", time.Now().Format("150405"), i)
		var repo, task struct {
			Href string `json:"pulp_href"`
			Task string `json:"task"`
		}
		if err := c.JSON(ctx, "POST", "/pulp/api/v3/repositories/ansible/ansible/", map[string]any{"name": stamp}, &repo); err != nil {
			return row, err
		}
		if err := c.JSON(ctx, "POST", "/pulp/api/v3/distributions/ansible/ansible/", map[string]any{"name": stamp, "base_path": stamp, "repository": repo.Href}, &task); err != nil {
			return row, err
		}
		if err := c.Wait(ctx, task.Task); err != nil {
			return row, err
		}
		var dist struct {
			Results []struct {
				Href string `json:"pulp_href"`
			} `json:"results"`
		}
		if err := c.JSON(ctx, "GET", "/pulp/api/v3/distributions/ansible/ansible/?name="+stamp, nil, &dist); err != nil || len(dist.Results) != 1 {
			return row, fmt.Errorf("distribution %s: %v", stamp, err)
		}
		start := time.Now()
		if err := c.galaxyPublish(ctx, stamp, ctype, body); err != nil {
			return row, err
		}
		times = append(times, time.Since(start))
		if err := c.Call(ctx, "DELETE", dist.Results[0].Href, nil); err != nil {
			return row, err
		}
		if err := c.Call(ctx, "DELETE", repo.Href, nil); err != nil {
			return row, err
		}
		if err := c.Call(ctx, "POST", "/pulp/api/v3/orphans/cleanup/", map[string]any{"orphan_protection_time": 0}); err != nil {
			return row, err
		}
	}
	row.PeakRSSMiB = s.Stop().MaxProcRSSMiB
	slices.Sort(times)
	row.Min, row.Median, row.Max = times[0], times[len(times)/2], times[len(times)-1]
	return row, nil
}

// galaxyPublish publishes a collection (a galaxyForm body) to the Galaxy distribution at
// basePath and waits for its import.
func (c *Client) galaxyPublish(ctx context.Context, basePath, ctype string, body []byte) error {
	var task struct {
		Task string `json:"task"`
	}
	if err := c.Do(ctx, "POST", "/pulp_ansible/galaxy/"+basePath+"/api/v3/artifacts/collections/", ctype, bytes.NewReader(body), &task); err != nil {
		return err
	}
	// Galaxy names the import (…/imports/collections/<task id>/); the task is the same
	// on both APIs, and polled as often as the client can to time it closely.
	return c.WaitEvery(ctx, "/pulp/api/v3/tasks/"+path.Base(strings.TrimSuffix(task.Task, "/"))+"/", 5*time.Millisecond)
}

// GalaxyDistribution makes an ansible repository and a distribution of it at basePath
// on t, and publishes the collection tarballs into it as ansible-galaxy would.
func GalaxyDistribution(ctx context.Context, t Target, basePath string, artifacts []string) error {
	c := NewClient(t)
	var repo, task struct {
		Href string `json:"pulp_href"`
		Task string `json:"task"`
	}
	if err := c.JSON(ctx, "POST", "/pulp/api/v3/repositories/ansible/ansible/", map[string]any{"name": basePath}, &repo); err != nil {
		return err
	}
	if err := c.JSON(ctx, "POST", "/pulp/api/v3/distributions/ansible/ansible/", map[string]any{"name": basePath, "base_path": basePath, "repository": repo.Href}, &task); err != nil {
		return err
	}
	if err := c.Wait(ctx, task.Task); err != nil {
		return err
	}
	for _, a := range artifacts {
		data, err := os.ReadFile(a)
		if err != nil {
			return err
		}
		ctype, body := galaxyForm(filepath.Base(a), data)
		if err := c.galaxyPublish(ctx, basePath, ctype, body); err != nil {
			return fmt.Errorf("publish %s: %w", filepath.Base(a), err)
		}
	}
	return nil
}

// galaxyForm is the body ansible-galaxy's `collection publish` sends: the tarball in a
// base64 "file" part, 76 columns a line, and its sha256.
func galaxyForm(name string, data []byte) (string, []byte) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	sum := sha256.Sum256(data)
	mw.WriteField("sha256", hex.EncodeToString(sum[:]))
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, name))
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Transfer-Encoding", "base64")
	w, _ := mw.CreatePart(h)
	enc := base64.StdEncoding.EncodeToString(data)
	for len(enc) > 76 {
		io.WriteString(w, enc[:76]+"\r\n")
		enc = enc[76:]
	}
	io.WriteString(w, enc)
	mw.Close()
	return mw.FormDataContentType(), b.Bytes()
}

// PublishMarkdown renders the rows as a table.
func PublishMarkdown(w io.Writer, title string, rows []PublishRow) {
	fmt.Fprintf(w, "\n%s\n\n| server | collection | size | rounds | median | min | max | peak RSS |\n", title)
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %s | %s | %.0f MiB |\n", r.Server, r.Artifact, human(r.Size), r.Rounds,
			ms(r.Median), ms(r.Min), ms(r.Max), r.PeakRSSMiB)
	}
	if len(rows) > 1 && rows[1].Median > 0 {
		fmt.Fprintf(w, "\n%s ÷ %s, median: %.1fx\n", rows[1].Server, rows[0].Server, float64(rows[1].Median)/float64(rows[0].Median))
	}
}
