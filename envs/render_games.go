package envs

import (
	"image"
	"image/color"
	"slices"

	"github.com/ByteArena/box2d"
)

// LunarLander colours, as Gymnasium draws them: a black sky over a white
// moon, a purple lander outlined in dark blue, white flag poles with yellow
// flags. The engine flames stand in for Gymnasium's exhaust particles,
// which the env does not simulate.
var (
	llSkyColor     = color.RGBA{0, 0, 0, 255}
	llMoonColor    = color.RGBA{255, 255, 255, 255}
	llBodyColor    = color.RGBA{128, 102, 230, 255}
	llOutlineColor = color.RGBA{77, 77, 128, 255}
	llPoleColor    = color.RGBA{255, 255, 255, 255}
	llFlagColor    = color.RGBA{204, 204, 0, 255}
	llFlameOuter   = color.RGBA{255, 110, 30, 255}
	llFlameInner   = color.RGBA{255, 220, 90, 255}
)

// Render draws the world as Gymnasium's 600×400 view (30 px per metre): the
// terrain, the pad's two flags, the legs and the hull, with a flame below
// the hull when the last step fired the main engine and one at the side
// opposite the side engine that fired (longer with more throttle). Before
// the first Reset it draws the empty sky.
func (e *LunarLander) Render() image.Image {
	c := newCanvas(llViewportW, llViewportH, llSkyColor)
	if e.lander == nil {
		return c.RGBA
	}
	px := func(v box2d.B2Vec2) point {
		return point{v.X * llScale, llViewportH - v.Y*llScale}
	}

	// Terrain: the edges of the static body, except the flat floor at
	// y = 0, sorted left to right and closed along the bottom.
	var ground []point
	for b := e.world.GetBodyList(); b != nil; b = b.GetNext() {
		if b.GetType() != box2d.B2BodyType.B2_staticBody {
			continue
		}
		for f := b.GetFixtureList(); f != nil; f = f.GetNext() {
			edge, ok := f.GetShape().(*box2d.B2EdgeShape)
			if !ok || (edge.M_vertex1.Y == 0 && edge.M_vertex2.Y == 0) {
				continue
			}
			ground = append(ground, px(edge.M_vertex1), px(edge.M_vertex2))
		}
	}
	slices.SortStableFunc(ground, func(a, b point) int {
		switch {
		case a.x < b.x:
			return -1
		case a.x > b.x:
			return 1
		}
		return 0
	})
	ground = slices.Compact(ground)
	if len(ground) >= 2 {
		ground = append(ground, point{ground[len(ground)-1].x, llViewportH + 1}, point{ground[0].x, llViewportH + 1})
		c.polygon(ground, llMoonColor)
	}

	// Flags at both ends of the pad, 50 px poles with 25 px pennants.
	const w = llViewportW / llScale
	for _, i := range [2]int{llChunks/2 - 1, llChunks/2 + 1} {
		x := w / (llChunks - 1) * float64(i) * llScale
		y1 := llViewportH - e.helipadY*llScale
		y2 := y1 - 50
		c.line(point{x, y1}, point{x, y2}, 1.5, llPoleColor)
		c.polygon([]point{{x, y2}, {x, y2 + 10}, {x + 25, y2 + 5}}, llFlagColor)
	}

	// Flames first, so that the hull covers their roots.
	if e.mPower > 0 {
		l := 14 + 16*e.mPower
		llFlame(c, e.lander, px, [2]float64{-6, -10}, [2]float64{6, -10}, [2]float64{0, -10 - l})
	}
	if e.sPower > 0 && e.sDir != 0 {
		// The left engine (direction −1) blows out of the right side.
		s, l := -e.sDir, 8+8*e.sPower
		llFlame(c, e.lander, px, [2]float64{s * 14, 10}, [2]float64{s * 14, 18}, [2]float64{s * (14 + l), 14})
	}

	for _, leg := range e.legs {
		llBody(c, leg, px)
	}
	llBody(c, e.lander, px)
	return c.RGBA
}

