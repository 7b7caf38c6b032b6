package cli

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/color/palette"
	"image/draw"
	"io"
)

// gifDelay is how long `evolve play -gif` shows each frame, in hundredths
// of a second (25 frames per second).
const gifDelay = 4

// gifWriter makes the animated GIF of `evolve play -gif` a frame at a
// time, compressing each frame as it comes (memory holds the compressed
// frames and the last picture, not every picture), and keeps it small in
// two ways.
//
// Frame differencing: the first frame is stored whole; every later one
// stores only the bounding rectangle of the pixels that changed since the
// frame before, with the unchanged pixels inside it transparent, and stays
// on screen (disposal "do not dispose") for the next frame to draw over. A
// frame without changes is one transparent pixel. Runs of transparent
// pixels also compress better than the env's own pixels would.
//
// Exact colours: index 0 of the global palette is the transparent colour,
// and the others are the colours of the frames in the order they first
// appear. CartPole and MinAtar draw fewer than 255 colours, so all their
// frames refer to it. A frame whose new colours no longer fit gets a local
// palette of the colours of its changed pixels (most of LunarLander's: its
// flame and antialiased edges draw some 1,400 colours over three episodes,
// and no 255 of them would hold a tenth of its frames); one with more than
// 255 of them (a Gymnasium frame of many shades) is mapped to the Plan 9
// palette, which was the only palette before, and stored whole within its
// rectangle.
type gifWriter struct {
	size    image.Point
	frames  int
	blocks  bytes.Buffer         // the frames, encoded
	z       bytes.Buffer         // scratch for a frame's LZW codes
	prev    *image.RGBA          // the last frame added, as it is meant to look
	palette color.Palette        // the global palette: the transparent colour, then the frames' colours
	index   map[color.RGBA]uint8 // the index in palette of each of its colours
	plan9   map[color.RGBA]uint8 // the nearest Plan 9 colour of each colour the fallback saw
}

// screen returns img below a black band overlayBand pixels high, for
// drawOverlay to write in without hiding the game, as an RGBA image of the
// size of the GIF, which the first frame sets: a later picture of another
// size is cropped or padded with black at the bottom and right. The caller
// may draw on it and then add it.
func (w *gifWriter) screen(img image.Image) *image.RGBA {
	size := img.Bounds().Size().Add(image.Pt(0, overlayBand))
	if w.prev != nil {
		size = w.size
	}
	rgba := image.NewRGBA(image.Rectangle{Max: size})
	draw.Draw(rgba, rgba.Rect, image.Black, image.Point{}, draw.Src)
	draw.Draw(rgba, rgba.Rect.Add(image.Pt(0, overlayBand)), img, img.Bounds().Min, draw.Over)
	return rgba
}

// add appends img, which screen returned, as the next frame. The writer
// keeps img: the caller must not change it afterwards.
func (w *gifWriter) add(img *image.RGBA) {
	if w.prev == nil {
		w.size = img.Rect.Size()
		w.palette = color.Palette{color.RGBA{}}
		w.index = map[color.RGBA]uint8{}
		w.plan9 = map[color.RGBA]uint8{}
	}
	f := w.frame(img, w.changed(img))
	f.delay = gifDelay
	appendGIFFrame(&w.blocks, &w.z, f)
	w.frames++
	w.prev = img
}

// encode writes the GIF.
func (w *gifWriter) encode(out io.Writer) error {
	switch {
	case w.frames == 0:
		return errors.New("no frames to write")
	case w.size.X >= 1<<16 || w.size.Y >= 1<<16:
		return fmt.Errorf("the env draws %d×%d pixels; a GIF holds at most 65,535 a side", w.size.X, w.size.Y)
	}
	if _, err := out.Write(gifHeader(w.size, w.palette)); err != nil {
		return err
	}
	if _, err := out.Write(w.blocks.Bytes()); err != nil {
		return err
	}
	_, err := out.Write([]byte{0x3b}) // the trailer
	return err
}

// same reports whether pixel offset i of img is that of the frame before.
func (w *gifWriter) same(img *image.RGBA, i int) bool {
	if w.prev == nil {
		return false
	}
	p, q := img.Pix[i:i+4:i+4], w.prev.Pix[i:i+4:i+4]
	return p[0] == q[0] && p[1] == q[1] && p[2] == q[2] && p[3] == q[3]
}

