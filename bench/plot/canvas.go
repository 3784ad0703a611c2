package plot

import (
	"image"
	"image/color"
	"image/draw"
)

// Colors used for chart furniture.
var (
	white     = color.RGBA{0xFF, 0xFF, 0xFF, 0xFF}
	ink       = color.RGBA{0x22, 0x22, 0x22, 0xFF} // text and axes
	softInk   = color.RGBA{0x55, 0x55, 0x55, 0xFF} // tick labels, bar values
	gridColor = color.RGBA{0xE3, 0xE3, 0xE3, 0xFF}
	boxColor  = color.RGBA{0xAA, 0xAA, 0xAA, 0xFF} // legend frame
)

// Palette is the fixed sequence of series colors; series i uses
// Palette[i%len(Palette)].
var Palette = []color.RGBA{
	{0x1F, 0x77, 0xB4, 0xFF}, // blue
	{0xFF, 0x7F, 0x0E, 0xFF}, // orange
	{0x2C, 0xA0, 0x2C, 0xFF}, // green
	{0xD6, 0x27, 0x28, 0xFF}, // red
	{0x94, 0x67, 0xBD, 0xFF}, // purple
	{0x8C, 0x56, 0x4B, 0xFF}, // brown
	{0xE3, 0x77, 0xC2, 0xFF}, // pink
	{0x17, 0xBE, 0xCF, 0xFF}, // cyan
	{0xBC, 0xBD, 0x22, 0xFF}, // olive
	{0x7F, 0x7F, 0x7F, 0xFF}, // grey
	{0x00, 0x00, 0x00, 0xFF}, // black
}

// seriesColor is the palette color of series i.
func seriesColor(i int) color.RGBA { return Palette[i%len(Palette)] }

// canvas is an RGBA image with the drawing primitives the charts need.
type canvas struct {
	img *image.RGBA
}

// newCanvas returns a w x h canvas filled with white.
func newCanvas(w, h int) *canvas {
	c := &canvas{img: image.NewRGBA(image.Rect(0, 0, w, h))}
	c.fill(c.img.Rect, white)
	return c
}

// set colors one pixel, ignoring points outside the image.
func (c *canvas) set(x, y int, col color.RGBA) {
	if image.Pt(x, y).In(c.img.Rect) {
		c.img.SetRGBA(x, y, col)
	}
}

// block fills the n x n square whose top-left corner is (x, y).
func (c *canvas) block(x, y, n int, col color.RGBA) {
	c.fill(image.Rect(x, y, x+n, y+n), col)
}

// fill paints r (clipped to the image).
func (c *canvas) fill(r image.Rectangle, col color.RGBA) {
	draw.Draw(c.img, r.Intersect(c.img.Rect), image.NewUniform(col), image.Point{}, draw.Src)
}

// hline draws a 1 px horizontal line from x0 to x1 inclusive.
func (c *canvas) hline(x0, x1, y int, col color.RGBA) {
	c.fill(image.Rect(min(x0, x1), y, max(x0, x1)+1, y+1), col)
}

// vline draws a 1 px vertical line from y0 to y1 inclusive.
func (c *canvas) vline(x, y0, y1 int, col color.RGBA) {
	c.fill(image.Rect(x, min(y0, y1), x+1, max(y0, y1)+1), col)
}

// frame draws the 1 px outline of r.
func (c *canvas) frame(r image.Rectangle, col color.RGBA) {
	c.hline(r.Min.X, r.Max.X-1, r.Min.Y, col)
	c.hline(r.Min.X, r.Max.X-1, r.Max.Y-1, col)
	c.vline(r.Min.X, r.Min.Y, r.Max.Y-1, col)
	c.vline(r.Max.X-1, r.Min.Y, r.Max.Y-1, col)
}

// marker draws a filled square of even side n centred on the 2 x 2 pen
// position (x, y) used by line.
func (c *canvas) marker(x, y, n int, col color.RGBA) {
	c.block(x-n/2+1, y-n/2+1, n, col)
}

// dasher turns a stroke on and off every few pixels. Its phase carries over
// from one segment to the next so a polyline has an even dash pattern.
type dasher struct {
	on, off int // lengths in pixels
	pos     int
}

// next reports whether the current pixel of the stroke is drawn and advances
// the pattern; a nil dasher draws a solid line.
func (d *dasher) next() bool {
	if d == nil {
		return true
	}
	draw := d.pos < d.on
	d.pos = (d.pos + 1) % (d.on + d.off)
	return draw
}

// line draws a 2 px thick line from (x0, y0) to (x1, y1) with Bresenham's
// algorithm and a 2 x 2 pen; dash may be nil for a solid line.
func (c *canvas) line(x0, y0, x1, y1 int, col color.RGBA, dash *dasher) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		if dash.next() {
			c.block(x0, y0, 2, col)
		}
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}
