package agent

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/evolverl/evolve/netconf"
)

// Clone returns a deep copy of the agent for evolution: config, specs,
// weights, log-std, Adam's moments and step, observation statistics,
// counters and mutation history are copied, so training or mutating either
// agent never changes the other. The clone has no rollout in progress, no
// networks built yet and a zero recurrent state, and it draws its random numbers
// from its own stream seeded by seed (built as New builds one), not from a
// copy of the original's. Evolution passes a seed derived from the run's
// seed, the clone's index and the generation, so that every clone's stream
// is distinct and a run stays reproducible. Clone of an agent that is not
// built (a zero PPO, or nil) panics, as a method of a nil pointer does.
func (a *PPO) Clone(seed uint64) *PPO {
	if a == nil || a.obsSpace == nil {
		panic("agent: Clone of an agent that is not built (make it with agent.New or agent.Load)")
	}
	c := &PPO{cfg: a.cfg, obsSpace: a.obsSpace, actSpace: a.actSpace}
	c.cfg.Net = a.cfg.Net.Clone()
	// Re-deriving the specs also gives the clone its own distribution
	// description; it cannot fail for the specs a working agent has.
	if err := c.setSpecs(c.cfg.Net); err != nil {
		panic(fmt.Sprintf("agent: clone: specs of a working agent: %v", err))
	}
	c.actor, c.critic = a.actor.Clone(), a.critic.Clone()
	c.logStd = slices.Clone(a.logStd)
	c.adam = &Adam{LR: a.adam.LR, Beta1: a.adam.Beta1, Beta2: a.adam.Beta2, Eps: a.adam.Eps, Step: a.adam.Step,
		M: cloneSlices(a.adam.M), V: cloneSlices(a.adam.V)}
	if a.norm != nil {
		c.norm = &RunningNorm{Mean: slices.Clone(a.norm.Mean), Var: slices.Clone(a.norm.Var), Count: a.norm.Count}
	}
	if a.valNorm != nil {
		c.valNorm = &RunningNorm{Mean: slices.Clone(a.valNorm.Mean), Var: slices.Clone(a.valNorm.Var), Count: a.valNorm.Count}
	}
	if a.rewNorm != nil {
		c.rewNorm = &RunningNorm{Mean: slices.Clone(a.rewNorm.Mean), Var: slices.Clone(a.rewNorm.Var), Count: a.rewNorm.Count}
	}
	if a.rnd != nil {
		c.rnd = a.rnd.clone()
	}
	c.pcg = rand.NewPCG(seed, 0x70706f)
	c.rng = rand.New(c.pcg)
	c.Steps, c.Updates, c.TotalSteps = a.Steps, a.Updates, a.TotalSteps
	c.History = slices.Clone(a.History)
	c.Env = a.Env.clone()
	return c
}

func cloneSlices(s [][]float32) [][]float32 {
	out := make([][]float32, len(s))
	for i, x := range s {
		out[i] = slices.Clone(x)
	}
	return out
}

