package envs

import (
	"flag"
	"fmt"
	"image"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden images")

// classicRenderCases are the fixed states of the golden pictures: an env
// from Make, a seed, and the actions stepped after the reset.
var classicRenderCases = []struct {
	name    string
	id      string
	seed    int64
	actions [][]float32
}{
	{"cartpole_reset", "CartPole-v1", 0, nil},
	{"cartpole_leaning", "CartPole-v1", 1, repeatAction([]float32{1}, 8)},
	{"acrobot_reset", "Acrobot-v1", 0, nil},
	{"acrobot_swinging", "Acrobot-v1", 1, append(repeatAction([]float32{2}, 6), repeatAction([]float32{0}, 6)...)},
	{"mountaincar_reset", "MountainCar-v0", 0, nil},
	{"mountaincar_climbing", "MountainCar-v0", 1, append(repeatAction([]float32{0}, 20), repeatAction([]float32{2}, 30)...)},
	{"mountaincarcontinuous_reset", "MountainCarContinuous-v0", 0, nil},
	{"mountaincarcontinuous_climbing", "MountainCarContinuous-v0", 1, repeatAction([]float32{-1}, 40)},
	{"pendulum_reset", "Pendulum-v1", 0, nil},
	{"pendulum_pushed", "Pendulum-v1", 1, repeatAction([]float32{2}, 5)},
}

func repeatAction(a []float32, n int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = a
	}
	return out
}

// TestRenderClassicGolden compares each picture with its checked-in PNG,
// pixel for pixel; go test ./envs/ -run RenderClassic -update rewrites them.
func TestRenderClassicGolden(t *testing.T) {
	for _, tc := range classicRenderCases {
		t.Run(tc.name, func(t *testing.T) {
			env, err := Make(tc.id, nil)
			if err != nil {
				t.Fatal(err)
			}
			env.Reset(tc.seed)
			for _, a := range tc.actions {
				if _, _, term, trunc, _ := env.Step(a); term || trunc {
					t.Fatalf("episode ended during the fixed actions")
				}
			}
			img, ok := Render(env)
			if !ok {
				t.Fatalf("Render(%s) = false", tc.id)
			}
			checkGolden(t, tc.name, img)
		})
	}
}

// imageDiff describes the first difference between two images, or returns
// "" if they have the same bounds and pixels.
func imageDiff(got, want image.Image) string {
	if got.Bounds() != want.Bounds() {
		return fmt.Sprintf("bounds %v, want %v", got.Bounds(), want.Bounds())
	}
	b := got.Bounds()
	n, first := 0, ""
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r1, g1, b1, a1 := got.At(x, y).RGBA()
			r2, g2, b2, a2 := want.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
				if n == 0 {
					first = fmt.Sprintf("pixel (%d, %d) is %v, want %v", x, y, got.At(x, y), want.At(x, y))
				}
				n++
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d pixels differ; %s", n, first)
}

// TestRenderClassicSizes checks the picture sizes and that a render does not
// change with repeated calls.
func TestRenderClassicSizes(t *testing.T) {
	for _, tc := range []struct {
		env  Env
		w, h int
	}{
		{NewCartPole(), 600, 400},
		{NewAcrobot(), 500, 500},
		{NewMountainCar(), 600, 400},
		{NewMountainCarContinuous(), 600, 400},
		{NewPendulum(10), 500, 500},
	} {
		tc.env.Reset(3)
		img, ok := Render(tc.env)
		if !ok {
			t.Fatalf("Render(%T) = false", tc.env)
		}
		if got := img.Bounds(); got != image.Rect(0, 0, tc.w, tc.h) {
			t.Errorf("%T: bounds %v, want %dx%d", tc.env, got, tc.w, tc.h)
		}
		again, _ := Render(tc.env)
		if d := imageDiff(again, img); d != "" {
			t.Errorf("%T: second render differs: %s", tc.env, d)
		}
	}
}

// noRender is an env that cannot draw itself.
type noRender struct{ Env }

// TestRenderWrappers checks that TimeLimit and MaskVelocity pass Render
// through, and return nil over an env that cannot draw.
func TestRenderWrappers(t *testing.T) {
	env, err := Make("CartPole-v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := env.(*TimeLimit); !ok {
		t.Fatalf("Make returned %T, want a *TimeLimit", env)
	}
	env.Reset(5)
	env.Step([]float32{1})
	got, ok := Render(env)
	if !ok {
		t.Fatal("Render(TimeLimit(CartPole)) = false")
	}
	want := Unwrapped(env).(Renderer).Render()
	if d := imageDiff(got, want); d != "" {
		t.Errorf("wrapped render differs from the env's: %s", d)
	}

	novel, err := Make("CartPoleNoVel-v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	novel.Reset(5)
	novel.Step([]float32{1})
	got, ok = Render(novel)
	if !ok {
		t.Fatal("Render(TimeLimit(MaskVelocity(CartPole))) = false")
	}
	if d := imageDiff(got, want); d != "" {
		t.Errorf("render through MaskVelocity differs: %s", d)
	}

	mv, err := NewMaskVelocity(noRender{NewCartPole()}, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []Env{NewTimeLimit(noRender{NewCartPole()}, 10), mv} {
		if img := w.(Renderer).Render(); img != nil {
			t.Errorf("%T over an env without Render returned an image", w)
		}
		if _, ok := Render(w); ok {
			t.Errorf("Render(%T over an env without Render) = true", w)
		}
	}
}
