package agent

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

// policyCase is an agent for one action space, and a batch to ask it about.
type policyCase struct {
	name  string
	act   envs.Space
	masks [][]bool
}

var policyCases = []policyCase{
	{"discrete", envs.Discrete{N: 3, Start: -1}, nil},
	{"discrete masked", envs.Discrete{N: 4}, [][]bool{{true, false, true, false}, nil, {false, false, false, true}}},
	{"multi discrete masked", envs.MultiDiscrete{Nvec: []int{2, 3}},
		[][]bool{{true, true, false, true, true}, {false, true, true, true, false}, nil}},
	{"multi binary", envs.MultiBinary{N: 4}, nil},
	{"box", envs.NewBox(-1e-4, 1e-4, 2), nil},
}

const policyRows = 3

var policyObsSpace = envs.NewBox(-2, 2, 5)

func newPolicyAgent(t *testing.T, act envs.Space, cfg Config) *PPO {
	t.Helper()
	a, err := New(policyObsSpace, act, cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func policyObs(seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	obs := make([]float32, policyRows*policyObsSpace.FlatSize())
	for i := range obs {
		obs[i] = float32(rng.NormFloat64())
	}
	return obs
}

func TestPolicyProbabilitiesAreDistributionsThatActFollows(t *testing.T) {
	for _, c := range policyCases {
		t.Run(c.name, func(t *testing.T) {
			a, b := newPolicyAgent(t, c.act, DefaultConfig()), newPolicyAgent(t, c.act, DefaultConfig())
			obs := policyObs(1)
			p, err := a.Policy(obs, c.masks)
			if err != nil {
				t.Fatal(err)
			}
			acts, err := b.Act(obs, c.masks, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Values) != policyRows {
				t.Fatalf("%d values for %d rows", len(p.Values), policyRows)
			}
			switch s := c.act.(type) {
			case envs.Discrete, envs.MultiDiscrete:
				nvec := []int{0}
				start := 0
				if d, ok := s.(envs.Discrete); ok {
					nvec[0], start = d.N, d.Start
				} else {
					nvec = s.(envs.MultiDiscrete).Nvec
				}
				if len(p.Probs) != len(nvec) || p.BitProbs != nil || p.Mean != nil || p.Std != nil {
					t.Fatalf("output %+v for %v", p, c.act)
				}
				for r := range policyRows {
					off := 0
					for comp, n := range nvec {
						row := p.Probs[comp][r*n : (r+1)*n]
						sum := 0.0
						for k, q := range row {
							sum += float64(q)
							if c.masks != nil && c.masks[r] != nil && !c.masks[r][off+k] && q != 0 {
								t.Errorf("row %d component %d: masked choice %d has probability %v", r, comp, k, q)
							}
						}
						if math.Abs(sum-1) > 1e-5 {
							t.Errorf("row %d component %d: probabilities %v sum to %v", r, comp, row, sum)
						}
						best := 0
						for k, q := range row {
							if q > row[best] {
								best = k
							}
						}
						if got := acts[r*len(nvec)+comp]; got != float32(best+start) {
							t.Errorf("row %d component %d: Act chose %v, the most likely choice is %d", r, comp, got, best+start)
						}
						off += n
					}
				}
			case envs.MultiBinary:
				if len(p.BitProbs) != policyRows*s.N || p.Probs != nil || p.Mean != nil {
					t.Fatalf("output %+v for %v", p, c.act)
				}
				for i, q := range p.BitProbs {
					if !(q > 0 && q < 1) {
						t.Errorf("P(bit %d = 1) = %v", i, q)
					}
					if want := float32(0); q >= 0.5 {
						want = 1
						if acts[i] != want {
							t.Errorf("bit %d: Act chose %v with P(1) = %v", i, acts[i], q)
						}
					} else if acts[i] != want {
						t.Errorf("bit %d: Act chose %v with P(1) = %v", i, acts[i], q)
					}
				}
			case envs.Box:
				if len(p.Mean) != policyRows*2 || len(p.Std) != 2 || p.Probs != nil || p.BitProbs != nil {
					t.Fatalf("output %+v for %v", p, c.act)
				}
				for _, sd := range p.Std {
					if want := float32(math.Exp(DefaultConfig().ActionStdInit)); math.Abs(float64(sd-want)) > 1e-6 {
						t.Errorf("std %v, want e^%v = %v", sd, DefaultConfig().ActionStdInit, want)
					}
				}
				// Act clips; the unclipped deterministic action is the mean.
				var out actOut
				x := slices.Clone(obs)
				b.preprocess(x, obs, false)
				if err := b.act(x, nil, nil, true, true, &out); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(out.actions, p.Mean) {
					t.Errorf("mean %v, unclipped deterministic actions %v", p.Mean, out.actions)
				}
				clipped := 0
				for i, m := range p.Mean {
					want := min(max(m, s.Low[i%2]), s.High[i%2])
					if acts[i] != want {
						t.Errorf("action %d: Act %v, clipped mean %v", i, acts[i], want)
					}
					if want != m {
						clipped++
					}
				}
				if clipped == 0 {
					t.Error("no mean fell outside the bounds: clipping untested")
				}
			}
		})
	}
}

// TestPolicyValuesAreTheCriticsValues compares Policy's and ActInfo's
// values with the ones the rollout's bootstrap computes (act keeping the
// state), and ActInfo's log-probabilities with Policy's probabilities.
func TestPolicyValuesAreTheCriticsValues(t *testing.T) {
	for _, c := range policyCases {
		t.Run(c.name, func(t *testing.T) {
			a := newPolicyAgent(t, c.act, DefaultConfig())
			obs := policyObs(2)
			x := slices.Clone(obs)
			a.preprocess(x, obs, false)
			var ref actOut
			if err := a.act(x, c.masks, nil, true, true, &ref); err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(ref.values)
			p, err := a.Policy(obs, c.masks)
			if err != nil {
				t.Fatal(err)
			}
			_, logp, values, err := a.ActInfo(obs, c.masks, true)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Values, want) || !slices.Equal(values, want) {
				t.Errorf("values: Policy %v, ActInfo %v, the critic %v", p.Values, values, want)
			}
			if !slices.Equal(logp, ref.logp) {
				t.Errorf("ActInfo log-probabilities %v, act's %v", logp, ref.logp)
			}
			if p.Probs != nil {
				// Deterministic: each component's most likely choice.
				for r := range policyRows {
					lp := 0.0
					for _, row := range p.Probs {
						n := len(row) / policyRows
						lp += math.Log(float64(slices.Max(row[r*n : (r+1)*n])))
					}
					if math.Abs(lp-float64(logp[r])) > 1e-5 {
						t.Errorf("row %d: log-probability %v, log of the most likely choices %v", r, logp[r], lp)
					}
				}
			}
		})
	}
}

func TestActInfoSamplesAsActDoes(t *testing.T) {
	for _, c := range policyCases {
		t.Run(c.name, func(t *testing.T) {
			a, b := newPolicyAgent(t, c.act, DefaultConfig()), newPolicyAgent(t, c.act, DefaultConfig())
			for step := range 3 {
				obs := policyObs(uint64(10 + step))
				got, logp, values, err := a.ActInfo(obs, c.masks, false)
				if err != nil {
					t.Fatal(err)
				}
				want, err := b.Act(obs, c.masks, false)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Errorf("step %d: ActInfo %v, Act %v", step, got, want)
				}
				if len(logp) != policyRows || len(values) != policyRows {
					t.Errorf("step %d: %d log-probabilities and %d values for %d rows", step, len(logp), len(values), policyRows)
				}
				for _, l := range logp {
					_, box := c.act.(envs.Box)
					if math.IsNaN(float64(l)) || math.IsInf(float64(l), 0) || (!box && l > 0) {
						t.Errorf("step %d: log-probability %v", step, l)
					}
				}
			}
		})
	}
}

