package agent

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

// TestSDEMatchesStableBaselines3 holds gSDE's sampled actions,
// log-probabilities, entropies and the gradients of a weighted sum of them
// with respect to the means and the log-std matrix to what SB3's
// StateDependentNoiseDistribution computes in float64 on the same features,
// means, log-stds and exploration matrices (testdata/gsde.json, written by
// gen_gsde.py). Ours is float32 with float64 sums.
func TestSDEMatchesStableBaselines3(t *testing.T) {
	var ref struct {
		Cases []struct {
			Name                   string
			Feat, Act, Rows        int
			Features, Mean, Expl   []float64
			LogStd                 []float64 `json:"log_std"`
			Actions, Logp, Entropy []float64
			WLogp                  []float64 `json:"w_logp"`
			WEntropy               []float64 `json:"w_entropy"`
			GradMean               []float64 `json:"grad_mean"`
			GradLogStd             []float64 `json:"grad_log_std"`
		}
	}
	if readTestdata(t, "gsde.json", &ref); len(ref.Cases) == 0 {
		t.Fatal("gsde.json has no cases")
	}
	f32 := func(x []float64) []float32 {
		y := make([]float32, len(x))
		for i, v := range x {
			y[i] = float32(v)
		}
		return y
	}
	for _, c := range ref.Cases {
		t.Run(c.Name, func(t *testing.T) {
			rf, ra, fa := c.Rows*c.Feat, c.Rows*c.Act, c.Feat*c.Act
			for _, f := range []struct {
				name string
				got  []float64
				want int
			}{{"features", c.Features, rf}, {"mean", c.Mean, ra}, {"log_std", c.LogStd, fa}, {"expl", c.Expl, c.Rows * fa},
				{"actions", c.Actions, ra}, {"logp", c.Logp, c.Rows}, {"entropy", c.Entropy, c.Rows}, {"w_logp", c.WLogp, c.Rows},
				{"w_entropy", c.WEntropy, c.Rows}, {"grad_mean", c.GradMean, ra}, {"grad_log_std", c.GradLogStd, fa}} {
				if f.want == 0 || len(f.got) != f.want {
					t.Fatalf("gsde.json: %s has %d values, want %d", f.name, len(f.got), f.want)
				}
			}
			check := func(what string, got []float32, want []float64) {
				t.Helper()
				if len(got) < len(want) {
					t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
				}
				for i, w := range want {
					if d := math.Abs(float64(got[i]) - w); d > 2e-5*max(1, math.Abs(w)) {
						t.Errorf("%s[%d] = %.7g, SB3 %.7g", what, i, got[i], w)
					}
				}
			}
			d := &dist{kind: gaussian, size: c.Act, feat: c.Feat}
			var bufs distBuffers
			bufs.resize(d, c.Rows)
			bufs.feat, bufs.expl = f32(c.Features), f32(c.Expl)
			mean, logStd := f32(c.Mean), f32(c.LogStd)

			actions := make([]float32, c.Rows*c.Act)
			d.sample(&bufs, mean, logStd, c.Rows, false, nil, actions)
			if strings.HasPrefix(c.Name, "arbitrary") {
				// SB3 was given actions of its own; sampling is checked by the other cases.
				check("deterministic action", func() []float32 {
					d.sample(&bufs, mean, logStd, c.Rows, true, nil, actions)
					return actions
				}(), c.Mean)
			} else {
				check("sampled action", actions, c.Actions)
				check("log-probability of the sample", bufs.logp, c.Logp)
			}

			d.logProbEntropy(&bufs, mean, logStd, f32(c.Actions), c.Rows)
			check("log-probability", bufs.logp, c.Logp)
			check("entropy", bufs.ent, c.Entropy)
			dOut := make([]float32, c.Rows*c.Act)
			dLogStd := make([]float32, c.Feat*c.Act)
			d.backward(&bufs, dOut, dLogStd, mean, logStd, f32(c.Actions), f32(c.WLogp), f32(c.WEntropy), c.Rows)
			check("gradient of the means", dOut, c.GradMean)
			check("gradient of the log-std matrix", dLogStd, c.GradLogStd)
		})
	}
}

