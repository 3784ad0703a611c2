package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pith/meta"
)

// AuthzConfig is the access-control study: what the permission checks add to the API's
// list endpoints. One data set is made through the API of a pith from before access
// control (Before, which had one administrator and no checks); a copy of its data
// directory is then opened by this pith (which migrates it), where a user who is not an
// administrator is given the viewer role on every repository and task, so that each of
// its lists is narrowed in SQL. The same list requests then go, one at a time, to the
// old pith as its administrator, to the new one as its administrator, and to the new
// one as that viewer, the three taking turns.
type AuthzConfig struct {
	Before   string // the pith executable from before access control
	Repos    int    // file repositories
	Tasks    int    // tasks: each adds one content unit to a repository
	Requests int    // per endpoint and side
	Rounds   int    // the sides take turns this many times per endpoint
	Dir      string
	Password string    // of the administrators
	Log      io.Writer // progress (nil: none)
	// Database: "" runs the new pith on a copy of the old one's SQLite data; a
	// postgres:// URL (an empty database) runs it there, loaded through its own API
	// the same way.
	Database string
}

// AuthzEndpoints are the list requests measured.
var AuthzEndpoints = []string{
	"/pulp/api/v3/repositories/file/file/?limit=100",
	"/pulp/api/v3/repositories/?limit=100",
	"/pulp/api/v3/tasks/?limit=100",
	"/pulp/api/v3/content/file/files/?limit=100",
}

// AuthzSide is one server and caller.
type AuthzSide struct {
	Name   string
	client *Client
}

// AuthzRow is one endpoint's latencies, by side (in AuthzResult.Sides' order).
type AuthzRow struct {
	Endpoint string
	Count    int // the list's count, the same on every side
	P50, P90 []time.Duration
}

// AuthzResult is the study's table.
type AuthzResult struct {
	Cfg   AuthzConfig
	Sides []string
	Rows  []AuthzRow
}

