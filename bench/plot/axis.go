package plot

import (
	"image"
	"math"
)

// Text scales and spacing shared by both chart kinds.
const (
	titleScale = 2
	labelScale = 2 // axis labels
	tickScale  = 2 // tick labels, legend entries, bar values
	tickLen    = 5
	pad        = 12 // generic gap between chart elements
)

// axis maps data values onto a pixel span. Its range is the span of its ticks.
type axis struct {
	log    bool
	lo, hi float64 // range in data units
	ticks  []float64
	labels []string
}

// newAxis builds an axis covering [lo, hi] with about target tick intervals;
// on a log axis lo and hi must be positive.
func newAxis(lo, hi float64, log bool, target int) axis {
	a := axis{log: log}
	if log {
		a.ticks = logTicks(lo, hi)
	} else {
		a.ticks = niceTicks(lo, hi, target)
	}
	a.lo, a.hi = a.ticks[0], a.ticks[len(a.ticks)-1]
	a.labels = tickLabels(a.ticks)
	return a
}

// frac is v's position along the axis, 0 at lo and 1 at hi.
func (a axis) frac(v float64) float64 {
	if a.log {
		return (math.Log10(v) - math.Log10(a.lo)) / (math.Log10(a.hi) - math.Log10(a.lo))
	}
	return (v - a.lo) / (a.hi - a.lo)
}

// maxLabelWidth is the width of the widest tick label at tickScale.
func (a axis) maxLabelWidth() int {
	w := 0
	for _, l := range a.labels {
		w = max(w, textWidth(l, tickScale))
	}
	return w
}

// yPixel maps v onto the vertical extent of plot (larger values are higher).
func (a axis) yPixel(v float64, plot image.Rectangle) int {
	return plot.Max.Y - 1 - int(math.Round(a.frac(v)*float64(plot.Dy()-1)))
}

// xPixel maps v onto the horizontal extent of plot.
func (a axis) xPixel(v float64, plot image.Rectangle) int {
	return plot.Min.X + int(math.Round(a.frac(v)*float64(plot.Dx()-1)))
}

// drawYAxis draws horizontal grid lines, tick marks and tick labels for a.
func (c *canvas) drawYAxis(a axis, plot image.Rectangle) {
	for i, t := range a.ticks {
		y := a.yPixel(t, plot)
		c.hline(plot.Min.X, plot.Max.X-1, y, gridColor)
		c.hline(plot.Min.X-tickLen, plot.Min.X-1, y, ink)
		c.label(plot.Min.X-tickLen-4, y, a.labels[i], tickScale, softInk, alignEnd, alignCenter)
	}
}

// drawXAxis draws vertical grid lines, tick marks and tick labels for a,
// labelling only every n-th tick when labels would otherwise collide.
func (c *canvas) drawXAxis(a axis, plot image.Rectangle) {
	every := xLabelStride(a, plot)
	for i, t := range a.ticks {
		x := a.xPixel(t, plot)
		c.vline(x, plot.Min.Y, plot.Max.Y-1, gridColor)
		c.vline(x, plot.Max.Y, plot.Max.Y+tickLen-1, ink)
		if i%every == 0 {
			c.label(x, plot.Max.Y+tickLen+4, a.labels[i], tickScale, softInk, alignCenter, alignStart)
		}
	}
}

// xLabelStride is the smallest n such that labelling every n-th tick leaves
// a gap between neighbouring labels.
func xLabelStride(a axis, plot image.Rectangle) int {
	need := a.maxLabelWidth() + 10
	minGap := plot.Dx()
	for i := 1; i < len(a.ticks); i++ {
		minGap = min(minGap, a.xPixel(a.ticks[i], plot)-a.xPixel(a.ticks[i-1], plot))
	}
	for n := 1; n < len(a.ticks); n++ {
		if n*minGap >= need {
			return n
		}
	}
	return max(len(a.ticks), 1)
}

// drawTitle centres title at the top of the image and returns the y just below it.
func (c *canvas) drawTitle(title string) int {
	if title == "" {
		return pad
	}
	// Drawn twice, one pixel apart, for a bold face.
	x := c.img.Rect.Dx() / 2
	c.label(x, pad, title, titleScale, ink, alignCenter, alignStart)
	c.label(x+1, pad, title, titleScale, ink, alignCenter, alignStart)
	return pad + glyphH*titleScale + pad
}

// drawYLabel writes label vertically, centred on plot, with its left edge at x.
func (c *canvas) drawYLabel(label string, x int, plot image.Rectangle) {
	if label == "" {
		return
	}
	y := plot.Min.Y + plot.Dy()/2 + textWidth(label, labelScale)/2
	c.textUp(x, y, label, labelScale, ink)
}

// yLabelWidth is the horizontal room the rotated y label takes, including its gap.
func yLabelWidth(label string) int {
	if label == "" {
		return 0
	}
	return glyphH*labelScale + pad/2
}