// llBody fills every polygon fixture of b and outlines it.
func llBody(c canvas, b *box2d.B2Body, px func(box2d.B2Vec2) point) {
	xf := b.GetTransform()
	for f := b.GetFixtureList(); f != nil; f = f.GetNext() {
		poly, ok := f.GetShape().(*box2d.B2PolygonShape)
		if !ok {
			continue
		}
		pts := make([]point, poly.M_count)
		for i := range pts {
			pts[i] = px(box2d.B2TransformVec2Mul(xf, poly.M_vertices[i]))
		}
		c.polygon(pts, llBodyColor)
		for i := range pts {
			c.line(pts[i], pts[(i+1)%len(pts)], 1.5, llOutlineColor)
		}
	}
}

// llFlame draws a two-tone flame on the triangle a, b, tip given in the
// lander's frame in pixels (y up).
func llFlame(c canvas, lander *box2d.B2Body, px func(box2d.B2Vec2) point, a, b, tip [2]float64) {
	at := func(p [2]float64) point {
		return px(lander.GetWorldPoint(box2d.MakeB2Vec2(p[0]/llScale, p[1]/llScale)))
	}
	c.polygon([]point{at(a), at(b), at(tip)}, llFlameOuter)
	mid := [2]float64{(a[0] + b[0]) / 2, (a[1] + b[1]) / 2}
	inner := func(p [2]float64, k float64) [2]float64 {
		return [2]float64{mid[0] + (p[0]-mid[0])*k, mid[1] + (p[1]-mid[1])*k}
	}
	c.polygon([]point{at(inner(a, 0.5)), at(inner(b, 0.5)), at(inner(tip, 0.6))}, llFlameInner)
}

// Catch and ConnectFour drawing sizes and colours.
const (
	catchCell = 40 // pixels per board cell
	c4Cell    = 60 // pixels per board cell
	c4Margin  = 10 // board border around the holes
)

var (
	catchBackground = color.RGBA{24, 24, 40, 255}
	catchGridColor  = color.RGBA{52, 52, 76, 255}
	catchBallColor  = color.RGBA{255, 170, 40, 255}
	catchPaddle     = color.RGBA{90, 200, 250, 255}
	c4BoardColor    = color.RGBA{30, 80, 200, 255}
	c4HoleColor     = color.RGBA{235, 240, 250, 255}
	c4AgentColor    = color.RGBA{220, 30, 40, 255}
	c4OpponentColor = color.RGBA{250, 210, 30, 255}
)

// Render draws the 10×5 board at 40 px a cell (200×400): a dark grid, the
// ball as an orange disc and the paddle as a light blue bar on the bottom
// row.
func (c *Catch) Render() image.Image {
	cv := newCanvas(catchColumns*catchCell, catchRows*catchCell, catchBackground)
	for k := 1; k < catchColumns; k++ {
		x := float64(k * catchCell)
		cv.rect(x-0.5, 0, x+0.5, catchRows*catchCell, catchGridColor)
	}
	for r := 1; r < catchRows; r++ {
		y := float64(r * catchCell)
		cv.rect(0, y-0.5, catchColumns*catchCell, y+0.5, catchGridColor)
	}
	const cell = float64(catchCell)
	cv.circle((float64(c.ballX)+0.5)*cell, (float64(c.ballY)+0.5)*cell, 0.35*cell, catchBallColor)
	x0, y0 := float64(c.paddleX)*cell, float64(catchRows-1)*cell
	cv.rect(x0+3, y0+cell*0.6, x0+cell-3, y0+cell-4, catchPaddle)
	return cv.RGBA
}

// Render draws the 6×7 board at 60 px a cell plus a 10 px border
// (440×380): a blue board with light empty holes, the agent's discs red
// and the opponent's yellow.
func (c *ConnectFour) Render() image.Image {
	const cell = float64(c4Cell)
	cv := newCanvas(c4Cols*c4Cell+2*c4Margin, c4Rows*c4Cell+2*c4Margin, c4BoardColor)
	for r := range c4Rows {
		for k := range c4Cols {
			col := c4HoleColor
			switch c.board[r][k] {
			case 1:
				col = c4AgentColor
			case 2:
				col = c4OpponentColor
			}
			cx := c4Margin + (float64(k)+0.5)*cell
			cy := c4Margin + (float64(r)+0.5)*cell
			cv.circle(cx, cy, 0.4*cell, col)
		}
	}
	return cv.RGBA
}
