// Package promote reproduces Pulp's "promotion across many repositories" study against
// a running pith: a data set of the study's shape is written straight into pith's
// database, then one new unit is added to growing numbers of random repositories with
// one bulk_modify call per step, timing each step from the POST to its task group's last
// task. It measures; it asserts nothing about timings.
package promote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"pith/bench/plot"
	"pith/meta"
)

// Config is a promotion run.
type Config struct {
	URL, User, Password string // a running pith
	// DB is the database that pith uses (a SQLite file path or a postgres:// URL): the
	// data set is written there directly, since creating 173k versions through the API
	// would take hours.
	DB                     string
	Repos, Versions, Units int   // data set shape; the study's: 27237, 173311, 10000
	Steps                  []int // repositories per promotion step, e.g. 1000, 2000, 5000, 10000
	BatchSize              int   // repositories per task (bulk_modify batch_size); 0 = pith's default
	Seed                   uint64
}

// Full is the study's data set and steps.
func Full() Config {
	return Config{Repos: 27237, Versions: 173311, Units: 10000, Steps: []int{1000, 2000, 5000, 10000}, BatchSize: 500}
}

// Result is what a run measured.
type Result struct {
	Repos, Versions, Units int
	PerRepo                int // units (memberships) per repository
	Load                   time.Duration
	DBBytes                int64
	Memberships            int64
	BytesPerMembership     float64
	Steps                  []Step
}

// Step is one promotion.
type Step struct {
	Repos          int
	Repeat         bool // the first step's size again, after every other step's versions
	Tasks          int
	Wall           time.Duration // POST to the group's last task finished
	VersionsPerSec float64
	TaskP50        time.Duration
	TaskMax        time.Duration
	// Unit is the promoted unit's href; Targets the repositories' hrefs (for checks).
	Unit    string
	Targets []string
}

// Run loads the data set and runs the steps, then the first step's size once more.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Repos <= 0 || cfg.Units <= 0 || len(cfg.Steps) == 0 {
		return Result{}, fmt.Errorf("promote: need repositories, units and steps (got %d, %d, %v)", cfg.Repos, cfg.Units, cfg.Steps)
	}
	for _, n := range cfg.Steps {
		if n < 1 || n > cfg.Repos {
			return Result{}, fmt.Errorf("promote: step of %d repositories, but the data set has %d", n, cfg.Repos)
		}
	}
	res := Result{Repos: cfg.Repos, Versions: cfg.Versions, Units: cfg.Units, PerRepo: perRepo(cfg.Units)}
	start := time.Now()
	ds, err := load(ctx, cfg)
	if err != nil {
		return res, err
	}
	res.Load = time.Since(start)
	res.Versions = int(ds.versions)
	if res.Memberships, err = memberships(ctx, cfg.DB); err != nil {
		return res, err
	}
	if res.DBBytes, err = dbSize(ctx, cfg.DB); err != nil {
		return res, err
	}
	if res.Memberships > 0 {
		res.BytesPerMembership = float64(res.DBBytes) / float64(res.Memberships)
	}
	c := &client{base: strings.TrimSuffix(cfg.URL, "/"), user: cfg.User, password: cfg.Password}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	steps := append(slices.Clone(cfg.Steps), cfg.Steps[0])
	for i, n := range steps {
		unit, err := newUnit(ctx, cfg.DB, ds.runID, i)
		if err != nil {
			return res, err
		}
		targets := make([]string, n)
		for j, k := range rng.Perm(len(ds.repos))[:n] {
			targets[j] = "/pulp/api/v3/repositories/file/file/" + ds.repos[k].pulpID + "/"
		}
		st, err := c.promote(ctx, unit, targets, cfg.BatchSize)
		if err != nil {
			return res, fmt.Errorf("step %d (%d repositories): %w", i+1, n, err)
		}
		st.Repeat = i == len(steps)-1
		res.Steps = append(res.Steps, st)
	}
	return res, nil
}

// newUnit stores the unit a step promotes, in the same way as the generated ones.
func newUnit(ctx context.Context, dsn, run string, step int) (string, error) {
	db, err := meta.Open(ctx, dsn)
	if err != nil {
		return "", err
	}
	defer db.Close()
	p := fmt.Sprintf("promote-%s/promoted-%02d.txt", run, step)
	dg := digestOf(p)
	attrs, _ := json.Marshal(map[string]string{"relative_path": p, "digest": dg})
	c, _, err := meta.PutContent(ctx, db, meta.Content{Type: "file.file", NaturalKey: dg + ":" + p, RepoKey: p, RelativePath: p, Digest: dg, Attrs: attrs},
		[]meta.ContentFile{{RelativePath: p}})
	if err != nil {
		return "", err
	}
	return "/pulp/api/v3/content/file/files/" + c.PulpID + "/", nil
}

