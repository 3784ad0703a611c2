package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"pith/bench/load"
	"pith/bench/rpmgen"
	"pith/content/rpm/repodata"
)

// YumPackages returns the packages of the generated repository of n packages, in order:
// realistic metadata (dependencies, about 50 files and 10 changelog entries each). Call
// it for i = 0, 1, ... in order: it draws from one random source.
func YumPackages(n int) func(i int) *repodata.Package {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	return func(i int) *repodata.Package {
		name := fmt.Sprintf("pkg%05d", i)
		p := &repodata.Package{Name: name, Epoch: "0", Version: fmt.Sprintf("%d.%d", 1+i%7, i%13), Release: "1.el9", Arch: "x86_64",
			ChecksumType: "sha256", PkgID: fmt.Sprintf("%064x", r.Uint64())[:64], Summary: "Generated package " + name,
			Description: strings.Repeat("A package generated for the sync benchmark, with a description of realistic length. ", 4),
			URL:         "https://example.invalid/" + name, License: "MIT", Vendor: "Pith", Group: "Unspecified", BuildHost: "builder.example.invalid",
			SourceRPM: name + "-1.0-1.el9.src.rpm", TimeFile: 1700000000 + int64(i), TimeBuild: 1700000000, SizePackage: 20000 + int64(r.IntN(200000)),
			SizeInstalled: 60000, SizeArchive: 61000, HeaderStart: 4504, HeaderEnd: 12000}
		// Named by NVRA, as Pulp publishes packages (and as real repositories name them).
		p.LocationHref = "Packages/" + name[:1] + "/" + name + "-" + p.Version + "-" + p.Release + "." + p.Arch + ".rpm"
		p.Provides = []repodata.Dep{{Name: name}, {Name: name, Flags: "EQ", Epoch: "0", Version: p.Version, Release: p.Release},
			{Name: "lib" + name + ".so.1()(64bit)"}}
		for j := 0; j < 10; j++ {
			p.Requires = append(p.Requires, repodata.Dep{Name: fmt.Sprintf("pkg%05d", r.IntN(n)), Flags: "GE", Epoch: "0", Version: "1.0"})
		}
		p.Requires = append(p.Requires, repodata.Dep{Name: "/bin/sh", Pre: true}, repodata.Dep{Name: "libc.so.6(GLIBC_2.34)(64bit)"})
		for j := 0; j < 50; j++ {
			dir := []string{"/usr/bin/", "/usr/lib64/" + name + "/", "/usr/share/doc/" + name + "/", "/etc/" + name + "/"}[j%4]
			p.Files = append(p.Files, repodata.File{Path: fmt.Sprintf("%sfile%02d", dir, j)})
		}
		p.Files = append(p.Files, repodata.File{Type: "dir", Path: "/usr/lib64/" + name})
		for j := 0; j < 10; j++ {
			p.Changelogs = append(p.Changelogs, repodata.Changelog{Author: "Builder <builder@example.invalid> - 1.0-" + fmt.Sprint(j),
				Date: 1600000000 + int64(j)*86400, Text: "- Rebuilt for the benchmark, change " + fmt.Sprint(j)})
		}
		return p
	}
}

// GenerateYum writes the repodata of the yum repository of YumPackages(n) under dir.
// The packages themselves are not written: an on_demand sync never fetches them.
func GenerateYum(dir string, n int) error {
	return WriteRepodata(dir, n, func() func(int) *repodata.Package { return YumPackages(n) })
}

// WriteYumRepo writes the packages of YumPackages(n) as .rpm files with payload bytes of
// file content each, and the repodata that describes them with their real checksums and
// sizes: a repository an immediate sync downloads and dnf installs from.
func WriteYumRepo(dir string, n int, payload int64) ([]rpmgen.Written, error) {
	written, err := rpmgen.WriteDir(dir, YumPackages(n), n, payload, runtime.NumCPU())
	if err != nil {
		return nil, err
	}
	err = WriteRepodata(dir, n, func() func(int) *repodata.Package {
		next := YumPackages(n)
		return func(i int) *repodata.Package {
			p := next(i)
			p.PkgID, p.SizePackage = written[i].SHA256, written[i].Size
			return p
		}
	})
	return written, err
}