// TestPolicyAdvancesRecurrentStateAsActDoes: Policy then Act on the next
// observation equals Act twice, and ResetState clears what Policy left.
func TestPolicyAdvancesRecurrentStateAsActDoes(t *testing.T) {
	cfg := probeConfig(netconf.EncoderLSTM)
	for _, c := range policyCases {
		t.Run(c.name, func(t *testing.T) {
			a, b := newPolicyAgent(t, c.act, cfg), newPolicyAgent(t, c.act, cfg)
			if !a.recurrent() {
				t.Fatal("the agent is not recurrent")
			}
			first, second := policyObs(3), policyObs(4)
			if _, err := a.Policy(first, c.masks); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Act(first, c.masks, true); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.deploy, b.deploy) || !slices.ContainsFunc(a.deploy, func(v float32) bool { return v != 0 }) {
				t.Fatalf("state after Policy %v, after Act %v", a.deploy, b.deploy)
			}
			got, err := a.Act(second, c.masks, true)
			if err != nil {
				t.Fatal(err)
			}
			want, err := b.Act(second, c.masks, true)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("after Policy, Act %v; after Act, Act %v", got, want)
			}
			// The state matters: from a fresh state the values differ.
			fresh := newPolicyAgent(t, c.act, cfg)
			p, err := a.Policy(second, c.masks)
			if err != nil {
				t.Fatal(err)
			}
			q, err := fresh.Policy(second, c.masks)
			if err != nil {
				t.Fatal(err)
			}
			if slices.Equal(p.Values, q.Values) {
				t.Errorf("values %v do not depend on the recurrent state", p.Values)
			}
			a.ResetState(-1)
			fresh.ResetState(-1)
			p, _ = a.Policy(second, c.masks)
			q, _ = fresh.Policy(second, c.masks)
			if !slices.Equal(p.Values, q.Values) {
				t.Errorf("after ResetState, values %v, a fresh agent's %v", p.Values, q.Values)
			}
		})
	}
}

