package agent

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/buffer"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/netconf"
)

// lagAgent is an agent on 4 Pendulums (time limit 200: a rollout of 64
// steps per env crosses it once in four) with the given estimator and
// actor lag, bound to its vector.
func lagAgent(t *testing.T, advantage string, lag int) *PPO {
	return lagAgentOn(t, "Pendulum-v1", nil, advantage, lag)
}

// lagAgentOn is lagAgent on another env.
func lagAgentOn(t *testing.T, id string, opts envs.Options, advantage string, lag int) *PPO {
	t.Helper()
	cfg := probeConfig(netconf.EncoderMLP)
	cfg.LearnStep, cfg.BatchSize, cfg.LR, cfg.ActorLag = 4*64, 64, 3e-3, lag
	if advantage != "" {
		cfg.Advantage = advantage
	}
	if advantage == AdvantageVTrace {
		cfg.VTraceRhoClip, cfg.VTraceCClip = 1, 1
	}
	return boundAgent(t, id, opts, cfg, 7, nil)
}

// boundAgent is a new agent of cfg (seeded by seed) on a vector of 4 envs
// of id, closed when the test ends, given demos (when not nil) and bound
// to the vector, its first rollout not collected yet.
func boundAgent(t *testing.T, id string, opts envs.Options, cfg Config, seed uint64, demos []Demo) *PPO {
	t.Helper()
	vec, err := envs.MakeVector(id, 4, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vec.Close() })
	a, err := New(vec.ObservationSpace(), vec.ActionSpace(), cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	if demos != nil {
		if err := a.SetDemos(demos); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.startRollout(vec); err != nil {
		t.Fatal(err)
	}
	return a
}

// learnerLogp is what relabel computes of the rollout with weights w: the
// log-probabilities of its stored actions. The agent's weights are left as
// they were.
func learnerLogp(t *testing.T, a *PPO, w []float32) []float32 {
	t.Helper()
	keep := a.flatWeights(nil)
	a.setFlatWeights(w)
	defer a.setFlatWeights(keep)
	if err := a.relabel(); err != nil {
		t.Fatal(err)
	}
	return slices.Clone(a.roll.piLogp)
}

// TestActorLagActsWithPastWeights: with actor_lag L, rollout k acts with
// the weights from before update k − L (the first weights while fewer
// updates have been made), and the learner's weights are back after it; on
// Pendulum, and on Connect Four, whose action masks relabel must apply.
func TestActorLagActsWithPastWeights(t *testing.T) {
	for _, c := range []struct {
		id   string
		opts envs.Options
		lag  int
	}{{"Pendulum-v1", nil, 1}, {"Pendulum-v1", nil, 2}, {"ConnectFour-v0", envs.Options{"flat": true}, 1}} {
		a, lag := lagAgentOn(t, c.id, c.opts, AdvantageGAE, c.lag), c.lag
		var before [][]float32 // weights before each update
		for k := range 4 {
			if _, _, _, err := a.collect(new([]float64)); err != nil {
				t.Fatal(err)
			}
			learner := a.flatWeights(nil)
			actor := learner // what should have acted: no update yet
			if k > 0 {
				actor = before[max(0, k-lag)]
			}
			behaviour := slices.Clone(a.roll.buf.LogProbs)
			if d := maxDiff(learnerLogp(t, a, actor), behaviour); d > 1e-5 {
				t.Fatalf("lag %d, rollout %d: the stored log-probabilities differ by %g from the weights of update %d", lag, k, d, max(0, k-lag))
			}
			if k >= lag {
				if d := maxDiff(learnerLogp(t, a, learner), behaviour); d < 1e-4 {
					t.Fatalf("lag %d, rollout %d: the learner's weights give the stored log-probabilities (%g): the actor did not lag", lag, k, d)
				}
			}
			if !slices.Equal(a.flatWeights(nil), learner) {
				t.Fatalf("lag %d, rollout %d: collecting changed the learner's weights", lag, k)
			}
			before = append(before, learner)
			if _, err := a.Learn(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestVTraceRelabelsStaleData: after a lagged actor's rollout, V-trace's
// buffer keeps the actor's log-probabilities (PPO's ratio is against them)
// and holds the learner's values, the importance weights are learner over
// actor, and the targets and advantages are ComputeVTrace's on those, with
// unweighted advantages; a truncated episode's final value is the learner
// critic's too.
func TestVTraceRelabelsStaleData(t *testing.T) {
	a := lagAgent(t, AdvantageVTrace, 1)
	var actor []float32
	for range 3 { // Pendulum's time limit (200) falls in the 4th rollout of 64 steps
		actor = a.flatWeights(nil)
		if _, _, _, err := a.collect(new([]float64)); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Learn(); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, err := a.collect(new([]float64)); err != nil {
		t.Fatal(err)
	}
	r, buf := a.roll, a.roll.buf
	got := *buf
	got.Returns, got.Advantages = slices.Clone(buf.Returns), slices.Clone(buf.Advantages)
	behaviour := slices.Clone(buf.LogProbs) // the actor's, for PPO's ratio
	for i, lp := range behaviour {
		if d := math.Abs(float64(r.piLogp[i] - r.logRho[i] - lp)); d > 1e-6 {
			t.Fatalf("step %d: log π − log ρ = %v, the actor's log-probability %v", i, r.piLogp[i]-r.logRho[i], lp)
		}
	}
	if d := maxDiff(behaviour, r.piLogp); d < 1e-4 {
		t.Fatalf("the learner's and the actor's log-probabilities agree to %g: nothing was stale", d)
	}
	// The learner critic's values of each step's observations, row by row.
	x := make([]float32, buf.ObsSize)
	for i := range buf.Values {
		copy(x, buf.Obs[i*buf.ObsSize:])
		if err := a.values(x, nil, &r.fout); err != nil {
			t.Fatal(err)
		}
		if math.Abs(float64(r.fout.values[0]-buf.Values[i])) > 1e-5 {
			t.Fatalf("step %d: value %v, the learner's critic gives %v", i, buf.Values[i], r.fout.values[0])
		}
	}
	if len(r.finIdx) == 0 {
		t.Fatal("no episode was truncated in the last rollout: the test does not reach final values")
	}
	for k, i := range r.finIdx {
		copy(x, r.finObs[k*buf.ObsSize:])
		if err := a.values(x, nil, &r.fout); err != nil {
			t.Fatal(err)
		}
		if !buf.Truncated[i] || buf.FinalValues[i] != r.fout.values[0] {
			t.Fatalf("step %d: final value %v (truncated %v), the learner's critic gives %v", i, buf.FinalValues[i], buf.Truncated[i], r.fout.values[0])
		}
	}
	// learnerLogp relabels the buffer with the actor's weights; relabel
	// puts the learner's back, with its bootstrap values in r.fout.
	if d := maxDiff(learnerLogp(t, a, actor), behaviour); d > 1e-5 {
		t.Fatalf("the buffer's log-probabilities differ from the actor's by %g", d)
	}
	if err := a.relabel(); err != nil {
		t.Fatal(err)
	}
	want := got
	want.Returns, want.Advantages = make([]float32, len(buf.Returns)), make([]float32, len(buf.Returns))
	p := buffer.VTrace{Gamma: a.cfg.Gamma, Lambda: a.cfg.GAELambda, RhoClip: 1, TraceClip: 1}
	if err := want.ComputeVTrace(p, r.logRho, r.fout.values); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(want.Returns, got.Returns) || !slices.Equal(want.Advantages, got.Advantages) {
		t.Fatal("the rollout's targets or advantages are not V-trace's on the learner's values and weights")
	}
}

// TestOnPolicyEstimatorsAgree: without a lag, V-trace's targets are GAE's
// returns, and "mc" is GAE with λ = 1, on the same rollout.
func TestOnPolicyEstimatorsAgree(t *testing.T) {
	returns := map[string][]float32{}
	advs := map[string][]float32{}
	for _, est := range []string{AdvantageGAE, AdvantageVTrace, AdvantageMC, "gae1"} {
		a := lagAgent(t, strings.TrimSuffix(est, "1"), 0)
		if est == "gae1" {
			c := a.Config()
			c.GAELambda = 1
			if err := a.SetConfig(c); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, _, err := a.collect(new([]float64)); err != nil {
			t.Fatal(err)
		}
		returns[est], advs[est] = slices.Clone(a.roll.buf.Returns), slices.Clone(a.roll.buf.Advantages)
	}
	if d := maxDiff(returns[AdvantageVTrace], returns[AdvantageGAE]); d > 1e-4 {
		t.Errorf("V-trace's targets differ from GAE's returns by %g on fresh data", d)
	}
	if d := maxDiff(returns[AdvantageMC], returns["gae1"]); d > 1e-4 {
		t.Errorf(`"mc" returns differ from GAE λ = 1 by %g`, d)
	}
	if d := maxDiff(advs[AdvantageMC], advs["gae1"]); d > 1e-4 {
		t.Errorf(`"mc" advantages differ from GAE λ = 1 by %g`, d)
	}
	if d := maxDiff(returns[AdvantageMC], returns[AdvantageGAE]); d < 1e-3 {
		t.Errorf("λ 0.95 and λ 1 give the same returns (%g): the comparison proves nothing", d)
	}
}

// TestAdvantageConfigErrors: each bad estimator setting is an error naming
// its key.
func TestAdvantageConfigErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"unknown", func(c *Config) { c.Advantage = "retrace" }, `advantage = "retrace"`},
		{"rho 0", func(c *Config) { c.Advantage, c.VTraceRhoClip, c.VTraceCClip = AdvantageVTrace, 0, 1 }, "vtrace_rho_clip = 0"},
		{"c negative", func(c *Config) { c.Advantage, c.VTraceRhoClip, c.VTraceCClip = AdvantageVTrace, 1, -1 }, "vtrace_c_clip = -1"},
		{"rho inf", func(c *Config) { c.Advantage, c.VTraceRhoClip, c.VTraceCClip = AdvantageVTrace, math.Inf(1), 1 }, "vtrace_rho_clip = +Inf"},
		{"clip without vtrace", func(c *Config) { c.VTraceRhoClip = 2 }, `set only with advantage = "vtrace"`},
		{"lstm", func(c *Config) {
			c.Advantage, c.VTraceRhoClip, c.VTraceCClip = AdvantageVTrace, 1, 1
			c.Net = netconf.DefaultSpec(netconf.EncoderLSTM)
		}, `not with net.encoder = "lstm"`},
		{"lag negative", func(c *Config) { c.ActorLag = -1 }, "actor_lag = -1"},
		{"lag large", func(c *Config) { c.ActorLag = maxActorLag + 1 }, "actor_lag = 65"},
	} {
		cfg := DefaultConfig()
		c.set(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}