// WriteRepodata writes primary, filelists, other (gzip) and repomd.xml under dir/repodata
// for n packages; each file takes the packages from a fresh call of pkgs.
func WriteRepodata(dir string, n int, pkgs func() func(int) *repodata.Package) error {
	if err := os.MkdirAll(filepath.Join(dir, "repodata"), 0o755); err != nil {
		return err
	}
	var records []repodata.Record
	for _, kind := range []repodata.Kind{repodata.Primary, repodata.Filelists, repodata.Other} {
		pkg := pkgs() // the same packages in each file
		tmp := filepath.Join(dir, "repodata", kind.String()+".tmp")
		f, err := os.Create(tmp)
		if err != nil {
			return err
		}
		cw, err := repodata.NewCompressWriter(f, repodata.Gzip, "sha256")
		if err != nil {
			return err
		}
		dw := repodata.NewDocumentWriter(cw, kind, n)
		for i := 0; i < n; i++ {
			if err := dw.WritePackage(pkg(i)); err != nil {
				return err
			}
		}
		if err := dw.Close(); err != nil {
			return err
		}
		if err := cw.Close(); err != nil {
			return err
		}
		f.Close()
		sums := cw.Sums()
		href := "repodata/" + sums.Checksum + "-" + kind.String() + ".xml.gz"
		if err := os.Rename(tmp, filepath.Join(dir, href)); err != nil {
			return err
		}
		records = append(records, sums.Record(kind.String(), href, time.Now().Unix()))
	}
	md := repodata.Repomd{Revision: "1", Records: records}
	return os.WriteFile(filepath.Join(dir, "repodata", "repomd.xml"), md.Bytes(), 0o644)
}

// RpmConfig is the rpm sync-and-publish scenario of the rpm issue: a generated
// repository of Packages synced on demand from a local server by each target, then
// published; with Createrepo, createrepo_c indexes the same packages written as .rpm
// files, for comparison with publishing, and each target then syncs and publishes that
// repository too (repodata written by createrepo_c rather than by pith's writer). Every
// sync's version is checked to hold exactly Packages packages.
type RpmConfig struct {
	Targets    []Target
	Packages   int
	Dir        string // where the generated repository (and the .rpm files) go
	Createrepo bool
}

// RpmRow is what one target did.
type RpmRow struct {
	Target string
	// Repodata says who wrote the upstream's metadata: "pith" (bench's writer) or
	// "createrepo_c".
	Repodata        string
	Sync, Publish   time.Duration
	ResyncUnchanged time.Duration
	PeakRSSMiB      float64 // largest single process of the target
	TotalRSSMiB     float64 // all its processes together, at their peak
	Err             error
}

// RpmResult is what the scenario measured.
type RpmResult struct {
	Packages    int
	Generate    time.Duration
	MetadataMiB float64 // compressed primary + filelists + other
	Rows        []RpmRow
	// Createrepo is createrepo_c over the packages as files (0: not run).
	Createrepo      time.Duration
	CreaterepoRSS   float64
	CreaterepoFiles int64 // bytes of .rpm files it read
}

// Rpm runs the scenario on each target in turn, over the same generated repository.
func Rpm(ctx context.Context, cfg RpmConfig) (RpmResult, error) {
	res := RpmResult{Packages: cfg.Packages}
	t0 := time.Now()
	if err := GenerateYum(cfg.Dir, cfg.Packages); err != nil {
		return res, err
	}
	res.Generate = time.Since(t0)
	ms, _ := filepath.Glob(filepath.Join(cfg.Dir, "repodata", "*.xml.gz"))
	for _, m := range ms {
		if fi, err := os.Stat(m); err == nil {
			res.MetadataMiB += float64(fi.Size()) / (1 << 20)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return res, err
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(cfg.Dir))}
	go srv.Serve(l)
	defer srv.Close()
	upstreams := []struct{ by, url string }{{"pith", "http://" + l.Addr().String() + "/"}}
	if cfg.Createrepo {
		if err := createrepo(ctx, filepath.Join(cfg.Dir, "rpms"), cfg.Packages, &res); err != nil {
			return res, fmt.Errorf("createrepo_c: %w", err)
		}
		upstreams = append(upstreams, struct{ by, url string }{"createrepo_c", "http://" + l.Addr().String() + "/rpms/"})
	}
	for _, up := range upstreams {
		for _, t := range cfg.Targets {
			row := rpmTarget(ctx, t, up.url, cfg.Packages)
			row.Repodata = up.by
			res.Rows = append(res.Rows, row)
			if row.Err != nil {
				return res, fmt.Errorf("%s, repodata by %s: %w", t.Name, up.by, row.Err)
			}
		}
	}
	return res, nil
}