type client struct {
	base, user, password string
}

func (c *client) do(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.SetBasicAuth(c.user, c.password)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, b)
	}
	return json.Unmarshal(b, out)
}

type groupView struct {
	AllTasksDispatched bool `json:"all_tasks_dispatched"`
	Waiting, Running   int
	Canceling, Failed  int
	Canceled           int
	Tasks              []struct {
		PulpHref   string  `json:"pulp_href"`
		State      string  `json:"state"`
		StartedAt  *string `json:"started_at"`
		FinishedAt *string `json:"finished_at"`
	} `json:"tasks"`
}

// promote adds unit to the targets with one bulk_modify call and waits for its group.
func (c *client) promote(ctx context.Context, unit string, targets []string, batch int) (Step, error) {
	st := Step{Repos: len(targets), Unit: unit, Targets: targets}
	body := map[string]any{"repositories": targets, "add_content_units": []string{unit}}
	if batch > 0 {
		body["batch_size"] = batch
	}
	start := time.Now()
	var ref struct {
		TaskGroup string `json:"task_group"`
	}
	if err := c.do(ctx, "POST", "/pulp/api/v3/repositories/bulk_modify/", body, &ref); err != nil {
		return st, err
	}
	var g groupView
	for {
		if err := c.do(ctx, "GET", ref.TaskGroup, nil, &g); err != nil {
			return st, err
		}
		if g.AllTasksDispatched && g.Waiting+g.Running+g.Canceling == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	st.Wall = time.Since(start)
	if g.Failed+g.Canceled > 0 {
		var tk struct {
			Error any `json:"error"`
		}
		for _, t := range g.Tasks {
			if t.State != "completed" {
				c.do(ctx, "GET", t.PulpHref, nil, &tk)
				return st, fmt.Errorf("task %s %s: %v", t.PulpHref, t.State, tk.Error)
			}
		}
	}
	st.Tasks = len(g.Tasks)
	st.VersionsPerSec = float64(len(targets)) / st.Wall.Seconds()
	var ds []time.Duration
	for _, t := range g.Tasks {
		if t.StartedAt == nil || t.FinishedAt == nil {
			continue
		}
		a, err1 := time.Parse(time.RFC3339Nano, *t.StartedAt)
		b, err2 := time.Parse(time.RFC3339Nano, *t.FinishedAt)
		if err1 == nil && err2 == nil {
			ds = append(ds, b.Sub(a))
		}
	}
	if len(ds) > 0 {
		slices.Sort(ds)
		st.TaskP50, st.TaskMax = ds[len(ds)/2], ds[len(ds)-1]
	}
	return st, nil
}

// Markdown writes the result as the tables docs/benchmarks.md uses.
func Markdown(w io.Writer, r Result) {
	fmt.Fprintf(w, "Data set: %d repositories, %d versions, %d units, %d units per repository.\n\n", r.Repos, r.Versions, r.Units, r.PerRepo)
	fmt.Fprintf(w, "| load | database | memberships | bytes per membership |\n| --- | --- | --- | --- |\n")
	fmt.Fprintf(w, "| %s | %.1f MiB | %d | %.1f |\n\n", r.Load.Round(time.Second), float64(r.DBBytes)/(1<<20), r.Memberships, r.BytesPerMembership)
	fmt.Fprintf(w, "| repositories | tasks | wall | versions/s | task p50 | task max |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, s := range r.Steps {
		name := fmt.Sprint(s.Repos)
		if s.Repeat {
			name += " (again, at the end)"
		}
		fmt.Fprintf(w, "| %s | %d | %s | %.0f | %s | %s |\n", name, s.Tasks, s.Wall.Round(time.Millisecond), s.VersionsPerSec,
			s.TaskP50.Round(time.Millisecond), s.TaskMax.Round(time.Millisecond))
	}
}

// Plot draws versions per second for each step.
func Plot(path string, r Result) error {
	b := plot.Bars{Title: fmt.Sprintf("Promotion: one unit into N of %d repositories", r.Repos), YLabel: "new versions per second"}
	s := plot.BarSeries{Name: "pith"}
	for _, st := range r.Steps {
		name := fmt.Sprint(st.Repos)
		if st.Repeat {
			name += " again"
		}
		b.Groups = append(b.Groups, name)
		s.Values = append(s.Values, st.VersionsPerSec)
	}
	b.Series = []plot.BarSeries{s}
	return b.WriteFile(path)
}
