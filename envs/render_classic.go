package envs

import (
	"image"
	"image/color"
	"math"
)

// The classic-control pictures follow the layout and colours of Gymnasium's
// own renderings, so that a person who knows those recognises each env. The
// geometry below is worked out in world units with y upwards and turned into
// pixels (y downwards) at the end of each computation.

var (
	ccWhite = color.RGBA{255, 255, 255, 255}
	ccBlack = color.RGBA{0, 0, 0, 255}
)

// ccUp turns a point given with y upwards, in pixels from the bottom-left
// corner of a canvas of height h, into canvas coordinates.
func ccUp(x, y float64, h int) point { return point{x, float64(h) - y} }

// ccRotated returns (x, y) rotated by angle (anticlockwise, y upwards).
func ccRotated(x, y, angle float64) (float64, float64) {
	s, c := math.Sincos(angle)
	return x*c - y*s, x*s + y*c
}

// Render draws the cart on its track with the pole hinged on top, 600×400.
func (c *CartPole) Render() image.Image {
	const w, h = 600, 400
	scale := w / (2 * cpXThreshold)
	poleWidth, poleLen := 10.0, scale*(2*cpLength)
	cartWidth, cartHeight := 50.0, 30.0
	cartY := 100.0 // the cart's centre, from the bottom
	x, theta := c.state[0], c.state[2]
	cartX := x*scale + w/2

	cv := newCanvas(w, h, ccWhite)
	// The track, a thin line through the middle of the cart.
	cv.rect(0, float64(h)-cartY, w, float64(h)-cartY+1, ccBlack)
	cv.polygon([]point{
		ccUp(cartX-cartWidth/2, cartY-cartHeight/2, h), ccUp(cartX+cartWidth/2, cartY-cartHeight/2, h),
		ccUp(cartX+cartWidth/2, cartY+cartHeight/2, h), ccUp(cartX-cartWidth/2, cartY+cartHeight/2, h),
	}, ccBlack)
	// The pole, rotated by −θ (θ > 0 leans it to the right) about the axle.
	axleY := cartY + cartHeight/4
	var pole []point
	for _, p := range [][2]float64{
		{-poleWidth / 2, -poleWidth / 2}, {-poleWidth / 2, poleLen - poleWidth/2},
		{poleWidth / 2, poleLen - poleWidth/2}, {poleWidth / 2, -poleWidth / 2},
	} {
		px, py := ccRotated(p[0], p[1], -theta)
		pole = append(pole, ccUp(cartX+px, axleY+py, h))
	}
	cv.polygon(pole, color.RGBA{202, 152, 101, 255})
	axle := ccUp(cartX, axleY, h)
	cv.circle(axle.x, axle.y, poleWidth/2, color.RGBA{129, 132, 203, 255})
	return cv.RGBA
}

// Render draws the two links hanging from the centre and the line the free
// end must swing above, 500×500 like Gymnasium's.
func (a *Acrobot) Render() image.Image {
	const size = 500
	bound := 2*acLinkLength1 + 0.2 // both links are 1 long
	scale := size / (2 * bound)
	offset := size / 2.0
	s := a.state
	// Joint positions in world units, y upwards; θ1 = 0 hangs straight down.
	p0 := [2]float64{0, 0}
	p1 := [2]float64{acLinkLength1 * math.Sin(s[0]), -acLinkLength1 * math.Cos(s[0])}
	p2 := [2]float64{p1[0] + math.Sin(s[0]+s[1]), p1[1] - math.Cos(s[0]+s[1])}
	px := func(p [2]float64) point { return ccUp(p[0]*scale+offset, p[1]*scale+offset, size) }

	cv := newCanvas(size, size, ccWhite)
	// The target line, one link length above the pivot.
	y := float64(size) - (offset + scale)
	cv.rect(offset-bound*scale, math.Floor(y), offset+bound*scale, math.Floor(y)+1, ccBlack)
	linkColor, jointColor := color.RGBA{0, 204, 204, 255}, color.RGBA{204, 204, 0, 255}
	for _, link := range [][2][2]float64{{p0, p1}, {p1, p2}} {
		cv.line(px(link[0]), px(link[1]), 0.2*scale, linkColor)
		j := px(link[0])
		cv.circle(j.x, j.y, 0.1*scale, jointColor)
	}
	return cv.RGBA
}

