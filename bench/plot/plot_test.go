package plot

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// exampleLine is a sync-time chart with two measured series and a dashed ideal.
func exampleLine() Line {
	conc := []float64{1, 2, 4, 8, 16, 32, 64}
	return Line{
		Title:  "Sync time vs download concurrency",
		XLabel: "download concurrency",
		YLabel: "sync time (s)",
		LogX:   true,
		Series: []Series{
			{Name: "pith", X: conc, Y: []float64{412, 215, 118, 66, 41, 33, 31}},
			{Name: "Pulp", X: conc, Y: []float64{655, 390, 260, 210, 195, math.NaN(), 190}},
			{Name: "ideal (pith/N)", X: conc, Y: []float64{412, 206, 103, 51.5, 25.75, 12.875, 6.4375}, Dashed: true},
		},
		YFromZero: true,
	}
}

// exampleThroughput is a req/s chart over a linear x axis with large values.
func exampleThroughput() Line {
	users := []float64{10, 50, 100, 200, 400, 800}
	return Line{
		Title:  "Throughput vs concurrent users",
		XLabel: "concurrent users",
		YLabel: "req/s",
		Series: []Series{
			{Name: "pith", X: users, Y: []float64{1500, 7200, 13800, 21000, 24500, 25100}},
			{Name: "Pulp", X: users, Y: []float64{600, 2100, 2900, 3100, 3050, 2800}},
		},
		YFromZero: true,
	}
}

// exampleBars compares req/s per configuration.
func exampleBars() Bars {
	return Bars{
		Title:  "Metadata requests per second",
		YLabel: "req/s",
		Groups: []string{"repomd.xml cold", "repomd.xml warm", "primary.xml.gz", "RPM download 1 MiB", "search by name"},
		Series: []BarSeries{
			{Name: "pith", Values: []float64{8200, 41000, 12500, 1850, 960}},
			{Name: "Pulp", Values: []float64{950, 2300, 1200, 640, math.NaN()}},
			{Name: "pith (no cache)", Values: []float64{5100, 5300, 4100, 1200, 420}},
		},
	}
}

// decode renders with render and decodes the PNG back.
func decode(t *testing.T, render func(*bytes.Buffer) error) image.Image {
	t.Helper()
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		t.Fatalf("render: %v", err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return img
}

// countColor counts the pixels of img that are exactly col.
func countColor(img image.Image, col color.RGBA) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if color.RGBAModel.Convert(img.At(x, y)).(color.RGBA) == col {
				n++
			}
		}
	}
	return n
}

func checkImage(t *testing.T, img image.Image, w, h, series int) {
	t.Helper()
	if got := img.Bounds().Size(); got != image.Pt(w, h) {
		t.Fatalf("size = %v, want %dx%d", got, w, h)
	}
	if n := countColor(img, white); n < w*h/2 {
		t.Errorf("only %d white pixels; background should be white", n)
	}
	if n := countColor(img, ink); n == 0 {
		t.Errorf("no text/axis pixels")
	}
	for i := 0; i < series; i++ {
		if n := countColor(img, seriesColor(i)); n < 50 {
			t.Errorf("series %d color %v: %d pixels, want >= 50", i, seriesColor(i), n)
		}
	}
}

func TestLinePNG(t *testing.T) {
	for _, l := range []Line{exampleLine(), exampleThroughput()} {
		img := decode(t, func(b *bytes.Buffer) error { return l.PNG(b) })
		checkImage(t, img, DefaultWidth, DefaultHeight, len(l.Series))
	}
	l := exampleThroughput()
	l.Width, l.Height, l.LogY = 640, 400, true
	img := decode(t, func(b *bytes.Buffer) error { return l.PNG(b) })
	checkImage(t, img, 640, 400, len(l.Series))
}

