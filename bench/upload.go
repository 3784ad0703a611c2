package bench

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"math"
	"pith/bench/load"
	"pith/bench/plot"
	"sort"
	"strings"
	"time"
)

// UploadConfig is the upload/download scenario of the FOLIO study: files of each size
// uploaded N times by U concurrent users, then downloaded through the content app.
type UploadConfig struct {
	Target Target
	Sizes  []int64
	N      int
	Users  []int
}

// Row is one line of the result table.
type Row struct {
	Server           string
	Size             int64
	Users            int
	UpAvg, UpP95     time.Duration
	UpMBps           float64
	DownAvg, DownP95 time.Duration
	DownMBps         float64
	PeakRSSMiB       float64
}

// Upload runs the scenario and returns one row per (size, users).
func Upload(ctx context.Context, cfg UploadConfig) ([]Row, error) {
	t := cfg.Target
	c := NewClient(t)
	stamp := time.Now().Format("150405.000")
	var repo struct {
		Href string `json:"pulp_href"`
	}
	if err := c.JSON(ctx, "POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": "bench-upload-" + stamp, "autopublish": true}, &repo); err != nil {
		return nil, err
	}
	var task struct {
		Task string `json:"task"`
	}
	base := "bench-upload-" + strings.ReplaceAll(stamp, ".", "-")
	if err := c.JSON(ctx, "POST", "/pulp/api/v3/distributions/file/file/", map[string]any{"name": base, "base_path": base, "repository": repo.Href}, &task); err != nil {
		return nil, err
	}
	if err := c.Wait(ctx, task.Task); err != nil {
		return nil, err
	}
	var rows []Row
	var s *load.Sampler // the row's; stopped on failure too (Stop may be called twice)
	defer func() {
		if s != nil {
			s.Stop()
		}
	}()
	for _, size := range cfg.Sizes {
		for _, users := range cfg.Users {
			row := Row{Server: t.Name, Size: size, Users: users}
			s = load.StartSampler(100*time.Millisecond, t.Procs)
			names := make([]string, cfg.N)
			hrefs := make([]string, cfg.N)
			up, upWall, err := parallel(cfg.N, users, func(i int) (time.Duration, error) {
				data := make([]byte, size)
				rand.Read(data)
				names[i] = fmt.Sprintf("%d-%d-%d.bin", size, users, i)
				ctype, body := fileForm(names[i], data)
				var out struct {
					Href string `json:"pulp_href"`
				}
				t := time.Now() // the response time only, not making the random file
				err := c.Do(ctx, "POST", fileUpload, ctype, body, &out)
				hrefs[i] = out.Href
				return time.Since(t), err
			})
			if err != nil {
				return rows, err
			}
			if err := c.JSON(ctx, "POST", repo.Href+"modify/", map[string]any{"add_content_units": hrefs}, &task); err != nil {
				return rows, err
			}
			if err := c.Wait(ctx, task.Task); err != nil {
				return rows, err
			}
			down, downWall, err := parallel(cfg.N, users, func(i int) (time.Duration, error) {
				start := time.Now()
				resp, err := c.http.Get(t.ContentOrigin() + "/pulp/content/" + base + "/" + names[i])
				if err != nil {
					return 0, err
				}
				defer resp.Body.Close()
				n, err := io.Copy(io.Discard, resp.Body)
				if err == nil && (resp.StatusCode != 200 || n != size) {
					err = fmt.Errorf("download %s: %s, %d bytes", names[i], resp.Status, n)
				}
				return time.Since(start), err
			})
			if err != nil {
				return rows, err
			}
			total := float64(size) * float64(cfg.N) / (1 << 20)
			row.UpAvg, row.UpP95 = stats(up)
			row.DownAvg, row.DownP95 = stats(down)
			row.UpMBps, row.DownMBps = total/upWall.Seconds(), total/downWall.Seconds()
			row.PeakRSSMiB = s.Stop().MaxProcRSSMiB
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// parallel runs n jobs with the given concurrency and returns the duration each job
// reports (of its request, without its preparation) and the wall time; after a job
// fails no new one starts.
func parallel(n, users int, job func(i int) (time.Duration, error)) ([]time.Duration, time.Duration, error) {
	times := make([]time.Duration, n)
	start := time.Now()
	err := forEach(context.Background(), n, users, func(i int) error {
		d, err := job(i)
		times[i] = d
		return err
	})
	return times, time.Since(start), err
}

func stats(ds []time.Duration) (avg, p95 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return sum / time.Duration(len(s)), s[(len(s)*95+99)/100-1]
}

// Markdown renders rows as a table.
func Markdown(w io.Writer, title string, rows []Row) {
	fmt.Fprintf(w, "\n%s\n\n| server | size | users | upload avg | upload p95 | upload MB/s | download avg | download p95 | download MB/s | peak RSS |\n", title)
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %.0f | %s | %s | %.0f | %.0f MiB |\n", r.Server, human(r.Size), r.Users,
			ms(r.UpAvg), ms(r.UpP95), r.UpMBps, ms(r.DownAvg), ms(r.DownP95), r.DownMBps, r.PeakRSSMiB)
	}
}

// UploadPlot draws the average upload time of each size and user count, per server.
func UploadPlot(path string, rows []Row) error {
	b := plot.Bars{Title: "Upload: average time per file", YLabel: "ms", LogY: true}
	group := map[string]int{}
	series := map[string]int{}
	for _, r := range rows {
		g := fmt.Sprintf("%s x%d", human(r.Size), r.Users)
		if _, ok := group[g]; !ok {
			group[g] = len(b.Groups)
			b.Groups = append(b.Groups, g)
		}
		if _, ok := series[r.Server]; !ok {
			series[r.Server] = len(b.Series)
			b.Series = append(b.Series, plot.BarSeries{Name: r.Server})
		}
	}
	for i := range b.Series {
		b.Series[i].Values = make([]float64, len(b.Groups))
		for j := range b.Series[i].Values {
			b.Series[i].Values[j] = math.NaN()
		}
	}
	for _, r := range rows {
		b.Series[series[r.Server]].Values[group[fmt.Sprintf("%s x%d", human(r.Size), r.Users)]] = float64(r.UpAvg.Microseconds()) / 1000
	}
	return b.WriteFile(path)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func human(n int64) string {
	if n >= 1_000_000 {
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%d KB", n/1000)
}
