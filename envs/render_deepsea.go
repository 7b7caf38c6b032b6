package envs

import (
	"image"
	"image/color"
)

// DeepSea drawing colours.
var (
	deepSeaWater = color.RGBA{10, 40, 90, 255}
	deepSeaGrid  = color.RGBA{30, 70, 130, 255}
	deepSeaPath  = color.RGBA{18, 58, 112, 255} // the diagonal, the one path to the reward
	deepSeaGoal  = color.RGBA{250, 200, 40, 255}
	deepSeaAgent = color.RGBA{240, 90, 60, 255}
)

// deepSeaCell is the side of a cell in pixels: grids up to 50 cells wide
// draw at 400 to 800 px, larger ones at 8 px a cell.
func deepSeaCell(n int) int { return max(8, 400/n) }

// Render draws the grid (max(8, 400/size) pixels a cell): deep blue water, the
// diagonal a shade lighter, the rewarding bottom-right cell gold, and the
// agent as a red disc (not drawn once it has fallen off the grid).
func (d *DeepSea) Render() image.Image {
	n, cell := d.size, deepSeaCell(d.size)
	c := float64(cell)
	cv := newCanvas(n*cell, n*cell, deepSeaWater)
	for i := range n {
		cv.rect(float64(i)*c, float64(i)*c, float64(i+1)*c, float64(i+1)*c, deepSeaPath)
	}
	cv.rect(float64(n-1)*c, float64(n-1)*c, float64(n)*c, float64(n)*c, deepSeaGoal)
	for k := 1; k < n; k++ {
		x := float64(k) * c
		cv.rect(x-0.5, 0, x+0.5, float64(n)*c, deepSeaGrid)
		cv.rect(0, x-0.5, float64(n)*c, x+0.5, deepSeaGrid)
	}
	if d.row < n {
		cv.circle((float64(d.col)+0.5)*c, (float64(d.row)+0.5)*c, 0.35*c, deepSeaAgent)
	}
	return cv.RGBA
}
