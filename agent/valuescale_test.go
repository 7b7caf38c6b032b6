package agent

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

// TestValueNormalisationMatchesSkrl replays recorded critic outputs and
// returns (testdata/value_scale.json, gen_value_scale.py: skrl's
// RunningStandardScaler as its PPO uses it) and wants skrl's values in
// return units, standardised values and returns, and statistics. skrl
// reduces each batch's mean and variance in float32 (torch.mean, torch.var
// of the float32 tensors) and merges them in float64; ours reduces in
// float64: the statistics agree to float32's precision (1e-6), and so do
// the outputs, which carry the statistics' error times the std (1e-5).
func TestValueNormalisationMatchesSkrl(t *testing.T) {
	var ref struct {
		Cases []struct {
			Name     string
			Rollouts []struct {
				Critic, Returns, Values     []float32
				StoredValues, StoredReturns []float32 `json:"-"`
				SV                          []float32 `json:"stored_values"`
				SR                          []float32 `json:"stored_returns"`
				Mean, Var, Count            float64
			}
		}
	}
	if readTestdata(t, "value_scale.json", &ref); len(ref.Cases) == 0 {
		t.Fatal("value_scale.json has no cases")
	}
	near := func(got, want []float32) float64 {
		worst := 0.0
		for i := range want {
			worst = max(worst, math.Abs(float64(got[i]-want[i]))/math.Max(1, math.Abs(float64(want[i]))))
		}
		return worst
	}
	for _, c := range ref.Cases {
		t.Run(c.Name, func(t *testing.T) {
			a := &PPO{cfg: DefaultConfig(), valNorm: newValueNorm()}
			worst := 0.0
			for k, r := range c.Rollouts {
				v := slices.Clone(r.Critic)
				a.destandardize(v)
				ret := slices.Clone(r.Returns)
				vals := slices.Clone(v)
				a.standardizeTrain(vals)
				a.standardizeTrain(ret)
				for _, q := range []struct {
					what      string
					got, want []float32
				}{{"values", v, r.Values}, {"standardised values", vals, r.SV}, {"standardised returns", ret, r.SR}} {
					e := near(q.got, q.want)
					worst = max(worst, e)
					if e > 1e-5 {
						t.Fatalf("rollout %d: %s off by %.3g relative\ngot  %v\nskrl %v", k, q.what, e, q.got[:4], q.want[:4])
					}
				}
				s := a.valNorm
				if math.Abs(s.Mean[0]-r.Mean) > 1e-6*math.Max(1, math.Abs(r.Mean)) || math.Abs(s.Var[0]-r.Var) > 1e-6*r.Var || s.Count != r.Count {
					t.Fatalf("rollout %d: mean %v var %v count %v, skrl %v %v %v", k, s.Mean[0], s.Var[0], s.Count, r.Mean, r.Var, r.Count)
				}
			}
			t.Logf("worst relative difference %.2g", worst)
		})
	}
}

// TestValueNormalisationTrains: with normalize_value the rollout's values
// and returns are standardised for the loss, Policy reports values in
// return units, and the statistics are saved and cloned.
func TestValueNormalisationTrains(t *testing.T) {
	vec, err := envs.MakeVector("Pendulum-v1", 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := probeConfig(netconf.EncoderMLP)
	cfg.LearnStep, cfg.NormalizeValue = 4*200, true
	a, err := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Train(context.Background(), vec, 1); err != nil {
		t.Fatal(err)
	}
	buf := a.roll.buf
	mean := 0.0
	for _, r := range buf.Returns {
		mean += float64(r)
	}
	mean /= float64(len(buf.Returns))
	// Pendulum's returns are in the hundreds below 0; standardised, near 0.
	if math.Abs(mean) > 1 || a.valNorm.Mean[0] > -10 {
		t.Errorf("standardised returns average %v, statistics mean %v", mean, a.valNorm.Mean[0])
	}
	p, err := a.Policy(randomObs(a, 3, 5), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range p.Values {
		if v > -5 {
			t.Errorf("Policy value %v: want return units (Pendulum's are far below 0 after an update)", v)
		}
	}
	b, _ := saveLoad(t, a)
	if b.valNorm == nil || b.valNorm.Var[0] != a.valNorm.Var[0] || b.valNorm.Count != a.valNorm.Count {
		t.Errorf("loaded statistics %+v, saved %+v", b.valNorm, a.valNorm)
	}
	c := a.Clone(2)
	c.valNorm.Mean[0]++
	if c.valNorm.Mean[0] == a.valNorm.Mean[0] {
		t.Error("a clone shares the value statistics")
	}
}
