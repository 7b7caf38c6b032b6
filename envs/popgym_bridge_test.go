package envs

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/evolverl/evolve/internal/pytest"
)

// TestPOPGymPortsMatchTheBridgedOriginals plays each exact port (the card
// games but Autoencode, whose Tuple observation the bridge has no space for,
// and the noiseless CartPole) and POPGym's own env through the Gymnasium
// bridge (gym:<id>, import popgym) side by side: the same seeds and the same
// uniformly random actions, and requires every observation, reward and episode
// end to be the same, over 20 episodes per env from one seed (later resets
// unseeded, as a vector resets). Easy and Medium.
func TestPOPGymPortsMatchTheBridgedOriginals(t *testing.T) {
	python := pytest.POPGym(t)
	for _, task := range []string{"RepeatPrevious", "CountRecall", "PositionOnlyCartPole"} {
		for _, level := range []string{"Easy", "Medium"} {
			id := fmt.Sprintf("popgym-%s%s-v0", task, level)
			t.Run(id, func(t *testing.T) {
				port, err := Make(id, nil)
				if err != nil {
					t.Fatal(err)
				}
				orig, err := Make(GymPrefix+id, Options{"python": python, "import": []any{"popgym"}, "timeout": 60})
				if err != nil {
					t.Fatal(err)
				}
				defer Close(orig)
				if port.ObservationSpace().String() != orig.ObservationSpace().String() || port.ActionSpace().String() != orig.ActionSpace().String() {
					t.Fatalf("spaces %v, %v; POPGym's through the bridge %v, %v", port.ObservationSpace(), port.ActionSpace(), orig.ObservationSpace(), orig.ActionSpace())
				}
				comparePlay(t, port, orig, 20, 11)
			})
		}
	}
}

// comparePlay plays episodes on a and b from seed (the first reset; later
// ones NoSeed) with the same uniformly random actions and fails at the first
// step where they differ.
func comparePlay(t *testing.T, a, b Env, episodes int, seed int64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(seed), 5))
	act := make([]float32, a.ActionSpace().FlatSize())
	for ep := range episodes {
		s := NoSeed
		if ep == 0 {
			s = seed
		}
		oa, _ := a.Reset(s)
		ob, _ := b.Reset(s)
		for step := 0; ; step++ {
			if !slices.Equal(oa, ob) {
				t.Fatalf("episode %d step %d: observation %v, POPGym's %v", ep, step, oa, ob)
			}
			a.ActionSpace().Sample(rng, act)
			var ra, rb float64
			var ta, tb, ua, ub bool
			oa, ra, ta, ua, _ = a.Step(act)
			ob, rb, tb, ub, _ = b.Step(act)
			if ra != rb || ta != tb || ua != ub {
				t.Fatalf("episode %d step %d, action %v: reward %v, terminated %v, truncated %v; POPGym's %v, %v, %v", ep, step, act, ra, ta, ua, rb, tb, ub)
			}
			if ta || ua {
				break
			}
		}
	}
}
