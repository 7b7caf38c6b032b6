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
// font's 13-pixel lines the box is 19 pixels high (overlayBand).
const (
	overlayPadX = 4
	overlayPadY = 3
)

// overlayBand is the height in pixels of the black band, as high as the
// overlay's box, that gifWriter.screen adds above the env's picture for
// the overlay: drawn over the picture, the box hid what small grids draw
// in their top row (Catch's ball as it spawns, 7 of MinAtar's 10 cells).
var overlayBand = basicfont.Face7x13.Height + 2*overlayPadY

// overlayShade is the share of the env's brightness left under the
// overlay's box: white becomes grey 89, on which white text is legible,
// and what the box covers still shows.
const overlayShade = 0.35

// drawOverlay writes "episode N  return R" (R with two decimals, as play
// prints returns) in white in a shaded box in the top-left corner of img,
// and returns the box. Pixels outside the box do not change. On a picture
// too narrow for it (an Atari frame is 160 pixels wide) the text is
// "N: R". In the GIF's frames the box fills the band above the env's
// picture (overlayBand), and hides none of it.
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
