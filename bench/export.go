package bench

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"pith/bench/load"
)

// ExportConfig is the export-and-import study of issue 17: a generated repository of
// Packages synced with policy immediate, exported whole by a pulp exporter and
// imported into a new empty repository of the same server, Rounds times.
type ExportConfig struct {
	Type     string // "rpm" (generated .rpm files) or "file" (files and a PULP_MANIFEST)
	Packages int
	Payload  int64  // bytes of file content per package or file
	URL      string // the generated repository, served (ServeExportRepo)
	Rounds   int
	Log      io.Writer
}

// ExportSide is a server the study measures.
type ExportSide struct {
	Target Target
	// Dir is where its exporters write: an allowed export and import path of the server.
	Dir string
	// Restart, when set, restarts the server on the same data and returns it: the study
	// does so before each export and import, so that the peak RSS is the task's own (a
	// Pulp task runs in a process the worker forks for it).
	Restart func(context.Context) (Target, error)
	// Throwaway: the server is removed after the study, so nothing is cleaned up on it.
	Throwaway bool
}

// ExportRow is one round on one server.
type ExportRow struct {
	Target   string
	Packages int
	Round    int
	Sync     time.Duration
	Export   time.Duration
	Files    int   // files the export wrote (tar or chunks, and the table of contents)
	Bytes    int64 // their sizes
	Import   time.Duration
	// Peak RSS during the export and the import: of the task's process (taskRSS), and
	// of all the server's selected processes together.
	ExportRSS, ExportTotalRSS float64
	ImportRSS, ImportTotalRSS float64
	// StartRSS is the largest selected process's RSS at the start of the export.
	StartRSS float64
	// Load is the 1-minute load average at the start of the export and at the end of
	// the import.
	Load [2]float64
}

// exportKind is where a type's remotes, repositories and content are.
type exportKind struct{ remotes, repos, content, summary string }

var exportKinds = map[string]exportKind{
	"rpm":  {"/pulp/api/v3/remotes/rpm/rpm/", "/pulp/api/v3/repositories/rpm/rpm/", "/pulp/api/v3/content/rpm/packages/", "rpm.package"},
	"file": {"/pulp/api/v3/remotes/file/file/", "/pulp/api/v3/repositories/file/file/", "/pulp/api/v3/content/file/files/", "file.file"},
}

// ServeExportRepo writes the repository of the study under dir and serves it on
// loopback; url is what a remote of the type syncs.
func ServeExportRepo(dir, typ string, n int, payload int64) (url string, stop func(), err error) {
	switch typ {
	case "rpm":
		_, err = WriteYumRepo(dir, n, payload)
	case "file":
		err = writeFileRepo(dir, n, payload)
	default:
		err = fmt.Errorf("type %q: want rpm or file", typ)
	}
	if err != nil {
		return "", nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir))}
	go srv.Serve(l)
	url = "http://" + l.Addr().String() + "/"
	if typ == "file" {
		url += "PULP_MANIFEST"
	}
	return url, func() { srv.Close() }, nil
}

// writeFileRepo writes n files of payload random bytes (each distinct) and their
// PULP_MANIFEST under dir.
func writeFileRepo(dir string, n int, payload int64) error {
	if err := os.MkdirAll(filepath.Join(dir, "files"), 0o755); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(2, uint64(n)))
	var manifest strings.Builder
	data := make([]byte, max(payload, 8))
	for i := range n {
		for j := 0; j+8 <= len(data); j += 8 {
			binary.LittleEndian.PutUint64(data[j:], r.Uint64())
		}
		binary.LittleEndian.PutUint64(data, uint64(i)) // distinct even if the source repeats
		rel := fmt.Sprintf("files/f%06d.bin", i)
		if err := os.WriteFile(filepath.Join(dir, rel), data, 0o644); err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&manifest, "%s,%s,%d\n", rel, hex.EncodeToString(sum[:]), len(data))
	}
	return os.WriteFile(filepath.Join(dir, "PULP_MANIFEST"), []byte(manifest.String()), 0o644)
}

