package envs

import (
	"bytes"
	"image"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// checkGolden compares img pixel by pixel with testdata/render/name.png, or
// rewrites that file when the test runs with -update or
// EVOLVE_UPDATE_GOLDEN=1 (look at the new picture first).
func checkGolden(t *testing.T, name string, img image.Image) {
	t.Helper()
	path := filepath.Join("testdata", "render", name+".png")
	if *update || os.Getenv("EVOLVE_UPDATE_GOLDEN") == "1" {
		var buf bytes.Buffer
		enc := png.Encoder{CompressionLevel: png.BestCompression}
		if err := enc.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (set EVOLVE_UPDATE_GOLDEN=1 to create it)", err)
	}
	defer f.Close()
	want, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if got, w := img.Bounds(), want.Bounds(); got != w {
		t.Fatalf("%s: image is %v, golden is %v", name, got, w)
	}
	toRGBA := func(m image.Image) *image.RGBA {
		r := image.NewRGBA(m.Bounds())
		draw.Draw(r, r.Rect, m, m.Bounds().Min, draw.Src)
		return r
	}
	g, w := toRGBA(img), toRGBA(want)
	diff, first := 0, image.Point{-1, -1}
	for y := g.Rect.Min.Y; y < g.Rect.Max.Y; y++ {
		for x := g.Rect.Min.X; x < g.Rect.Max.X; x++ {
			i := g.PixOffset(x, y)
			if !bytes.Equal(g.Pix[i:i+4], w.Pix[i:i+4]) {
				if diff == 0 {
					first = image.Point{x, y}
				}
				diff++
			}
		}
	}
	if diff > 0 {
		t.Errorf("%s: %d pixels differ from the golden image, the first at %v (set EVOLVE_UPDATE_GOLDEN=1 to rewrite it after checking the picture)", name, diff, first)
	}
}

// gamesRender resets env with seed, plays actions and returns its picture.
func gamesRender(t *testing.T, env Env, seed int64, actions ...[]float32) image.Image {
	t.Helper()
	env.Reset(seed)
	for i, a := range actions {
		if _, _, term, trunc, _ := env.Step(a); (term || trunc) && i < len(actions)-1 {
			t.Fatalf("episode ended at step %d of %d", i+1, len(actions))
		}
	}
	img, ok := Render(env)
	if !ok {
		t.Fatalf("%T does not render", env)
	}
	return img
}

// gamesRepeat returns n copies of action.
func gamesRepeat(n int, action ...float32) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = action
	}
	return out
}

func TestRenderLunarLanderGolden(t *testing.T) {
	discrete := func() Env {
		e, err := NewLunarLander(DefaultLunarLanderParams())
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	continuous := func() Env {
		p := DefaultLunarLanderParams()
		p.Continuous = true
		e, err := NewLunarLander(p)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	// Falling with the engines off.
	checkGolden(t, "lunarlander-falling", gamesRender(t, discrete(), 1, gamesRepeat(40, 0)...))
	// Braking with the main engine, which fired on the last step.
	checkGolden(t, "lunarlander-main-engine", gamesRender(t, discrete(), 5,
		append(gamesRepeat(45, 0), gamesRepeat(5, 2)...)...))
	// Continuous: half throttle (75 %) on the main engine, no side engine.
	checkGolden(t, "lunarlander-continuous", gamesRender(t, continuous(), 3, append(gamesRepeat(35, 0, 0), gamesRepeat(6, 0.5, 0)...)...))

	// Before Reset: the empty sky, at the viewport's size.
	img := discrete().(Renderer).Render()
	if b := img.Bounds(); b.Dx() != llViewportW || b.Dy() != llViewportH {
		t.Errorf("unreset LunarLander renders %v, want %d×%d", b, llViewportW, llViewportH)
	}
}

func TestRenderLunarLanderIsDeterministic(t *testing.T) {
	a := gamesRender(t, mustMakeLL(t), 7, gamesRepeat(25, 2)...).(*image.RGBA)
	b := gamesRender(t, mustMakeLL(t), 7, gamesRepeat(25, 2)...).(*image.RGBA)
	if !bytes.Equal(a.Pix, b.Pix) {
		t.Error("two runs of the same seed and actions render differently")
	}
}

func mustMakeLL(t *testing.T) Env {
	t.Helper()
	e, err := NewLunarLander(DefaultLunarLanderParams())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestRenderCatchGolden(t *testing.T) {
	checkGolden(t, "catch-start", gamesRender(t, NewCatch(), 1))
	checkGolden(t, "catch-midway", gamesRender(t, NewCatch(), 2, []float32{0}, []float32{0}, []float32{1}, []float32{2}, []float32{0}))
}

func TestRenderConnectFourGolden(t *testing.T) {
	play := func(cols ...float32) [][]float32 {
		out := make([][]float32, len(cols))
		for i, c := range cols {
			out[i] = []float32{c}
		}
		return out
	}
	c1, err := NewConnectFour(OpponentRandom, false)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "connect4-opening", gamesRender(t, c1, 1, play(3, 3)...))
	c2, err := NewConnectFour(OpponentLookahead, false)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "connect4-midgame", gamesRender(t, c2, 2, play(3, 2, 4, 4, 1, 5, 0)...))
}
