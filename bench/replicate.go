package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"pith/bench/load"
	"pith/bench/rpmgen"
	"pith/content/rpm/repodata"
)

// ReplicateConfig is the replication study of the replicas issue: one upstream pith
// serving Distributions rpm distributions of Packages packages each (labelled, so that a
// q_select picks them), replicated on_demand by a fresh pith and by each peer (upstream
// Pulp), timed until the task group has ended and every replica serves its repomd.xml
// and one package.
type ReplicateConfig struct {
	Distributions int
	Packages      int   // per distribution
	Payload       int64 // bytes of file content per package
	Dir           string
	Password      string        // of the pith installations it starts
	Workers       int           // task workers of the downstream pith (0: pith's default)
	Peers         []Target      // downstream servers besides pith
	Limit         time.Duration // per downstream, replication and serving together
}

// ReplicateRow is one downstream's replication.
type ReplicateRow struct {
	Server string
	// Group is from the replicate call to the end of its task group; Serving to when
	// every replica distribution served its repomd.xml and one package.
	Group, Serving time.Duration
	Tasks          int
	// PeakRSSMiB is the largest single process of the downstream, TotalRSSMiB all its
	// processes together at their peak.
	PeakRSSMiB, TotalRSSMiB float64
	Load1                   float64 // the machine's load average at the end
	Err                     error
}

// ReplicateResult is what the study measured.
type ReplicateResult struct {
	Distributions, Packages int
	Setup                   time.Duration // generating the packages and loading the upstream
	Rows                    []ReplicateRow
}

// replicaSource is one upstream distribution and the package a replica must serve.
type replicaSource struct {
	name    string // of the distribution, its repository and remote; also its base path
	pkgPath string // relative to the base path
	pkgSum  string
}

// Replicate runs the study.
func Replicate(ctx context.Context, cfg ReplicateConfig) (ReplicateResult, error) {
	res := ReplicateResult{Distributions: cfg.Distributions, Packages: cfg.Packages}
	t0 := time.Now()
	stamp := strings.ReplaceAll(time.Now().Format("150405.000"), ".", "")
	label := "rep" + stamp
	src, err := writeReplicaRepos(filepath.Join(cfg.Dir, "repos"), label, cfg.Distributions, cfg.Packages, cfg.Payload)
	if err != nil {
		return res, err
	}
	files, err := ServeDir(filepath.Join(cfg.Dir, "repos"))
	if err != nil {
		return res, err
	}
	defer files.Close()
	upc, err := StartCluster(ctx, ClusterConfig{Dir: filepath.Join(cfg.Dir, "upstream"), Fresh: true, Password: cfg.Password})
	if err != nil {
		return res, err
	}
	defer upc.Stop()
	up := upc.Target()
	if err := loadReplicaUpstream(ctx, up, files.URL, label, src); err != nil {
		return res, fmt.Errorf("upstream pith: %w", err)
	}
	res.Setup = time.Since(t0)

	q := `pulp_label_select="pith_bench=` + label + `"`
	down, err := StartCluster(ctx, ClusterConfig{Dir: filepath.Join(cfg.Dir, "downstream"), Fresh: true, Password: cfg.Password, Workers: cfg.Workers})
	if err != nil {
		return res, err
	}
	row := replicateInto(ctx, down.Target(), up, label, q, src, cfg.Limit)
	down.Stop()
	res.Rows = append(res.Rows, row)
	if row.Err != nil {
		return res, fmt.Errorf("pith: %w", row.Err)
	}
	for _, p := range cfg.Peers {
		row := replicateInto(ctx, p, up, label, q, src, cfg.Limit)
		res.Rows = append(res.Rows, row)
		if err := removeReplicas(ctx, p, label); err != nil && row.Err == nil {
			row.Err = fmt.Errorf("removing the replicas: %w", err)
		}
		if row.Err != nil {
			return res, fmt.Errorf("%s: %w", p.Name, row.Err)
		}
	}
	return res, nil
}