// Export runs the study on one server: it syncs, then exports and imports Rounds times,
// and removes what it made on the server at the end (repositories, remote, exporters,
// importers, the export files, and the synced content through an orphan cleanup of
// exactly those units), even when ctx has ended.
func Export(ctx context.Context, side ExportSide, cfg ExportConfig) (rows []ExportRow, err error) {
	kind, ok := exportKinds[cfg.Type]
	if !ok {
		return nil, fmt.Errorf("type %q: want rpm or file", cfg.Type)
	}
	t := side.Target
	c := NewClient(t)
	logf := func(format string, a ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "%s %s: %s\n", time.Now().Format("15:04:05"), t.Name, fmt.Sprintf(format, a...))
		}
	}
	stamp := "bench-export-" + strings.ReplaceAll(time.Now().Format("150405.000"), ".", "-")
	var made []string // hrefs to delete, in order made
	var units []string
	var dirs []string
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Minute)
		defer cancel()
		c := NewClient(t) // the last restart's
		if cerr := exportCleanup(cctx, c, made, units, side.Throwaway, logf); err == nil {
			err = cerr
		}
		for _, d := range dirs {
			os.RemoveAll(d)
		}
	}()
	var remote, repo struct {
		Href string `json:"pulp_href"`
	}
	if err := c.JSON(ctx, "POST", kind.remotes, map[string]any{"name": stamp, "url": cfg.URL, "policy": "immediate"}, &remote); err != nil {
		return nil, err
	}
	made = append(made, remote.Href)
	if err := c.JSON(ctx, "POST", kind.repos, map[string]any{"name": stamp, "remote": remote.Href}, &repo); err != nil {
		return nil, err
	}
	made = append(made, repo.Href)
	if err := waitIdle(ctx, c, logf); err != nil {
		return nil, err
	}
	logf("sync of %d units", cfg.Packages)
	t0 := time.Now()
	if err := c.Call(ctx, "POST", repo.Href+"sync/", map[string]any{}); err != nil {
		return nil, err
	}
	sync := time.Since(t0)
	logf("synced in %s", secs(sync))
	if got, err := c.Count(ctx, repo.Href, kind.summary); err != nil || got != cfg.Packages {
		return nil, fmt.Errorf("the synced repository %s holds %d units, not %d (%v)", repo.Href, got, cfg.Packages, err)
	}
	if !side.Throwaway {
		if units, err = c.contentHrefs(ctx, kind.content, repo.Href); err != nil {
			return nil, err
		}
	}
	restart := func() error {
		if side.Restart == nil {
			return waitIdle(ctx, c, logf)
		}
		var err error
		if t, err = side.Restart(ctx); err != nil {
			return err
		}
		c = NewClient(t)
		return nil
	}
	for round := 1; round <= cfg.Rounds; round++ {
		row := ExportRow{Target: t.Name, Packages: cfg.Packages, Round: round, Sync: sync}
		name := fmt.Sprintf("%s-%d", stamp, round)
		out := filepath.Join(side.Dir, name)
		dirs = append(dirs, out)

		if err := restart(); err != nil {
			return rows, err
		}
		var exporter struct {
			Href string `json:"pulp_href"`
		}
		if err := c.JSON(ctx, "POST", "/pulp/api/v3/exporters/core/pulp/", map[string]any{"name": name, "path": out,
			"repositories": []string{repo.Href}}, &exporter); err != nil {
			return rows, err
		}
		made = append(made, exporter.Href)
		row.Load[0] = loadAverage()
		before := load.StartSampler(time.Hour, t.Procs).Stop()
		row.StartRSS = before.MaxProcRSSMiB
		s := load.StartSampler(100*time.Millisecond, t.Procs)
		t0 := time.Now()
		var task struct {
			Task string `json:"task"`
		}
		err := c.JSON(ctx, "POST", exporter.Href+"exports/", map[string]any{}, &task)
		if err == nil {
			err = c.Wait(ctx, task.Task)
		}
		row.Export = time.Since(t0)
		u := s.Stop()
		if err != nil {
			return rows, fmt.Errorf("export: %w", err)
		}
		row.ExportRSS, row.ExportTotalRSS = taskRSS(u, before), u.PeakRSSMiB
		tar, err := c.exportFiles(ctx, task.Task, &row)
		if err != nil {
			return rows, err
		}
		logf("round %d: exported in %s, %d files, %s", round, secs(row.Export), row.Files, human(row.Bytes))

		if err := restart(); err != nil {
			return rows, err
		}
		var dest, importer struct {
			Href string `json:"pulp_href"`
		}
		if err := c.JSON(ctx, "POST", kind.repos, map[string]any{"name": name}, &dest); err != nil {
			return rows, err
		}
		made = append(made, dest.Href)
		if err := c.JSON(ctx, "POST", "/pulp/api/v3/importers/core/pulp/", map[string]any{"name": name,
			"repo_mapping": map[string]string{stamp: name}}, &importer); err != nil {
			return rows, err
		}
		made = append(made, importer.Href)
		before = load.StartSampler(time.Hour, t.Procs).Stop()
		s = load.StartSampler(100*time.Millisecond, t.Procs)
		t0 = time.Now()
		var group struct {
			Group string `json:"task_group"`
		}
		err = c.JSON(ctx, "POST", importer.Href+"imports/", map[string]any{"path": tar}, &group)
		if err == nil {
			err = c.WaitGroup(ctx, group.Group, 50*time.Millisecond)
		}
		row.Import = time.Since(t0)
		u = s.Stop()
		row.Load[1] = loadAverage()
		if err != nil {
			return rows, fmt.Errorf("import: %w", err)
		}
		row.ImportRSS, row.ImportTotalRSS = taskRSS(u, before), u.PeakRSSMiB
		if got, err := c.Count(ctx, dest.Href, kind.summary); err != nil || got != cfg.Packages {
			return rows, fmt.Errorf("the imported repository %s holds %d units, not %d (%v)", dest.Href, got, cfg.Packages, err)
		}
		logf("round %d: imported in %s", round, secs(row.Import))
		rows = append(rows, row)
		os.RemoveAll(out)
	}
	return rows, nil
}

