package envs

import "fmt"

// Probe environments isolate one ability of an agent each, so that a broken
// value function, policy, discounting or memory shows up in seconds instead
// of as a vague failure to learn. They follow Andy Jones's "debugging RL"
// probes; every episode ends by termination (never truncation), so a correct
// agent's values are exact targets.

// probe is one episode schedule: obs, reward and length rules.
type probe struct {
	id       string
	obsSpace Box
	actions  int
	stream   stream
	t        int       // step within the episode
	cue      float32   // the episode's random draw, when it has one
	obs      []float32 // returned observation buffer
	// observe fills obs for step t; reward returns the reward of taking
	// action a at step t and whether the episode ends there.
	observe func(p *probe)
	reward  func(p *probe, a int) (float64, bool)
	// draw picks the episode's random value at reset, when it has one.
	draw bool
}

func (p *probe) ObservationSpace() Space { return p.obsSpace }
func (p *probe) ActionSpace() Space      { return Discrete{N: p.actions} }

func (p *probe) Reset(seed int64) ([]float32, Info) {
	rng := p.stream.reset(seed)
	p.t = 0
	if p.draw {
		p.cue = float32(rng.IntN(2))
	}
	p.observe(p)
	return p.obs, Info{}
}

func (p *probe) Step(action []float32) ([]float32, float64, bool, bool, Info) {
	a := discreteAction(p.id, action, p.actions)
	r, done := p.reward(p, a)
	p.t++
	p.observe(p)
	return p.obs, r, done, false, Info{}
}

func (p *probe) String() string { return p.id }

func newProbe(id string, obsSize int, low, high float32, actions int, draw bool,
	observe func(p *probe), reward func(p *probe, a int) (float64, bool)) *probe {
	return &probe{id: id, obsSpace: NewBox(low, high, obsSize), actions: actions, draw: draw,
		obs: make([]float32, obsSize), observe: observe, reward: reward}
}

// NewProbe1 returns Probe1-v0: one action, observation [0], one step, reward
// +1. It tests the value head alone: a correct agent learns V([0]) = 1.
func NewProbe1() Env {
	return newProbe("Probe1-v0", 1, 0, 0, 1, false,
		func(p *probe) { p.obs[0] = 0 },
		func(p *probe, a int) (float64, bool) { return 1, true })
}

// NewProbe2 returns Probe2-v0: one action, observation [−1] or [+1] at
// random, one step, reward equal to the observation. It tests that the value
// head reads its input: V([x]) = x.
func NewProbe2() Env {
	return newProbe("Probe2-v0", 1, -1, 1, 1, true,
		func(p *probe) { p.obs[0] = 2*p.cue - 1 },
		func(p *probe, a int) (float64, bool) { return float64(2*p.cue - 1), true })
}

// NewProbe3 returns Probe3-v0: one action, observation [0] then [1], two
// steps, reward +1 only at the end. It tests discounting and bootstrapping:
// V([1]) = 1 and V([0]) = gamma.
func NewProbe3() Env {
	return newProbe("Probe3-v0", 1, 0, 1, 1, false,
		func(p *probe) { p.obs[0] = float32(min(p.t, 1)) },
		func(p *probe, a int) (float64, bool) {
			if p.t == 1 {
				return 1, true
			}
			return 0, false
		})
}

// NewProbe4 returns Probe4-v0: two actions, observation [0], one step,
// reward +1 for action 1 and −1 for action 0. It tests the policy gradient
// alone: the policy learns to always take action 1 (and V → 1).
func NewProbe4() Env {
	return newProbe("Probe4-v0", 1, 0, 0, 2, false,
		func(p *probe) { p.obs[0] = 0 },
		func(p *probe, a int) (float64, bool) {
			if a == 1 {
				return 1, true
			}
			return -1, true
		})
}

// NewProbe5 returns Probe5-v0: two actions, observation [0] or [1] at
// random, one step, reward +1 if the action equals the observation, else −1.
// It tests that policy and value work together on the input: π(a = obs) → 1.
func NewProbe5() Env {
	return newProbe("Probe5-v0", 1, 0, 1, 2, true,
		func(p *probe) { p.obs[0] = p.cue },
		func(p *probe, a int) (float64, bool) {
			if float32(a) == p.cue {
				return 1, true
			}
			return -1, true
		})
}

// probe6Steps is the length of a Probe6-v0 episode.
const probe6Steps = 8

// NewProbe6 returns Probe6-v0: two actions, observation [t] for the step
// counter t = 0…7 of an 8-step episode, reward +1 if the action equals
// t mod 2, else 0. The right action alternates, so the policy must read its
// observation at every step; a correct agent earns 8 per episode.
func NewProbe6() Env {
	return newProbe("Probe6-v0", 1, 0, probe6Steps-1, 2, false,
		func(p *probe) { p.obs[0] = float32(min(p.t, probe6Steps-1)) },
		func(p *probe, a int) (float64, bool) {
			r := 0.0
			if a == p.t%2 {
				r = 1
			}
			return r, p.t == probe6Steps-1
		})
}

// probe7Steps is the length of a Probe7-v0 episode.
const probe7Steps = 5

// NewProbe7 returns Probe7-v0, a memory task: 5 steps; the first observation
// is [1, c] with a random cue c in {0, 1}, the next four are [0, 0]; the
// reward is 0 except at the last step: +1 if the action equals c, else −1.
// Only a recurrent policy can do better than chance (mean return 0); a
// correct one earns +1.
func NewProbe7() Env {
	return newProbe("Probe7-v0", 2, 0, 1, 2, true,
		func(p *probe) {
			if p.t == 0 {
				p.obs[0], p.obs[1] = 1, p.cue
			} else {
				p.obs[0], p.obs[1] = 0, 0
			}
		},
		func(p *probe, a int) (float64, bool) {
			if p.t < probe7Steps-1 {
				return 0, false
			}
			if float32(a) == p.cue {
				return 1, true
			}
			return -1, true
		})
}

func init() {
	probes := []func() Env{NewProbe1, NewProbe2, NewProbe3, NewProbe4, NewProbe5, NewProbe6, NewProbe7}
	summaries := []string{
		"value of a constant obs (V → 1)",
		"value depends on obs (V → obs)",
		"discounting over two steps (V([0]) → gamma)",
		"policy prefers action 1",
		"policy matches a random obs",
		"policy alternates with the step counter",
		"memory: recall the first step's cue at the fifth",
	}
	for i, mk := range probes {
		mustRegister(Spec{ID: fmt.Sprintf("Probe%d-v0", i+1), Summary: "probe: " + summaries[i],
			New: func(o Options) (Env, error) { return mk(), o.Only() }})
	}
}
