package plot

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
)

// Default image size used when Width or Height is zero.
const (
	DefaultWidth  = 900
	DefaultHeight = 540
)

// Minimum image size accepted; smaller images cannot fit the chart furniture.
const (
	minWidth  = 240
	minHeight = 160
)

// Series is one curve of a line chart: the points (X[i], Y[i]) joined in order.
// Points with a NaN or infinite coordinate are skipped and break the line.
type Series struct {
	Name   string
	X, Y   []float64
	Dashed bool // draw as a dashed line (e.g. an ideal/reference curve)
}

// Line is a line chart with one or more series, optional log axes and a legend.
type Line struct {
	Title, XLabel, YLabel string
	Series                []Series
	LogX, LogY            bool // log10 axes with ticks at 1, 2, 5 x 10^k
	YFromZero             bool // y axis starts at 0 (ignored with LogY)
	Width, Height         int  // image size in pixels; default 900 x 540
}

// point is a data point in data units.
type point struct{ x, y float64 }

// PNG renders the chart and writes it to w as a PNG image.
func (l Line) PNG(w io.Writer) error {
	img, err := l.render()
	if err != nil {
		return err
	}
	return png.Encode(w, img)
}

// WriteFile renders the chart as a PNG file at path. Nothing is written if the
// chart is invalid.
func (l Line) WriteFile(path string) error { return writeFile(path, l.PNG) }