func TestPolicyRejectsBadBatches(t *testing.T) {
	a := newPolicyAgent(t, envs.Discrete{N: 2}, DefaultConfig())
	for _, tc := range []struct {
		name  string
		obs   []float32
		masks [][]bool
		want  string
	}{
		{"partial row", make([]float32, 7), nil, "policy: 7 observation values are not whole rows of 5"},
		{"no rows", nil, nil, "policy: 0 observation values are not whole rows of 5"},
		{"masks", make([]float32, 10), [][]bool{nil}, "policy: 1 mask for 2 rows (10 observation values in rows of 5, the agent's observation size): want one mask per row"},
		{"mask size", make([]float32, 5), [][]bool{{true}}, "policy: row 0: action mask of 1 entry, want 2"},
		{"no legal", make([]float32, 5), [][]bool{{false, false}}, "no legal choice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := a.Policy(tc.obs, tc.masks)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			_, _, _, err = a.ActInfo(tc.obs, tc.masks, true)
			if err == nil {
				t.Errorf("ActInfo accepted the batch")
			}
		})
	}
}

// TestRecurrentStateKeepsItsRows: a recurrent agent with episodes under
// way refuses a batch of another number of rows (it started every row's
// episode again, silently: a Go server whose number of sessions changed
// got wrong actions); after ResetState(-1) any number goes.
func TestRecurrentStateKeepsItsRows(t *testing.T) {
	cfg := probeConfig(netconf.EncoderLSTM)
	a := newPolicyAgent(t, envs.Discrete{N: 2}, cfg)
	obs := policyObs(3) // policyRows rows
	if _, err := a.Act(obs, nil, true); err != nil {
		t.Fatal(err)
	}
	n := policyObsSpace.FlatSize()
	_, err := a.Act(obs[:n], nil, true)
	if err == nil || !strings.Contains(err.Error(), "ResetState(-1)") {
		t.Fatalf("one row after %d: %v, want an error saying ResetState(-1)", policyRows, err)
	}
	a.ResetState(-1)
	if _, err := a.Act(obs[:n], nil, true); err != nil {
		t.Errorf("one row after ResetState(-1): %v", err)
	}
	var zero PPO
	if err := zero.Save(filepath.Join(t.TempDir(), "a.safetensors")); err == nil || !strings.Contains(err.Error(), "not built") {
		t.Errorf("Save of a zero PPO: %v, want an error saying it is not built", err)
	}
}

// TestActRefusesNonFiniteWeights: an agent file with a NaN weight loads
// (checkpoints keep diverged agents), and then Act and Policy refuse it
// naming the tensor, where they returned Discrete action 0 and a NaN Box
// action with no error.
func TestActRefusesNonFiniteWeights(t *testing.T) {
	for _, act := range []envs.Space{envs.Discrete{N: 3}, envs.NewBox(-1, 1, 2)} {
		a := newPolicyAgent(t, act, DefaultConfig())
		a.actor.Tensor("out.weight").Data[0] = float32(math.Inf(1))
		path := filepath.Join(t.TempDir(), "a.safetensors")
		if err := a.Save(path); err != nil {
			t.Fatal(err)
		}
		b, err := Load(path)
		if err != nil {
			t.Fatalf("%v: Load: %v", act, err)
		}
		obs := policyObs(1)
		_, err = b.Act(obs, nil, true)
		if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "actor.out.weight[0] = +Inf") {
			t.Errorf("%v: Act: %v, want ErrNonFinite naming actor.out.weight", act, err)
		}
		if _, err := b.Policy(obs, nil); !errors.Is(err, ErrNonFinite) {
			t.Errorf("%v: Policy: %v, want ErrNonFinite", act, err)
		}
	}
}
