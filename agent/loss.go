package agent

import (
	"fmt"
	"math"
)

// Stats summarise one PPO update (means over its minibatches).
type Stats struct {
	PolicyLoss, ValueLoss, Entropy, Loss float64
	// ApproxKL is mean((r − 1) − log r), clip fraction the share of
	// samples with |r − 1| > clip_coef.
	ApproxKL, ClipFrac float64
	// ExplainedVariance is 1 − Var(R − V)/Var(R) over the rollout.
	ExplainedVariance float64
	// GradNorm is the global gradient norm before clipping.
	GradNorm float64
	// Minibatches counts optimizer steps; EarlyStop is set when the target
	// KL ended the update.
	Minibatches int
	EarlyStop   bool
	// LR is the learning rate of the update's last epoch.
	LR float64
	// IntrinsicReward is the mean normalised intrinsic reward of the
	// rollout and RNDLoss the mean loss of RND's predictor and intrinsic
	// critic over their minibatches; both 0 without RND (rnd_coef).
	IntrinsicReward, RNDLoss float64
}

// minibatch is the training input of one update, flat or in sequences.
type minibatch struct {
	rows, steps                 int // rows (steps × sequences, time-major) and sequence length
	obs, actions                []float32
	logp, values, adv, ret, wts []float32
	masks                       []bool
	hidden                      []float32 // recurrent: initial state per sequence
}

// update takes one optimizer step on a minibatch: the PPO loss of Schulman
// et al. (2017), in CleanRL's order, its gradient with respect to the
// distribution's parameters and the values, the networks' backward pass,
// one global gradient-norm clip over every parameter, and Adam. This is the
// only place where the loss is written; the network backend only computes
// the networks.
//
// Rows have weights (mb.wts: 1 for a real step, 0 for BPTT padding; nil:
// all 1), and every mean below is a weighted mean over the real steps.
//
// It is longer than the house's 80 lines on purpose: the whole loss reads
// top to bottom on two screens, as in CleanRL's ppo.py, with the paper's
// equation numbers, so that it can be held against the paper and against
// the PyTorch reference line by line.
func (a *PPO) update(mb minibatch) (Stats, error) {
	var st Stats
	n, err := a.nets()
	if err != nil {
		return st, err
	}
	d := a.dist
	rows := mb.rows
	n.resize(d, rows)

	// Advantages normalised over the minibatch's real steps, with the
	// sample (N−1) standard deviation.
	w := n.w[:rows]
	wsum := 0.0
	for i := range w {
		w[i] = 1
		if mb.wts != nil {
			w[i] = mb.wts[i]
		}
		wsum += float64(w[i])
	}
	normalizeAdvantages(n.adv, mb.adv[:rows], w, wsum)

	// New log-probabilities, entropies and values of the stored actions,
	// from the state stored at the start of each sequence.
	mu, values, err := a.forward(n, mb.obs, rows, mb.steps, mb.hidden, false)
	if err != nil {
		return st, fmt.Errorf("training pass: %w", err)
	}
	if err := a.logProbs(n, mu, mb.actions, mb.masks, rows); err != nil {
		return st, err
	}

	// The loss per row and its gradient with respect to log π, the entropy
	// and the value. max and clip take their gradients as the reference
	// backend's graphs of max(x, y) = y + relu(x − y) and clip do: a tie goes
	// to the unclipped term, and clip′ is 0 at the bounds.
	c := a.cfg.ClipCoef
	lo, hi := float32(1-c), float32(1+c)
	cneg, cpos := float32(-c), float32(c)
	mse := a.cfg.ValueLoss == ValueLossMSE
	vHalf := 0.5 // the ½ of CleanRL's value loss; SB3's has none
	if mse {
		vHalf = 1
	}
	inv := 1 / wsum
	var pgSum, vSum, hSum, kl, clipped float64
	for i := range rows {
		wi := float64(w[i])
		// r_t(θ) = π_θ(a|s)/π_old(a|s) (paper eq. 6), from log-probabilities.
		lr := n.dist.logp[i] - mb.logp[i]
		ratio := float32(math.Exp(float64(lr)))
		// L^CLIP (eq. 7), negated to be minimised: max(−Â·r, −Â·clip(r, 1−ε, 1+ε)).
		negA := -n.adv[i]
		pg1 := negA * ratio
		cr, dcr := clip32(ratio, lo, hi)
		pg2 := negA * cr
		dRatio := negA
		pg := pg1
		if pg1-pg2 < 0 {
			pg, dRatio = pg2, negA*dcr
		}
		n.dlogp[i] = float32(wi * inv * float64(dRatio) * float64(ratio))

		// L^VF (the value term of eq. 9), clipped around the old value as in
		// the reference implementations: max((V − R)², (V_old + clip(V − V_old, ±ε) − R)²).
		// With value_loss "mse", SB3's unclipped (V − R)² without the ½.
		v, ret, vOld := values[i], mb.ret[i], mb.values[i]
		vl1 := (v - ret) * (v - ret)
		vl, dv := vl1, 2*(v-ret)
		if !mse {
			cd, dcd := clip32(v-vOld, cneg, cpos)
			vc := vOld + cd
			vl2 := (vc - ret) * (vc - ret)
			if vl1-vl2 < 0 {
				vl, dv = vl2, 2*(vc-ret)*dcd
			}
		}
		// loss = L^CLIP − c2·S + c1·½·L^VF (eq. 9 with signs for descent).
		n.dVal[i] = float32(a.cfg.VFCoef * vHalf * wi * inv * float64(dv))
		n.dent[i] = float32(-a.cfg.EntCoef * wi * inv)

		pgSum += wi * float64(pg)
		vSum += wi * float64(vl)
		hSum += wi * float64(n.dist.ent[i])
		if wi != 0 {
			// approx KL = mean((r − 1) − log r), the low-variance estimator.
			r := math.Exp(float64(lr))
			kl += (r - 1) - float64(lr)
			if math.Abs(r-1) > c {
				clipped++
			}
		}
	}
	st.PolicyLoss = pgSum * inv
	st.ValueLoss = vHalf * vSum * inv
	st.Entropy = hSum * inv
	st.Loss = st.PolicyLoss - a.cfg.EntCoef*st.Entropy + a.cfg.VFCoef*st.ValueLoss
	st.ApproxKL, st.ClipFrac = kl*inv, clipped*inv

	// Back through the distribution and the networks.
	d.backward(&n.dist, n.dOut, n.gLogStd, mu, a.logStd, mb.actions, n.dlogp, n.dent, rows)
	if err := n.model.Backward(n.dOut[:rows*d.size], n.dVal[:rows], n.gActor, n.gCritic); err != nil {
		return st, fmt.Errorf("backward pass: %w", err)
	}

	// One clip of the global gradient norm. The norm is finite exactly when
	// every gradient is (float32 squares cannot overflow float64), so it is
	// also the check for NaN and Inf.
	st.GradNorm = clipGradNorm(n.grads, a.cfg.MaxGradNorm)
	if math.IsNaN(st.GradNorm) || math.IsInf(st.GradNorm, 0) {
		zeroGrads(n.grads)
		return st, fmt.Errorf("%w (loss %v)", ErrNonFinite, st.Loss)
	}
	a.adam.Update(n.params, n.grads)
	zeroGrads(n.grads)
	a.Updates++
	return st, nil
}