// writeReplicaRepos writes packages+dists-1 packages as .rpm files once under
// dir/Packages, and for distribution i the repodata of packages i … i+packages-1 under
// dir/<label>-<i>/ (neighbours share all but one package), whose Packages is a link to
// the shared files.
func writeReplicaRepos(dir, label string, dists, packages int, payload int64) ([]replicaSource, error) {
	total := packages + dists - 1
	all := make([]*repodata.Package, total)
	next := YumPackages(total)
	for i := range all {
		all[i] = next(i)
	}
	written, err := rpmgen.WriteDir(dir, func(i int) *repodata.Package { return all[i] }, total, payload, runtime.NumCPU())
	if err != nil {
		return nil, err
	}
	src := make([]replicaSource, dists)
	for d := range src {
		name := fmt.Sprintf("%s-%03d", label, d)
		repo := filepath.Join(dir, name)
		if err := os.MkdirAll(repo, 0o755); err != nil {
			return nil, err
		}
		if err := os.Symlink("../Packages", filepath.Join(repo, "Packages")); err != nil {
			return nil, err
		}
		err := WriteRepodata(repo, packages, func() func(int) *repodata.Package {
			return func(j int) *repodata.Package {
				p := *all[d+j]
				p.PkgID, p.SizePackage = written[d+j].SHA256, written[d+j].Size
				return &p
			}
		})
		if err != nil {
			return nil, err
		}
		src[d] = replicaSource{name: name, pkgPath: PackageURLs("", []string{all[d].LocationHref})[0], pkgSum: written[d].SHA256}
	}
	return src, nil
}

// loadReplicaUpstream makes on up, for each source, a remote (immediate), an
// autopublishing repository synced from files, and a distribution labelled
// pith_bench=label, all named after the source; four at a time.
func loadReplicaUpstream(ctx context.Context, up Target, files, label string, src []replicaSource) error {
	c := NewClient(up)
	return forEach(ctx, len(src), 4, func(i int) error {
		s := src[i]
		var remote, repo struct {
			Href string `json:"pulp_href"`
		}
		if err := c.JSON(ctx, "POST", "/pulp/api/v3/remotes/rpm/rpm/", map[string]any{"name": s.name, "url": files + s.name + "/", "policy": "immediate"}, &remote); err != nil {
			return err
		}
		if err := c.JSON(ctx, "POST", "/pulp/api/v3/repositories/rpm/rpm/", map[string]any{"name": s.name, "remote": remote.Href, "autopublish": true}, &repo); err != nil {
			return err
		}
		if err := c.Call(ctx, "POST", repo.Href+"sync/", map[string]any{}); err != nil {
			return err
		}
		return c.Call(ctx, "POST", "/pulp/api/v3/distributions/rpm/rpm/", map[string]any{"name": s.name, "base_path": s.name,
			"repository": repo.Href, "pulp_labels": map[string]string{"pith_bench": label}})
	})
}

// forEach runs f(0) … f(n-1) on up to parallel goroutines and returns the first error;
// after one, no new call starts.
func forEach(ctx context.Context, n, parallel int, f func(i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for i := range jobs {
				if err := f(i); err != nil {
					cancel(err)
				}
			}
		})
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		select {
		case jobs <- i:
		case <-ctx.Done():
		}
	}
	close(jobs)
	wg.Wait()
	return context.Cause(ctx)
}

// ReplicateFrom makes on down an upstream Pulp named name for up (its distributions
// that q selects; remotes on_demand; nothing deleted) and runs its replicate, returning
// when the task group has ended and how many tasks it had.
func ReplicateFrom(ctx context.Context, down, up Target, name, q string) (tasks int, err error) {
	c := NewClient(down)
	in := map[string]any{"name": name, "base_url": up.URL, "api_root": "/pulp/", "username": up.User, "password": up.Password,
		"policy": "nodelete", "remote_policy": "on_demand"}
	if q != "" {
		in["q_select"] = q
	}
	if err := c.JSON(ctx, "POST", "/pulp/api/v3/upstream-pulps/", in, nil); err != nil {
		return 0, err
	}
	var list struct {
		Results []struct {
			Href string `json:"pulp_href"`
		} `json:"results"`
	}
	if err := c.JSON(ctx, "GET", "/pulp/api/v3/upstream-pulps/?name="+url.QueryEscape(name), nil, &list); err != nil {
		return 0, err
	}
	if len(list.Results) != 1 {
		return 0, fmt.Errorf("upstream pulp %s: %d found", name, len(list.Results))
	}
	var group struct {
		Group string `json:"task_group"`
	}
	if err := c.JSON(ctx, "POST", list.Results[0].Href+"replicate/", map[string]any{}, &group); err != nil {
		return 0, err
	}
	// Polled every second, as pulp-glue does: a task group's answer lists every task,
	// and polling it faster would load the server being measured.
	if err := c.WaitGroup(ctx, group.Group, time.Second); err != nil {
		c.CancelGroup(group.Group)
		return 0, err
	}
	var g struct {
		Tasks []struct{} `json:"tasks"`
	}
	err = c.JSON(ctx, "GET", group.Group, nil, &g)
	return len(g.Tasks), err
}

