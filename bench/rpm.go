package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"pith/content/rpm/repodata"
)

// GenerateYum writes the repodata of a yum repository of n packages with realistic
// metadata (dependencies, about 50 files and 10 changelog entries each) under dir. The
// packages themselves are not written: an on_demand sync never fetches them.
func GenerateYum(dir string, n int) error {
	if err := os.MkdirAll(filepath.Join(dir, "repodata"), 0o755); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(1, uint64(n)))
	pkg := func(i int) *repodata.Package {
		name := fmt.Sprintf("pkg%05d", i)
		p := &repodata.Package{Name: name, Epoch: "0", Version: fmt.Sprintf("%d.%d", 1+i%7, i%13), Release: "1.el9", Arch: "x86_64",
			ChecksumType: "sha256", PkgID: fmt.Sprintf("%064x", r.Uint64())[:64], Summary: "Generated package " + name,
			Description: strings.Repeat("A package generated for the sync benchmark, with a description of realistic length. ", 4),
			URL:         "https://example.invalid/" + name, License: "MIT", Vendor: "Pith", Group: "Unspecified", BuildHost: "builder.example.invalid",
			SourceRPM: name + "-1.0-1.el9.src.rpm", TimeFile: 1700000000 + int64(i), TimeBuild: 1700000000, SizePackage: 20000 + int64(r.IntN(200000)),
			SizeInstalled: 60000, SizeArchive: 61000, LocationHref: "Packages/" + name[:1] + "/" + name + "-1.0-1.el9.x86_64.rpm",
			HeaderStart: 4504, HeaderEnd: 12000}
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
	var records []repodata.Record
	for _, kind := range []repodata.Kind{repodata.Primary, repodata.Filelists, repodata.Other} {
		r = rand.New(rand.NewPCG(1, uint64(n))) // the same packages in each file
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
// repository of Packages synced on demand from a local server, then published.
type RpmConfig struct {
	URL, User, Password string
	Packages            int
	Dir                 string // where the generated repository goes
	PID                 int    // server process, for peak RSS (0 = not reported)
}

// RpmResult is what the scenario measured.
type RpmResult struct {
	Packages        int
	Generate        time.Duration
	Sync, Publish   time.Duration
	PeakRSSMiB      float64
	MetadataMiB     float64 // compressed primary + filelists + other
	ResyncUnchanged time.Duration
}

// Rpm runs the scenario.
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

	c := newClient(cfg.URL, cfg.User, cfg.Password)
	stamp := strings.ReplaceAll(time.Now().Format("150405.000"), ".", "-")
	var remote, repo struct {
		Href string `json:"pulp_href"`
	}
	var task struct {
		Task string `json:"task"`
	}
	if err := c.json(ctx, "POST", "/pulp/api/v3/remotes/rpm/rpm/", map[string]any{"name": "bench-" + stamp,
		"url": "http://" + l.Addr().String() + "/", "policy": "on_demand"}, &remote); err != nil {
		return res, err
	}
	if err := c.json(ctx, "POST", "/pulp/api/v3/repositories/rpm/rpm/", map[string]any{"name": "bench-" + stamp, "remote": remote.Href}, &repo); err != nil {
		return res, err
	}
	timed := func(path string, body any) (time.Duration, error) {
		t := time.Now()
		if err := c.json(ctx, "POST", path, body, &task); err != nil {
			return 0, err
		}
		err := c.wait(ctx, task.Task)
		return time.Since(t), err
	}
	if res.Sync, err = timed(repo.Href+"sync/", map[string]any{}); err != nil {
		return res, err
	}
	if res.Publish, err = timed("/pulp/api/v3/publications/rpm/rpm/", map[string]any{"repository": repo.Href}); err != nil {
		return res, err
	}
	if res.ResyncUnchanged, err = timed(repo.Href+"sync/", map[string]any{}); err != nil {
		return res, err
	}
	res.PeakRSSMiB = peakRSS(cfg.PID)
	return res, nil
}

// RpmMarkdown renders a result.
func RpmMarkdown(w io.Writer, r RpmResult) {
	fmt.Fprintf(w, "\n| packages | metadata (gz) | sync on_demand | publish | unchanged re-sync | server peak RSS |\n| --- | --- | --- | --- | --- | --- |\n")
	fmt.Fprintf(w, "| %d | %.1f MiB | %s | %s | %s | %.0f MiB |\n", r.Packages, r.MetadataMiB, secs(r.Sync), secs(r.Publish), secs(r.ResyncUnchanged), r.PeakRSSMiB)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