// Render draws the hill, the car on it and the flag at the goal, 600×400.
func (m *MountainCar) Render() image.Image { return m.render(0.5) }

// Render draws the hill, the car on it and the flag at the goal, 600×400.
func (m *MountainCarContinuous) Render() image.Image { return m.render(0.45) }

func (hl *hill) render(goal float64) image.Image {
	const w, h = 600, 400
	scale := w / (mcMaxPosition - mcMinPosition)
	height := func(x float64) float64 { return math.Sin(3*x)*0.45 + 0.55 }
	toPix := func(x float64) float64 { return (x - mcMinPosition) * scale }
	cv := newCanvas(w, h, ccWhite)

	// The hill, as a polyline of 100 segments.
	const n = 100
	prev := ccUp(0, height(mcMinPosition)*scale, h)
	for i := 1; i <= n; i++ {
		x := mcMinPosition + (mcMaxPosition-mcMinPosition)*float64(i)/n
		p := ccUp(toPix(x), height(x)*scale, h)
		cv.line(prev, p, 1.5, ccBlack)
		cv.circle(p.x, p.y, 0.75, ccBlack) // round the joint between segments
		prev = p
	}

	// The flag at the goal: a pole and a yellow pennant.
	fx := math.Floor(toPix(goal)) + 0.5
	fy1 := height(goal) * scale
	fy2 := fy1 + 50
	cv.line(ccUp(fx, fy1, h), ccUp(fx, fy2, h), 1, ccBlack)
	cv.polygon([]point{ccUp(fx, fy2, h), ccUp(fx, fy2-10, h), ccUp(fx+25, fy2-5, h)}, color.RGBA{204, 204, 0, 255})

	// The car: a body tilted with the slope, and two wheels.
	pos := hl.state[0]
	carWidth, carHeight, clearance := 40.0, 20.0, 10.0
	angle := math.Cos(3 * pos) // Gymnasium's tilt
	cx, cy := toPix(pos), clearance+height(pos)*scale
	var body []point
	for _, p := range [][2]float64{{-carWidth / 2, 0}, {-carWidth / 2, carHeight}, {carWidth / 2, carHeight}, {carWidth / 2, 0}} {
		x, y := ccRotated(p[0], p[1], angle)
		body = append(body, ccUp(cx+x, cy+y, h))
	}
	cv.polygon(body, ccBlack)
	for _, off := range []float64{carWidth / 4, -carWidth / 4} {
		x, y := ccRotated(off, 0, angle)
		p := ccUp(cx+x, cy+y, h)
		cv.circle(p.x, p.y, carHeight/2.5, color.RGBA{128, 128, 128, 255})
	}
	return cv.RGBA
}

// Render draws the rod swinging about the pivot, 500×500; θ = 0 points up.
func (p *Pendulum) Render() image.Image {
	const size = 500
	bound := 2.2
	scale := size / (2 * bound)
	offset := size / 2.0
	rodLen, rodWidth := scale, 0.2*scale
	rodColor := color.RGBA{204, 77, 77, 255}
	th := p.state[0]
	// The free end, anticlockwise from straight up by θ.
	ex, ey := ccRotated(0, rodLen, th)

	cv := newCanvas(size, size, ccWhite)
	pivot := ccUp(offset, offset, size)
	end := ccUp(offset+ex, offset+ey, size)
	cv.line(pivot, end, rodWidth, rodColor)
	cv.circle(pivot.x, pivot.y, rodWidth/2, rodColor)
	cv.circle(end.x, end.y, rodWidth/2, rodColor)
	cv.circle(pivot.x, pivot.y, 0.05*scale, ccBlack)
	return cv.RGBA
}