func TestBarsPNG(t *testing.T) {
	b := exampleBars()
	img := decode(t, func(buf *bytes.Buffer) error { return b.PNG(buf) })
	checkImage(t, img, DefaultWidth, DefaultHeight, len(b.Series))

	b.LogY, b.Width, b.Height = true, 700, 420
	img = decode(t, func(buf *bytes.Buffer) error { return b.PNG(buf) })
	checkImage(t, img, 700, 420, len(b.Series))
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "line.png")
	if err := exampleLine().WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	bad := filepath.Join(dir, "bad.png")
	if err := (Bars{}).WriteFile(bad); err == nil {
		t.Fatal("invalid chart: want error")
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("invalid chart left a file behind (stat err %v)", err)
	}
}

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func equalTicks(got, want []float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !near(got[i], want[i]) {
			return false
		}
	}
	return true
}

func TestNiceTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		log    bool
		want   []float64
		labels string
	}{
		{0, 1, false, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, "0 0.2 0.4 0.6 0.8 1"},
		{0, 37, false, []float64{0, 10, 20, 30, 40}, "0 10 20 30 40"},
		{0.001, 0.01, false, []float64{0, 0.002, 0.004, 0.006, 0.008, 0.01}, "0 0.002 0.004 0.006 0.008 0.01"},
		{3, 2700, true, []float64{2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000}, "2 5 10 20 50 100 200 500 1k 2k 5k"},
		{-3, 7, false, []float64{-4, -2, 0, 2, 4, 6, 8}, "-4 -2 0 2 4 6 8"},
		{0, 25100, false, []float64{0, 5000, 10000, 15000, 20000, 25000, 30000}, "0 5k 10k 15k 20k 25k 30k"},
		{5, 5, false, []float64{4.4, 4.6, 4.8, 5, 5.2, 5.4, 5.6}, "4.4 4.6 4.8 5 5.2 5.4 5.6"},
		{10000, 10005, false, []float64{10000, 10001, 10002, 10003, 10004, 10005}, "10k 10.001k 10.002k 10.003k 10.004k 10.005k"},
		{1, 1e6, true, []float64{1, 10, 100, 1000, 1e4, 1e5, 1e6}, "1 10 100 1k 10k 100k 1M"},
		{100, 100, true, []float64{50, 100, 200}, "50 100 200"},
	}
	for _, tt := range tests {
		var got []float64
		if tt.log {
			got = logTicks(tt.lo, tt.hi)
		} else {
			got = niceTicks(tt.lo, tt.hi, 5)
		}
		if !equalTicks(got, tt.want) {
			t.Errorf("ticks(%g, %g, log=%v) = %v, want %v", tt.lo, tt.hi, tt.log, got, tt.want)
		}
		if labels := strings.Join(tickLabels(got), " "); labels != tt.labels {
			t.Errorf("labels(%g, %g) = %q, want %q", tt.lo, tt.hi, labels, tt.labels)
		}
	}
}

func TestFormatCompact(t *testing.T) {
	tests := map[float64]string{
		0: "0", 0.25: "0.25", 1500: "1.5k", 20000: "20k", 1.2e6: "1.2M", 999999: "1M",
		12345: "12.3k", -2500: "-2.5k", 3.5e9: "3.5G", 0.001: "0.001", 42: "42", 123.456: "123",
	}
	for v, want := range tests {
		if got := formatCompact(v, 3); got != want {
			t.Errorf("formatCompact(%g) = %q, want %q", v, got, want)
		}
	}
}

