package plot

import (
	"image"
	"image/color"
	"strconv"
)

// Legend geometry.
const (
	legendScale = 2
	swatchW     = 28                    // width of the line or box sample
	legendRow   = capH*legendScale + 10 // height of one entry
	legendPad   = 8                     // inner margin of the legend box
	legendGap   = 24                    // horizontal gap between entries
)

// legendItem is one legend entry: a line sample (optionally dashed, with a
// marker) for line charts, or a filled box for bar charts.
type legendItem struct {
	name   string
	col    color.RGBA
	dashed bool
	box    bool
}

// seriesName is name, or "series N" (1-based) when name is empty.
func seriesName(name string, i int) string {
	if name != "" {
		return name
	}
	return "series " + strconv.Itoa(i+1)
}

// legendLayout is the size of the legend box and the top-left corner of each
// entry relative to the box.
type legendLayout struct {
	size image.Point
	pos  []image.Point
}

// layoutLegend lays the entries out left to right, starting a new row when
// the next entry would make the box wider than maxW.
func layoutLegend(items []legendItem, maxW int) legendLayout {
	var lay legendLayout
	x, y, right := legendPad, legendPad, 0
	for _, it := range items {
		w := swatchW + legendPad + textWidth(it.name, legendScale)
		if x > legendPad && x+w+legendPad > maxW {
			x, y = legendPad, y+legendRow
		}
		lay.pos = append(lay.pos, image.Pt(x, y))
		right = max(right, x+w)
		x += w + legendGap
	}
	lay.size = image.Pt(right+legendPad, y+capH*legendScale+legendPad)
	return lay
}

// drawLegend draws the legend centred horizontally in the image with its top
// at y, and returns the y just below it.
func (c *canvas) drawLegend(items []legendItem, y int) int {
	lay := layoutLegend(items, c.img.Rect.Dx()-2*pad)
	p := image.Pt((c.img.Rect.Dx()-lay.size.X)/2, y)
	box := image.Rectangle{p, p.Add(lay.size)}
	c.frame(box, boxColor)
	for i, it := range items {
		at := p.Add(lay.pos[i])
		mid := at.Y + capH*legendScale/2
		c.drawSwatch(it, at.X, mid)
		c.label(at.X+swatchW+legendPad, mid, it.name, legendScale, ink, alignStart, alignCenter)
	}
	return box.Max.Y + pad
}

// drawSwatch draws the sample for it, spanning swatchW pixels from x0 and
// vertically centred on mid.
func (c *canvas) drawSwatch(it legendItem, x0, mid int) {
	if it.box {
		c.fill(image.Rect(x0+swatchW/2-7, mid-6, x0+swatchW/2+7, mid+7), it.col)
		return
	}
	var dash *dasher
	if it.dashed {
		dash = newDash()
	}
	c.line(x0, mid, x0+swatchW-2, mid, it.col, dash)
	c.marker(x0+swatchW/2, mid, markerSize(it.dashed), it.col)
}

// newDash returns the dash pattern used for dashed series.
func newDash() *dasher { return &dasher{on: 9, off: 6} }

// markerSize is the side of the square marker of a solid or dashed series.
func markerSize(dashed bool) int {
	if dashed {
		return 6
	}
	return 8
}
