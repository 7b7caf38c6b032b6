package envs

import (
	"image"
	"image/color"
	"slices"
)

// minatarCell is the size of a grid cell in pixels.
const minatarCell = 24

// minatarPalette colours the channels by index (MinAtar's order per game).
var minatarPalette = [...]color.RGBA{
	{80, 200, 255, 255},  // 0: the player (paddle, player, chicken, cannon, sub front)
	{255, 90, 70, 255},   // 1: ball, enemy, car, alien, sub back
	{255, 200, 60, 255},  // 2
	{120, 230, 120, 255}, // 3
	{230, 120, 230, 255}, // 4
	{255, 150, 40, 255},  // 5
	{160, 140, 255, 255}, // 6
	{90, 220, 210, 255},  // 7
	{250, 250, 140, 255}, // 8
	{240, 240, 240, 255}, // 9
}

var (
	minatarBackground = color.RGBA{16, 16, 28, 255}
	minatarGridColor  = color.RGBA{40, 40, 60, 255}
)

// minatarTrails lists each game's trail channels, which Render draws as
// small dim squares under everything else.
func minatarTrails(g minatarGame) []int {
	switch g.(type) {
	case *breakout, *asterix:
		return []int{2}
	case *freeway:
		return []int{2, 3, 4, 5, 6}
	case *seaquest:
		return []int{3}
	}
	return nil
}

// Render draws the state at 24 px a cell (240×240): one colour per channel,
// trails as small dim squares, and where objects share a cell the channel
// that comes first in MinAtar's order (the player's) on top.
func (m *MinAtar) Render() image.Image {
	const size = minatarSize * minatarCell
	cv := newCanvas(size, size, minatarBackground)
	for k := 1; k < minatarSize; k++ {
		p := float64(k * minatarCell)
		cv.rect(p-0.5, 0, p+0.5, size, minatarGridColor)
		cv.rect(0, p-0.5, size, p+0.5, minatarGridColor)
	}
	obs := make([]float32, len(m.obs))
	m.game.observe(obs)
	trails := minatarTrails(m.game)
	cell := func(c int, inset float64, col color.RGBA) {
		for i, v := range obs[c*minatarSize*minatarSize : (c+1)*minatarSize*minatarSize] {
			if v == 0 {
				continue
			}
			x0, y0 := float64(i%minatarSize*minatarCell), float64(i/minatarSize*minatarCell)
			cv.rect(x0+inset, y0+inset, x0+minatarCell-inset, y0+minatarCell-inset, col)
		}
	}
	for _, c := range trails {
		col := minatarPalette[c]
		col.R, col.G, col.B = col.R/2, col.G/2, col.B/2
		cell(c, 7, col)
	}
	for c := m.game.channels() - 1; c >= 0; c-- {
		if !slices.Contains(trails, c) {
			cell(c, 2, minatarPalette[c])
		}
	}
	return cv.RGBA
}
