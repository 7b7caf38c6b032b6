package agent

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

// matchEnv is a one-step task for each action family: observe a random
// target, act, and earn a reward for matching it.
//
//   - "discrete-masked": Discrete(5); the mask changes every step (a random
//     legal subset, always containing the target); +1 for the target.
//   - "multidiscrete": MultiDiscrete([3, 2]); obs [c/2]; +1 for a0 == c and
//     +1 for a1 == c mod 2.
//   - "multibinary": MultiBinary(3); obs the target bits; +1 per matching bit.
//   - "continuous": Box(−2, 2, [1]); obs [x] with x uniform in [−1, 1];
//     reward −(a − x)².
type matchEnv struct {
	kind    string
	rng     *rand.Rand
	target  []float32
	obs     []float32
	mask    []bool
	illegal int // actions taken that the mask forbade
}

func newMatchEnv(kind string) *matchEnv {
	e := &matchEnv{kind: kind, rng: rand.New(rand.NewPCG(1, 1))}
	switch kind {
	case "multibinary":
		e.obs, e.target = make([]float32, 3), make([]float32, 3)
	default:
		e.obs, e.target = make([]float32, 1), make([]float32, 1)
	}
	if kind == "discrete-masked" {
		e.mask = make([]bool, 5)
	}
	return e
}

func (e *matchEnv) ObservationSpace() envs.Space {
	switch e.kind {
	case "multibinary":
		return envs.NewBox(0, 1, 3)
	case "continuous":
		return envs.NewBox(-1, 1, 1)
	case "discrete-masked":
		return envs.NewBox(0, 4, 1)
	}
	return envs.NewBox(0, 1, 1)
}

func (e *matchEnv) ActionSpace() envs.Space {
	switch e.kind {
	case "multidiscrete":
		return envs.MultiDiscrete{Nvec: []int{3, 2}}
	case "multibinary":
		return envs.MultiBinary{N: 3}
	case "continuous":
		return envs.NewBox(-2, 2, 1)
	}
	return envs.Discrete{N: 5}
}

func (e *matchEnv) Reset(seed int64) ([]float32, envs.Info) {
	if seed >= 0 {
		e.rng = rand.New(rand.NewPCG(uint64(seed), 1))
	}
	info := envs.Info{}
	switch e.kind {
	case "discrete-masked":
		c := e.rng.IntN(5)
		e.target[0], e.obs[0] = float32(c), float32(c)
		for i := range e.mask {
			e.mask[i] = i == c || e.rng.IntN(2) == 0
		}
		info.ActionMask = e.mask
	case "multidiscrete":
		c := e.rng.IntN(3)
		e.target[0], e.obs[0] = float32(c), float32(c)/2
	case "multibinary":
		for i := range e.target {
			e.target[i] = float32(e.rng.IntN(2))
			e.obs[i] = e.target[i]
		}
	case "continuous":
		e.target[0] = float32(2*e.rng.Float64() - 1)
		e.obs[0] = e.target[0]
	}
	return e.obs, info
}

func (e *matchEnv) Step(a []float32) ([]float32, float64, bool, bool, envs.Info) {
	r := 0.0
	switch e.kind {
	case "discrete-masked":
		if !e.mask[int(a[0])] {
			e.illegal++
		}
		if a[0] == e.target[0] {
			r = 1
		}
	case "multidiscrete":
		c := int(e.target[0])
		if int(a[0]) == c {
			r++
		}
		if int(a[1]) == c%2 {
			r++
		}
	case "multibinary":
		for i := range a {
			if a[i] == e.target[i] {
				r++
			}
		}
	case "continuous":
		d := float64(a[0] - e.target[0])
		r = -d * d
	}
	return e.obs, r, true, false, envs.Info{ActionMask: e.mask}
}

func matchVector(t *testing.T, kind string, n int) (*envs.Vector, []*matchEnv) {
	t.Helper()
	list := make([]envs.Env, n)
	raw := make([]*matchEnv, n)
	for i := range list {
		raw[i] = newMatchEnv(kind)
		list[i] = raw[i]
	}
	vec, err := envs.NewVector(list)
	if err != nil {
		t.Fatal(err)
	}
	return vec, raw
}

