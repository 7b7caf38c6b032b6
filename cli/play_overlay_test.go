package cli

import (
	"image"
	"testing"
)

// TestOverlayBox: the overlay is one line of the 7-pixel-wide font in a box
// 19 pixels high at the top-left corner, shortened to "N: R" on a picture
// too narrow for the whole line.
func TestOverlayBox(t *testing.T) {
	for _, tc := range []struct {
		width int
		text  string
	}{
		{600, "episode 2  return -3.50"},
		{169, "episode 2  return -3.50"},
		{168, "2: -3.50"},
		{120, "2: -3.50"},
	} {
		img := image.NewRGBA(image.Rect(0, 0, tc.width, 50))
		plain := clone(img)
		box := drawOverlay(img, 2, -3.5)
		if want := image.Rect(0, 0, 7*len(tc.text)+2*overlayPadX, 19); box != want {
			t.Errorf("%d pixels wide: box %v, want %v for %q", tc.width, box, want, tc.text)
		}
		checkOverlay(t, 0, plain, img, box)
	}
}
