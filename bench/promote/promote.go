// Package promote reproduces Pulp's "promotion across many repositories" study against
// a running pith: a data set of the study's shape is written straight into pith's
// database, then one new unit is added to growing numbers of random repositories, in
// two ways that each step measures: one bulk_modify call (pith's extension), timed from
// the POST to its task group's last task; and, as Pulp's users must, one modify call per
// repository, timed from the first POST to the last task. Peers (upstream Pulp) get the
// second. It measures; it asserts nothing about timings.
package promote

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"pith/bench"
	"pith/bench/plot"
	"pith/meta"
)

// Config is a promotion run.
type Config struct {
	URL, User, Password string // a running pith
	// DB is the database that pith uses (a SQLite file path or a postgres:// URL): the
	// data set is written there directly, since creating 173k versions through the API
	// would take hours.
	DB string
	// Type is what the repositories hold: FileType ("" too) or AnsibleType.
	Type                   string
	Repos, Versions, Units int   // data set shape; the study's: 27237, 173311, 10000
	Steps                  []int // repositories per promotion step, e.g. 1000, 2000, 5000, 10000
	BatchSize              int   // repositories per task (bulk_modify batch_size); 0 = pith's default
	// NoModify leaves out pith's second row, the steps made of one modify per
	// repository.
	NoModify bool
	// Reuse runs the steps on the data set a previous run loaded into DB (kept with
	// --dir) instead of loading one: the shape is read back from the database.
	Reuse bool
	Seed  uint64
	// Peers are upstream Pulp installations measured after pith with the same data set
	// and steps; each needs DB, the postgres:// URL of its (otherwise unused) database.
	Peers []bench.Target
}

// Full is the study's data set and steps.
func Full() Config {
	return Config{Repos: 27237, Versions: 173311, Units: 10000, Steps: []int{1000, 2000, 5000, 10000}, BatchSize: 500}
}

// Result is what a run measured.
type Result struct {
	Type                   string // repositories' type (pulp_type)
	Repos, Versions, Units int
	PerRepo                int // units (memberships) per repository
	Servers                []Server
}

// Server is one server's part of a run: pith with bulk_modify first, pith with a modify
// per repository, then each peer.
type Server struct {
	Name string
	// Peer is upstream Pulp (for the ratios); Bulk a row made with pith's bulk_modify,
	// an API Pulp does not have.
	Peer, Bulk         bool
	Load               time.Duration
	DBBytes            int64 // for a peer, what loading the data set added
	Memberships        int64 // for a peer, the rows the data set added
	BytesPerMembership float64
	Steps              []Step
}

// Step is one promotion.
type Step struct {
	Repos          int
	Repeat         bool // the first step's size again, after every other step's versions
	Tasks          int
	Wall           time.Duration // first request to the step's last task finished
	VersionsPerSec float64
	TaskP50        time.Duration
	TaskMax        time.Duration
	// Unit is the promoted unit's href; Targets the repositories' hrefs (for checks).
	Unit    string
	Targets []string
}

