package agent

import (
	"fmt"

	"github.com/evolverl/evolve/internal/bufs"
	"github.com/evolverl/evolve/netconf"
	"github.com/evolverl/evolve/nn"
)

// nets is the agent's network model (from the configured backend) with the
// gradient tensors and the per-row buffers of acting and of the loss. It is
// built on first use and dropped whenever the specs or the weights' tensors
// are replaced; every buffer grows to the largest row count seen and is
// reused, so neither acting nor an update allocates once warm.
type nets struct {
	model nn.Model

	gActor, gCritic netconf.Params // gradients, laid out like a.actor and a.critic
	gLogStd         []float32
	// grads and params are the gradient and parameter slices in the order of
	// eachTensor. params is taken when the nets are built: whatever replaces
	// a tensor's slice (Load, Clone, MutateArchitecture) goes through
	// setSpecs, which drops the nets.
	grads, params [][]float32

	dist  distBuffers
	dOut  []float32 // [rows·size] gradient of the actor's output
	dVal  []float32 // [rows] gradient of the value
	adv   []float32 // [rows] normalised advantages
	w     []float32 // [rows] weights: 1, or 0 for BPTT padding
	dlogp []float32 // [rows] ∂loss/∂log π
	dent  []float32 // [rows] ∂loss/∂entropy
}

// nets returns the agent's networks, building them on first use.
func (a *PPO) nets() (*nets, error) {
	if a.work != nil {
		return a.work, nil
	}
	be, err := nn.Lookup(a.cfg.Backend)
	if err != nil {
		return nil, err
	}
	m, err := be.NewModel(a.actorSpec, a.criticSpec, a.cfg.ShareEncoders)
	if err != nil {
		return nil, fmt.Errorf("build networks: %w", err)
	}
	if m.StateSize() != a.stateSize() {
		return nil, fmt.Errorf("build networks: backend %q keeps %d floats of recurrent state, want %d", a.cfg.Backend, m.StateSize(), a.stateSize())
	}
	n := &nets{model: m, gActor: zerosLike(a.actor), gCritic: zerosLike(a.critic), params: a.tensors()}
	if a.logStd != nil {
		n.gLogStd = make([]float32, len(a.logStd))
	}
	eachTensor(n.gActor, n.gCritic, &n.gLogStd, nil, func(_ string, _ []int, d *[]float32) { n.grads = append(n.grads, *d) })
	a.work = n
	return n, nil
}

// sdeFeatures points the distribution's buffers at the actor's features
// of the last forward pass, for gSDE.
func (n *nets) sdeFeatures(d *dist, rows int) error {
	fm, ok := n.model.(nn.FeatureModel)
	if !ok {
		return fmt.Errorf("use_sde: the network backend (%T) does not give the actor's features", n.model)
	}
	f := fm.ActorFeatures()
	if len(f) < rows*d.feat {
		return fmt.Errorf("use_sde: the backend gave %d actor features for %d rows of %d", len(f), rows, d.feat)
	}
	n.dist.feat = f[:rows*d.feat]
	return nil
}

// zerosLike returns zeroed tensors with p's names and shapes.
func zerosLike(p netconf.Params) netconf.Params {
	z := make(netconf.Params, len(p))
	for i, t := range p {
		z[i] = netconf.Tensor{Name: t.Name, Shape: append([]int(nil), t.Shape...), Data: make([]float32, len(t.Data))}
	}
	return z
}

// resize grows the per-row buffers for rows rows.
func (n *nets) resize(d *dist, rows int) {
	n.dist.resize(d, rows)
	n.dOut = bufs.Grow(n.dOut, rows*d.size)
	for _, b := range []*[]float32{&n.dVal, &n.adv, &n.w, &n.dlogp, &n.dent} {
		*b = bufs.Grow(*b, rows)
	}
}

// forward runs actor and critic on rows preprocessed observations: one step
// of each row's sequence (steps 1) when acting, whole time-major sequences
// when training. state holds the recurrent state per sequence (nil for
// zeros); with advance it is replaced by the state after the last step.
func (a *PPO) forward(n *nets, obs []float32, rows, steps int, state []float32, advance bool) (out, values []float32, err error) {
	b := nn.Batch{Actor: a.actor, Critic: a.critic, Obs: obs, Rows: rows, Steps: steps}
	if a.recurrent() {
		b.State = state
		if advance {
			b.Final = state
		}
	}
	return n.model.Forward(b)
}

// values writes V(obs) of each of the rows preprocessed observations into
// out.values, from the rows' recurrent state without advancing it: the
// bootstrap values at a rollout's end and of truncated episodes. It draws
// no random number.
func (a *PPO) values(obs, state []float32, out *actOut) error {
	n, err := a.nets()
	if err != nil {
		return err
	}
	rows := len(obs) / a.inWidth()
	n.resize(a.dist, rows)
	_, values, err := a.forward(n, obs, rows, 1, state, false)
	if err != nil {
		return fmt.Errorf("value forward pass: %w", err)
	}
	out.resize(rows, a.actSpace.FlatSize())
	copy(out.values, values)
	if a.valNorm != nil {
		a.destandardize(out.values)
	}
	return nil
}

// act runs the policy on rows preprocessed observations. masks[i] is row
// i's action mask (nil: all legal). state holds the rows' recurrent state,
// advanced in place unless keepState. With deterministic, the most likely
// action is taken and no random number is drawn.
func (a *PPO) act(obs []float32, masks [][]bool, state []float32, deterministic, keepState bool, out *actOut) error {
	n, err := a.nets()
	if err != nil {
		return err
	}
	d := a.dist
	rows := len(obs) / a.inWidth()
	n.resize(d, rows)
	var add []float32
	if d.kind == categorical {
		add = n.dist.add[:rows*d.size]
	}
	if err := a.fillMasks(add, masks, rows); err != nil {
		return err
	}
	mu, values, err := a.forward(n, obs, rows, 1, state, !keepState)
	if err != nil {
		return fmt.Errorf("acting forward pass: %w", err)
	}
	if d.feat > 0 {
		if err := n.sdeFeatures(d, rows); err != nil {
			return err
		}
		if !deterministic {
			if len(a.sdeExpl) != rows*d.stdLen() {
				a.sdeResample(rows)
			}
			for r, stale := range a.sdeStale {
				if stale {
					d.sdeDrawRow(a.sdeExpl, a.logStd, r, a.rng)
					a.sdeStale[r] = false
				}
			}
		}
		n.dist.expl = a.sdeExpl
	}
	out.resize(rows, a.actSpace.FlatSize())
	copy(out.values, values)
	if a.valNorm != nil {
		a.destandardize(out.values)
	}
	d.sample(&n.dist, mu, a.logStd, rows, deterministic, a.rng, out.actions)
	copy(out.logp, n.dist.logp[:rows])
	out.choiceLogp = n.dist.comp
	copy(out.envActions, out.actions)
	if d.kind == gaussian {
		for i, v := range out.envActions {
			out.envActions[i] = min(max(v, d.low[i%d.size]), d.high[i%d.size])
		}
	}
	return nil
}
