package buffer

import "fmt"

// ComputeGAE fills Advantages and Returns with generalised advantage
// estimation (Schulman et al., 2016):
//
//	δ_t = r_t + γ·V_next − V(s_t)
//	A_t = δ_t + γλ·A_{t+1}   (the sum restarts at every episode end)
//	R_t = A_t + V(s_t)
//
// where V_next is 0 after a terminated step, FinalValues[t] after a
// truncated one, lastValues[n] (the value of the observation that follows
// the rollout) after the last step, and V(s_{t+1}) otherwise. lastValues has
// one entry per env. The rollout must be full. Sums run in float64.
func (r *Rollout) ComputeGAE(gamma, lambda float64, lastValues []float32) error {
	if err := r.checkBootstrap(lastValues); err != nil {
		return err
	}
	n := r.Envs
	for e := range n {
		adv := 0.0 // A_{t+1} of the same episode, 0 across an episode end
		for t := r.Steps - 1; t >= 0; t-- {
			i := t*n + e
			next, cut := r.nextValue(t, e, lastValues)
			if cut {
				adv = 0
			}
			v := float64(r.Values[i])
			delta := float64(r.Rewards[i]) + gamma*next - v
			adv = delta + gamma*lambda*adv
			r.Advantages[i] = float32(adv)
			r.Returns[i] = float32(adv + v)
		}
	}
	return nil
}

// ComputeReturns fills Returns with plain discounted returns, bootstrapped
// as in ComputeGAE (R_t = r_t + γ·R_{t+1}, or + γ·V_next at an episode end or
// at the rollout's end), and Advantages with R_t − V(s_t). It equals
// ComputeGAE with λ = 1, up to rounding.
func (r *Rollout) ComputeReturns(gamma float64, lastValues []float32) error {
	if err := r.checkBootstrap(lastValues); err != nil {
		return err
	}
	n := r.Envs
	for e := range n {
		ret := 0.0
		for t := r.Steps - 1; t >= 0; t-- {
			i := t*n + e
			next, cut := r.nextValue(t, e, lastValues)
			if cut {
				ret = next
			}
			ret = float64(r.Rewards[i]) + gamma*ret
			r.Returns[i] = float32(ret)
			r.Advantages[i] = float32(ret - float64(r.Values[i]))
		}
	}
	return nil
}

// nextValue returns the value that follows step t of env e and whether an
// episode (or the rollout) ends at t, so that sums must not reach past it.
func (r *Rollout) nextValue(t, e int, lastValues []float32) (float64, bool) {
	i := t*r.Envs + e
	switch {
	case r.Terminated[i]:
		return 0, true
	case r.Truncated[i]:
		return float64(r.FinalValues[i]), true
	case t == r.Steps-1:
		return float64(lastValues[e]), true
	}
	return float64(r.Values[i+r.Envs]), false
}

func (r *Rollout) checkBootstrap(lastValues []float32) error {
	if !r.Full() {
		return fmt.Errorf("buffer: rollout holds %d of %d steps; fill it before computing returns", r.pos, r.Steps)
	}
	if len(lastValues) != r.Envs {
		return fmt.Errorf("buffer: %d last values for %d envs", len(lastValues), r.Envs)
	}
	return nil
}
