package cli

import (
	"bytes"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"testing"
)

// paint returns a copy of img with the rectangle r painted in n colours
// from first on, one per pixel (then repeating).
func paint(img *image.RGBA, r image.Rectangle, first, n int) *image.RGBA {
	out := clone(img)
	k := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := first + k%n
			out.SetRGBA(x, y, color.RGBA{uint8(c), uint8(c >> 8), uint8(c * 7), 255})
			k++
		}
	}
	return out
}

// TestGIFWriterPalettes feeds frames that fill the global palette, then
// overflow it with colours a local palette holds, then with more than one
// frame can hold, and checks what the decoded GIF shows: the exact frames
// where 255 colours suffice, Plan 9's nearest colours in the rectangle of
// the frame that needs more, and one transparent pixel for a frame without
// changes.
func TestGIFWriterPalettes(t *testing.T) {
	blank := image.NewRGBA(image.Rect(0, 0, 40, 40))
	frames := []*image.RGBA{paint(blank, blank.Rect, 0, 200)}                      // 200 colours: the global palette
	frames = append(frames, paint(frames[0], image.Rect(5, 5, 15, 15), 1000, 100)) // 100 more: a local palette
	many := image.Rect(10, 20, 30, 40)
	frames = append(frames, paint(frames[1], many, 2000, 400)) // 400 more: Plan 9
	frames = append(frames, frames[2])                         // no change
	frames = append(frames, paint(frames[3], image.Rect(39, 0, 40, 1), 3, 1))

	var w gifWriter
	for _, f := range frames {
		w.add(w.screen(f))
	}
	var buf bytes.Buffer
	if err := w.encode(&buf); err != nil {
		t.Fatal(err)
	}
	g, err := gif.DecodeAll(&buf)
	if err != nil {
		t.Fatal(err)
	}
	shown := composeGIF(g)
	if len(shown) != len(frames) {
		t.Fatalf("%d frames, want %d", len(shown), len(frames))
	}
	// What frame 2 shows: Plan 9's nearest colours in its rectangle.
	want2 := clone(frames[2])
	bounds2 := g.Image[2].Bounds()
	for y := bounds2.Min.Y; y < bounds2.Max.Y; y++ {
		for x := bounds2.Min.X; x < bounds2.Max.X; x++ {
			want2.Set(x, y, color.Palette(palette.Plan9).Convert(frames[2].At(x, y)))
		}
	}
	want := []*image.RGBA{frames[0], frames[1], want2, want2, paint(want2, image.Rect(39, 0, 40, 1), 3, 1)}
	for i := range want {
		if at, ok := firstDiff(shown[i], want[i]); ok {
			t.Errorf("frame %d: pixel %v is %v, want %v", i, at, shown[i].At(at.X, at.Y), want[i].At(at.X, at.Y))
		}
	}
	for i, r := range []image.Rectangle{blank.Rect, image.Rect(5, 5, 15, 15), many, image.Rect(0, 0, 1, 1), image.Rect(39, 0, 40, 1)} {
		if b := g.Image[i].Bounds(); b != r {
			t.Errorf("frame %d stores %v, want %v", i, b, r)
		}
	}
}

// TestGIFWriterScreen: pictures that are not RGBA, or not of the first
// frame's size, are drawn onto one that is, cropped or padded with black.
func TestGIFWriterScreen(t *testing.T) {
	var w gifWriter
	first := image.NewRGBA(image.Rect(0, 0, 4, 3))
	if w.screen(first) != first {
		t.Error("screen copied an RGBA picture of the right size")
	}
	w.add(first)
	gray := image.NewGray(image.Rect(1, 1, 4, 6)) // 3×5 at an offset
	for i := range gray.Pix {
		gray.Pix[i] = 200
	}
	s := w.screen(gray)
	if s.Rect != first.Rect {
		t.Fatalf("screen of a 3×5 picture is %v, want %v", s.Rect, first.Rect)
	}
	for _, p := range []struct {
		x, y int
		want color.RGBA
	}{{0, 0, color.RGBA{200, 200, 200, 255}}, {2, 2, color.RGBA{200, 200, 200, 255}}, {3, 0, color.RGBA{0, 0, 0, 255}}} {
		if c := s.RGBAAt(p.x, p.y); c != p.want {
			t.Errorf("pixel (%d, %d) is %v, want %v", p.x, p.y, c, p.want)
		}
	}
}
