package agent

import (
	"math"
	"math/rand/v2"

	"github.com/evolverl/evolve/internal/bufs"
)

// gSDE, generalized state-dependent exploration (Raffin, Kober and Stulp,
// "Smooth Exploration for Robotic Reinforcement Learning", 2021), as
// Stable-Baselines3's StateDependentNoiseDistribution computes it with its
// PPO defaults (full_std, exp rather than expln, no squashing, features not
// learnt through the noise):
//
//   - the log-std is a [feat, act] matrix L; σ = exp(L);
//   - with f the actor's features (the output layer's input) of a row, the
//     action distribution is N(μ, s²) per action dimension j with
//     s²_j = Σ_i f_i²·σ_ij² + 1e-6;
//   - a sampled action is μ + f·E, where E [feat, act] is an exploration
//     matrix drawn from N(0, σ²), one per env, redrawn at the start of a
//     rollout and every sde_sample_freq steps. The noise is a deterministic
//     function of the state between redraws.
//
// No gradient flows from the noise's variance into the features (SB3's
// learn_features = false): the features are read from the forward pass and
// treated as constants, so the networks' backward pass is unchanged.

// sdeEpsilon is added to every variance, as SB3 does.
const sdeEpsilon = 1e-6

// sdeSigma fills b.sigma, b.logSigma and b.variance [rows·size] with each
// row's standard deviations from the features b.feat [rows·feat] and the
// log-std matrix logStd [feat·size].
func (d *dist) sdeSigma(b *distBuffers, logStd []float32, rows int) {
	n, f := d.size, d.feat
	b.std2 = bufs.Grow(b.std2, f*n)
	for k, l := range logStd[:f*n] {
		s := math.Exp(float64(l))
		b.std2[k] = s * s
	}
	for r := range rows {
		fr := b.feat[r*f : (r+1)*f]
		for j := range n {
			v := 0.0
			for i, x := range fr {
				x := float64(x)
				v += x * x * b.std2[i*n+j]
			}
			v += sdeEpsilon
			b.variance[r*n+j] = v
			s := math.Sqrt(v)
			b.sigma[r*n+j] = float32(s)
			b.logSigma[r*n+j] = float32(math.Log(s))
		}
	}
}

// sdeLogp is log N(a; μ, diag(s²)) of one row, summed in dimension order
// as gaussLogp sums it.
func sdeLogp(act, mu, sigma, logSigma []float32) float32 {
	lp := float32(0)
	for j := range act {
		z := (act[j] - mu[j]) / sigma[j]
		t := -(0.5 * z * z) - logSigma[j] - halfLog2Pi
		if j == 0 {
			lp = t
		} else {
			lp += t
		}
	}
	return lp
}

// sdeEntropy is Σ_j log s_j + ½ + ½·log 2π of one row.
func sdeEntropy(logSigma []float32) float32 {
	h := float32(0)
	for _, ls := range logSigma {
		h += ls + 0.5 + halfLog2Pi
	}
	return h
}

// sdeSample writes into b.action the rows' actions: the means out plus,
// unless deterministic, the features times the row's exploration matrix
// (expl [rows·feat·size]); and their log-probabilities into b.logp.
func (d *dist) sdeSample(b *distBuffers, out, logStd, expl []float32, rows int, deterministic bool) {
	n, f := d.size, d.feat
	d.sdeSigma(b, logStd, rows)
	for r := range rows {
		fr := b.feat[r*f : (r+1)*f]
		for j := range n {
			noise := 0.0
			if !deterministic {
				e := expl[r*f*n:]
				for i, x := range fr {
					noise += float64(x) * float64(e[i*n+j])
				}
			}
			b.action[r*n+j] = out[r*n+j] + float32(noise)
		}
		b.logp[r] = sdeLogp(b.action[r*n:(r+1)*n], out[r*n:(r+1)*n], b.sigma[r*n:(r+1)*n], b.logSigma[r*n:(r+1)*n])
	}
}

// sdeLogProbEntropy writes the log-probabilities of actions and the
// entropies of the rows into b.logp and b.ent.
func (d *dist) sdeLogProbEntropy(b *distBuffers, out, logStd, actions []float32, rows int) {
	n := d.size
	d.sdeSigma(b, logStd, rows)
	for r := range rows {
		ls := b.logSigma[r*n : (r+1)*n]
		b.logp[r] = sdeLogp(actions[r*n:(r+1)*n], out[r*n:(r+1)*n], b.sigma[r*n:(r+1)*n], ls)
		b.ent[r] = sdeEntropy(ls)
	}
}

// sdeBackward writes the gradient with respect to the means into dOut and
// adds the gradient with respect to the log-std matrix into dLogStd, after
// sdeLogProbEntropy. Per row and action dimension, ∂log N/∂μ = z/s and
// ∂log N/∂log s = z² − 1, ∂H/∂log s = 1; and log s = ½·log s² with
// ∂s²/∂L_ij = 2·f_i²·σ_ij², so ∂/∂L_ij = Σ_rows g·f_i²·σ_ij²/s².
func (d *dist) sdeBackward(b *distBuffers, dOut, dLogStd, out, actions, dlogp, dent []float32, rows int) {
	n, f := d.size, d.feat
	b.gStd = bufs.Grow(b.gStd, f*n)
	clear(b.gStd)
	for r := range rows {
		fr := b.feat[r*f : (r+1)*f]
		for j := range n {
			k := r*n + j
			s := b.sigma[k]
			z := (actions[k] - out[k]) / s
			dOut[k] = dlogp[r] * z / s
			g := float64(dlogp[r]*(z*z-1)+dent[r]) / b.variance[k]
			for i, x := range fr {
				x := float64(x)
				b.gStd[i*n+j] += g * x * x
			}
		}
	}
	for k, g := range b.gStd {
		dLogStd[k] += float32(g * b.std2[k])
	}
}

// sdeResample draws new exploration matrices for rows rows (envs) into
// a.sdeExpl, and marks none of them stale.
func (a *PPO) sdeResample(rows int) {
	a.sdeExpl = bufs.Grow(a.sdeExpl, rows*a.dist.stdLen())
	a.sdeStale = bufs.Grow(a.sdeStale, rows)
	clear(a.sdeStale)
	for r := range rows {
		a.dist.sdeDrawRow(a.sdeExpl, a.logStd, r, a.rng)
	}
}

// sdeDrawRow draws row r's exploration matrix, [feat·size] of expl, from
// N(0, σ²) with σ = exp(logStd).
func (d *dist) sdeDrawRow(expl, logStd []float32, r int, rng *rand.Rand) {
	fn := d.feat * d.size
	e := expl[r*fn : (r+1)*fn]
	for k, l := range logStd[:fn] {
		e[k] = float32(rng.NormFloat64() * math.Exp(float64(l)))
	}
}
