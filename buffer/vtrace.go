package buffer

import (
	"fmt"
	"math"
)

// VTrace holds V-trace's parameters (Espeholt et al. 2018): the clip ρ̄ of
// the importance weights in the temporal differences, the clip c̄ of the
// trace coefficients, λ, which scales the trace coefficients as Retrace's λ
// does (1 is IMPALA's V-trace), and the clip of the importance weights that
// multiply the policy gradient's advantages (IMPALA's clip_pg_rho_threshold,
// usually ρ̄), or 0 for advantages without them: for PPO, whose ratio
// against the behaviour policy is the importance weight.
type VTrace struct {
	Gamma, Lambda      float64
	RhoClip, TraceClip float64
	PGRhoClip          float64
}

// ComputeVTrace fills Returns with V-trace's value targets v_s and
// Advantages with its policy-gradient advantages, for a rollout collected
// by a behaviour policy μ and learnt by a target policy π whose log
// importance weights log π(a_t|s_t) − log μ(a_t|s_t) are logRhos (nil: the
// data is on-policy, every weight 1). Values must be the target policy's
// critic's, as must FinalValues and lastValues. With ρ_t = exp(logRhos[t]):
//
//	δ_t = min(ρ̄, ρ_t)·(r_t + γ·V_next − V(s_t))
//	v_t − V(s_t) = δ_t + γ·λ·min(c̄, ρ_t)·(v_{t+1} − V(s_{t+1}))   (0 across an episode end)
//	A_t = w_t·(r_t + γ·v_next − V(s_t)),   w_t = min(ρ̄_pg, ρ_t), or 1 when ρ̄_pg is 0
//
// where V_next is bootstrapped as in ComputeGAE and v_next is v_{t+1}
// within an episode and V_next where the episode or the rollout ends. With
// on-policy data, ρ̄, c̄ ≥ 1, the targets are GAE's returns; the advantages
// are GAE's when λ = 1 (A_t = δ_t + γ·(v_{t+1} − V(s_{t+1})) otherwise).
// Sums run in float64.
func (r *Rollout) ComputeVTrace(p VTrace, logRhos, lastValues []float32) error {
	if err := r.checkBootstrap(lastValues); err != nil {
		return err
	}
	if logRhos != nil && len(logRhos) != len(r.Values) {
		return fmt.Errorf("buffer: %d log importance weights for %d steps", len(logRhos), len(r.Values))
	}
	if !(p.RhoClip > 0) || !(p.TraceClip > 0) || !(p.PGRhoClip >= 0) {
		return fmt.Errorf("buffer: V-trace clips ρ̄ = %v, c̄ = %v, ρ̄_pg = %v: want ρ̄, c̄ > 0 and ρ̄_pg ≥ 0", p.RhoClip, p.TraceClip, p.PGRhoClip)
	}
	n := r.Envs
	for e := range n {
		corr := 0.0 // v_{t+1} − V(s_{t+1}) of the same episode, 0 across an episode end
		for t := r.Steps - 1; t >= 0; t-- {
			i := t*n + e
			next, cut := r.nextValue(t, e, lastValues)
			vNext := next
			if cut {
				corr = 0
			} else {
				vNext += corr
			}
			rho := 1.0
			if logRhos != nil {
				rho = math.Exp(float64(logRhos[i]))
			}
			rhoBar, c := min(p.RhoClip, rho), p.Lambda*min(p.TraceClip, rho)
			v, rew := float64(r.Values[i]), float64(r.Rewards[i])
			corr = rhoBar*(rew+p.Gamma*next-v) + p.Gamma*c*corr
			r.Returns[i] = float32(v + corr)
			w := 1.0
			if p.PGRhoClip > 0 {
				w = min(p.PGRhoClip, rho)
			}
			r.Advantages[i] = float32(w * (rew + p.Gamma*vNext - v))
		}
	}
	return nil
}
