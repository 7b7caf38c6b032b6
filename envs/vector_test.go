package envs

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/evolverl/evolve/internal/pytest"
)

// countEnv is a scripted env: observation [episode, t], reward t+1 on step
// t, episodes of length `length` that end by termination, or by truncation
// when truncate is set.
type countEnv struct {
	length   int
	truncate bool
	episode  int
	t        int
	obs      [2]float32
	badObs   bool
	mask     []bool
}

func (c *countEnv) ObservationSpace() Space { return NewBox(0, 1000, 2) }
func (c *countEnv) ActionSpace() Space      { return Discrete{N: 2} }
func (c *countEnv) Reset(seed int64) ([]float32, Info) {
	c.episode++
	c.t = 0
	c.obs = [2]float32{float32(c.episode), 0}
	return c.obs[:], Info{ActionMask: c.mask}
}
func (c *countEnv) Step(a []float32) ([]float32, float64, bool, bool, Info) {
	c.t++
	c.obs[1] = float32(c.t)
	if c.badObs {
		c.obs[1] = float32(math.NaN())
	}
	done := c.t == c.length
	return c.obs[:], float64(c.t), done && !c.truncate, done && c.truncate, Info{ActionMask: c.mask}
}

func TestVectorAutoResetKeepsFinalObs(t *testing.T) {
	a, b := &countEnv{length: 2}, &countEnv{length: 3, truncate: true}
	v, err := NewVector([]Env{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Reset(NoSeed); err != nil {
		t.Fatal(err)
	}
	actions := []float32{0, 1}
	type want struct {
		obs        []float32
		rewards    []float64
		term, trun []bool
		final      [][]float32
		ret        []float64
		length     []int
	}
	steps := []want{
		{[]float32{1, 1, 1, 1}, []float64{1, 1}, []bool{false, false}, []bool{false, false}, [][]float32{nil, nil}, []float64{0, 0}, []int{0, 0}},
		// env 0 terminates: its obs is the new episode's first, the final obs is kept.
		{[]float32{2, 0, 1, 2}, []float64{2, 2}, []bool{true, false}, []bool{false, false}, [][]float32{{1, 2}, nil}, []float64{3, 0}, []int{2, 0}},
		// env 1 is truncated after 3 steps.
		{[]float32{2, 1, 2, 0}, []float64{1, 3}, []bool{false, false}, []bool{false, true}, [][]float32{nil, {1, 3}}, []float64{0, 6}, []int{0, 3}},
	}
	for n, w := range steps {
		r, err := v.Step(actions)
		if err != nil {
			t.Fatal(err)
		}
		if !equal(r.Obs, w.obs) || !equal(r.Rewards, w.rewards) || !equal(r.Terminated, w.term) || !equal(r.Truncated, w.trun) {
			t.Fatalf("step %d: obs %v rewards %v term %v trunc %v; want %v %v %v %v", n, r.Obs, r.Rewards, r.Terminated, r.Truncated, w.obs, w.rewards, w.term, w.trun)
		}
		for i := range 2 {
			if (r.FinalObs[i] == nil) != (w.final[i] == nil) || !equal(r.FinalObs[i], w.final[i]) || r.Done(i) != (w.final[i] != nil) {
				t.Fatalf("step %d env %d: final obs %v, want %v", n, i, r.FinalObs[i], w.final[i])
			}
		}
		if !equal(r.EpisodeReturns, w.ret) || !equal(r.EpisodeLengths, w.length) {
			t.Fatalf("step %d: episode returns %v lengths %v, want %v %v", n, r.EpisodeReturns, r.EpisodeLengths, w.ret, w.length)
		}
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestVectorSeedsEachEnvDifferently(t *testing.T) {
	v, err := MakeVector("CartPole-v1", 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := v.Reset(7)
	first := append([]float32(nil), r.Obs...)
	for i := 1; i < 4; i++ {
		if equal(first[:4], first[i*4:i*4+4]) {
			t.Fatalf("env %d starts like env 0: %v", i, first)
		}
	}
	r, _ = v.Reset(7)
	if !equal(first, r.Obs) {
		t.Fatalf("same seed, different start: %v vs %v", first, r.Obs)
	}
	r, _ = v.Reset(8)
	if equal(first, r.Obs) {
		t.Fatal("different seeds gave the same start")
	}
}

func TestVectorRejectsBadEnvOutput(t *testing.T) {
	tests := []struct {
		name string
		env  *countEnv
		want string
	}{
		{"nan observation", &countEnv{length: 5, badObs: true}, "env 1 at step 1 of its episode: env *envs.countEnv step returned observation[1] = NaN"},
		{"mask of wrong length", &countEnv{length: 5, mask: []bool{true}}, "action mask of 1 entries, want 2"},
		// It was first noticed in the agent, as the agent's error (exit 1).
		{"mask with no legal action", &countEnv{length: 5, mask: []bool{false, false}}, "action mask that leaves no legal action"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := NewVector([]Env{&countEnv{length: 5}, tt.env})
			if err != nil {
				t.Fatal(err)
			}
			_, err = v.Reset(NoSeed)
			if err == nil {
				_, err = v.Step([]float32{0, 0})
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "env 1") || !errors.Is(err, ErrBadOutput) {
				t.Fatalf("error %v, want one naming env 1 and %q", err, tt.want)
			}
		})
	}
	v, _ := NewVector([]Env{&countEnv{length: 5}})
	if _, err := v.Step([]float32{0, 0}); err == nil {
		t.Fatal("two actions for one env: no error")
	}
	if _, err := NewVector([]Env{NewCartPole(), NewAcrobot()}); err == nil {
		t.Fatal("vector of different spaces: no error")
	}
}

// maskEnv reuses one mask buffer, as the interface allows: the legal action
// is the step count mod 3.
type maskEnv struct {
	countEnv
	buf [3]bool
}

func (m *maskEnv) ActionSpace() Space { return Discrete{N: 3} }
func (m *maskEnv) setMask() Info {
	m.buf = [3]bool{}
	m.buf[m.t%3] = true
	return Info{ActionMask: m.buf[:]}
}
func (m *maskEnv) Reset(seed int64) ([]float32, Info) {
	obs, _ := m.countEnv.Reset(seed)
	return obs, m.setMask()
}
func (m *maskEnv) Step(a []float32) ([]float32, float64, bool, bool, Info) {
	obs, r, term, trunc, _ := m.countEnv.Step(a)
	return obs, r, term, trunc, m.setMask()
}

func TestVectorKeepsFinalMaskWhenEnvReusesBuffer(t *testing.T) {
	v, _ := NewVector([]Env{&maskEnv{countEnv: countEnv{length: 2}}})
	v.Reset(0)
	v.Step([]float32{0})
	r, err := v.Step([]float32{1})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Done(0) || !equal(r.FinalInfos[0].ActionMask, []bool{false, false, true}) || !equal(r.Infos[0].ActionMask, []bool{true, false, false}) {
		t.Fatalf("final mask %v (want the last step's [false false true]), new mask %v (want [true false false])", r.FinalInfos[0].ActionMask, r.Infos[0].ActionMask)
	}
}

func TestVectorRequiresResetBeforeStepAndAfterErrors(t *testing.T) {
	v, _ := MakeVector("CartPole-v1", 2, nil)
	if _, err := v.Step([]float32{0, 1}); err == nil || !strings.Contains(err.Error(), "before Reset") {
		t.Fatalf("step before reset: %v", err)
	}
	v.Reset(1)
	if _, err := v.Step([]float32{0, 2}); err == nil || !strings.Contains(err.Error(), "env 1") || !strings.Contains(err.Error(), "not in Discrete(2)") ||
		!strings.Contains(err.Error(), "(*envs.CartPole) at step 1 of its episode") {
		t.Fatalf("illegal action: %v, want an error naming env 1, its type under its wrappers and the space", err)
	}
	if _, err := v.Step([]float32{0, 1}); err == nil {
		t.Fatal("stepped on after an error without Reset")
	}
	v.Reset(NoSeed)
	if _, err := v.Step([]float32{0, 1}); err != nil {
		t.Fatalf("after Reset: %v", err)
	}
	p, _ := MakeVector("Pendulum-v1", 1, nil)
	p.Reset(0)
	if _, err := p.Step([]float32{float32(math.NaN())}); err == nil {
		t.Fatal("NaN continuous action: no error")
	}
	if _, err := p.Reset(NoSeed); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Step([]float32{5}); err != nil {
		t.Fatalf("out-of-bounds continuous action (clipped by the env): %v", err)
	}
}

func TestUnseededVectorEnvsDiffer(t *testing.T) {
	v, _ := MakeVector("CartPole-v1", 3, nil)
	r, _ := v.Reset(NoSeed)
	if equal(r.Obs[:4], r.Obs[4:8]) || equal(r.Obs[4:8], r.Obs[8:]) {
		t.Fatalf("never-seeded vector starts its envs alike: %v", r.Obs)
	}
	first := append([]float32(nil), r.Obs...)
	w, _ := MakeVector("CartPole-v1", 3, nil)
	r2, _ := w.Reset(0)
	if !equal(first, r2.Obs) {
		t.Fatal("a never-seeded vector does not behave as seeded with 0")
	}
}

func TestVectorStepDoesNotAllocate(t *testing.T) {
	v, err := MakeVector("CartPole-v1", 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	v.Reset(1)
	actions := make([]float32, 8)
	allocs := testing.AllocsPerRun(2000, func() {
		if _, err := v.Step(actions); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("vector step allocates %v times", allocs)
	}
}

func BenchmarkEnvStep(b *testing.B) {
	for _, id := range []string{"CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1", "Probe7-v0"} {
		b.Run(id, func(b *testing.B) {
			env, err := Make(id, nil)
			if err != nil {
				b.Fatal(err)
			}
			env.Reset(0)
			action := make([]float32, env.ActionSpace().FlatSize())
			b.ReportAllocs()
			for b.Loop() {
				if _, _, term, trunc, _ := env.Step(action); term || trunc {
					env.Reset(NoSeed)
				}
			}
		})
	}
}

// BenchmarkVectorStep steps vectors of n CartPoles: the built-in port, and
// Gymnasium's CartPole-v1 through the Python bridge (one child, one
// exchange per vector step) when a Python with Gymnasium is found. The
// env-steps/s metric is n per vector step; python/bench_gym_vector.py runs
// the same loop in Gymnasium's own SyncVectorEnv.
func BenchmarkVectorStep(b *testing.B) {
	for _, n := range []int{1, 8, 64} {
		b.Run("CartPole-v1/"+strconv.Itoa(n), func(b *testing.B) {
			benchVector(b, "CartPole-v1", n, nil)
		})
	}
	for _, n := range []int{1, 8, 64} {
		b.Run("gym:CartPole-v1/"+strconv.Itoa(n), func(b *testing.B) {
			benchVector(b, "gym:CartPole-v1", n, Options{"python": pytest.Gymnasium(b)})
		})
	}
}

func benchVector(b *testing.B, id string, n int, opts Options) {
	v, err := MakeVector(id, n, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	if _, err := v.Reset(0); err != nil {
		b.Fatal(err)
	}
	actions := make([]float32, n)
	for i := range actions {
		actions[i] = float32(i % 2)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Step(actions); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "env-steps/s")
}
