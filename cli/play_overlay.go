package cli

import (
	"fmt"
	"image"
	"strconv"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// The margins in pixels between the overlay's box and its text: with the
// font's 13-pixel lines the box is 19 pixels high, within the top row of a
// MinAtar grid (24 pixels a cell).
const (
	overlayPadX = 4
	overlayPadY = 3
)

// overlayShade is the share of the env's brightness left under the
// overlay's box: white becomes grey 89, on which white text is legible,
// and what the box covers still shows.
const overlayShade = 0.35

// drawOverlay writes "episode N  return R" (R with two decimals, as play
// prints returns) in white in a shaded box in the top-left corner of img,
// and returns the box. Pixels outside the box do not change. On a picture
// too narrow for it (an Atari frame is 160 pixels wide) the text is
// "N: R".
func drawOverlay(img *image.RGBA, episode int, ret float64) image.Rectangle {
	face := basicfont.Face7x13
	r := strconv.FormatFloat(ret, 'f', 2, 64)
	text := fmt.Sprintf("episode %d  return %s", episode, r)
	d := font.Drawer{Dst: img, Src: image.White, Face: face}
	if d.MeasureString(text).Ceil()+2*overlayPadX > img.Rect.Dx() {
		text = fmt.Sprintf("%d: %s", episode, r)
	}
	box := image.Rect(0, 0, d.MeasureString(text).Ceil()+2*overlayPadX, face.Height+2*overlayPadY)
	box = box.Add(img.Rect.Min).Intersect(img.Rect)
	shade(img, box)
	d.Dot = fixed.P(box.Min.X+overlayPadX, box.Min.Y+overlayPadY+face.Ascent)
	d.DrawString(text)
	return box
}

// shade darkens the rectangle r of img to overlayShade of its brightness.
func shade(img *image.RGBA, r image.Rectangle) {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			p := img.Pix[img.PixOffset(x, y):][:3]
			for k, v := range p {
				p[k] = uint8(float64(v)*overlayShade + 0.5)
			}
		}
	}
}