func TestErrors(t *testing.T) {
	ok := Series{Name: "pith", X: []float64{1, 2}, Y: []float64{1, 2}}
	tests := []struct {
		name  string
		chart interface{ PNG(w io.Writer) error }
		want  []string // substrings of the error
	}{
		{"line no series", Line{}, []string{"no series"}},
		{"line length mismatch", Line{Series: []Series{ok, {Name: "Pulp", X: []float64{1, 2, 3}, Y: []float64{1, 2}}}},
			[]string{`"Pulp"`, "len(X)=3", "len(Y)=2"}},
		{"line log x", Line{LogX: true, Series: []Series{{Name: "pith", X: []float64{1, 0}, Y: []float64{1, 2}}}},
			[]string{`"pith"`, "index 1", "x=0", "log x"}},
		{"line log y", Line{LogY: true, Series: []Series{ok, {Name: "Pulp", X: []float64{1, 2, 3}, Y: []float64{1, 2, -5}}}},
			[]string{`"Pulp"`, "index 2", "y=-5", "log y"}},
		{"line unnamed series", Line{Series: []Series{ok, {X: []float64{1}}}}, []string{`"series 2"`}},
		{"line only NaN", Line{Series: []Series{{Name: "a", X: []float64{math.NaN()}, Y: []float64{1}}}}, []string{"no finite"}},
		{"line too small", Line{Width: 10, Height: 10, Series: []Series{ok}}, []string{"10x10"}},
		{"bars no groups", Bars{Series: []BarSeries{{Name: "pith"}}}, []string{"no groups"}},
		{"bars no series", Bars{Groups: []string{"a"}}, []string{"no series"}},
		{"bars length mismatch", Bars{Groups: []string{"a", "b"}, Series: []BarSeries{{Name: "Pulp", Values: []float64{1}}}},
			[]string{`"Pulp"`, "len(Values)=1", "len(Groups)=2"}},
		{"bars log", Bars{LogY: true, Groups: []string{"a", "b"}, Series: []BarSeries{{Name: "pith", Values: []float64{3, 0}}}},
			[]string{`"pith"`, "index 1", `"b"`, "log y"}},
		{"bars inf", Bars{Groups: []string{"a"}, Series: []BarSeries{{Name: "pith", Values: []float64{math.Inf(1)}}}},
			[]string{`"pith"`, "index 0", "infinite"}},
		{"bars only NaN", Bars{Groups: []string{"a"}, Series: []BarSeries{{Name: "pith", Values: []float64{math.NaN()}}}},
			[]string{"no finite"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.chart.PNG(io.Discard)
			if err == nil {
				t.Fatal("want error, got nil")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestDegenerateCharts(t *testing.T) {
	charts := map[string]interface{ PNG(w io.Writer) error }{
		"single point":     Line{Series: []Series{{Name: "a", X: []float64{3}, Y: []float64{7}}}},
		"single point log": Line{LogX: true, LogY: true, Series: []Series{{Name: "a", X: []float64{100}, Y: []float64{100}}}},
		"constant zero":    Line{Series: []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{0, 0}}}},
		"single bar":       Bars{Groups: []string{"only"}, Series: []BarSeries{{Name: "a", Values: []float64{5}}}},
		"negative bars":    Bars{Groups: []string{"x", "y"}, Series: []BarSeries{{Name: "a", Values: []float64{-5, -0.5}}}},
		"zero bars":        Bars{Groups: []string{"x"}, Series: []BarSeries{{Name: "a", Values: []float64{0}}}},
		"many series": Line{Width: 300, Height: 300, Series: []Series{
			{X: []float64{1, 2}, Y: []float64{1, 2}}, {X: []float64{1, 2}, Y: []float64{2, 3}},
			{X: []float64{1, 2}, Y: []float64{3, 4}}, {X: []float64{1, 2}, Y: []float64{4, 5}},
		}},
	}
	for name, c := range charts {
		if err := c.PNG(io.Discard); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	crowded := Line{Width: 240, Height: 160, Title: "t", XLabel: "x", YLabel: "y"}
	for i := 0; i < 12; i++ {
		crowded.Series = append(crowded.Series, Series{Name: "a long series name", X: []float64{1}, Y: []float64{1}})
	}
	if err := crowded.PNG(io.Discard); err == nil || !strings.Contains(err.Error(), "no room") {
		t.Errorf("crowded chart: err = %v, want a no-room error", err)
	}
}

func TestNaNBreaksLine(t *testing.T) {
	l := Line{Series: []Series{{Name: "a", X: []float64{1, 2, 3, 4, 5}, Y: []float64{1, math.Inf(1), 3, math.NaN(), 5}}}}
	segs, err := l.segments()
	if err != nil {
		t.Fatal(err)
	}
	if got := len(segs[0]); got != 3 {
		t.Errorf("got %d runs, want 3 (NaN/Inf points skipped and break the line)", got)
	}
}

func TestFontCoversPrintableASCII(t *testing.T) {
	seen := map[[glyphW]byte]rune{}
	for r := rune(32); r <= 126; r++ {
		g := glyph(r)
		set := false
		for _, col := range g {
			set = set || col != 0
		}
		if r == ' ' {
			if set {
				t.Errorf("space has set pixels")
			}
			continue
		}
		if !set {
			t.Errorf("glyph %q has no set pixel", r)
		}
		if prev, dup := seen[g]; dup {
			t.Errorf("glyphs %q and %q are identical", prev, r)
		}
		seen[g] = r
	}
	if glyph('\n') != glyph('?') {
		t.Errorf("non-printable characters should render as '?'")
	}
}

// TestExamples writes example charts to $PLOT_EXAMPLE_DIR for a human to look at.
func TestExamples(t *testing.T) {
	dir := os.Getenv("PLOT_EXAMPLE_DIR")
	if dir == "" {
		t.Skip("PLOT_EXAMPLE_DIR not set")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	logBars := exampleBars()
	logBars.LogY = true
	logBars.Title += " (log scale)"
	for name, chart := range map[string]interface{ WriteFile(string) error }{
		"line.png":            exampleLine(),
		"line-throughput.png": exampleThroughput(),
		"bars.png":            exampleBars(),
		"bars-log.png":        logBars,
		"bars-narrow.png":     narrowBars(),
		"line-small.png":      smallLine(),
	} {
		path := filepath.Join(dir, name)
		if err := chart.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
	}
	writeFontSheet(t, filepath.Join(dir, "font.png"))
}

// writeFontSheet renders every glyph at scale 1 and 3 for visual inspection.
func writeFontSheet(t *testing.T, path string) {
	c := newCanvas(600, 170)
	var chars []rune
	for r := rune(32); r <= 126; r++ {
		chars = append(chars, r)
	}
	s := string(chars)
	c.text(10, 10, s[:48], 1, ink)
	c.text(10, 22, s[48:], 1, ink)
	c.text(10, 40, s[:32], 3, ink)
	c.text(10, 75, s[32:64], 3, ink)
	c.text(10, 110, s[64:], 3, ink)
	c.textUp(580, 160, "Up text: req/s", 1, ink)
	var buf bytes.Buffer
	if err := png.Encode(&buf, c.img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// narrowBars has many thin bars (rotated value labels) and a negative value.
func narrowBars() Bars {
	b := Bars{Title: "Latency change per scenario", YLabel: "delta p99 (ms)", Width: 700, Height: 420}
	for i := 0; i < 8; i++ {
		b.Groups = append(b.Groups, "cfg "+strconv.Itoa(i+1))
	}
	for s := 0; s < 5; s++ {
		vals := make([]float64, len(b.Groups))
		for g := range vals {
			vals[g] = float64((g+1)*(s+2)*137%2900) - 300
		}
		b.Series = append(b.Series, BarSeries{Name: "run " + strconv.Itoa(s+1), Values: vals})
	}
	return b
}

// smallLine is a small chart with log axes and seven series, wrapping the legend.
func smallLine() Line {
	l := Line{Title: "Small log-log chart", XLabel: "objects", YLabel: "seconds", LogX: true, LogY: true, Width: 640, Height: 400}
	for s := 0; s < 7; s++ {
		var x, y []float64
		for k := 0; k < 6; k++ {
			x = append(x, math.Pow(10, float64(k)))
			y = append(y, 0.002*math.Pow(10, float64(k)*(0.5+0.1*float64(s))))
		}
		l.Series = append(l.Series, Series{Name: "variant " + strconv.Itoa(s+1), X: x, Y: y, Dashed: s == 6})
	}
	return l
}