// writeFile encodes into memory first so an invalid chart leaves no file behind.
func writeFile(path string, encode func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := encode(&buf); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// imageSize applies the defaults and checks the bounds of a chart's size.
func imageSize(w, h int) (int, int, error) {
	if w == 0 {
		w = DefaultWidth
	}
	if h == 0 {
		h = DefaultHeight
	}
	if w < minWidth || h < minHeight {
		return 0, 0, fmt.Errorf("plot: image size %dx%d is below the minimum %dx%d", w, h, minWidth, minHeight)
	}
	return w, h, nil
}

// minPlot is the smallest data area, in pixels each way, worth drawing.
const minPlot = 40

// checkPlotArea reports an error when the title, legend and labels leave too
// little room for the data. It takes top because image.Rect would silently
// swap inverted bounds.
func checkPlotArea(plot image.Rectangle, top, w, h int) error {
	if plot.Min.Y != top || plot.Dx() < minPlot || plot.Dy() < minPlot {
		return fmt.Errorf("plot: image size %dx%d leaves no room for the data next to the title, legend and labels", w, h)
	}
	return nil
}

// segments validates the series and splits each into runs of finite points.
func (l Line) segments() ([][][]point, error) {
	if len(l.Series) == 0 {
		return nil, errors.New("plot: line chart has no series")
	}
	all := make([][][]point, len(l.Series))
	finite := 0
	for i, s := range l.Series {
		segs, n, err := l.seriesSegments(i, s)
		if err != nil {
			return nil, err
		}
		all[i], finite = segs, finite+n
	}
	if finite == 0 {
		return nil, errors.New("plot: line chart has no finite data points")
	}
	return all, nil
}

// seriesSegments splits series i into runs of finite points and returns them
// with the number of finite points.
func (l Line) seriesSegments(i int, s Series) ([][]point, int, error) {
	name := seriesName(s.Name, i)
	if len(s.X) != len(s.Y) {
		return nil, 0, fmt.Errorf("plot: series %q: len(X)=%d differs from len(Y)=%d", name, len(s.X), len(s.Y))
	}
	var segs [][]point
	var cur []point
	n := 0
	for j := range s.X {
		x, y := s.X[j], s.Y[j]
		if !isFinite(x) || !isFinite(y) {
			segs, cur = appendRun(segs, cur), nil
			continue
		}
		if l.LogX && x <= 0 {
			return nil, 0, fmt.Errorf("plot: series %q index %d: x=%g is not positive on a log x axis", name, j, x)
		}
		if l.LogY && y <= 0 {
			return nil, 0, fmt.Errorf("plot: series %q index %d: y=%g is not positive on a log y axis", name, j, y)
		}
		cur = append(cur, point{x, y})
		n++
	}
	return appendRun(segs, cur), n, nil
}

func appendRun(segs [][]point, run []point) [][]point {
	if len(run) > 0 {
		segs = append(segs, run)
	}
	return segs
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// bounds is the data range of all points.
func bounds(all [][][]point) (lo, hi point) {
	lo = point{math.Inf(1), math.Inf(1)}
	hi = point{math.Inf(-1), math.Inf(-1)}
	for _, segs := range all {
		for _, run := range segs {
			for _, p := range run {
				lo.x, lo.y = math.Min(lo.x, p.x), math.Min(lo.y, p.y)
				hi.x, hi.y = math.Max(hi.x, p.x), math.Max(hi.y, p.y)
			}
		}
	}
	return lo, hi
}

// render draws the chart into a new image.
func (l Line) render() (*image.RGBA, error) {
	w, h, err := imageSize(l.Width, l.Height)
	if err != nil {
		return nil, err
	}
	all, err := l.segments()
	if err != nil {
		return nil, err
	}
	lo, hi := bounds(all)
	if l.YFromZero && !l.LogY {
		lo.y, hi.y = math.Min(lo.y, 0), math.Max(hi.y, 0)
	}
	xa := newAxis(lo.x, hi.x, l.LogX, max(3, (w-200)/110))
	ya := newAxis(lo.y, hi.y, l.LogY, max(3, (h-140)/70))

	c := newCanvas(w, h)
	top := c.drawTitle(l.Title)
	top = c.drawLegend(l.legendItems(), top)
	plot := l.plotRect(w, h, top, xa, ya)
	if err := checkPlotArea(plot, top, w, h); err != nil {
		return nil, err
	}

	c.drawYAxis(ya, plot)
	c.drawXAxis(xa, plot)
	c.drawSeries(l.Series, all, xa, ya, plot)
	c.frame(image.Rect(plot.Min.X-1, plot.Min.Y-1, plot.Max.X+1, plot.Max.Y+1), ink)
	c.drawYLabel(l.YLabel, pad, plot)
	if l.XLabel != "" {
		y := plot.Max.Y + tickLen + 4 + capH*tickScale + pad
		c.label(plot.Min.X+plot.Dx()/2, y, l.XLabel, labelScale, ink, alignCenter, alignStart)
	}
	return c.img, nil
}

// plotRect is the data area: what remains below top after the y labels on
// the left, the x labels below and room for the last x label on the right.
func (l Line) plotRect(w, h, top int, xa, ya axis) image.Rectangle {
	left := pad + yLabelWidth(l.YLabel) + ya.maxLabelWidth() + tickLen + 6
	bottom := tickLen + 4 + glyphH*tickScale + pad
	if l.XLabel != "" {
		bottom += glyphH*labelScale + pad/2
	}
	right := pad + textWidth(xa.labels[len(xa.labels)-1], tickScale)/2
	return image.Rect(left, top, w-right, h-bottom)
}

// legendItems lists the series for the legend.
func (l Line) legendItems() []legendItem {
	items := make([]legendItem, len(l.Series))
	for i, s := range l.Series {
		items[i] = legendItem{name: seriesName(s.Name, i), col: seriesColor(i), dashed: s.Dashed}
	}
	return items
}

// drawSeries draws every series, dashed (reference) series first so the
// measured ones stay on top.
func (c *canvas) drawSeries(series []Series, all [][][]point, xa, ya axis, plot image.Rectangle) {
	for _, dashedPass := range []bool{true, false} {
		for i, s := range series {
			if s.Dashed == dashedPass {
				c.drawCurve(all[i], s.Dashed, seriesColor(i), xa, ya, plot)
			}
		}
	}
}

// drawCurve draws the runs of one series as lines with square markers.
func (c *canvas) drawCurve(runs [][]point, dashed bool, col color.RGBA, xa, ya axis, plot image.Rectangle) {
	var dash *dasher
	if dashed {
		dash = newDash()
	}
	for _, run := range runs {
		px := make([]image.Point, len(run))
		for j, p := range run {
			px[j] = image.Pt(xa.xPixel(p.x, plot), ya.yPixel(p.y, plot))
		}
		for j := 1; j < len(px); j++ {
			c.line(px[j-1].X, px[j-1].Y, px[j].X, px[j].Y, col, dash)
		}
		for _, p := range px {
			c.marker(p.X, p.Y, markerSize(dashed), col)
		}
	}
}
