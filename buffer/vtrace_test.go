package buffer

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// vtraceCase is one case of testdata/vtrace.json (gen_vtrace.py): flat
// [T][N] arrays and the reference's targets and advantages.
type vtraceCase struct {
	Name, Source          string
	Steps, Envs           int
	Gamma, Lambda         float64
	RhoClip               float64   `json:"rho_clip"`
	CClip                 float64   `json:"c_clip"`
	LogRhos               []float32 `json:"log_rhos"`
	Rewards, Values       []float32
	FinalValues           []float32 `json:"final_values"`
	LastValues            []float32 `json:"last_values"`
	Terminated, Truncated []bool
	VS                    []float64 `json:"vs"`
	PGAdvantages          []float64 `json:"pg_advantages"`
}

// rollout returns a full rollout holding the case's steps.
func (c vtraceCase) rollout(t *testing.T) *Rollout {
	t.Helper()
	n := c.Steps * c.Envs
	for name, l := range map[string]int{"log_rhos": len(c.LogRhos), "rewards": len(c.Rewards), "values": len(c.Values),
		"final_values": len(c.FinalValues), "terminated": len(c.Terminated), "truncated": len(c.Truncated),
		"vs": len(c.VS), "pg_advantages": len(c.PGAdvantages)} {
		if l != n {
			t.Fatalf("%s: %s has %d entries, want %d", c.Name, name, l, n)
		}
	}
	r, err := New(Dims{Steps: c.Steps, Envs: c.Envs, ObsSize: 1, ActSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range c.Steps {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	copy(r.Rewards, c.Rewards)
	copy(r.Values, c.Values)
	copy(r.FinalValues, c.FinalValues)
	copy(r.Terminated, c.Terminated)
	copy(r.Truncated, c.Truncated)
	return r
}

// TestVTraceMatchesTorchBeast holds ComputeVTrace to IMPALA's
// from_importance_weights (torchbeast's PyTorch port, run as it is) on
// random data with terminations, truncations and a bootstrap, and, for a
// trace clip other than 1 and λ < 1, to the paper's sum, which the generator
// checks against torchbeast where both apply.
func TestVTraceMatchesTorchBeast(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "vtrace.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct{ Cases []vtraceCase }
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatalf("vtrace.json: %v", err)
	}
	if len(ref.Cases) < 3 {
		t.Fatalf("vtrace.json has %d cases, want 3", len(ref.Cases))
	}
	for _, c := range ref.Cases {
		r := c.rollout(t)
		// IMPALA's advantages, weighted by min(ρ̄, ρ_t), and PPO's, without.
		for _, pg := range []float64{c.RhoClip, 0} {
			p := VTrace{Gamma: c.Gamma, Lambda: c.Lambda, RhoClip: c.RhoClip, TraceClip: c.CClip, PGRhoClip: pg}
			if err := r.ComputeVTrace(p, c.LogRhos, c.LastValues); err != nil {
				t.Fatal(err)
			}
			for i := range c.VS {
				if d := math.Abs(float64(r.Returns[i]) - c.VS[i]); d > 2e-6*(1+math.Abs(c.VS[i])) {
					t.Fatalf("%s (%s): v_s[%d] = %v, want %v", c.Name, c.Source, i, r.Returns[i], c.VS[i])
				}
				want := c.PGAdvantages[i]
				if pg == 0 {
					want /= min(c.RhoClip, math.Exp(float64(c.LogRhos[i])))
				}
				if d := math.Abs(float64(r.Advantages[i]) - want); d > 2e-6*(1+math.Abs(want)) {
					t.Fatalf("%s (%s), ρ̄_pg %v: advantage[%d] = %v, want %v", c.Name, c.Source, pg, i, r.Advantages[i], want)
				}
			}
		}
	}
}

// TestVTraceOnPolicyIsGAE: with every importance weight 1 and clips ≥ 1,
// V-trace's targets are GAE's returns, and its advantages GAE's at λ = 1.
func TestVTraceOnPolicyIsGAE(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, lambda := range []float64{0.95, 1} {
		d := Dims{Steps: 40, Envs: 3, ObsSize: 1, ActSize: 1}
		gae := randomRollout(t, d, rng)
		vt := *gae // shares the inputs, not the outputs
		vt.Returns, vt.Advantages = make([]float32, len(gae.Returns)), make([]float32, len(gae.Returns))
		last := []float32{0.3, -1.2, 2}
		if err := gae.ComputeGAE(0.98, lambda, last); err != nil {
			t.Fatal(err)
		}
		zeros := make([]float32, len(gae.Values))
		for _, logRhos := range [][]float32{nil, zeros} {
			if err := vt.ComputeVTrace(VTrace{Gamma: 0.98, Lambda: lambda, RhoClip: 1, TraceClip: 1.5}, logRhos, last); err != nil {
				t.Fatal(err)
			}
			if !closeTo(vt.Returns, gae.Returns, 1e-5) {
				t.Fatalf("λ %v: V-trace targets %v differ from GAE's returns %v", lambda, vt.Returns[:6], gae.Returns[:6])
			}
			if lambda == 1 && !closeTo(vt.Advantages, gae.Advantages, 1e-5) {
				t.Fatalf("λ 1: V-trace advantages %v differ from GAE's %v", vt.Advantages[:6], gae.Advantages[:6])
			}
		}
	}
}

// randomRollout is a full rollout with random rewards, values and episode
// ends of both kinds.
func randomRollout(t *testing.T, d Dims, rng *rand.Rand) *Rollout {
	t.Helper()
	r, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	for range d.Steps {
		s, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		for e := range d.Envs {
			s.Rewards[e], s.Values[e] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			s.Terminated[e] = rng.Float64() < 0.08
			s.Truncated[e] = !s.Terminated[e] && rng.Float64() < 0.05
			if s.Truncated[e] {
				s.FinalValues[e] = float32(rng.NormFloat64())
			}
		}
	}
	return r
}

func TestVTraceRejectsBadInput(t *testing.T) {
	r := randomRollout(t, Dims{Steps: 4, Envs: 2, ObsSize: 1, ActSize: 1}, rand.New(rand.NewPCG(3, 4)))
	last := []float32{0, 0}
	for _, c := range []struct {
		p       VTrace
		logRhos []float32
		want    string
	}{
		{VTrace{Gamma: 0.99, Lambda: 1, RhoClip: 0, TraceClip: 1}, nil, "want ρ̄, c̄ > 0"},
		{VTrace{Gamma: 0.99, Lambda: 1, RhoClip: 1, TraceClip: -1}, nil, "want ρ̄, c̄ > 0"},
		{VTrace{Gamma: 0.99, Lambda: 1, RhoClip: 1, TraceClip: 1, PGRhoClip: -1}, nil, "ρ̄_pg ≥ 0"},
		{VTrace{Gamma: 0.99, Lambda: 1, RhoClip: 1, TraceClip: 1}, make([]float32, 3), "3 log importance weights for 8 steps"},
	} {
		err := r.ComputeVTrace(c.p, c.logRhos, last)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want %q", c.p, err, c.want)
		}
	}
}
