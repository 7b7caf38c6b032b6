package envs

import (
	"errors"
	"image"
	"image/color"
	"math"
	"slices"
)

// Renderer is an Env that draws its current state. Render returns a new
// RGB image of a fixed size per env; wrappers pass it through to the env
// they wrap.
type Renderer interface {
	Render() image.Image
}

// RenderErr draws env's current state, or says why it cannot: env (or the
// env a wrapper wraps) does not draw itself, or drawing failed — then with
// the env's own reason where it reports one through an Err method (a
// Gymnasium env's Python exception, e.g. a missing pygame).
func RenderErr(env Env) (image.Image, error) {
	if _, ok := Unwrapped(env).(Renderer); !ok {
		return nil, errors.New("cannot render itself (it does not implement envs.Renderer)")
	}
	if img, ok := Render(env); ok {
		return img, nil
	}
	for e := env; ; {
		if r, ok := e.(interface{ Err() error }); ok && r.Err() != nil {
			return nil, r.Err()
		}
		w, ok := e.(Wrapper)
		if !ok {
			break
		}
		e = w.Unwrap()
	}
	return nil, errors.New("drew no image")
}

// Render draws env's current state, or returns false when env (or the env
// a wrapper wraps) cannot draw itself.
func Render(env Env) (image.Image, bool) {
	if r, ok := env.(Renderer); ok {
		if img := r.Render(); img != nil {
			return img, true
		}
	}
	return nil, false
}

// canvas is an RGBA image with the few shapes the envs draw, filled with
// anti-aliasing by 4×4 supersampling of each pixel's coverage. Coordinates
// are in pixels, y downwards.
type canvas struct{ *image.RGBA }

func newCanvas(w, h int, bg color.RGBA) canvas {
	c := canvas{image.NewRGBA(image.Rect(0, 0, w, h))}
	for i := 0; i < len(c.Pix); i += 4 {
		c.Pix[i], c.Pix[i+1], c.Pix[i+2], c.Pix[i+3] = bg.R, bg.G, bg.B, 255
	}
	return c
}

// point is a position in pixels.
type point struct{ x, y float64 }

// blend mixes col into pixel (x, y) with weight a in [0, 1].
func (c canvas) blend(x, y int, col color.RGBA, a float64) {
	if a <= 0 || !(image.Point{x, y}.In(c.Rect)) {
		return
	}
	i := c.PixOffset(x, y)
	p := c.Pix[i : i+3 : i+3]
	p[0] = uint8(float64(p[0])*(1-a) + float64(col.R)*a + 0.5)
	p[1] = uint8(float64(p[1])*(1-a) + float64(col.G)*a + 0.5)
	p[2] = uint8(float64(p[2])*(1-a) + float64(col.B)*a + 0.5)
}

// fill paints every pixel of the box [x0, x1]×[y0, y1] by the share of
// its 16 sample points inside reports true for.
func (c canvas) fill(x0, y0, x1, y1 float64, col color.RGBA, inside func(x, y float64) bool) {
	b := c.Rect
	for y := max(int(math.Floor(y0)), b.Min.Y); y <= min(int(math.Ceil(y1)), b.Max.Y-1); y++ {
		for x := max(int(math.Floor(x0)), b.Min.X); x <= min(int(math.Ceil(x1)), b.Max.X-1); x++ {
			n := 0
			for sy := range 4 {
				for sx := range 4 {
					if inside(float64(x)+(float64(sx)+0.5)/4, float64(y)+(float64(sy)+0.5)/4) {
						n++
					}
				}
			}
			c.blend(x, y, col, float64(n)/16)
		}
	}
}

// rect fills the axis-aligned rectangle with corners (x0, y0) and (x1, y1).
func (c canvas) rect(x0, y0, x1, y1 float64, col color.RGBA) {
	x0, x1 = min(x0, x1), max(x0, x1)
	y0, y1 = min(y0, y1), max(y0, y1)
	c.fill(x0, y0, x1, y1, col, func(x, y float64) bool { return x >= x0 && x < x1 && y >= y0 && y < y1 })
}

// circle fills the disc of radius r around (cx, cy).
func (c canvas) circle(cx, cy, r float64, col color.RGBA) {
	c.fill(cx-r, cy-r, cx+r, cy+r, col, func(x, y float64) bool {
		dx, dy := x-cx, y-cy
		return dx*dx+dy*dy <= r*r
	})
}

// polygon fills the polygon pts (any winding, even-odd rule). It samples
// as fill does, with the same crossing test per sample point (a point is
// inside where an odd number of edges cross its row to its right), but
// finds each sample row's crossings once instead of testing every edge
// at every sample: LunarLander's terrain, a polygon across the whole
// view, took 60 ms a frame the other way.
func (c canvas) polygon(pts []point, col color.RGBA) {
	if len(pts) < 3 {
		return
	}
	x0, y0, x1, y1 := pts[0].x, pts[0].y, pts[0].x, pts[0].y
	for _, p := range pts[1:] {
		x0, y0, x1, y1 = min(x0, p.x), min(y0, p.y), max(x1, p.x), max(y1, p.y)
	}
	b := c.Rect
	xa, xb := max(int(math.Floor(x0)), b.Min.X), min(int(math.Ceil(x1)), b.Max.X-1)
	if xa > xb {
		return
	}
	counts := make([]int, xb-xa+1)
	var cross []float64
	for y := max(int(math.Floor(y0)), b.Min.Y); y <= min(int(math.Ceil(y1)), b.Max.Y-1); y++ {
		clear(counts)
		for sy := range 4 {
			ys := float64(y) + (float64(sy)+0.5)/4
			cross = cross[:0]
			for i, j := 0, len(pts)-1; i < len(pts); j, i = i, i+1 {
				a, b := pts[i], pts[j]
				if (a.y > ys) != (b.y > ys) {
					cross = append(cross, (b.x-a.x)*(ys-a.y)/(b.y-a.y)+a.x)
				}
			}
			slices.Sort(cross)
			k := 0 // crossings at or left of the sample: those not to its right
			for x := xa; x <= xb; x++ {
				for sx := range 4 {
					xs := float64(x) + (float64(sx)+0.5)/4
					for k < len(cross) && cross[k] <= xs {
						k++
					}
					if (len(cross)-k)%2 == 1 {
						counts[x-xa]++
					}
				}
			}
		}
		for x := xa; x <= xb; x++ {
			c.blend(x, y, col, float64(counts[x-xa])/16)
		}
	}
}

// line draws a segment of the given width with square ends.
func (c canvas) line(a, b point, width float64, col color.RGBA) {
	dx, dy := b.x-a.x, b.y-a.y
	l := math.Hypot(dx, dy)
	if l == 0 {
		c.circle(a.x, a.y, width/2, col)
		return
	}
	nx, ny := -dy/l*width/2, dx/l*width/2
	c.polygon([]point{{a.x + nx, a.y + ny}, {b.x + nx, b.y + ny}, {b.x - nx, b.y - ny}, {a.x - nx, a.y - ny}}, col)
}
