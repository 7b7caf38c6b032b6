package agent

import (
	"fmt"
	"math"
	"slices"
)

// PolicyOutput is what the policy computes for a batch of rows.
type PolicyOutput struct {
	// Values are the critic's values, [rows].
	Values []float32
	// Probs holds, for categorical policies (Discrete, MultiDiscrete), per
	// component c the probabilities of its n_c choices, [rows·n_c] row by
	// row; masked choices are exactly 0. Choice k is action value k+Start.
	Probs [][]float32
	// BitProbs holds, for MultiBinary policies, P(bit = 1), [rows·n].
	BitProbs []float32
	// Mean and Std are, for Box policies, the Gaussian's means [rows·d]
	// (not clipped to the bounds) and its standard deviations: the
	// state-independent [d], or with gSDE each row's [rows·d] (the
	// distribution whose log-probability training uses; gSDE's sampled
	// noise is the features times an exploration matrix).
	Mean, Std []float32
}

// Policy returns the action distribution and the value for a batch of raw
// observations, taken as Act takes them (rows of the observation space's
// flat size, one mask per row or nil). It draws no random number.
//
// Policy is one step of the agent, as Act is: a recurrent agent's state
// for each row advances, so that Policy followed by Act on the next
// observation acts as two Acts would. ResetState clears it.
func (a *PPO) Policy(obs []float32, masks [][]bool) (*PolicyOutput, error) {
	out, err := a.step("policy", obs, masks, true)
	if err != nil {
		return nil, err
	}
	d := a.dist
	rows := len(out.values)
	p := &PolicyOutput{Values: out.values}
	switch d.kind {
	case categorical:
		// The distribution's buffers hold each choice's log-probability;
		// exp of a masked choice's is exactly 0 (see maskFill).
		p.Probs = make([][]float32, len(d.nvec))
		for c, n := range d.nvec {
			p.Probs[c] = expAll(out.choiceLogp[c][:rows*n])
		}
	case bernoulli:
		p.BitProbs = expAll(a.work.dist.logp1[:rows*d.size])
	case gaussian:
		// A deterministic Gaussian action is its mean, before clipping.
		p.Mean = out.actions
		p.Std = expAll(a.logStd)
		if d.feat > 0 {
			p.Std = append([]float32(nil), a.work.dist.sigma[:rows*d.size]...)
		}
	}
	return p, nil
}

// ActInfo is Act with the log-probability of each chosen action and the
// value. actions are ready for the env (Box actions clipped); a Box
// action's log-probability is that of the unclipped sample, as training
// stores it. Like Act it advances a recurrent agent's state.
func (a *PPO) ActInfo(obs []float32, masks [][]bool, deterministic bool) (actions, logProbs, values []float32, err error) {
	out, err := a.step("act", obs, masks, deterministic)
	if err != nil {
		return nil, nil, nil, err
	}
	return out.envActions, out.logp, out.values, nil
}

// step checks a batch of raw observations and masks, as Act does, and acts
// on it with the deployment state. call names the method in errors.
func (a *PPO) step(call string, obs []float32, masks [][]bool, deterministic bool) (*actOut, error) {
	if a == nil || a.obsSpace == nil {
		return nil, fmt.Errorf("%s: the agent is not built (make it with agent.New or agent.Load)", call)
	}
	n := a.obsSpace.FlatSize()
	if len(obs) == 0 || len(obs)%n != 0 {
		return nil, fmt.Errorf("%s: %d observation values are not whole rows of %d", call, len(obs), n)
	}
	rows := len(obs) / n
	for i, v := range obs {
		// A NaN or Inf flows through the network to a NaN action or value
		// (a Box action NaN, a Discrete one 0): refuse it, as training and
		// Play refuse it from an env.
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("%s: observation value %d of row %d is %v: want finite numbers", call, i%n, i/n, v)
		}
	}
	if masks != nil && len(masks) != rows {
		return nil, fmt.Errorf("%s: %s for %d rows (%d observation values in rows of %d, the agent's observation size): want one mask per row, or nil; is the observation another env's?",
			call, countOf(len(masks), "mask", "masks"), rows, len(obs), n)
	}
	if need := rows * a.stateSize(); len(a.deploy) != need {
		// A recurrent agent's state is per row: a batch of another size
		// would silently start every row's episode again.
		if live := a.liveRows(); live > 0 {
			n := len(a.deploy) / a.stateSize()
			return nil, fmt.Errorf("%s: %s, but the recurrent state is of %s, %d with an episode under way: "+
				"ResetState(-1) before acting on another number of rows (or give each session its own Clone)",
				call, countOf(rows, "row", "rows"), countOf(n, "row", "rows"), live)
		}
		a.deploy = make([]float32, need)
	}
	x := make([]float32, a.inLen(obs))
	a.preprocess(x, obs, false)
	var out actOut
	if err := a.act(x, masks, a.deploy, deterministic, false, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", call, err)
	}
	if err := a.checkOutputs(call, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// checkOutputs refuses an act whose log-probabilities or values are not
// finite. Load takes a file's weights as they are (a checkpoint keeps a
// diverged agent until evolution replaces it), and a NaN weight reaches
// the env as a NaN Box action or, through an argmax over NaN logits, as a
// plausible Discrete action 0; this is where a deployment learns of it.
func (a *PPO) checkOutputs(call string, out *actOut) error {
	for r, v := range out.values {
		lp := out.logp[r]
		if finite32(v) && finite32(lp) {
			continue
		}
		why := "the weights are finite: a number overflowed"
		if err := a.CheckFinite(); err != nil {
			why = "a diverged agent: " + err.Error()
		}
		return nonFiniteError{fmt.Sprintf("%s: row %d's action log-probability is %v and value %v (%s)", call, r, lp, v, why)}
	}
	return nil
}

func finite32(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }

// nonFiniteError matches ErrNonFinite without repeating its words.
type nonFiniteError struct{ msg string }

func (e nonFiniteError) Error() string { return e.msg }
func (e nonFiniteError) Unwrap() error { return ErrNonFinite }

// liveRows counts the rows of the deployment state with an episode under
// way (a state not all zero: ResetState clears a row's).
func (a *PPO) liveRows() int {
	n, size := 0, a.stateSize()
	for r := 0; size > 0 && (r+1)*size <= len(a.deploy); r++ {
		if slices.ContainsFunc(a.deploy[r*size:(r+1)*size], func(v float32) bool { return v != 0 }) {
			n++
		}
	}
	return n
}

// expAll returns a new slice of e^x for every x.
func expAll(x []float32) []float32 {
	p := make([]float32, len(x))
	for i, v := range x {
		p[i] = float32(math.Exp(float64(v)))
	}
	return p
}

// countOf returns "1 one" or "n many".
func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
