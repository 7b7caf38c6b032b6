package envs

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestGymVectorIsOneChildAndOneExchangePerStep checks that MakeVector puts
// every env of a gym vector in one child and steps them all in one
// exchange, auto-resets included.
func TestGymVectorIsOneChildAndOneExchangePerStep(t *testing.T) {
	opts := gymTestOptions(t, "Masked")
	v, err := MakeVector("gym:masked", 4, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if v.gym == nil {
		t.Fatal("the vector does not step its envs through one child")
	}
	for i := range v.Len() {
		if pid := v.Env(i).(*GymEnv).pid(); pid != v.gym.cmd.Process.Pid {
			t.Errorf("env %d runs in child %d, env 0 in %d", i, pid, v.gym.cmd.Process.Pid)
		}
	}
	before := v.gym.exchanges
	res, err := v.Reset(3)
	if err != nil {
		t.Fatal(err)
	}
	ended := 0
	for range 12 { // Masked ends after 5 steps: two auto-resets per env
		if res, err = v.Step(legalActions(res)); err != nil {
			t.Fatal(err)
		}
		for i := range v.Len() {
			if res.Done(i) {
				ended++
			}
		}
	}
	if got := v.gym.exchanges - before; got != 13 {
		t.Errorf("reset and 12 steps took %d exchanges with the child, want 13", got)
	}
	if ended != 8 {
		t.Errorf("%d episodes ended, want 8", ended)
	}
}

// legalActions picks, for every env, the first action its mask allows.
func legalActions(res *StepResult) []float32 {
	a := make([]float32, len(res.Infos))
	for i, info := range res.Infos {
		a[i] = float32(slices.Index(info.ActionMask, true))
	}
	return a
}

// TestGymVectorMatchesEnvByEnv holds the one-exchange vector against a
// vector of separate gym envs (one child each, stepped one by one):
// observations, rewards, flags, masks, final observations and episode
// statistics must agree at every step, through auto-resets and the
// bridge's time limit.
func TestGymVectorMatchesEnvByEnv(t *testing.T) {
	for _, tc := range []struct {
		class string
		limit int
	}{{"Masked", 0}, {"Masked", 3}, {"AllSpaces", 4}} {
		t.Run(fmt.Sprintf("%s/limit%d", tc.class, tc.limit), func(t *testing.T) {
			opts := gymTestOptions(t, tc.class)
			if tc.limit > 0 {
				opts["max_episode_steps"] = tc.limit
			}
			batched, err := MakeVector("gym:test", 3, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer batched.Close()
			list := make([]Env, 3)
			for i := range list {
				if list[i], err = Make("gym:test", opts); err != nil {
					t.Fatal(err)
				}
			}
			single, err := NewVector(list)
			if err != nil {
				t.Fatal(err)
			}
			defer single.Close()
			if single.gym != nil || batched.gym == nil {
				t.Fatal("want one vector through one child and one env by env")
			}
			a, err := batched.Reset(11)
			if err != nil {
				t.Fatal(err)
			}
			b, err := single.Reset(11)
			if err != nil {
				t.Fatal(err)
			}
			space := batched.ActionSpace()
			for step := range 14 {
				sameResult(t, step, a, b)
				var actions []float32
				if tc.class == "Masked" {
					actions = legalActions(a)
				} else {
					for i := range 3 {
						act := []float32{float32(1 + (step+i)%3), float32(i % 2), float32(step % 3), 1, 0, 0.5, -0.25}
						if !space.Contains(act) {
							t.Fatalf("test action %v not in %v", act, space)
						}
						actions = append(actions, act...)
					}
				}
				if a, err = batched.Step(actions); err != nil {
					t.Fatal(err)
				}
				if b, err = single.Step(actions); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func sameResult(t *testing.T, step int, a, b *StepResult) {
	t.Helper()
	if !slices.Equal(a.Obs, b.Obs) || !slices.Equal(a.Rewards, b.Rewards) ||
		!slices.Equal(a.Terminated, b.Terminated) || !slices.Equal(a.Truncated, b.Truncated) ||
		!slices.Equal(a.EpisodeReturns, b.EpisodeReturns) || !slices.Equal(a.EpisodeLengths, b.EpisodeLengths) {
		t.Fatalf("step %d: one-exchange vector %+v, env by env %+v", step, *a, *b)
	}
	for i := range a.Infos {
		if !slices.Equal(a.Infos[i].ActionMask, b.Infos[i].ActionMask) ||
			!slices.Equal(a.FinalObs[i], b.FinalObs[i]) || (a.FinalObs[i] == nil) != (b.FinalObs[i] == nil) ||
			!slices.Equal(a.FinalInfos[i].ActionMask, b.FinalInfos[i].ActionMask) {
			t.Fatalf("step %d env %d: masks or final observations differ", step, i)
		}
	}
}

// resetGymVector makes a vector of n gym:test envs with opts, closed when
// the test ends, and resets it with seed 0.
func resetGymVector(t *testing.T, n int, opts Options) (*Vector, *StepResult) {
	t.Helper()
	v, err := MakeVector("gym:test", n, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	res, err := v.Reset(0)
	if err != nil {
		t.Fatal(err)
	}
	return v, res
}

func TestGymVectorNamesTheEnvThatRaised(t *testing.T) {
	v, res := resetGymVector(t, 3, gymTestOptions(t, "RaisesInSecond"))
	_, err := v.Step(legalActions(res))
	if err == nil {
		t.Fatal("step succeeded")
	}
	for _, want := range []string{"vector env 1 step", "gym:test", "boom from the second env", "Traceback"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	if _, err := v.Step(legalActions(res)); err == nil || !strings.Contains(err.Error(), "call Reset first") {
		t.Errorf("step after an error: %v, want a refusal until Reset", err)
	}
	// A bad action fails before the child steps any env.
	if _, err := v.Reset(0); err != nil {
		t.Fatal(err)
	}
	before := v.gym.exchanges
	if _, err := v.Step([]float32{0, 9, 0}); err == nil || !strings.Contains(err.Error(), "vector env 1") {
		t.Errorf("bad action: %v, want an error naming env 1", err)
	}
	if v.gym.exchanges != before {
		t.Error("a bad action reached the child")
	}
}

func TestGymWrappersAndTimeLimit(t *testing.T) {
	opts := gymTestOptions(t, "Masked")
	opts["wrappers"] = []any{map[string]any{"name": "gymtest.ScaleReward", "kwargs": map[string]any{"factor": 2.5}}}
	opts["max_episode_steps"] = 2
	env, _ := makeGym(t, opts)
	_, info := env.Reset(0)
	_, r, term, trunc, _ := env.Step([]float32{float32(slices.Index(info.ActionMask, true))})
	if r != 2.5 || term || trunc {
		t.Errorf("first step: reward %v terminated %v truncated %v, want 2.5 (wrapped) and no end", r, term, trunc)
	}
	_, _, term, trunc, _ = env.Step([]float32{0})
	if term || !trunc {
		t.Errorf("second step: terminated %v truncated %v, want truncated by max_episode_steps = 2", term, trunc)
	}
	for _, tc := range []struct {
		wrappers any
		want     string
	}{
		{[]any{"gymtest.NoSuchWrapper"}, "wrappers[0] (gymtest.NoSuchWrapper): AttributeError"},
		{[]any{"no_dots"}, `wrappers"[0]: name "no_dots"`},
		{[]any{map[string]any{"name": "gymtest.ScaleReward", "kwrags": 1}}, `unknown key "kwrags"`},
		{"gymtest.ScaleReward", "want a list"},
	} {
		o := gymTestOptions(t, "Masked")
		o["wrappers"] = tc.wrappers
		if env, err := Make("gym:test", o); err == nil {
			Close(env)
			t.Errorf("wrappers %v: Make succeeded", tc.wrappers)
		} else if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("wrappers %v: error %q, want %q", tc.wrappers, err, tc.want)
		}
	}
}