// logProbs fills n.dist with the log-probabilities and entropies of the
// rows' stored actions under the actor's outputs mu of the last forward
// pass, with the stored action masks (flat, nil: all legal).
func (a *PPO) logProbs(n *nets, mu, actions []float32, masks []bool, rows int) error {
	d := a.dist
	if d.kind == categorical {
		for i := range n.dist.add[:rows*d.size] {
			n.dist.add[i] = 0
			if masks != nil && !masks[i] {
				n.dist.add[i] = maskFill
			}
		}
	}
	if d.feat > 0 {
		if err := n.sdeFeatures(d, rows); err != nil {
			return err
		}
	}
	d.logProbEntropy(&n.dist, mu, a.logStd, actions, rows)
	return nil
}

// clip32 returns clip(x, lo, hi) and its derivative as x − relu(x − hi) +
// relu(lo − x) has them: 1 − [x ≥ hi] − [x ≤ lo], 0 at the bounds.
func clip32(x, lo, hi float32) (float32, float32) {
	above, below := x-hi, lo-x
	d := float32(1)
	if above >= 0 {
		d--
	} else {
		above = 0
	}
	if below >= 0 {
		d--
	} else {
		below = 0
	}
	return x - above + below, d
}

func zeroGrads(grads [][]float32) {
	for _, g := range grads {
		clear(g)
	}
}

// normalizeAdvantages writes (a − mean)/(std + 1e-8) over the entries of
// weight 1, with the sample (N−1) standard deviation, as the reference
// implementations do; padded entries get 0.
func normalizeAdvantages(dst, adv, w []float32, wsum float64) {
	mean := 0.0
	for i, x := range adv {
		mean += float64(w[i]) * float64(x)
	}
	mean /= wsum
	v := 0.0
	for i, x := range adv {
		d := float64(x) - mean
		v += float64(w[i]) * d * d
	}
	std := 0.0
	if wsum > 1 {
		std = math.Sqrt(v / (wsum - 1))
	}
	for i, x := range adv {
		dst[i] = float32((float64(x) - mean) / (std + 1e-8) * float64(w[i]))
	}
}
