package agent

import (
	"errors"
	"fmt"
	"math"

	"github.com/evolverl/evolve/netconf"
)

// ErrNonFinite is wrapped by the errors of Learn and Train when a loss or
// gradient is NaN or infinite: the agent has diverged (evolution gives it
// fitness −Inf) and its weights were left as they were before that update.
// Act, ActInfo, Policy and Play wrap it when an action's log-probability
// or a value is not finite (an agent loaded with non-finite weights).
var ErrNonFinite = errors.New("agent: non-finite loss or gradient")

// The methods below are what evolution needs beyond training: the weights
// to perturb, the hyperparameters to change, and a health check.

// WeightMatrices returns views of the agent's weight matrices: every dense,
// convolution and LSTM gate weight of the actor and the critic (not biases,
// LayerNorm parameters or the Gaussian log-std), named "actor.<name>" and
// "critic.<name>". The Data slices are the agent's own: writing them changes
// the agent (its Adam moments are left as they are).
func (a *PPO) WeightMatrices() []netconf.Tensor {
	var out []netconf.Tensor
	add := func(prefix string, s netconf.Spec, p netconf.Params) {
		l, err := netconf.Layout(s)
		if err != nil {
			panic("agent: the agent's own spec is invalid: " + err.Error())
		}
		weight := map[string]bool{}
		for _, ts := range l {
			weight[ts.Name] = ts.Role == netconf.RoleWeight
		}
		for _, t := range p {
			if weight[t.Name] {
				out = append(out, netconf.Tensor{Name: prefix + t.Name, Shape: t.Shape, Data: t.Data})
			}
		}
	}
	add("actor.", a.actorSpec, a.actor)
	add("critic.", a.criticSpec, a.critic)
	return out
}

// SetConfig replaces the agent's hyperparameters (evolution's rl_hp
// mutation). The architecture cannot change this way: cfg.Net is ignored
// (use MutateArchitecture), and so is share_encoders. What the agent's
// state is built from cannot change either: another normalize_obs,
// normalize_reward, normalize_value, use_sde, or RND setting (on or off,
// rnd_hidden, rnd_embed) is an error. A new learn_step, bptt or
// max_seq_len takes effect at the next Train, which then starts a new
// rollout and resets its vector (even the same one); a new lr with the
// next update (with kl_threshold, the adapted rate scaled by new lr / old
// lr).
func (a *PPO) SetConfig(cfg Config) error {
	cfg.Net = a.cfg.Net
	cfg.ShareEncoders = a.cfg.ShareEncoders
	if cfg.NormalizeObs != a.cfg.NormalizeObs {
		return fmt.Errorf("agent: normalize_obs cannot change after creation")
	}
	if cfg.NormalizeValue != a.cfg.NormalizeValue {
		return fmt.Errorf("agent: normalize_value cannot change after creation")
	}
	if cfg.NormalizeReward != a.cfg.NormalizeReward {
		return fmt.Errorf("agent: normalize_reward cannot change after creation")
	}
	if cfg.UseSDE != a.cfg.UseSDE {
		return fmt.Errorf("agent: use_sde cannot change after creation")
	}
	if cfg.rndOn() != a.cfg.rndOn() || cfg.rnd().hidden != a.cfg.rnd().hidden || cfg.rnd().embed != a.cfg.rnd().embed {
		return fmt.Errorf("agent: RND (rnd_coef > 0 or not, rnd_hidden, rnd_embed) cannot change after creation")
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("agent: set config: %w", err)
	}
	if cfg.LearnStep != a.cfg.LearnStep || cfg.BPTT != a.cfg.BPTT || cfg.MaxSeqLen != a.cfg.MaxSeqLen {
		a.roll = nil // buffer sizes change: start a new rollout
	}
	// A KL-adaptive rate keeps what it learnt: a changed lr moves it in
	// proportion.
	switch {
	case !cfg.klAdaptive() || !a.cfg.klAdaptive():
		a.adam.LR = cfg.LR
	case cfg.LR != a.cfg.LR:
		a.adam.LR = cfg.clampLR(a.adam.LR * (cfg.LR / a.cfg.LR))
	}
	a.cfg = cfg
	return nil
}

// CheckFinite returns an error naming the first weight, log-std or
// optimizer moment that is NaN or infinite, or nil; an agent that is not
// built is an error too.
func (a *PPO) CheckFinite() error {
	if a == nil || a.obsSpace == nil {
		return errors.New("agent: the agent is not built (make it with agent.New or agent.Load)")
	}
	check := func(what string, x []float32) error {
		for i, v := range x {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("agent: %s[%d] = %v", what, i, v)
			}
		}
		return nil
	}
	var err error
	eachTensor(a.actor, a.critic, &a.logStd, a.dist.stdShape(), func(name string, _ []int, d *[]float32) {
		if err == nil {
			err = check(name, *d)
		}
	})
	if err != nil {
		return err
	}
	for i := range a.adam.M {
		if err := check(fmt.Sprintf("adam moment %d", i), a.adam.M[i]); err != nil {
			return err
		}
		if err := check(fmt.Sprintf("adam moment %d", i), a.adam.V[i]); err != nil {
			return err
		}
	}
	return nil
}
