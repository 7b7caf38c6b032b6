package envs

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
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