// Run loads the data set into pith and runs the steps, then the first step's size once
// more; then the same on each peer, with the same repositories in each step.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Repos <= 0 || cfg.Units <= 0 || len(cfg.Steps) == 0 {
		return Result{}, fmt.Errorf("promote: need repositories, units and steps (got %d, %d, %v)", cfg.Repos, cfg.Units, cfg.Steps)
	}
	for _, n := range cfg.Steps {
		if n < 1 || n > cfg.Repos {
			return Result{}, fmt.Errorf("promote: step of %d repositories, but the data set has %d", n, cfg.Repos)
		}
	}
	for _, p := range cfg.Peers {
		if !strings.HasPrefix(p.DB, "postgres://") && !strings.HasPrefix(p.DB, "postgresql://") {
			return Result{}, fmt.Errorf("promote: peer %s needs db=postgres://… (its database, which the data set is written to)", p.Name)
		}
	}
	k, err := kindOf(cfg.Type)
	if err != nil {
		return Result{}, err
	}
	res := Result{Type: k.repoType, Repos: cfg.Repos, Versions: cfg.Versions, Units: cfg.Units, PerRepo: perRepo(cfg.Units)}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	steps := append(slices.Clone(cfg.Steps), cfg.Steps[0])
	picks := make([][]int, len(steps))
	for i, n := range steps {
		picks[i] = rng.Perm(cfg.Repos)[:n]
	}

	srv := Server{Name: "pith, bulk_modify", Bulk: true}
	start := time.Now()
	loadOrReuse := load
	if cfg.Reuse {
		loadOrReuse = reuse
	}
	ds, err := loadOrReuse(ctx, cfg)
	if err != nil {
		return res, err
	}
	srv.Load = time.Since(start)
	res.Versions = int(ds.versions)
	members, err := memberships(ctx, cfg.DB)
	if err != nil {
		return res, err
	}
	size, err := dbSize(ctx, cfg.DB)
	if err != nil {
		return res, err
	}
	srv.setSize(size, members)
	c := bench.NewClient(bench.Target{URL: cfg.URL, User: cfg.User, Password: cfg.Password})
	err = runSteps(&srv, k, picks, func(i int) (string, error) { return newUnit(ctx, cfg.DB, k, ds.runID, i) },
		func(k int) string { return ds.repos[k].pulpID },
		func(unit string, targets []string) (Step, error) {
			return bulkModify(ctx, c, unit, targets, cfg.BatchSize)
		})
	res.Servers = append(res.Servers, srv)
	if err != nil {
		return res, err
	}
	if !cfg.NoModify {
		// The same data set and repositories, one modify per repository as on Pulp; new
		// units, so that every modify adds one.
		one := Server{Name: "pith, modify per repository", Load: srv.Load, DBBytes: srv.DBBytes, Memberships: srv.Memberships,
			BytesPerMembership: srv.BytesPerMembership}
		err = runSteps(&one, k, picks, func(i int) (string, error) { return newUnit(ctx, cfg.DB, k, ds.runID, len(picks)+i) },
			func(k int) string { return ds.repos[k].pulpID },
			func(unit string, targets []string) (Step, error) { return modifyEach(ctx, c, unit, targets) })
		res.Servers = append(res.Servers, one)
		if err != nil {
			return res, err
		}
	}

	for _, p := range cfg.Peers {
		srv := Server{Name: p.Name, Peer: true}
		// The peer's database may hold other data: count what the load added.
		size0, mem0, err := pulpDBStats(ctx, p.DB)
		if err != nil {
			return res, fmt.Errorf("%s: %w", p.Name, err)
		}
		start := time.Now()
		repos, err := loadPulp(ctx, p.DB, cfg, k, ds.runID)
		if err != nil {
			return res, fmt.Errorf("%s: %w", p.Name, err)
		}
		srv.Load = time.Since(start)
		size, members, err := pulpDBStats(ctx, p.DB)
		if err != nil {
			return res, fmt.Errorf("%s: %w", p.Name, err)
		}
		srv.setSize(size-size0, members-mem0)
		c := bench.NewClient(p)
		err = runSteps(&srv, k, picks, func(i int) (string, error) { return newPulpUnit(ctx, p.DB, k, ds.runID, i) },
			func(k int) string { return repos[k] },
			func(unit string, targets []string) (Step, error) { return modifyEach(ctx, c, unit, targets) })
		res.Servers = append(res.Servers, srv)
		if err != nil {
			return res, fmt.Errorf("%s: %w", p.Name, err)
		}
	}
	return res, nil
}

func (s *Server) setSize(bytes, memberships int64) {
	s.DBBytes, s.Memberships = bytes, memberships
	if memberships > 0 {
		s.BytesPerMembership = float64(bytes) / float64(memberships)
	}
}