// sdeAgent is a gSDE agent on Pendulum with its exploration matrices
// redrawn every freq steps, and a vector of 4 Pendulums.
func sdeAgent(t *testing.T, freq int, seed uint64) (*PPO, *envs.Vector) {
	t.Helper()
	vec, err := envs.MakeVector("Pendulum-v1", 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := probeConfig(netconf.EncoderMLP)
	cfg.LearnStep, cfg.UseSDE, cfg.SDESampleFreq = 4*6, true, freq
	a, err := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	return a, vec
}

// TestSDERedrawsOnSchedule checks when the exploration matrices change
// within a rollout: with sde_sample_freq 1, 2 and -1, the same seed and the
// same envs, every run draws the same matrices at step 0 (the first actions
// agree); at step 1 only freq 1 has new ones; at step 2 freq 2 does too,
// while freq -1 keeps its first matrices for the whole rollout.
func TestSDERedrawsOnSchedule(t *testing.T) {
	steps := map[int][]float32{}
	for _, freq := range []int{1, 2, -1} {
		a, vec := sdeAgent(t, freq, 7)
		if _, err := a.Train(context.Background(), vec, 1); err != nil {
			t.Fatal(err)
		}
		steps[freq] = slices.Clone(a.roll.buf.Actions)
	}
	const n = 4 // envs; one action each
	at := func(freq, step int) []float32 { return steps[freq][step*n : (step+1)*n] }
	if !slices.Equal(at(1, 0), at(-1, 0)) || !slices.Equal(at(2, 0), at(-1, 0)) {
		t.Fatalf("step 0 differs: %v %v %v", at(1, 0), at(2, 0), at(-1, 0))
	}
	if !slices.Equal(at(2, 1), at(-1, 1)) || slices.Equal(at(1, 1), at(-1, 1)) {
		t.Errorf("step 1: freq 1 %v, freq 2 %v, freq -1 %v: want only freq 1 redrawn", at(1, 1), at(2, 1), at(-1, 1))
	}
	if slices.Equal(at(2, 2), at(-1, 2)) {
		t.Errorf("step 2: freq 2 %v equals freq -1 %v: want freq 2 redrawn", at(2, 2), at(-1, 2))
	}
}

// TestSDENoiseIsAFunctionOfTheState: between redraws, the same observation
// gets the same action (SB3's rationale for gSDE); the deterministic action
// is the mean; ResetState redraws a row's noise at its next stochastic act.
func TestSDENoiseIsAFunctionOfTheState(t *testing.T) {
	a, _ := sdeAgent(t, -1, 3)
	obs := randomObs(a, 4, 11)
	x1, err := a.Act(obs, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	x2, _ := a.Act(obs, nil, false)
	if !slices.Equal(x1, x2) {
		t.Errorf("the same observations got %v, then %v", x1, x2)
	}
	p, err := a.Policy(obs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Std) != len(p.Mean) {
		t.Fatalf("gSDE policy: %d standard deviations for %d means, want one per row and dimension", len(p.Std), len(p.Mean))
	}
	det, _ := a.Act(obs, nil, true)
	for i := range det {
		want := min(max(p.Mean[i], -2), 2)
		if det[i] != want {
			t.Errorf("deterministic action %d = %v, the clipped mean is %v", i, det[i], want)
		}
	}
	if slices.Equal(x1, det) {
		t.Error("stochastic actions equal the deterministic ones")
	}
	// An episode start redraws that row's noise only, at the next
	// stochastic act; deterministic acts draw nothing.
	a.ResetState(2)
	before := *a.pcg
	if _, err := a.Act(obs, nil, true); err != nil || *a.pcg != before {
		t.Fatalf("a deterministic act after ResetState drew random numbers (err %v)", err)
	}
	x3, _ := a.Act(obs, nil, false)
	for i := range x3 {
		if (x3[i] != x1[i]) != (i == 2) {
			t.Errorf("after ResetState(2), row %d: %v, before %v: want only row 2 redrawn", i, x3[i], x1[i])
		}
	}
}

// TestSDEConfigErrors checks the gSDE keys' errors, and value_loss's.
func TestSDEConfigErrors(t *testing.T) {
	cpObs, cpAct := envSpaces(t, "CartPole-v1")
	cfg := DefaultConfig()
	cfg.UseSDE = true
	if _, err := New(cpObs, cpAct, cfg, 1); err == nil || !strings.Contains(err.Error(), "use_sde") {
		t.Errorf("gSDE on Discrete actions: %v, want an error naming use_sde", err)
	}
	for _, c := range []struct {
		sde  bool
		freq int
	}{{true, -2}, {false, 4}} {
		cfg := DefaultConfig()
		cfg.UseSDE, cfg.SDESampleFreq = c.sde, c.freq
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "sde_sample_freq") {
			t.Errorf("use_sde %v, sde_sample_freq %d: %v, want an error naming sde_sample_freq", c.sde, c.freq, err)
		}
	}
	bad := DefaultConfig()
	bad.ValueLoss = "huber"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "value_loss") {
		t.Errorf("value_loss huber: %v, want an error naming value_loss", err)
	}
	a, _ := sdeAgent(t, 4, 1)
	c := a.Config()
	c.UseSDE, c.SDESampleFreq = false, 0
	if err := a.SetConfig(c); err == nil || !strings.Contains(err.Error(), "use_sde") {
		t.Errorf("SetConfig turning gSDE off: %v, want an error", err)
	}
}