// Authz runs the study on two installations of its own (embedded SQLite and files).
func Authz(ctx context.Context, cfg AuthzConfig) (AuthzResult, error) {
	res := AuthzResult{Cfg: cfg}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	beforeDir, afterDir := filepath.Join(cfg.Dir, "before"), filepath.Join(cfg.Dir, "after")
	old, err := StartCluster(ctx, ClusterConfig{Binary: cfg.Before, Dir: beforeDir, Fresh: true, Password: cfg.Password})
	if err != nil {
		return res, fmt.Errorf("the pith from before: %w", err)
	}
	fmt.Fprintf(cfg.Log, "loading %d repositories and %d tasks through the API of the pith from before\n", cfg.Repos, cfg.Tasks)
	err = loadAuthz(ctx, NewClient(old.Target()), cfg.Repos, cfg.Tasks)
	old.Stop()
	if err != nil {
		return res, err
	}
	if cfg.Database == "" {
		if out, err := exec.CommandContext(ctx, "cp", "-a", beforeDir, afterDir).CombinedOutput(); err != nil {
			return res, fmt.Errorf("copy the data directory: %v: %s", err, out)
		}
	}
	if old, err = StartCluster(ctx, ClusterConfig{Binary: cfg.Before, Dir: beforeDir, Password: cfg.Password}); err != nil {
		return res, err
	}
	defer old.Stop()
	cur, err := StartCluster(ctx, ClusterConfig{Dir: afterDir, Fresh: cfg.Database != "", Database: cfg.Database, Password: cfg.Password})
	if err != nil {
		return res, err
	}
	defer cur.Stop()
	admin := NewClient(cur.Target())
	if cfg.Database != "" {
		fmt.Fprintln(cfg.Log, "loading the same through the API of this pith, on PostgreSQL")
		if err := loadAuthz(ctx, admin, cfg.Repos, cfg.Tasks); err != nil {
			return res, err
		}
	}
	global, err := makeViewer(ctx, admin, cur.Target(), "global-viewer", false)
	if err != nil {
		return res, err
	}
	viewer, err := makeViewer(ctx, admin, cur.Target(), "object-viewer", true)
	if err != nil {
		return res, err
	}
	if cfg.Database != "" {
		// The statistics a running installation's autovacuum keeps: without them
		// PostgreSQL plans the freshly loaded tables as if they were nearly empty.
		if err := analyze(ctx, cfg.Database); err != nil {
			return res, err
		}
	}
	sides := []AuthzSide{{"before access control, admin", NewClient(old.Target())}, {"after, admin", admin},
		{"after, model-level viewer", global}, {"after, per-object viewer", viewer}}
	for _, s := range sides {
		res.Sides = append(res.Sides, s.Name)
	}
	fmt.Fprintf(cfg.Log, "measuring %d endpoints × %d sides × %d requests\n", len(AuthzEndpoints), len(sides), cfg.Requests)
	for _, ep := range AuthzEndpoints {
		row, err := measureList(ctx, ep, sides, cfg.Requests, cfg.Rounds)
		if err != nil {
			return res, err
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// loadAuthz makes repos file repositories and tasks content units, each added to its own
// repository by one modify task, as the administrator.
func loadAuthz(ctx context.Context, c *Client, repos, tasks int) error {
	hrefs := make([]string, repos)
	_, _, err := parallel(repos, 4, func(i int) (time.Duration, error) {
		var r struct {
			Href string `json:"pulp_href"`
		}
		err := c.JSON(ctx, "POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": fmt.Sprintf("repo-%05d", i)}, &r)
		hrefs[i] = r.Href
		return 0, err
	})
	if err != nil {
		return err
	}
	_, _, err = parallel(tasks, 4, func(i int) (time.Duration, error) {
		data := make([]byte, 100)
		rand.Read(data)
		unit, err := c.Upload(ctx, fmt.Sprintf("unit-%05d.txt", i), data)
		if err != nil {
			return 0, err
		}
		return 0, c.Call(ctx, "POST", hrefs[i%repos]+"modify/", map[string]any{"add_content_units": []string{unit}})
	})
	return err
}

// makeViewer creates a user who is no administrator and gives it the viewer roles of
// file repositories and tasks: on every object at once (model-level roles, which leave
// its lists unnarrowed), or on each object, one grant per repository and task, so that
// each of its lists is narrowed in SQL.
func makeViewer(ctx context.Context, admin *Client, t Target, name string, perObject bool) (*Client, error) {
	var u struct {
		Href string `json:"pulp_href"`
	}
	pw := make([]byte, 16)
	rand.Read(pw)
	t.User, t.Password = name, hex.EncodeToString(pw)
	if err := admin.JSON(ctx, "POST", "/pulp/api/v3/users/", map[string]any{"username": t.User, "password": t.Password}, &u); err != nil {
		return nil, err
	}
	var grants [][2]any // role, object (nil: every object)
	for _, l := range []struct{ list, role string }{
		{"/pulp/api/v3/repositories/file/file/", "file.filerepository_viewer"},
		{"/pulp/api/v3/tasks/", "core.task_viewer"},
	} {
		if !perObject {
			grants = append(grants, [2]any{l.role, nil})
			continue
		}
		objs, err := allHrefs(ctx, admin, l.list)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			grants = append(grants, [2]any{l.role, o})
		}
	}
	_, _, err := parallel(len(grants), 4, func(i int) (time.Duration, error) {
		return 0, admin.JSON(ctx, "POST", u.Href+"roles/", map[string]any{"role": grants[i][0], "content_object": grants[i][1]}, nil)
	})
	return NewClient(t), err
}

// allHrefs pages through a list (which may carry filters: "…/?name=x").
func allHrefs(ctx context.Context, c *Client, list string) ([]string, error) {
	var out []string
	sep := "?"
	if strings.Contains(list, "?") {
		sep = "&"
	}
	next := list + sep + "limit=1000&fields=pulp_href"
	for next != "" {
		var page struct {
			Next    *string `json:"next"`
			Results []struct {
				Href string `json:"pulp_href"`
			} `json:"results"`
		}
		if err := c.JSON(ctx, "GET", next, nil, &page); err != nil {
			return nil, err
		}
		for _, r := range page.Results {
			out = append(out, r.Href)
		}
		next = ""
		if page.Next != nil {
			next = *page.Next
		}
	}
	return out, nil
}

// measureList requests ep n times from each side, one request at a time, the sides
// taking turns in rounds (each round starting with the next side), and checks that every
// side's list counts the same objects.
func measureList(ctx context.Context, ep string, sides []AuthzSide, n, rounds int) (AuthzRow, error) {
	row := AuthzRow{Endpoint: ep, Count: -1}
	times := make([][]time.Duration, len(sides))
	per := max(n/rounds, 1)
	for i, s := range sides { // warm up: connections, caches, prepared statements
		for range 5 {
			count, _, err := timedList(ctx, s.client, ep)
			if err != nil {
				return row, fmt.Errorf("%s: %w", s.Name, err)
			}
			if row.Count >= 0 && count != row.Count {
				return row, fmt.Errorf("%s: GET %s counts %d, %s counts %d: the sides do not see the same data", s.Name, ep, count, sides[0].Name, row.Count)
			}
			row.Count = count
		}
		times[i] = make([]time.Duration, 0, per*rounds)
	}
	for round := range rounds {
		for k := range sides {
			i := (round + k) % len(sides)
			for range per {
				_, d, err := timedList(ctx, sides[i].client, ep)
				if err != nil {
					return row, fmt.Errorf("%s: %w", sides[i].Name, err)
				}
				times[i] = append(times[i], d)
			}
		}
	}
	for _, ts := range times {
		slices.Sort(ts)
		row.P50 = append(row.P50, ts[len(ts)/2])
		row.P90 = append(row.P90, ts[len(ts)*9/10])
	}
	return row, nil
}

// timedList requests a list page and returns its count and how long the answer took,
// body read.
func timedList(ctx context.Context, c *Client, ep string) (int, time.Duration, error) {
	var page struct {
		Count int `json:"count"`
	}
	start := time.Now()
	err := c.JSON(ctx, http.MethodGet, ep, nil, &page)
	return page.Count, time.Since(start), err
}

// AuthzMarkdown renders the table: each side's median and p90, how much each new side's
// median is above the old one's, and how much each caller's who is not an administrator
// is above this build's administrator's (what the permission checks alone add).
func AuthzMarkdown(w io.Writer, r AuthzResult) {
	c := r.Cfg
	fmt.Fprintf(w, "\n%d file repositories, %d tasks (each added one content unit to a repository); %d sequential requests per endpoint and side, "+
		"the sides taking turns in %d rounds; median (p90); Δ: over the median before access control.\n\n", c.Repos, c.Tasks, c.Requests, c.Rounds)
	fmt.Fprintf(w, "| endpoint | count | %s |", strings.Join(r.Sides, " | "))
	for _, s := range r.Sides[1:] {
		fmt.Fprintf(w, " Δ median, %s |", s)
	}
	for _, s := range r.Sides[2:] { // the checks alone: over this build's administrator
		fmt.Fprintf(w, " checks: Δ median, %s over %s |", s, r.Sides[1])
	}
	fmt.Fprintf(w, "\n|%s\n", strings.Repeat(" --- |", 3*len(r.Sides)-1))
	for _, row := range r.Rows {
		cells := []string{"`" + strings.TrimPrefix(row.Endpoint, "/pulp/api/v3") + "`", fmt.Sprint(row.Count)}
		for i := range r.Sides {
			cells = append(cells, fmt.Sprintf("%s (%s)", msFine(row.P50[i]), msFine(row.P90[i])))
		}
		for _, p := range row.P50[1:] {
			cells = append(cells, fmt.Sprintf("%+.1f%%", 100*(float64(p)/float64(row.P50[0])-1)))
		}
		for _, p := range row.P50[2:] {
			cells = append(cells, fmt.Sprintf("%+.1f%%", 100*(float64(p)/float64(row.P50[1])-1)))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}

// analyze updates PostgreSQL's statistics of the database at dsn.
func analyze(ctx context.Context, dsn string) error {
	db, err := meta.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec(ctx, "ANALYZE"); err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	return nil
}
