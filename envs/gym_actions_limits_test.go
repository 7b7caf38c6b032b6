package envs

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/internal/pytest"
)

// TestGymTimeLimitReplacedUnderRenderWrappers: max_episode_steps replaces
// the registered time limit also where Gymnasium's make put its TimeLimit
// under a render wrapper (render_mode "rgb_array_list" adds
// RenderCollection above it): Counter-v0's 20 steps become 7, and with
// max_episode_steps = 0 an episode runs past 20.
func TestGymTimeLimitReplacedUnderRenderWrappers(t *testing.T) {
	python := pytest.Gymnasium(t)
	dir, err := filepath.Abs(filepath.Join("testdata", "gymtest"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PYTHONPATH", dir+string(os.PathListSeparator)+os.Getenv("PYTHONPATH"))
	for _, tc := range []struct{ limit, want int }{{7, 7}, {0, 0}} {
		env, err := Make("gym:Counter-v0", Options{"python": python, "import": []any{"gymregistered"},
			"kwargs": map[string]any{"render_mode": "rgb_array_list"}, "max_episode_steps": tc.limit})
		if err != nil {
			t.Fatal(err)
		}
		defer Close(env)
		env.Reset(1)
		steps := 0
		for steps < 30 {
			steps++
			if _, _, term, trunc, _ := env.Step([]float32{0}); term || trunc {
				break
			}
		}
		if tc.want == 0 && steps != 30 || tc.want > 0 && steps != tc.want {
			t.Errorf("max_episode_steps %d: the episode ended after %d steps (30: not by step 30), want %d", tc.limit, steps, tc.want)
		}
	}
}

// TestGymIntegerBoxActionsRound: an integer Box action takes the nearest
// integer (ties to even), not the one toward zero (which made 0 the
// action of all of (-1, 1)) — in the bridge's pure-Python conversion and,
// where a Python has NumPy, in its NumPy one.
func TestGymIntegerBoxActionsRound(t *testing.T) {
	opts := gymTestOptions(t, "IntBoxEcho")
	t.Run("python", func(t *testing.T) { integerActionsRound(t, opts) })
	t.Run("numpy", func(t *testing.T) {
		python := pytest.NumPy(t)
		o := maps.Clone(opts)
		o["python"] = python
		integerActionsRound(t, o)
	})
}

func integerActionsRound(t *testing.T, opts Options) {
	env, _ := makeGym(t, opts)
	env.Reset(0)
	for _, tc := range []struct{ act, want []float32 }{
		{[]float32{0.6, -0.6, 1.4}, []float32{1, -1, 1}},
		{[]float32{-1.5, 0.5, 2}, []float32{-2, 0, 2}},
	} {
		obs, _, _, _, _ := env.Step(tc.act)
		if !slices.Equal(obs, tc.want) {
			t.Errorf("action %v arrived as %v, want %v", tc.act, obs, tc.want)
		}
	}
}

// TestGymChannelsFirst: the option channels_first gives an [H, W, C] Box
// env as the [C, H, W] Box evolve's CNN reads, values and bounds moved
// alike, in the bridge's pure-Python and NumPy code; other spaces are
// refused naming the option.
func TestGymChannelsFirst(t *testing.T) {
	opts := gymTestOptions(t, "ImageHWC")
	opts["channels_first"] = true
	t.Run("python", func(t *testing.T) { channelsFirst(t, opts) })
	t.Run("numpy", func(t *testing.T) {
		o := maps.Clone(opts)
		o["python"] = pytest.NumPy(t)
		channelsFirst(t, o)
	})
	o := gymTestOptions(t, "Masked")
	o["channels_first"] = true
	if env, err := Make("gym:test", o); err == nil {
		Close(env)
		t.Error("channels_first on a [1] Box: Make succeeded")
	} else if !strings.Contains(err.Error(), "option channels_first = true") || !strings.Contains(err.Error(), "want a Box of shape [H, W, C]") {
		t.Errorf("channels_first on a [1] Box: %v", err)
	}
	// An image that is [C, H, W] already would have rows moved into its
	// channels: refused.
	o = gymTestOptions(t, "ImageCHW")
	o["channels_first"] = true
	if env, err := Make("gym:test", o); err == nil {
		Close(env)
		t.Error("channels_first on a [2 4 4] Box: Make succeeded")
	} else if !strings.Contains(err.Error(), "shape [2, 4, 4] is channels-first already (its first dimension is the smallest, 2 channels of 4×4): leave the option out") {
		t.Errorf("channels_first on a [2 4 4] Box: %v", err)
	}
}

func channelsFirst(t *testing.T, opts Options) {
	env, _ := makeGym(t, opts)
	box, ok := env.ObservationSpace().(Box)
	if !ok || !slices.Equal(box.Dims, []int{2, 2, 3}) {
		t.Fatalf("observation space %v, want a Box of [2 2 3]", env.ObservationSpace())
	}
	var want []float32 // [C, H, W] order
	for c := range 2 {
		for h := range 2 {
			for w := range 3 {
				want = append(want, float32(100*h+10*w+c))
			}
		}
	}
	low := make([]float32, len(want))
	for i, v := range want {
		low[i] = -v
	}
	if !slices.Equal(box.Low, low) {
		t.Errorf("low %v, want %v", box.Low, low)
	}
	obs, _ := env.Reset(0)
	if !slices.Equal(obs, want) {
		t.Errorf("reset %v, want %v", obs, want)
	}
	obs, _, _, _, _ = env.Step([]float32{0})
	for i := range want {
		want[i]++
	}
	if !slices.Equal(obs, want) {
		t.Errorf("step %v, want %v", obs, want)
	}
}
