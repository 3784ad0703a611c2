package syncbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// client speaks the Pulp REST API of one target with basic auth.
type client struct {
	base, user, password string
	http                 *http.Client
}

func newClient(base, user, password string) *client {
	return &client{base: strings.TrimSuffix(base, "/"), user: user, password: password,
		http: &http.Client{Timeout: 5 * time.Minute}}
}

// url resolves an href (an absolute path, or a full URL as some servers return).
func (c *client) url(href string) string {
	if strings.HasPrefix(href, "http://") || strings.HasPrefix(href, "https://") {
		return href
	}
	return c.base + href
}

// do sends body as JSON (nil: no body) and decodes a 2xx answer into out (nil: discard).
// It returns the status code.
func (c *client) do(ctx context.Context, method, href string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url(href), rd)
	if err != nil {
		return 0, err
	}
	req.SetBasicAuth(c.user, c.password)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("%s %s: %s: %s", method, href, resp.Status, bytes.TrimSpace(b))
	}
	if out != nil && len(bytes.TrimSpace(b)) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: decoding answer: %w", method, href, err)
		}
	}
	return resp.StatusCode, nil
}

// task is the part of a task resource the benchmark reads.
type task struct {
	State string         `json:"state"`
	Error map[string]any `json:"error"`
}

// call sends a request that may spawn a task ({"task": href}) and waits for that task.
func (c *client) call(ctx context.Context, method, href string, body any) error {
	var out struct {
		Task string `json:"task"`
	}
	if _, err := c.do(ctx, method, href, body, &out); err != nil {
		return err
	}
	if out.Task == "" {
		return nil
	}
	return c.wait(ctx, out.Task)
}

// wait polls a task every 100 ms until it completes (nil) or fails, or is canceled.
func (c *client) wait(ctx context.Context, href string) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		var t task
		if _, err := c.do(ctx, "GET", href, nil, &t); err != nil {
			return err
		}
		switch t.State {
		case "completed":
			return nil
		case "failed", "canceled", "canceling":
			msg := ""
			if t.Error != nil {
				msg = fmt.Sprint(t.Error["description"])
			}
			return fmt.Errorf("task %s %s: %s", href, t.State, msg)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
