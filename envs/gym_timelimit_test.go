package envs

import (
	"os"
	"path/filepath"
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