// runSteps promotes a new unit into the picked repositories of each step.
func runSteps(srv *Server, k kind, picks [][]int, unit func(step int) (string, error), id func(pos int) string,
	promote func(unit string, targets []string) (Step, error)) error {
	for i, pick := range picks {
		u, err := unit(i)
		if err != nil {
			return err
		}
		targets := make([]string, len(pick))
		for j, pos := range pick {
			targets[j] = "/pulp/api/v3/repositories/" + k.repoSegment + "/" + id(pos) + "/"
		}
		st, err := promote(u, targets)
		if err != nil {
			return fmt.Errorf("step %d (%d repositories): %w", i+1, len(pick), err)
		}
		st.Repeat = i == len(picks)-1
		srv.Steps = append(srv.Steps, st)
	}
	return nil
}

// newUnit stores the unit a step promotes, in the same way as the generated ones.
func newUnit(ctx context.Context, dsn string, k kind, run string, step int) (string, error) {
	db, err := meta.Open(ctx, dsn)
	if err != nil {
		return "", err
	}
	defer db.Close()
	u := k.unit(run, -1-step)
	err = db.Tx(ctx, func(tx *meta.Tx) error {
		stored, _, err := meta.PutContent(ctx, tx, u.c, []meta.ContentFile{{RelativePath: u.c.RelativePath}})
		if err != nil {
			return err
		}
		u.c = stored
		return meta.PutDocuments(ctx, tx, stored.ID, u.docs)
	})
	if err != nil {
		return "", err
	}
	return "/pulp/api/v3/content/" + k.unitSegment + "/" + u.c.PulpID + "/", nil
}

type groupView struct {
	AllTasksDispatched bool `json:"all_tasks_dispatched"`
	Waiting, Running   int
	Canceling, Failed  int
	Canceled           int
	Tasks              []struct {
		PulpHref   string     `json:"pulp_href"`
		State      string     `json:"state"`
		StartedAt  *time.Time `json:"started_at"`
		FinishedAt *time.Time `json:"finished_at"`
	} `json:"tasks"`
}

// bulkModify adds unit to the targets with one bulk_modify call and waits for its group.
func bulkModify(ctx context.Context, c *bench.Client, unit string, targets []string, batch int) (Step, error) {
	st := Step{Repos: len(targets), Unit: unit, Targets: targets}
	body := map[string]any{"repositories": targets, "add_content_units": []string{unit}}
	if batch > 0 {
		body["batch_size"] = batch
	}
	start := time.Now()
	var ref struct {
		TaskGroup string `json:"task_group"`
	}
	if err := c.JSON(ctx, "POST", "/pulp/api/v3/repositories/bulk_modify/", body, &ref); err != nil {
		return st, err
	}
	var g groupView
	for {
		if err := c.JSON(ctx, "GET", ref.TaskGroup, nil, &g); err != nil {
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
				c.JSON(ctx, "GET", t.PulpHref, nil, &tk)
				return st, fmt.Errorf("task %s %s: %v", t.PulpHref, t.State, tk.Error)
			}
		}
	}
	st.Tasks = len(g.Tasks)
	st.VersionsPerSec = float64(len(targets)) / st.Wall.Seconds()
	var ds []time.Duration
	for _, t := range g.Tasks {
		if t.StartedAt != nil && t.FinishedAt != nil {
			ds = append(ds, t.FinishedAt.Sub(*t.StartedAt))
		}
	}
	st.TaskP50, st.TaskMax = spread(ds)
	return st, nil
}

// spread is the median and the largest of ds (zero when empty).
func spread(ds []time.Duration) (p50, most time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2], ds[len(ds)-1]
}