// MutateArchitecture applies the architecture mutation m to the agent's
// network (config.net) with the agent's RNG. When m changes it, the actor
// and critic get the new specs, their weights are carried over with
// netconf.Transfer (grown layers compute the same function as before; see
// Transfer for the exceptions) and Adam's moments are resized alike with
// netconf.Resize (kept where the tensors overlap, zero elsewhere). The
// description is appended to History, and the networks, the rollout in
// progress and the recurrent state of Act are dropped, since their sizes may
// have changed: the next Train resets its vector.
//
// It returns m's one-line description and whether the architecture
// changed. When m does not apply (a bound is reached, another encoder kind)
// the agent is unchanged and changed is false. On an error the agent is
// unchanged too, apart from the draws taken from its RNG.
func (a *PPO) MutateArchitecture(m netconf.Mutation) (desc string, changed bool, err error) {
	if m.Apply == nil {
		return "", false, fmt.Errorf("mutate architecture: mutation %q has no Apply function", m.Name)
	}
	// Mutate the full actor spec, so that the mutation checks what depends
	// on the input (a CNN's feature map must stay at least 1×1), then strip
	// what the agent sets from the spaces.
	full, desc, changed := m.Apply(a.actorSpec.Clone(), a.rng)
	if !changed {
		return desc, false, nil
	}
	net := full.Clone()
	net.Input, net.Output, net.OutputGain = a.cfg.Net.Input, a.cfg.Net.Output, a.cfg.Net.OutputGain
	// Derive and fill everything on a scratch agent first, so that an error
	// leaves a untouched.
	next := &PPO{cfg: a.cfg, obsSpace: a.obsSpace, actSpace: a.actSpace}
	next.cfg.Net = net
	if err := next.setSpecs(net); err != nil {
		return desc, false, fmt.Errorf("mutate architecture: %s: %w", desc, err)
	}
	if next.actor, err = netconf.Transfer(a.actor, next.actorSpec, a.rng); err != nil {
		return desc, false, fmt.Errorf("mutate architecture: %s: actor: %w", desc, err)
	}
	critic, err := netconf.Transfer(a.fullCritic(a.critic, a.actor), next.criticSpec, a.rng)
	if err != nil {
		return desc, false, fmt.Errorf("mutate architecture: %s: critic: %w", desc, err)
	}
	next.critic = next.criticParams(critic)
	nActor, nCritic := len(a.actor), len(a.critic)
	// gSDE's log-std has a row per actor feature: the head's last hidden
	// layer, or the latent. With as many head layers as before the features
	// are the same layer, resized as Transfer resizes it.
	sameFeatures := len(net.Head.Hidden) == len(a.cfg.Net.Head.Hidden)
	if len(a.adam.M) != len(a.tensors()) || len(a.adam.V) != len(a.adam.M) {
		return desc, false, errors.New("mutate architecture: the optimizer's moments do not match the tensors")
	}
	resize := func(mom [][]float32) ([][]float32, error) {
		actorM := momentParams(a.actor, mom[:nActor])
		criticM := momentParams(a.critic, mom[nActor:nActor+nCritic])
		ra, err := netconf.Resize(actorM, next.actorSpec)
		if err != nil {
			return nil, fmt.Errorf("actor moments: %w", err)
		}
		rc, err := netconf.Resize(a.fullCritic(criticM, actorM), next.criticSpec)
		if err != nil {
			return nil, fmt.Errorf("critic moments: %w", err)
		}
		var out [][]float32
		for _, t := range ra {
			out = append(out, t.Data)
		}
		for _, t := range next.criticParams(rc) {
			out = append(out, t.Data)
		}
		for _, m := range mom[nActor+nCritic:] { // the log-std's
			out = append(out, sdeResize(m, a.dist.feat, next.dist.feat, a.dist.size, sameFeatures, nil))
		}
		return out, nil
	}
	newM, err := resize(a.adam.M)
	if err != nil {
		return desc, false, fmt.Errorf("mutate architecture: %s: %w", desc, err)
	}
	newV, err := resize(a.adam.V)
	if err != nil {
		return desc, false, fmt.Errorf("mutate architecture: %s: %w", desc, err)
	}
	if a.logStd != nil {
		a.logStd = sdeResize(a.logStd, a.dist.feat, next.dist.feat, a.dist.size, sameFeatures, sdeFill(a.logStd, a.dist.size, sameFeatures))
	}
	if err := a.setSpecs(net); err != nil { // cannot fail: next.setSpecs(net) succeeded
		return desc, false, fmt.Errorf("mutate architecture: %s: %w", desc, err)
	}
	a.cfg.Net = net
	a.actor, a.critic = next.actor, next.critic
	a.adam.M, a.adam.V = newM, newV
	a.History = append(a.History, desc)
	a.roll, a.deploy = nil, nil
	return desc, true, nil
}

// sdeResize returns gSDE's [from, cols] log-std matrix x (or its Adam
// moment, fill nil) for from → to features. With sameFeatures the rows both
// have are kept (a grown layer keeps its units in place) and new rows get
// fill (zeros for nil); otherwise every row gets fill, as the features are
// another layer's. from = to = 0 (no gSDE) returns x.
func sdeResize(x []float32, from, to, cols int, sameFeatures bool, fill []float32) []float32 {
	if to == 0 || from == to && sameFeatures {
		return x // no gSDE: the log-std is per action dimension
	}
	y := make([]float32, to*cols)
	kept := 0
	if sameFeatures {
		kept = copy(y, x[:min(from, to)*cols])
	}
	if fill != nil {
		for i := kept; i < len(y); i++ {
			y[i] = fill[i%cols]
		}
	}
	return y
}

// sdeFill returns, per action dimension, the log-std new features start
// from: the smallest of the kept rows' (a new feature adds as little
// exploration as the least exploring old one) when the features are the
// same layer, else the old rows' mean (another layer's features take over
// the overall level).
func sdeFill(x []float32, cols int, sameFeatures bool) []float32 {
	rows := len(x) / cols
	fill := make([]float32, cols)
	for j := range cols {
		v := float64(x[j])
		for r := 1; r < rows; r++ {
			if sameFeatures {
				v = math.Min(v, float64(x[r*cols+j]))
			} else {
				v += float64(x[r*cols+j])
			}
		}
		if !sameFeatures {
			v /= float64(rows)
		}
		fill[j] = float32(v)
	}
	return fill
}

// fullCritic returns the critic's tensors as a whole network: with shared
// encoders, the encoder and latent tensors come from the actor's (in layout
// order, encoder first) followed by the critic's own head and output.
func (a *PPO) fullCritic(critic, actor netconf.Params) netconf.Params {
	if !a.cfg.ShareEncoders {
		return critic
	}
	return append(actor.Filter("encoder.", "latent."), critic...) // Filter returns a new slice
}

// momentParams pairs moments with the names and shapes of the tensors they
// belong to.
func momentParams(like netconf.Params, mom [][]float32) netconf.Params {
	p := make(netconf.Params, len(like))
	for i, t := range like {
		p[i] = netconf.Tensor{Name: t.Name, Shape: t.Shape, Data: mom[i]}
	}
	return p
}