// taskRSS is the peak RSS of the processes that ran the task in the window u: the
// largest of those that were not running at its start (before), since a Pulp worker
// forks a process for each task; or, with none, the largest process (pith runs its
// tasks in its own).
func taskRSS(u, before load.Usage) float64 {
	old := map[int]bool{}
	for _, p := range before.Procs {
		old[p.PID] = true
	}
	var peak float64
	for _, p := range u.Procs {
		if !old[p.PID] {
			peak = max(peak, p.PeakRSSMiB)
		}
	}
	if peak == 0 {
		return u.MaxProcRSSMiB
	}
	return peak
}

// exportFiles reads the export a finished export task made: it counts its files and
// their bytes into row and returns the tar's path.
func (c *Client) exportFiles(ctx context.Context, task string, row *ExportRow) (string, error) {
	var t struct {
		Created []string `json:"created_resources"`
	}
	if err := c.JSON(ctx, "GET", task, nil, &t); err != nil {
		return "", err
	}
	if len(t.Created) == 0 {
		return "", fmt.Errorf("export task %s created nothing", task)
	}
	var export struct {
		Files map[string]string `json:"output_file_info"`
	}
	if err := c.JSON(ctx, "GET", t.Created[0], nil, &export); err != nil {
		return "", err
	}
	var tar string
	for p := range export.Files {
		fi, err := os.Stat(p)
		if err != nil {
			return "", fmt.Errorf("export %s: %w", t.Created[0], err)
		}
		row.Files++
		row.Bytes += fi.Size()
		if strings.HasSuffix(p, ".tar") {
			tar = p
		}
	}
	if tar == "" {
		return "", fmt.Errorf("export %s wrote no .tar: %v", t.Created[0], export.Files)
	}
	return tar, nil
}

// contentHrefs lists the content units of a repository's latest version.
func (c *Client) contentHrefs(ctx context.Context, contentPath, repoHref string) ([]string, error) {
	var repository struct {
		Latest string `json:"latest_version_href"`
	}
	if err := c.JSON(ctx, "GET", repoHref, nil, &repository); err != nil {
		return nil, err
	}
	return allHrefs(ctx, c, contentPath+"?repository_version="+repository.Latest)
}

// exportCleanup deletes what the study made, newest first, and with units (on a
// server that is kept) the synced content, by an orphan cleanup of those units only.
func exportCleanup(ctx context.Context, c *Client, made, units []string, throwaway bool, logf func(string, ...any)) error {
	if throwaway {
		return nil
	}
	var first error
	for i := len(made) - 1; i >= 0; i-- {
		if err := c.Call(ctx, "DELETE", made[i], nil); err != nil && first == nil {
			first = fmt.Errorf("cleanup: %w", err)
		}
	}
	if len(units) > 0 && first == nil {
		logf("cleanup: orphan cleanup of the %d synced units", len(units))
		if err := c.Call(ctx, "POST", "/pulp/api/v3/orphans/cleanup/", map[string]any{"content_hrefs": units, "orphan_protection_time": 0}); err != nil {
			first = fmt.Errorf("cleanup: %w", err)
		}
	}
	return first
}

// waitIdle waits until the server runs no task (another user's, on a shared peer), so
// that a measurement has the workers to itself.
func waitIdle(ctx context.Context, c *Client, logf func(string, ...any)) error {
	said := false
	for {
		var page struct {
			Count int `json:"count"`
		}
		if err := c.JSON(ctx, "GET", "/pulp/api/v3/tasks/?state__in=waiting,running&limit=1", nil, &page); err != nil {
			return err
		}
		if page.Count == 0 {
			return nil
		}
		if !said {
			logf("waiting: %d tasks running or waiting on the server", page.Count)
			said = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// loadAverage is the machine's 1-minute load average (0 if unreadable).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(b) + " 0")[0], 64)
	return f
}

// ExportMarkdown renders the rows.
func ExportMarkdown(w io.Writer, rows []ExportRow) {
	fmt.Fprintf(w, "\n| server | units | round | sync | export | files | bytes written | export peak RSS, task's process / all | import | import peak RSS, task's process / all | RSS at export start | load average |\n")
	fmt.Fprintf(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %d | %s | %.0f / %.0f MiB | %s | %.0f / %.0f MiB | %.0f MiB | %.2f–%.2f |\n", r.Target, r.Packages, r.Round,
			secs(r.Sync), secs(r.Export), r.Files, human(r.Bytes), r.ExportRSS, r.ExportTotalRSS, secs(r.Import), r.ImportRSS, r.ImportTotalRSS, r.StartRSS, r.Load[0], r.Load[1])
	}
}