// changed returns the smallest rectangle that holds every pixel of img
// that differs from the frame before: all of img for the first frame, and
// the top-left pixel when nothing changed (a GIF frame is not empty).
func (w *gifWriter) changed(img *image.RGBA) image.Rectangle {
	if w.prev == nil {
		return img.Rect
	}
	r := image.Rectangle{}
	width := img.Rect.Dx()
	for y := range img.Rect.Dy() {
		i := img.PixOffset(0, y)
		if bytes.Equal(img.Pix[i:i+4*width], w.prev.Pix[i:i+4*width]) {
			continue
		}
		x0, x1 := 0, width-1
		for w.same(img, i+4*x0) {
			x0++
		}
		for w.same(img, i+4*x1) {
			x1--
		}
		r = r.Union(image.Rect(x0, y, x1+1, y+1))
	}
	if r.Empty() {
		return image.Rect(0, 0, 1, 1)
	}
	return r
}

// opaque returns the colour at pixel offset i of img, taken as opaque (a
// GIF has no partial transparency).
func opaque(img *image.RGBA, i int) color.RGBA {
	return color.RGBA{img.Pix[i], img.Pix[i+1], img.Pix[i+2], 255}
}

// frame returns the rectangle r of img as a GIF frame: its changed pixels
// in the global palette where their colours fit into it (adding the new
// ones), else in a local palette, else in Plan 9's; unchanged pixels
// transparent (index 0) but under Plan 9, which has no transparent colour.
func (w *gifWriter) frame(img *image.RGBA, r image.Rectangle) gifFrame {
	var fresh []color.RGBA // changed pixels' colours not in the palette, in order
	local := map[color.RGBA]uint8{}
	w.eachChanged(img, r, func(c color.RGBA) {
		if _, ok := local[c]; ok {
			return
		}
		local[c] = uint8(min(len(local)+1, 255))
		if _, ok := w.index[c]; !ok {
			fresh = append(fresh, c)
		}
	})
	f := gifFrame{r: r, transparent: true}
	index := w.index
	switch {
	case len(w.palette)+len(fresh) <= 256:
		for _, c := range fresh {
			w.index[c] = uint8(len(w.palette))
			w.palette = append(w.palette, c)
		}
		f.colours = len(w.palette)
	case len(local) <= 255:
		f.local, index = make(color.Palette, len(local)+1), local
		f.local[0] = color.RGBA{}
		for c, k := range local {
			f.local[k] = c
		}
		f.colours = len(f.local)
	default:
		f.pix = toPlan9(img.SubImage(r), w.plan9).Pix
		f.local, f.colours, f.transparent = palette.Plan9, len(palette.Plan9), false
		return f
	}
	f.pix = make([]byte, r.Dx()*r.Dy())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if i := img.PixOffset(x, y); !w.same(img, i) {
				f.pix[(y-r.Min.Y)*r.Dx()+x-r.Min.X] = index[opaque(img, i)]
			}
		}
	}
	return f
}

// eachChanged calls f with the colour of every pixel in the rectangle r of
// img that differs from the frame before, skipping repeats of one colour in
// a row (runs of a colour are the rule).
func (w *gifWriter) eachChanged(img *image.RGBA, r image.Rectangle, f func(color.RGBA)) {
	var last color.RGBA // never an opaque colour
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			i := img.PixOffset(x, y)
			if w.same(img, i) {
				continue
			}
			if c := opaque(img, i); c != last {
				f(c)
				last = c
			}
		}
	}
}

// toPlan9 converts img to the Plan 9 palette, each pixel to the nearest
// colour, keeping img's bounds. nearest caches the palette index of every
// colour seen: frames hold few colours, and color.Palette.Index is a
// search of all 256.
func toPlan9(img image.Image, nearest map[color.RGBA]uint8) *image.Paletted {
	b := img.Bounds()
	pi := image.NewPaletted(b, palette.Plan9)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			c.A = 255
			k, ok := nearest[c]
			if !ok {
				k = uint8(pi.Palette.Index(c))
				nearest[c] = k
			}
			pi.Pix[pi.PixOffset(x, y)] = k
		}
	}
	return pi
}