// rpmTarget syncs the repository at url on demand, checks that the version holds the
// packages packages, publishes it, and syncs it again.
func rpmTarget(ctx context.Context, t Target, url string, packages int) (row RpmRow) {
	row.Target = t.Name
	c := NewClient(t)
	stamp := strings.ReplaceAll(time.Now().Format("150405.000"), ".", "-")
	var remote, repo struct {
		Href string `json:"pulp_href"`
	}
	var task struct {
		Task string `json:"task"`
	}
	if row.Err = c.JSON(ctx, "POST", "/pulp/api/v3/remotes/rpm/rpm/", map[string]any{"name": "bench-" + stamp,
		"url": url, "policy": "on_demand"}, &remote); row.Err != nil {
		return row
	}
	if row.Err = c.JSON(ctx, "POST", "/pulp/api/v3/repositories/rpm/rpm/", map[string]any{"name": "bench-" + stamp, "remote": remote.Href}, &repo); row.Err != nil {
		return row
	}
	timed := func(path string, body any) (time.Duration, error) {
		t := time.Now()
		if err := c.JSON(ctx, "POST", path, body, &task); err != nil {
			return 0, err
		}
		err := c.Wait(ctx, task.Task)
		return time.Since(t), err
	}
	s := load.StartSampler(100*time.Millisecond, t.Procs)
	defer func() {
		u := s.Stop()
		row.PeakRSSMiB, row.TotalRSSMiB = u.MaxProcRSSMiB, u.PeakRSSMiB
	}()
	if row.Sync, row.Err = timed(repo.Href+"sync/", map[string]any{}); row.Err != nil {
		return row
	}
	got, err := c.Count(ctx, repo.Href, "rpm.package")
	if err != nil {
		row.Err = err
		return row
	}
	if got != packages {
		row.Err = fmt.Errorf("the synced repository %s holds %d packages, not %d", repo.Href, got, packages)
		return row
	}
	if row.Publish, row.Err = timed("/pulp/api/v3/publications/rpm/rpm/", map[string]any{"repository": repo.Href}); row.Err != nil {
		return row
	}
	row.ResyncUnchanged, row.Err = timed(repo.Href+"sync/", map[string]any{})
	return row
}

// createrepo writes the packages as .rpm files (small payloads; createrepo_c reads the
// headers and checksums the files) and times createrepo_c over them, without the
// sqlite databases that neither pith nor Pulp publish by default.
func createrepo(ctx context.Context, dir string, n int, res *RpmResult) error {
	path, err := exec.LookPath("createrepo_c")
	if err != nil {
		return err
	}
	written, err := rpmgen.WriteDir(dir, YumPackages(n), n, 2000, runtime.NumCPU())
	if err != nil {
		return err
	}
	for _, w := range written {
		res.CreaterepoFiles += w.Size
	}
	cmd := exec.CommandContext(ctx, path, "--no-database", "--workers", fmt.Sprint(runtime.NumCPU()), dir)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	t := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	s := load.StartSampler(50*time.Millisecond, load.Selector{PIDs: []int{cmd.Process.Pid}, Children: true})
	err = cmd.Wait()
	res.Createrepo = time.Since(t)
	res.CreaterepoRSS = s.Stop().MaxProcRSSMiB
	if err != nil {
		return fmt.Errorf("%v: %s", err, out.String())
	}
	return nil
}

// RpmMarkdown renders a result.
func RpmMarkdown(w io.Writer, r RpmResult) {
	fmt.Fprintf(w, "\n%d packages, %.1f MiB of metadata (gz), generated in %s.\n", r.Packages, r.MetadataMiB, secs(r.Generate))
	fmt.Fprintf(w, "\n| server | repodata by | sync on_demand | publish | unchanged re-sync | peak RSS, largest process | peak RSS, all processes |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, row := range r.Rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %.0f MiB | %.0f MiB |\n", row.Target, row.Repodata, secs(row.Sync), secs(row.Publish), secs(row.ResyncUnchanged),
			row.PeakRSSMiB, row.TotalRSSMiB)
	}
	// Each peer (a target not named pith…) against each pith target, on the same repodata.
	for _, b := range r.Rows {
		if strings.HasPrefix(b.Target, "pith") {
			continue
		}
		for _, a := range r.Rows {
			if strings.HasPrefix(a.Target, "pith") && a.Repodata == b.Repodata && a.Sync > 0 && a.Publish > 0 {
				fmt.Fprintf(w, "| %s ÷ %s | %s | %.1f× | %.1f× | %.1f× | | |\n", b.Target, a.Target, a.Repodata, ratio(b.Sync, a.Sync),
					ratio(b.Publish, a.Publish), ratio(b.ResyncUnchanged, a.ResyncUnchanged))
			}
		}
	}
	if r.Createrepo > 0 {
		fmt.Fprintf(w, "\ncreaterepo_c --no-database over the same packages as .rpm files (%.0f MiB): %s, peak RSS %.0f MiB.\n",
			float64(r.CreaterepoFiles)/(1<<20), secs(r.Createrepo), r.CreaterepoRSS)
	}
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return a.Seconds() / b.Seconds()
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
