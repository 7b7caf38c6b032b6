package envs

import (
	"bytes"
	"image/color"
	"math/rand/v2"
	"testing"
)

// TestPolygonMatchesThePointTest holds canvas.polygon, which finds each
// sample row's edge crossings once, to fill with the even-odd point test
// per sample it replaces, pixel for pixel, on random polygons — convex or
// not, self-intersecting, partly or wholly off the canvas, with
// horizontal edges and shared vertices.
func TestPolygonMatchesThePointTest(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	bg := color.RGBA{200, 210, 220, 255}
	col := color.RGBA{30, 90, 160, 255}
	for n := range 300 {
		pts := make([]point, 3+r.IntN(20))
		for i := range pts {
			pts[i] = point{r.Float64()*90 - 15, r.Float64()*70 - 10}
			switch r.IntN(6) {
			case 0: // a horizontal edge
				if i > 0 {
					pts[i].y = pts[i-1].y
				}
			case 1: // on the pixel grid
				pts[i] = point{float64(r.IntN(60)), float64(r.IntN(50))}
			}
		}
		got, want := newCanvas(64, 48, bg), newCanvas(64, 48, bg)
		got.polygon(pts, col)
		x0, y0, x1, y1 := pts[0].x, pts[0].y, pts[0].x, pts[0].y
		for _, p := range pts[1:] {
			x0, y0, x1, y1 = min(x0, p.x), min(y0, p.y), max(x1, p.x), max(y1, p.y)
		}
		want.fill(x0, y0, x1, y1, col, func(x, y float64) bool {
			in := false
			for i, j := 0, len(pts)-1; i < len(pts); j, i = i, i+1 {
				a, b := pts[i], pts[j]
				if (a.y > y) != (b.y > y) && x < (b.x-a.x)*(y-a.y)/(b.y-a.y)+a.x {
					in = !in
				}
			}
			return in
		})
		if !bytes.Equal(got.Pix, want.Pix) {
			t.Fatalf("polygon %d (%d points %v): pixels differ from the point test", n, len(pts), pts)
		}
	}
}