// TestFirstRatioIsExactlyOne collects a rollout and runs the first
// minibatch of the first epoch: the log-probabilities recomputed for
// training equal, bit for bit, those recorded while acting, for every
// action family and every encoder (MLP, CNN, LSTM over BPTT sequences,
// Dict; separate and shared).
func TestFirstRatioIsExactlyOne(t *testing.T) {
	for _, c := range fastCases() {
		t.Run(c.name, func(t *testing.T) {
			a, mb := collected(t, c, 3, "")
			st, err := a.update(mb)
			if err != nil {
				t.Fatal(err)
			}
			for i, x := range a.lastLogRatios(mb) {
				if x != 0 && (mb.wts == nil || mb.wts[i] != 0) {
					t.Fatalf("row %d: log ratio %g, want exactly 0", i, x)
				}
			}
			if st.ApproxKL != 0 || st.ClipFrac != 0 {
				t.Fatalf("approx KL %g, clip fraction %g: want 0", st.ApproxKL, st.ClipFrac)
			}
		})
	}
}

// TestMaskedActionsAreNeverTaken trains on an env whose mask changes every
// step: over thousands of sampled actions none is illegal.
func TestMaskedActionsAreNeverTaken(t *testing.T) {
	vec, raw := matchVector(t, "discrete-masked", 8)
	cfg := probeConfig(netconf.EncoderMLP)
	a, err := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := a.Train(context.Background(), vec, 4000)
	if err != nil {
		t.Fatal(err)
	}
	illegal := 0
	for _, e := range raw {
		illegal += e.illegal
	}
	if illegal != 0 {
		t.Fatalf("%d illegal actions in %d steps", illegal, ts.Steps)
	}
	if ts.Steps < 4000 {
		t.Fatalf("only %d steps", ts.Steps)
	}
}

// TestSmallTasksLearn checks that the multi-discrete, multi-binary and
// continuous paths learn: each task's mean reward rises well above what
// its untrained policy gets.
func TestSmallTasksLearn(t *testing.T) {
	cases := []struct {
		kind        string
		steps       int
		best, floor float64 // best possible mean reward, and what the test asks for
	}{
		{"multidiscrete", 6000, 2, 1.8},
		{"multibinary", 6000, 3, 2.7},
		{"continuous", 12000, 0, -0.05},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			vec, _ := matchVector(t, c.kind, 8)
			cfg := probeConfig(netconf.EncoderMLP)
			cfg.Gamma = 0
			a, err := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, 9)
			if err != nil {
				t.Fatal(err)
			}
			env := newMatchEnv(c.kind)
			before, _ := a.Evaluate(env, 200, 1000, 1)
			if _, err := a.Train(context.Background(), vec, c.steps); err != nil {
				t.Fatal(err)
			}
			after, err := a.Evaluate(env, 200, 1000, 1)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: mean reward %.3f before, %.3f after %d steps (best %v)", c.kind, before, after, c.steps, c.best)
			if after < c.floor {
				t.Errorf("mean reward %.3f after training, want >= %v (best %v, before %.3f)", after, c.floor, c.best, before)
			}
		})
	}
}

// checkMaskedGradient asserts that every masked logit has gradient exactly
// 0 and every legal one of a component with a real choice does not. A
// component with one legal choice is certain: its log-probability and
// entropy are constant, so its gradient is 0 too.
func checkMaskedGradient(t *testing.T, d *dist, space envs.Space, masks [][]bool, grad []float32) {
	t.Helper()
	for r, m := range masks {
		off := 0
		for _, n := range d.nvec {
			legal := 0
			for k := range n {
				if m[off+k] {
					legal++
				}
			}
			for k := off; k < off+n; k++ {
				gk := grad[r*d.size+k]
				if !m[k] && gk != 0 {
					t.Errorf("%v row %d: masked logit %d has gradient %g, want exactly 0", space, r, k, gk)
				}
				if m[k] && legal > 1 && gk == 0 {
					t.Errorf("%v row %d: legal logit %d has zero gradient", space, r, k)
				}
			}
			off += n
		}
	}
}