// replicateInto replicates up's distributions into down and waits until each replica
// serves its repomd.xml and package.
func replicateInto(ctx context.Context, down, up Target, label, q string, src []replicaSource, limit time.Duration) (row ReplicateRow) {
	row.Server = down.Name
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	s := load.StartSampler(250*time.Millisecond, down.Procs)
	t0 := time.Now()
	row.Tasks, row.Err = ReplicateFrom(ctx, down, up, label, q)
	row.Group = time.Since(t0)
	if row.Err == nil {
		row.Err = replicasServe(ctx, down.ContentOrigin()+"/pulp/content/", src)
		row.Serving = time.Since(t0)
	}
	u := s.Stop()
	row.PeakRSSMiB, row.TotalRSSMiB, row.Load1 = u.MaxProcRSSMiB, u.PeakRSSMiB, loadAverage()
	return row
}

// replicasServe waits until every source's replica under content serves its repomd.xml
// and its package with the right checksum, checking eight at a time and each again
// every 200 ms until it does or ctx ends.
func replicasServe(ctx context.Context, content string, src []replicaSource) error {
	client := &http.Client{Timeout: time.Minute}
	defer client.CloseIdleConnections()
	get := func(u string) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		h := sha256.New()
		if _, err := io.Copy(h, resp.Body); err != nil {
			return "", err
		}
		if resp.StatusCode != 200 {
			return "", fmt.Errorf("GET %s: %s", u, resp.Status)
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	return forEach(ctx, len(src), 8, func(i int) error {
		base := content + src[i].name + "/"
		for {
			_, err := get(base + "repodata/repomd.xml")
			if err == nil {
				var sum string
				if sum, err = get(base + src[i].pkgPath); err == nil && sum != src[i].pkgSum {
					err = fmt.Errorf("GET %s%s: sha256 %s, want %s", base, src[i].pkgPath, sum, src[i].pkgSum)
				}
			}
			if err == nil {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s does not serve: %w", base, err)
			case <-time.After(200 * time.Millisecond):
			}
		}
	})
}

// removeReplicas deletes from t what a replication named label made: its rpm
// distributions, repositories and remotes, and the upstream Pulp itself (the peer is
// shared; its orphaned content is left to its own cleanup).
func removeReplicas(ctx context.Context, t Target, label string) error {
	c := NewClient(t)
	for _, list := range []string{"/pulp/api/v3/distributions/rpm/rpm/", "/pulp/api/v3/repositories/rpm/rpm/", "/pulp/api/v3/remotes/rpm/rpm/", "/pulp/api/v3/upstream-pulps/"} {
		var page struct {
			Results []struct {
				Href string `json:"pulp_href"`
				Name string `json:"name"`
			} `json:"results"`
		}
		if err := c.JSON(ctx, "GET", list+"?limit=1000&name__startswith="+url.QueryEscape(label), nil, &page); err != nil {
			return err
		}
		var hrefs []string
		for _, r := range page.Results {
			// Checked here too: a server that ignored the filter must lose nothing else.
			if strings.HasPrefix(r.Name, label) {
				hrefs = append(hrefs, r.Href)
			}
		}
		err := forEach(ctx, len(hrefs), 4, func(i int) error {
			return c.Call(ctx, "DELETE", hrefs[i], nil)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ReplicateMarkdown renders a result.
func ReplicateMarkdown(w io.Writer, r ReplicateResult) {
	fmt.Fprintf(w, "\n%d rpm distributions of %d packages each (neighbours share all but one), replicated with remote_policy on_demand; "+
		"upstream generated and loaded in %s.\n", r.Distributions, r.Packages, secs(r.Setup))
	fmt.Fprintf(w, "\n| downstream | task group ended | every replica serving | tasks | peak RSS, largest process | peak RSS, all processes | load average (1 min) at the end |\n")
	fmt.Fprintf(w, "| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, row := range r.Rows {
		fmt.Fprintf(w, "| %s | %s | %s | %d | %.0f MiB | %.0f MiB | %.2f |\n", row.Server, secs(row.Group), secs(row.Serving), row.Tasks,
			row.PeakRSSMiB, row.TotalRSSMiB, row.Load1)
	}
	for _, b := range r.Rows[min(1, len(r.Rows)):] {
		if a := r.Rows[0]; a.Serving > 0 && b.Serving > 0 {
			fmt.Fprintf(w, "| %s ÷ %s | %.1f× | %.1f× | | | | |\n", b.Server, a.Server, ratio(b.Group, a.Group), ratio(b.Serving, a.Serving))
		}
	}
	for _, row := range r.Rows {
		if row.Err != nil {
			fmt.Fprintf(w, "\n%s: %v\n", row.Server, row.Err)
		}
	}
}
