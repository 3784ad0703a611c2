package plot

import (
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"strings"
)

// Bars is a grouped bar chart: for each group (x-axis category) one colored
// bar per series, with the value printed above each bar.
type Bars struct {
	Title, YLabel string
	Groups        []string    // x-axis categories
	Series        []BarSeries // one colored bar per series within each group
	LogY          bool        // log10 y axis with ticks at 1, 2, 5 x 10^k
	Width, Height int         // image size in pixels; default 900 x 540
}

// BarSeries is one series of a bar chart. Values[i] belongs to Groups[i]; a
// NaN value draws no bar.
type BarSeries struct {
	Name   string
	Values []float64
}

// groupFill is the fraction of a group's slot covered by its bars.
const groupFill = 0.8

// PNG renders the chart and writes it to w as a PNG image.
func (b Bars) PNG(w io.Writer) error {
	img, err := b.render()
	if err != nil {
		return err
	}
	return png.Encode(w, img)
}

// WriteFile renders the chart as a PNG file at path. Nothing is written if the
// chart is invalid.
func (b Bars) WriteFile(path string) error { return writeFile(path, b.PNG) }

// valueRange validates the chart and returns the range of its finite values.
func (b Bars) valueRange() (lo, hi float64, err error) {
	if len(b.Groups) == 0 {
		return 0, 0, errors.New("plot: bar chart has no groups")
	}
	if len(b.Series) == 0 {
		return 0, 0, errors.New("plot: bar chart has no series")
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for i, s := range b.Series {
		name := seriesName(s.Name, i)
		if len(s.Values) != len(b.Groups) {
			return 0, 0, fmt.Errorf("plot: bar series %q: len(Values)=%d differs from len(Groups)=%d", name, len(s.Values), len(b.Groups))
		}
		for j, v := range s.Values {
			switch {
			case math.IsNaN(v):
				continue
			case math.IsInf(v, 0):
				return 0, 0, fmt.Errorf("plot: bar series %q index %d (group %q): value %g is infinite", name, j, b.Groups[j], v)
			case b.LogY && v <= 0:
				return 0, 0, fmt.Errorf("plot: bar series %q index %d (group %q): value %g is not positive on a log y axis", name, j, b.Groups[j], v)
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if lo > hi {
		return 0, 0, errors.New("plot: bar chart has no finite values")
	}
	return lo, hi, nil
}

// barLayout holds the geometry shared by the layout and drawing steps.
type barLayout struct {
	plot        image.Rectangle
	ya          axis
	groupLabels [][]string // wrapped group labels
	groupScale  int        // text scale of the group labels
	values      valueStyle
}

// valueStyle is how bar values are printed: at which scale and whether
// rotated to read upwards, chosen so that neighbouring labels do not collide.
type valueStyle struct {
	scale    int
	vertical bool
}

// render draws the chart into a new image.
func (b Bars) render() (*image.RGBA, error) {
	w, h, err := imageSize(b.Width, b.Height)
	if err != nil {
		return nil, err
	}
	lo, hi, err := b.valueRange()
	if err != nil {
		return nil, err
	}
	c := newCanvas(w, h)
	top := c.drawTitle(b.Title)
	top = c.drawLegend(b.legendItems(), top)
	lay := b.layout(w, h, top, lo, hi)
	if err := checkPlotArea(lay.plot, top, w, h); err != nil {
		return nil, err
	}

	c.drawYAxis(lay.ya, lay.plot)
	b.drawBars(c, lay)
	b.drawGroupLabels(c, lay)
	c.frame(image.Rect(lay.plot.Min.X-1, lay.plot.Min.Y-1, lay.plot.Max.X+1, lay.plot.Max.Y+1), ink)
	c.drawYLabel(b.YLabel, pad, lay.plot)
	return c.img, nil
}

// layout places the plot area and builds the y axis with enough headroom for
// the value labels above the tallest bar.
func (b Bars) layout(w, h, top int, lo, hi float64) barLayout {
	right := w - 2*pad
	// First estimate of the plot width, before the y tick labels are known.
	estLeft := pad + yLabelWidth(b.YLabel) + 50
	groupW := float64(right-estLeft) / float64(len(b.Groups))
	lay := barLayout{values: b.valueStyle(groupW)}
	lay.groupLabels, lay.groupScale = wrapGroups(b.Groups, int(groupW)-12)

	lines := 1
	for _, gl := range lay.groupLabels {
		lines = max(lines, len(gl))
	}
	bottom := h - (tickLen + 4 + lines*lineStep*lay.groupScale + pad)
	headroom := float64(b.valueLabelHeight(lay.values)+6) / float64(max(bottom-top, 1))
	lay.ya = b.yAxis(lo, hi, headroom, max(3, (h-140)/70))
	left := pad + yLabelWidth(b.YLabel) + lay.ya.maxLabelWidth() + tickLen + 6
	lay.plot = image.Rect(left, top, right, bottom)
	return lay
}

// wrapGroups wraps the group labels to maxW pixels at the tick scale, or at
// scale 1 if at the tick scale some word would have to be split or some
// label would need more than three lines.
func wrapGroups(groups []string, maxW int) ([][]string, int) {
	labels := make([][]string, len(groups))
	for i, g := range groups {
		labels[i] = wrap(g, maxW, tickScale)
		if len(labels[i]) > 3 || textWidth(longestWord(g), tickScale) > maxW {
			return wrapAll(groups, maxW, 1), 1
		}
	}
	return labels, tickScale
}

// wrapAll wraps every label to maxW pixels at scale.
func wrapAll(groups []string, maxW, scale int) [][]string {
	labels := make([][]string, len(groups))
	for i, g := range groups {
		labels[i] = wrap(g, maxW, scale)
	}
	return labels
}

// longestWord is the widest space-separated word of s.
func longestWord(s string) string {
	long := ""
	for _, w := range strings.Fields(s) {
		if len([]rune(w)) > len([]rune(long)) {
			long = w
		}
	}
	return long
}

// valueLabels lists the printed values of all bars.
func (b Bars) valueLabels() []string {
	var labels []string
	for _, s := range b.Series {
		for _, v := range s.Values {
			if !math.IsNaN(v) {
				labels = append(labels, formatCompact(v, 3))
			}
		}
	}
	return labels
}

// valueStyle picks the largest readable style in which every value label
// fits the width of a bar: horizontal at the tick scale or at scale 1,
// otherwise rotated.
func (b Bars) valueStyle(groupW float64) valueStyle {
	barW := int(groupW * groupFill / float64(len(b.Series)))
	widest := 0
	for _, l := range b.valueLabels() {
		widest = max(widest, textWidth(l, 1))
	}
	for _, st := range []valueStyle{{tickScale, false}, {1, false}, {tickScale, true}} {
		w := widest * st.scale
		if st.vertical {
			w = glyphH * st.scale
		}
		if w <= barW {
			return st
		}
	}
	return valueStyle{1, true}
}

// valueLabelHeight is the vertical room the tallest value label needs.
func (b Bars) valueLabelHeight(st valueStyle) int {
	if !st.vertical {
		return capH * st.scale
	}
	hgt := 0
	for _, l := range b.valueLabels() {
		hgt = max(hgt, textWidth(l, st.scale))
	}
	return hgt
}

// yAxis builds the value axis for data in [lo, hi], leaving the fraction
// headroom of the axis free beyond the largest bar (and beyond the most
// negative one) for value labels. A linear axis includes 0.
func (b Bars) yAxis(lo, hi, headroom float64, target int) axis {
	h := math.Min(headroom, 0.3)
	if b.LogY {
		base := math.Log10(logTicks(lo, hi)[0])
		top := base + (math.Log10(hi)-base)/(1-h)
		return newAxis(lo, math.Pow(10, top), true, target)
	}
	lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	sides := 0.0
	if hi > 0 {
		sides++
	}
	if lo < 0 {
		sides++
	}
	extra := h * (hi - lo) / (1 - sides*h)
	if hi > 0 {
		hi += extra
	}
	if lo < 0 {
		lo -= extra
	}
	return newAxis(lo, hi, false, target)
}

// legendItems lists the series for the legend.
func (b Bars) legendItems() []legendItem {
	items := make([]legendItem, len(b.Series))
	for i, s := range b.Series {
		items[i] = legendItem{name: seriesName(s.Name, i), col: seriesColor(i), box: true}
	}
	return items
}

// slot returns the left edge and width of bar s in group g.
func (b Bars) slot(plot image.Rectangle, g, s int) (float64, float64) {
	groupW := float64(plot.Dx()) / float64(len(b.Groups))
	barW := groupW * groupFill / float64(len(b.Series))
	x := float64(plot.Min.X) + float64(g)*groupW + groupW*(1-groupFill)/2 + float64(s)*barW
	return x, barW
}

// drawBars draws every bar with its value label.
func (b Bars) drawBars(c *canvas, lay barLayout) {
	base := lay.plot.Max.Y - 1
	if !lay.ya.log {
		base = lay.ya.yPixel(0, lay.plot)
	}
	for s, series := range b.Series {
		for g, v := range series.Values {
			if math.IsNaN(v) {
				continue
			}
			x, bw := b.slot(lay.plot, g, s)
			x0, x1 := int(math.Round(x)), int(math.Round(x+bw))
			if x1-x0 >= 6 {
				x1-- // a 1 px gap between neighbouring bars
			}
			y := lay.ya.yPixel(v, lay.plot)
			c.fill(image.Rect(x0, min(y, base), max(x1, x0+1), max(y, base)+1), seriesColor(s))
			c.drawValue(formatCompact(v, 3), (x0+x1)/2, y, v < 0, lay.values)
		}
	}
}

// drawValue prints a bar's value beyond its end at (x, y): above a positive
// bar, below a negative one.
func (c *canvas) drawValue(s string, x, y int, below bool, st valueStyle) {
	switch {
	case st.vertical && below:
		c.textUp(x-glyphH*st.scale/2+1, y+4+textWidth(s, st.scale), s, st.scale, softInk)
	case st.vertical:
		c.textUp(x-glyphH*st.scale/2+1, y-4, s, st.scale, softInk)
	case below:
		c.label(x, y+4, s, st.scale, softInk, alignCenter, alignStart)
	default:
		c.label(x, y-4, s, st.scale, softInk, alignCenter, alignEnd)
	}
}

// drawGroupLabels writes the (wrapped) group names below the plot, centred on
// their groups.
func (b Bars) drawGroupLabels(c *canvas, lay barLayout) {
	groupW := float64(lay.plot.Dx()) / float64(len(b.Groups))
	for g, lines := range lay.groupLabels {
		x := lay.plot.Min.X + int(math.Round((float64(g)+0.5)*groupW))
		c.vline(x, lay.plot.Max.Y, lay.plot.Max.Y+tickLen-1, ink)
		for i, line := range lines {
			y := lay.plot.Max.Y + tickLen + 4 + i*lineStep*lay.groupScale
			c.label(x, y, line, lay.groupScale, ink, alignCenter, alignStart)
		}
	}
}

// wrap breaks s at spaces into lines no wider than maxW pixels at scale;
// a word wider than maxW is split across lines.
func wrap(s string, maxW, scale int) []string {
	var lines []string
	cur := ""
	for _, word := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = word
		case textWidth(cur+" "+word, scale) <= maxW:
			cur += " " + word
		default:
			lines = append(lines, cur)
			cur = word
		}
		for textWidth(cur, scale) > maxW && len([]rune(cur)) > 1 {
			n := max(1, (maxW+scale)/(advance*scale))
			r := []rune(cur)
			lines = append(lines, string(r[:n]))
			cur = string(r[n:])
		}
	}
	if cur != "" || len(lines) == 0 {
		lines = append(lines, cur)
	}
	return lines
}
