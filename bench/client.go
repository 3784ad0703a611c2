package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"path"
	"strings"
	"time"
)

// Client speaks the Pulp REST API of one target with basic auth; the studies drive pith
// and upstream Pulp with it.
type Client struct {
	base, user, password string
	http                 *http.Client
}

// NewClient returns a client of the target's API.
func NewClient(t Target) *Client {
	return &Client{base: strings.TrimSuffix(t.URL, "/"), user: t.User, password: t.Password, http: httpClient(t.Roots, 5*time.Minute)}
}

// URL resolves an href: an absolute path, or a full URL as some servers return.
func (c *Client) URL(href string) string {
	if strings.HasPrefix(href, "http://") || strings.HasPrefix(href, "https://") {
		return href
	}
	return c.base + href
}

// Do sends body with content type ctype ("" and nil: no body) and decodes a 2xx JSON
// answer into out (nil: discard); any other answer is an error naming the request.
func (c *Client) Do(ctx context.Context, method, href, ctype string, body io.Reader, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.URL(href), body)
	if err != nil {
		return err
	}
	req.SetBasicAuth(c.user, c.password)
	req.Header.Set("Accept", "application/json")
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, href, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, href, resp.Status, bytes.TrimSpace(b))
	}
	if out != nil && len(bytes.TrimSpace(b)) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: decoding the answer: %w", method, href, err)
		}
	}
	return nil
}

// JSON sends in as JSON (nil: no body) and decodes the answer into out.
func (c *Client) JSON(ctx context.Context, method, href string, in, out any) error {
	if in == nil {
		return c.Do(ctx, method, href, "", nil, out)
	}
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return c.Do(ctx, method, href, "application/json", bytes.NewReader(b), out)
}

// Call sends in as JSON and, when the answer names a task ({"task": href}), waits for it.
func (c *Client) Call(ctx context.Context, method, href string, in any) error {
	var out struct {
		Task string `json:"task"`
	}
	if err := c.JSON(ctx, method, href, in, &out); err != nil {
		return err
	}
	if out.Task == "" {
		return nil
	}
	return c.Wait(ctx, out.Task)
}

// Wait polls a task every 50 ms until it completes (nil), fails or is canceled, or ctx
// ends. Timings taken around it are good to 50 ms.
func (c *Client) Wait(ctx context.Context, task string) error {
	return c.WaitEvery(ctx, task, 50*time.Millisecond)
}

// WaitEvery is Wait polling every interval.
func (c *Client) WaitEvery(ctx context.Context, task string, interval time.Duration) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		var t struct {
			State string          `json:"state"`
			Error json.RawMessage `json:"error"`
		}
		if err := c.Do(ctx, "GET", task, "", nil, &t); err != nil {
			return err
		}
		switch t.State {
		case "completed":
			return nil
		case "failed", "canceled", "canceling":
			return fmt.Errorf("task %s %s: %s", task, t.State, t.Error)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// WaitGroup polls a task group every interval until every task of it has ended; it
// returns an error naming the first task that did not complete. Pulp 3.123 may leave
// all_tasks_dispatched false for good after a replication, so an ended group is also
// one with no task waiting, running or canceling on two polls in a row (a task
// dispatches its successors before it ends).
func (c *Client) WaitGroup(ctx context.Context, href string, interval time.Duration) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	quiet := 0
	for {
		var g struct {
			Dispatched bool `json:"all_tasks_dispatched"`
			Waiting    int  `json:"waiting"`
			Running    int  `json:"running"`
			Canceling  int  `json:"canceling"`
			Tasks      []struct {
				Href  string `json:"pulp_href"`
				Name  string `json:"name"`
				State string `json:"state"`
			} `json:"tasks"`
		}
		if err := c.JSON(ctx, "GET", href, nil, &g); err != nil {
			return err
		}
		if g.Waiting+g.Running+g.Canceling > 0 || len(g.Tasks) == 0 {
			quiet = 0
		} else if quiet++; g.Dispatched || quiet >= 2 {
			for _, t := range g.Tasks {
				if t.State != "completed" {
					var full struct {
						Error json.RawMessage `json:"error"`
					}
					c.JSON(ctx, "GET", t.Href, nil, &full)
					return fmt.Errorf("task group %s: %s %s: %s", href, t.Name, t.State, full.Error)
				}
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("task group %s: %w", href, ctx.Err())
		case <-tick.C:
		}
	}
}

// CancelGroup cancels the tasks of a task group that are still waiting or running, so
// that an abandoned run leaves no work behind on a shared server; best effort, within a
// minute.
func (c *Client) CancelGroup(href string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var g struct {
		Tasks []struct {
			Href  string `json:"pulp_href"`
			State string `json:"state"`
		} `json:"tasks"`
	}
	if c.JSON(ctx, "GET", href, nil, &g) != nil {
		return
	}
	for _, t := range g.Tasks {
		if t.State == "waiting" || t.State == "running" {
			c.JSON(ctx, "PATCH", t.Href, map[string]string{"state": "canceled"}, nil)
		}
	}
}

// Count reads how many units of a content type (rpm.package) the latest version of a
// repository holds, from its content summary.
func (c *Client) Count(ctx context.Context, repoHref, contentType string) (int, error) {
	var repository struct {
		Latest string `json:"latest_version_href"`
	}
	if err := c.JSON(ctx, "GET", repoHref, nil, &repository); err != nil {
		return 0, err
	}
	var version struct {
		Summary struct {
			Present map[string]struct {
				Count int `json:"count"`
			} `json:"present"`
		} `json:"content_summary"`
	}
	if err := c.JSON(ctx, "GET", repository.Latest, nil, &version); err != nil {
		return 0, err
	}
	return version.Summary.Present[contentType].Count, nil
}

// fileUpload is the API's synchronous upload of a file content unit.
const fileUpload = "/pulp/api/v3/content/file/files/upload/"

// fileForm is the multipart body of a fileUpload of data at relativePath.
func fileForm(relativePath string, data []byte) (ctype string, body *bytes.Buffer) {
	body = new(bytes.Buffer)
	w := multipart.NewWriter(body)
	w.WriteField("relative_path", relativePath)
	fw, _ := w.CreateFormFile("file", path.Base(relativePath))
	fw.Write(data)
	w.Close()
	return w.FormDataContentType(), body
}

// Upload stores data as a file content unit at relativePath and returns its href.
func (c *Client) Upload(ctx context.Context, relativePath string, data []byte) (string, error) {
	ctype, body := fileForm(relativePath, data)
	var out struct {
		Href string `json:"pulp_href"`
	}
	err := c.Do(ctx, "POST", fileUpload, ctype, body, &out)
	return out.Href, err
}
