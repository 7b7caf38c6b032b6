package cli

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/internal/pytest"
	"github.com/evolverl/evolve/netconf"
	"github.com/evolverl/evolve/record"
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
		w.add(f)
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

// TestGIFWriterScreen: the screen is the picture below the overlay's
// band, black; pictures that are not RGBA, or not of the first frame's
// size, are drawn onto one of the first screen's size, cropped or padded
// with black.
func TestGIFWriterScreen(t *testing.T) {
	var w gifWriter
	first := paint(image.NewRGBA(image.Rect(0, 0, 4, 3)), image.Rect(0, 0, 4, 3), 1, 12)
	s := w.screen(first)
	if want := image.Rect(0, 0, 4, 3+overlayBand); s.Rect != want {
		t.Fatalf("screen of a 4×3 picture is %v, want %v", s.Rect, want)
	}
	black := color.RGBA{0, 0, 0, 255}
	for y := range s.Rect.Dy() {
		for x := range s.Rect.Dx() {
			want := black
			if y >= overlayBand {
				want = first.RGBAAt(x, y-overlayBand)
			}
			if c := s.RGBAAt(x, y); c != want {
				t.Fatalf("first screen: pixel (%d, %d) is %v, want %v", x, y, c, want)
			}
		}
	}
	w.add(s)
	gray := image.NewGray(image.Rect(1, 1, 4, 6)) // 3×5 at an offset
	for i := range gray.Pix {
		gray.Pix[i] = 200
	}
	s = w.screen(gray)
	if s.Rect != (image.Rectangle{Max: w.size}) {
		t.Fatalf("screen of a 3×5 picture is %v, want %v", s.Rect, w.size)
	}
	b := overlayBand
	for _, p := range []struct {
		x, y int
		want color.RGBA
	}{{0, 0, black}, {0, b, color.RGBA{200, 200, 200, 255}}, {2, b + 2, color.RGBA{200, 200, 200, 255}}, {3, b, black}} {
		if c := s.RGBAAt(p.x, p.y); c != p.want {
			t.Errorf("pixel (%d, %d) is %v, want %v", p.x, p.y, c, p.want)
		}
	}
}

// TestGIFOverlayHidesNothing: in every frame the overlay sits in a band
// above the env's picture, which the GIF shows whole, pixel for pixel:
// drawn over the picture, it hid the ball of Catch (200×400) in its top
// row and 7 of the 10 cells of MinAtar's (240×240).
func TestGIFOverlayHidesNothing(t *testing.T) {
	for _, size := range []image.Point{{200, 400}, {240, 240}, {160, 210}, {600, 400}} {
		var w gifWriter
		for frame := range 2 {
			r := image.Rectangle{Max: size}
			img := paint(image.NewRGBA(r), r, 1+frame, 250)
			pic := w.screen(img)
			plain := clone(pic)
			box := drawOverlay(pic, 2, -3.5)
			checkOverlay(t, frame, plain, pic, box)
			band := pic.Rect.Dy() - size.Y
			if band < box.Max.Y || pic.Rect.Dx() != size.X {
				t.Fatalf("%v: a %v screen with the overlay in %v: the box is over the picture", size, pic.Rect, box)
			}
			for y := range size.Y {
				for x := range size.X {
					if c, want := pic.RGBAAt(x, y+band), img.RGBAAt(x, y); c != want {
						t.Fatalf("%v, frame %d: pixel (%d, %d) of the picture is %v, want %v", size, frame, x, y, c, want)
					}
				}
			}
			w.add(pic)
		}
	}
}

