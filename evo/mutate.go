package evo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/evolverl/evolve/agent"
	"github.com/evolverl/evolve/netconf"
)

// The mutation kinds, one of which each agent gets per generation.
const (
	MutationNone         = "none"
	MutationArchitecture = "architecture"
	MutationParameters   = "parameters"
	MutationActivation   = "activation"
	MutationRLHP         = "rl_hp"
)

// Parameter mutation constants (AgileRL's classic parameter mutation):
// the share of a chosen matrix's entries that get noise, the chances per
// entry of a super-mutation (10× the noise) and of a reset to N(0, 1), and
// the bound on the magnitude of any mutated weight.
const (
	paramFraction     = 0.1
	superMutationProb = 0.05
	superMutationSD   = 10
	resetProb         = 0.05
	weightBound       = 1e6
)

// draw picks one mutation kind with the configured weights.
func (m MutationConfig) draw(r *rand.Rand) string {
	kinds := []struct {
		name string
		w    float64
	}{{MutationNone, m.NoMutation}, {MutationArchitecture, m.Architecture}, {MutationParameters, m.Parameters},
		{MutationActivation, m.Activation}, {MutationRLHP, m.RLHP}}
	sum := 0.0
	for _, k := range kinds {
		sum += k.w
	}
	u := r.Float64() * sum
	for _, k := range kinds {
		if u < k.w {
			return k.name
		}
		u -= k.w
	}
	// Rounding can leave u just above the last weight: take the last
	// kind with a positive weight.
	for i := len(kinds) - 1; i >= 0; i-- {
		if kinds[i].w > 0 {
			return kinds[i].name
		}
	}
	return MutationNone
}

// mutate gives agent a (member index, in generation gen) one mutation drawn
// with the configured weights, from the stream (seed, index, gen,
// mutation). It returns the mutated agent (a itself, changed in place) and
// a one-line description, which the agent's History also records for every
// kind but none.
func (c Config) mutate(a *agent.PPO, index, gen int) (*agent.PPO, string, error) {
	r := newRNG(c.Seed, index, gen, purposeMutation)
	switch kind := c.Mutation.draw(r); kind {
	case MutationArchitecture:
		k := netconf.KindNode
		if r.Float64() < c.Mutation.NewLayer {
			k = netconf.KindLayer
		}
		var ops []netconf.Mutation
		for _, m := range netconf.MutationsFor(a.Config().Net) {
			if m.Kind == k {
				ops = append(ops, m)
			}
		}
		if len(ops) == 0 {
			return a, fmt.Sprintf("architecture: no %s mutation for a %s encoder", k, a.Config().Net.Encoder), nil
		}
		return applyArchitecture(a, ops[r.IntN(len(ops))])
	case MutationActivation:
		var ops []netconf.Mutation
		for _, m := range netconf.MutationsFor(a.Config().Net) {
			if m.Kind == netconf.KindActivation {
				ops = append(ops, m)
			}
		}
		if len(ops) == 0 {
			return a, "activation: no activation mutation", nil
		}
		return applyArchitecture(a, ops[r.IntN(len(ops))])
	case MutationParameters:
		desc := mutateParameters(a.WeightMatrices(), c.Mutation.MutationSD, r)
		a.History = append(a.History, desc)
		return a, desc, nil
	case MutationRLHP:
		names := c.mutableHPs()
		if len(names) == 0 {
			return a, "rl_hp: no mutable hyperparameter", nil
		}
		name := names[r.IntN(len(names))]
		rng := c.HP[name]
		cfg := a.Config()
		old := hpValue(cfg, name)
		f := rng.Grow
		if r.IntN(2) == 1 {
			f = rng.Shrink
		}
		v := old * f
		if HPScale(name, rng) == ScaleLog1m { // gamma, gae_lambda: 1−value moves, as PBT's perturbation does
			v = 1 - (1-old)*f
		}
		v = min(rng.Max, max(rng.Min, v))
		if isIntHP(name) {
			v = math.Round(v)
			if v == old && f != 1 { // a small integer would never move: 2 × 1.2 and 2 × 0.8 round to 2
				v = min(rng.Max, max(rng.Min, old+math.Copysign(1, f-1)))
			}
		}
		setHP(&cfg, name, v)
		if name == "learn_step" && c.Env.NumEnvs >= 1 {
			// The agent trains learn_step/num_envs steps of each env: record that.
			cfg.LearnStep = max(c.Env.NumEnvs, cfg.LearnStep/c.Env.NumEnvs*c.Env.NumEnvs)
		}
		desc := fmt.Sprintf("rl_hp: %s %s -> %s", name, fmtHP(old), fmtHP(hpValue(cfg, name)))
		if err := a.SetConfig(cfg); err != nil {
			return nil, "", fmt.Errorf("rl_hp mutation of agent %d: %w", index, err)
		}
		a.History = append(a.History, desc)
		return a, desc, nil
	default:
		return a, MutationNone, nil
	}
}

// applyArchitecture applies one netconf operator; an operator that does
// not apply leaves the agent as it was, and the description says why.
func applyArchitecture(a *agent.PPO, m netconf.Mutation) (*agent.PPO, string, error) {
	desc, changed, err := a.MutateArchitecture(m)
	if err != nil {
		return nil, "", err
	}
	if !changed {
		return a, desc + " (not applied)", nil
	}
	return a, desc, nil
}

// mutateParameters adds Gaussian noise to the weights of a random subset
// of the weight matrices (agent.WeightMatrices: biases, norms and the
// log-std are left alone): in each chosen matrix about 10 %
// of the entries, drawn with replacement, get w += N(0, (sd·|w|)²); with
// probability 5 % an entry gets 10× that noise instead, and with 5 % it is
// reset to N(0, 1). Results are clipped to ±1e6.
func mutateParameters(mats []netconf.Tensor, sd float64, r *rand.Rand) string {
	if len(mats) == 0 {
		return "parameters: no weight matrix"
	}
	k := 1 + r.IntN(len(mats))
	perm := r.Perm(len(mats))[:k]
	entries, supers, resets := 0, 0, 0
	for _, p := range perm {
		w := mats[p].Data // the agent's own weights
		n := max(1, int(math.Round(paramFraction*float64(len(w)))))
		for range n {
			i := r.IntN(len(w))
			x := float64(w[i])
			switch u := r.Float64(); {
			case u < superMutationProb:
				x += r.NormFloat64() * superMutationSD * sd * math.Abs(x)
				supers++
			case u < superMutationProb+resetProb:
				x = r.NormFloat64()
				resets++
			default:
				x += r.NormFloat64() * sd * math.Abs(x)
			}
			w[i] = float32(min(weightBound, max(-weightBound, x)))
		}
		entries += n
	}
	return fmt.Sprintf("parameters: %d of %d weight matrices, %d entries (%d super-mutated, %d reset)", k, len(mats), entries, supers, resets)
}

// fmtHP formats a hyperparameter value compactly.
func fmtHP(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