// TestSDEMutationKeepsTheLogStdRows grows the actor's last head layer: the
// log-std matrix keeps the old rows and gains rows at their least (new
// features add little exploration), its Adam moments zero rows; then adds
// a head layer, whose features replace the old ones.
func TestSDEMutationKeepsTheLogStdRows(t *testing.T) {
	a, vec := sdeAgent(t, 4, 5)
	if _, err := a.Train(context.Background(), vec, 1); err != nil {
		t.Fatal(err)
	}
	old := slices.Clone(a.logStd)
	oldM := slices.Clone(a.adam.M[len(a.adam.M)-1])
	feat := a.actorSpec.FeatureWidth()
	grow := netconf.Mutation{Name: "grow", Apply: func(s netconf.Spec, _ *rand.Rand) (netconf.Spec, string, bool) {
		s.Head.Hidden[len(s.Head.Hidden)-1] += 3
		return s, "grow the head by 3", true
	}}
	if _, changed, err := a.MutateArchitecture(grow); err != nil || !changed {
		t.Fatalf("mutate: changed %v, %v", changed, err)
	}
	if got := a.actorSpec.FeatureWidth(); got != feat+3 || len(a.logStd) != got {
		t.Fatalf("features %d → %d, log-std %d values", feat, got, len(a.logStd))
	}
	if !slices.Equal(a.logStd[:feat], old) {
		t.Error("the old features' log-stds changed")
	}
	m := a.adam.M[len(a.adam.M)-1]
	if !slices.Equal(m[:feat], oldM) || len(m) != feat+3 {
		t.Error("the log-std's first moments were not kept and grown")
	}
	least := slices.Min(old) // one action dimension: one column
	for i := feat; i < feat+3; i++ {
		if a.logStd[i] != least || m[i] != 0 {
			t.Errorf("new row %d: log-std %v, moment %v; want the old rows' least, %v, and 0", i, a.logStd[i], m[i], least)
		}
	}
	if _, err := a.Train(context.Background(), vec, 1); err != nil {
		t.Fatalf("training after the mutation: %v", err)
	}

	// Another head layer: the features are another layer's, every row
	// starts from the old rows' mean and the moments from zero.
	old = slices.Clone(a.logStd)
	mean := 0.0
	for _, v := range old {
		mean += float64(v)
	}
	mean /= float64(len(old))
	deeper := netconf.Mutation{Name: "deeper", Apply: func(s netconf.Spec, _ *rand.Rand) (netconf.Spec, string, bool) {
		s.Head.Hidden = append(s.Head.Hidden, 16)
		return s, "add a head layer of 16", true
	}}
	if _, changed, err := a.MutateArchitecture(deeper); err != nil || !changed {
		t.Fatalf("mutate: changed %v, %v", changed, err)
	}
	if len(a.logStd) != 16 {
		t.Fatalf("log-std of %d rows after a head layer of 16", len(a.logStd))
	}
	for i, v := range a.logStd {
		if math.Abs(float64(v)-mean) > 1e-6 || a.adam.M[len(a.adam.M)-1][i] != 0 {
			t.Errorf("row %d: log-std %v, moment %v; want the old mean %v and 0", i, v, a.adam.M[len(a.adam.M)-1][i], mean)
		}
	}
	if _, err := a.Train(context.Background(), vec, 1); err != nil {
		t.Fatalf("training after the mutation: %v", err)
	}
}