// TestPlayGIFSaysWhyAGymEnvCannotRender: a Gymnasium env whose render
// raises (pygame missing) fails -gif with the child's own reason, not only
// "cannot render itself"; an env without rendering says that.
func TestPlayGIFSaysWhyAGymEnvCannotRender(t *testing.T) {
	pytest.StdlibEnvs(t, filepath.Join("..", "envs", "testdata", "gymtest"))
	dir := t.TempDir()
	config := "[env]\nid = \"gym:test\"\n[env.options]\nmodule_env = \"gymtest:RenderRaises\"\n"
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(envs.NewBox(0, 10, 1), envs.Discrete{N: 4}, agent.DefaultConfig(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Save(filepath.Join(dir, "elite.safetensors")); err != nil {
		t.Fatal(err)
	}
	gifPath := filepath.Join(t.TempDir(), "a.gif")
	code, _, stderr := evolve(context.Background(), "play", "-agent", dir, "-gif", gifPath)
	if code != exitBadInput || !strings.Contains(stderr, "pygame is not installed") || !strings.Contains(stderr, "-gif "+gifPath) {
		t.Errorf("exit %d, stderr:\n%s\nwant 2 with the child's reason", code, stderr)
	}
	if _, err := os.Stat(gifPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed -gif left %s: %v", gifPath, err)
	}
	// An env that does not draw itself (a probe) says so, by its id.
	probe := filepath.Join(t.TempDir(), "probe")
	if code, _, stderr := evolve(context.Background(), "-env", "Probe1-v0", "-set", "population.max_steps=1e3", "-out", probe, "-quiet"); code != exitOK {
		t.Fatalf("probe run: exit %d: %s", code, stderr)
	}
	code, _, stderr = evolve(context.Background(), "play", "-agent", probe, "-gif", gifPath)
	if code != exitBadInput || !strings.Contains(stderr, "env Probe1-v0: cannot render itself (it does not implement envs.Renderer)") {
		t.Errorf("a probe with -gif: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestPlayGIFShowsTheRenderedFramesWithTheOverlay plays short episodes on
// envs of light and dark backgrounds, replays them, and checks that every
// frame of the GIF, composed by the disposal rules, is the env's own
// picture below a band with the episode and the return so far,
// pixel for pixel; that the overlay changes nothing else; and that frames
// after the first store less than the whole picture.
func TestPlayGIFShowsTheRenderedFramesWithTheOverlay(t *testing.T) {
	minatar := netconf.DefaultSpec(netconf.EncoderCNN)
	minatar.CNN.Strides = []int{1, 1} // a 10×10 grid
	for _, tc := range []struct {
		env  string
		spec netconf.Spec
	}{
		{"CartPole-v1", netconf.DefaultSpec(netconf.EncoderMLP)},
		{"LunarLander-v3", netconf.DefaultSpec(netconf.EncoderMLP)},
		{"MinAtar/Breakout-v0", minatar},
	} {
		t.Run(tc.env, func(t *testing.T) {
			file := untrainedAgent(t, tc.env, tc.spec)
			gifPath, npzPath := filepath.Join(t.TempDir(), "a.gif"), filepath.Join(t.TempDir(), "a.npz")
			code, _, stderr := evolve(context.Background(), "play", "-agent", file, "-env", tc.env, "-episodes", "2",
				"-seed", "3", "-max-steps", "25", "-gif", gifPath, "-record", npzPath)
			if code != exitOK {
				t.Fatalf("play exits %d; stderr:\n%s", code, stderr)
			}
			tr, err := record.Read(npzPath)
			if err != nil {
				t.Fatal(err)
			}
			want := replay(t, tc.env, 3, tr)
			g := decodeGIF(t, gifPath)
			shown := composeGIF(g)
			if len(shown) != len(want) || len(want) != tr.Len()+2 {
				t.Fatalf("GIF has %d frames, the replay %d, want %d (a frame after each reset and each step)", len(shown), len(want), tr.Len()+2)
			}
			smaller := 0
			var gw gifWriter // its screen: the env's picture below the overlay's band
			for i, w := range want {
				pic := gw.screen(w.img)
				plain := clone(pic)
				box := drawOverlay(pic, w.episode, w.ret)
				checkOverlay(t, i, plain, pic, box)
				if at, ok := firstDiff(shown[i], pic); ok {
					t.Fatalf("frame %d (episode %d, return %.2f): pixel %v is %v in the GIF, want %v",
						i, w.episode, w.ret, at, shown[i].At(at.X, at.Y), pic.At(at.X, at.Y))
				}
				if g.Delay[i] != gifDelay || g.Disposal[i] != gif.DisposalNone {
					t.Errorf("frame %d: delay %d, disposal %d; want %d and %d", i, g.Delay[i], g.Disposal[i], gifDelay, gif.DisposalNone)
				}
				if b := g.Image[i].Bounds(); i > 0 && b.Dx()*b.Dy() < w.img.Rect.Dx()*w.img.Rect.Dy() {
					smaller++
				}
			}
			if smaller < len(want)/2 {
				t.Errorf("%d of %d frames store less than the whole picture, want most", smaller, len(want))
			}
		})
	}
}