// Markdown writes the result as the tables docs/benchmarks.md uses.
func Markdown(w io.Writer, r Result) {
	fmt.Fprintf(w, "Data set: %d %s repositories, %d versions, %d units, %d units per repository.\n\n", r.Repos, r.Type, r.Versions, r.Units, r.PerRepo)
	fmt.Fprintf(w, "| server | load | database | memberships | bytes per membership |\n| --- | --- | --- | --- | --- |\n")
	for _, s := range r.Servers {
		if s.Bulk || s.Peer || len(r.Servers) == 1 {
			name := s.Name
			if s.Bulk {
				name = "pith"
			}
			fmt.Fprintf(w, "| %s | %s | %.1f MiB | %d | %.1f |\n", name, s.Load.Round(time.Second), float64(s.DBBytes)/(1<<20), s.Memberships, s.BytesPerMembership)
		}
	}
	fmt.Fprintf(w, "\n| server | repositories | tasks | wall | versions/s | task p50 | task max |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, s := range r.Servers {
		for _, st := range s.Steps {
			fmt.Fprintf(w, "| %s | %s | %d | %s | %.1f | %s | %s |\n", s.Name, stepName(st, " (again, at the end)"), st.Tasks, st.Wall.Round(time.Millisecond),
				st.VersionsPerSec, st.TaskP50.Round(time.Millisecond), st.TaskMax.Round(time.Millisecond))
		}
	}
	var piths, peers []Server
	for _, s := range r.Servers {
		if s.Peer {
			peers = append(peers, s)
		} else {
			piths = append(piths, s)
		}
	}
	if len(r.Servers) < 2 {
		return
	}
	// Ratios: each pith row against each peer. A bulk_modify row compares different
	// work (one call for all, an API Pulp does not have), which its column says.
	fmt.Fprintf(w, "\n| repositories |")
	for _, s := range r.Servers {
		fmt.Fprintf(w, " %s versions/s |", s.Name)
	}
	n := 0
	for _, p := range piths {
		for _, q := range peers {
			label := p.Name + " ÷ " + q.Name
			if p.Bulk {
				label += " (different API: one call)"
			}
			fmt.Fprintf(w, " %s |", label)
			n++
		}
	}
	fmt.Fprintf(w, "\n|%s\n", strings.Repeat(" --- |", 1+len(r.Servers)+n))
	for i, st := range r.Servers[0].Steps {
		fmt.Fprintf(w, "| %s |", stepName(st, " (again)"))
		for _, s := range r.Servers {
			fmt.Fprintf(w, " %s |", cell(s.Steps, i, func(p Step) string { return fmt.Sprintf("%.1f", p.VersionsPerSec) }))
		}
		for _, p := range piths {
			for _, q := range peers {
				fmt.Fprintf(w, " %s |", cell(q.Steps, i, func(qs Step) string {
					return cell(p.Steps, i, func(ps Step) string { return fmt.Sprintf("%.0f×", ps.VersionsPerSec/qs.VersionsPerSec) })
				}))
			}
		}
		fmt.Fprintln(w)
	}
}

func stepName(st Step, again string) string {
	if st.Repeat {
		return fmt.Sprint(st.Repos) + again
	}
	return fmt.Sprint(st.Repos)
}

// cell formats steps[i], or "–" when the server did not get that far.
func cell(steps []Step, i int, f func(Step) string) string {
	if i >= len(steps) || steps[i].VersionsPerSec == 0 {
		return "–"
	}
	return f(steps[i])
}

// Plot draws versions per second for each step, a bar per server, on a log scale when
// there are peers (Pulp's rate is orders of magnitude below pith's).
func Plot(path string, r Result) error {
	b := plot.Bars{Title: fmt.Sprintf("Promotion: one unit into N of %d repositories", r.Repos), YLabel: "new versions per second", LogY: len(r.Servers) > 1}
	if len(r.Servers) == 0 {
		return fmt.Errorf("promote: nothing measured to plot")
	}
	for _, st := range r.Servers[0].Steps {
		b.Groups = append(b.Groups, stepName(st, " again"))
	}
	for _, s := range r.Servers {
		bs := plot.BarSeries{Name: s.Name}
		for i := range b.Groups {
			v := math.NaN()
			if i < len(s.Steps) && s.Steps[i].VersionsPerSec > 0 {
				v = s.Steps[i].VersionsPerSec
			}
			bs.Values = append(bs.Values, v)
		}
		b.Series = append(b.Series, bs)
	}
	return b.WriteFile(path)
}
