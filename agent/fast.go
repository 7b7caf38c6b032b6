package agent

import (
	"fmt"
	"math"

	"github.com/evolverl/evolve/netconf"
)

// fastNets is the plain-Go backend of agents whose encoder is an MLP: the
// networks run on netconf.Dense evaluators and the distribution, the PPO
// loss and their gradients are computed here, row by row. It replaces the
// gorgonia graphs for acting and training, whose fixed cost per op and per
// run dominated at these sizes (on the 2-core test machine a default
// CartPole minibatch update went from ~5 ms to ~0.35 ms, an acting step
// over 8 envs from ~0.5 ms to ~20 µs). The results are those of the graphs
// up to float32 rounding; TestFastPathMatchesGraphs holds the two together.
// Adam runs through Adam.step, Update's vectorised twin.
//
// Every buffer grows to the largest row count seen and is reused, so
// neither acting nor an update allocates once warm.
type fastNets struct {
	actor  *netconf.Dense
	critic *netconf.Dense // a whole network, or with shared encoders only its head is used
	shared bool

	gActor, gCritic netconf.Params // gradients, laid out like a.actor and a.critic
	gLogStd         []float32
	grads, params   [][]float32 // gradient and parameter slices in the order of (*PPO).tensors()

	add     []float32   // [rows·size] additive mask, 0 or maskFill
	logits  []float32   // [rows·size] masked logits
	comp    [][]float32 // categorical: per component [rows·n_c] log-probabilities of every choice
	src     actDist
	dOut    []float32 // [rows·size] gradient of the actor's output
	dVal    []float32 // [rows] gradient of the value
	dLat    []float32 // [rows·latent] summed latent gradient of the shared encoder
	logp    []float32 // [rows] log π(a|s)
	ent     []float32 // [rows] entropy
	adv, w  []float32 // [rows] normalised advantages and weights
	ratio   []float32 // [rows] log π − log π_old of the last update
	dlogp   []float32 // [rows] ∂loss/∂log π
	dent    []float32 // [rows] ∂loss/∂entropy
	scratch []float32 // [size] per-row gradient of the log-probabilities
}

// fastNets returns the agent's plain-Go backend, building it on first use,
// or nil when the graphs are to be used (non-MLP encoders, Dict networks,
// or forced).
func (a *PPO) fastNets() (*fastNets, error) {
	if a.fast != nil {
		return a.fast, nil
	}
	if a.noFast || a.actorSpec.Encoder != netconf.EncoderMLP || a.actorSpec.Dict() {
		return nil, nil
	}
	f := &fastNets{shared: a.cfg.ShareEncoders}
	var err error
	if f.actor, err = netconf.NewDense(a.actorSpec); err != nil {
		return nil, fmt.Errorf("actor: %w", err)
	}
	if f.critic, err = netconf.NewDense(a.criticSpec); err != nil {
		return nil, fmt.Errorf("critic: %w", err)
	}
	f.gActor, f.gCritic = zerosLike(a.actor), zerosLike(a.critic)
	for _, t := range f.gActor {
		f.grads = append(f.grads, t.Data)
	}
	for _, t := range f.gCritic {
		f.grads = append(f.grads, t.Data)
	}
	if a.logStd != nil {
		f.gLogStd = make([]float32, len(a.logStd))
		f.grads = append(f.grads, f.gLogStd)
	}
	f.comp = make([][]float32, len(a.dist.nvec))
	a.fast = f
	return f, nil
}

// zerosLike returns zeroed tensors with p's names and shapes.
func zerosLike(p netconf.Params) netconf.Params {
	z := make(netconf.Params, len(p))
	for i, t := range p {
		z[i] = netconf.Tensor{Name: t.Name, Shape: append([]int(nil), t.Shape...), Data: make([]float32, len(t.Data))}
	}
	return z
}

// forward runs actor and critic on rows observations and returns the
// actor's output [rows·size] and the values [rows].
func (f *fastNets) forward(a *PPO, obs []float32, rows int) (out, values []float32, err error) {
	lat, err := f.actor.ForwardEncoder(a.actor, obs, rows)
	if err != nil {
		return nil, nil, fmt.Errorf("actor: %w", err)
	}
	if out, err = f.actor.ForwardHead(a.actor, lat, rows); err != nil {
		return nil, nil, fmt.Errorf("actor: %w", err)
	}
	if f.shared {
		values, err = f.critic.ForwardHead(a.critic, lat, rows)
	} else {
		values, err = f.critic.Forward(a.critic, obs, rows)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("critic: %w", err)
	}
	return out, values, nil
}

// resize grows the per-row buffers for rows rows.
func (f *fastNets) resize(rows, size int) {
	f.add = grow(f.add, rows*size)
	f.logits = grow(f.logits, rows*size)
	f.dOut = grow(f.dOut, rows*size)
	f.scratch = grow(f.scratch, size)
	for _, b := range []*[]float32{&f.dVal, &f.logp, &f.ent, &f.adv, &f.w, &f.ratio, &f.dlogp, &f.dent} {
		*b = grow(*b, rows)
	}
}

// actFast is act on the plain-Go backend. MLP agents carry no recurrent
// state, so there is none to advance.
func (a *PPO) actFast(f *fastNets, obs []float32, masks [][]bool, deterministic bool, out *actOut) error {
	d := a.dist
	rows := len(obs) / a.obsSpace.FlatSize()
	f.resize(rows, d.size)
	var add []float32
	if d.kind == categorical {
		add = f.add
	}
	if err := a.fillMasks(add, masks, rows); err != nil {
		return err
	}
	mu, values, err := f.forward(a, obs, rows)
	if err != nil {
		return fmt.Errorf("acting forward pass: %w", err)
	}
	out.resize(rows, a.actSpace.FlatSize())
	copy(out.values, values)
	src := &f.src
	switch d.kind {
	case categorical:
		f.categorical(d, mu, rows)
		src.logpAll = f.comp
	case bernoulli:
		src.logp1, src.logp0 = grow(src.logp1, rows*d.size), grow(src.logp0, rows*d.size)
		for i, z := range mu[:rows*d.size] {
			src.logp1[i], src.logp0[i] = logSigmoids(z)
		}
	case gaussian:
		// Noise is drawn in the order of the graph's noise input, row by row.
		src.action, src.logp = grow(src.action, rows*d.size), grow(src.logp, rows)
		for i := range src.action {
			noise := float32(0)
			if !deterministic {
				noise = float32(a.rng.NormFloat64())
			}
			ls := a.logStd[i%d.size]
			src.action[i] = mu[i] + noise*float32(math.Exp(float64(ls)))
		}
		n := d.size
		for r := range rows {
			src.logp[r] = gaussLogp(src.action[r*n:(r+1)*n], mu[r*n:(r+1)*n], a.logStd)
		}
	}
	a.sample(src, rows, deterministic, out)
	return nil
}

// categorical writes the log-probabilities of every choice of every
// component into f.comp from the actor's output and f.add.
func (f *fastNets) categorical(d *dist, mu []float32, rows int) {
	for i := range f.logits[:rows*d.size] {
		f.logits[i] = mu[i] + f.add[i]
	}
	off := 0
	for c, n := range d.nvec {
		f.comp[c] = grow(f.comp[c], rows*n)
		for r := range rows {
			logSoftmaxRow(f.comp[c][r*n:(r+1)*n], f.logits[r*d.size+off:r*d.size+off+n])
		}
		off += n
	}
}

// logSoftmaxRow writes x − m − log Σ exp(x − m) (m = max x) to dst: the
// same operations for acting and training, so that a row's
// log-probabilities do not depend on its batch and the first ratio is 1.
// A masked logit (maskFill) gets a log-probability whose exp is exactly 0.
func logSoftmaxRow(dst, x []float32) {
	m := x[0]
	for _, v := range x[1:] {
		m = max(m, v)
	}
	s := 0.0
	for j, v := range x {
		z := v - m
		dst[j] = z
		s += math.Exp(float64(z))
	}
	lse := float32(math.Log(s))
	for j := range dst {
		dst[j] -= lse
	}
}

// softplus is log(1 + eˣ) with the graph's float32 cut-offs.
func softplus(x float32) float32 {
	if x < -103 {
		return 0
	}
	if x > 14 {
		return x
	}
	return float32(math.Log1p(math.Exp(float64(x))))
}

// logSigmoids returns log σ(z) = −softplus(−z) and log σ(−z) = −softplus(z).
func logSigmoids(z float32) (l1, l0 float32) { return -softplus(-z), -softplus(z) }

// halfLog2Pi is ½·log 2π.
var halfLog2Pi = float32(0.5 * math.Log(2*math.Pi))

// gaussLogp is log N(a; μ, diag(e^{2·logStd})) = Σ_d −½·z² − logStd_d −
// ½·log 2π with z = (a − μ)/σ, summed in dimension order.
func gaussLogp(act, mu, logStd []float32) float32 {
	lp := float32(0)
	for j, ls := range logStd {
		z := (act[j] - mu[j]) / float32(math.Exp(float64(ls)))
		t := -(0.5 * z * z) - ls - halfLog2Pi
		if j == 0 {
			lp = t
		} else {
			lp += t
		}
	}
	return lp
}

// updateFast is update on the plain-Go backend: the same loss as the
// training graph, differentiated by hand.
func (a *PPO) updateFast(f *fastNets, mb minibatch) (Stats, error) {
	var st Stats
	d := a.dist
	rows := mb.rows
	f.resize(rows, d.size)
	w := f.w
	wsum := 0.0
	for i := range w {
		w[i] = 1
		if mb.wts != nil {
			w[i] = mb.wts[i]
		}
		wsum += float64(w[i])
	}
	normalizeAdvantages(f.adv, mb.adv[:rows], w, wsum)
	mu, values, err := f.forward(a, mb.obs, rows)
	if err != nil {
		return st, fmt.Errorf("training pass: %w", err)
	}

	// Log-probabilities and entropies of the taken actions.
	n := d.size
	switch d.kind {
	case categorical:
		for i := range f.add[:rows*n] {
			f.add[i] = 0
			if mb.masks != nil && !mb.masks[i] {
				f.add[i] = maskFill
			}
		}
		f.categorical(d, mu, rows)
		nc := len(d.nvec)
		for r := range rows {
			var lp, h float32
			for c, k := range d.nvec {
				all := f.comp[c][r*k : (r+1)*k]
				t := float32(0)
				if j := int(mb.actions[r*nc+c]) - d.start; j >= 0 && j < k {
					t = all[j]
				}
				e := float32(0)
				for _, l := range all {
					e -= float32(math.Exp(float64(l))) * l
				}
				if c == 0 {
					lp, h = t, e
				} else {
					lp, h = lp+t, h+e
				}
			}
			f.logp[r], f.ent[r] = lp, h
		}
	case bernoulli:
		for r := range rows {
			var lp, h float32
			for j := range n {
				z := mu[r*n+j]
				l1, l0 := logSigmoids(z)
				t := l0
				if mb.actions[r*n+j] == 1 {
					t = l1
				}
				e := softplus(z) - z*sigmoid32(z)
				if j == 0 {
					lp, h = t, e
				} else {
					lp, h = lp+t, h+e
				}
			}
			f.logp[r], f.ent[r] = lp, h
		}
	case gaussian:
		h := float32(0)
		for _, ls := range a.logStd {
			h += ls + 0.5 + halfLog2Pi
		}
		for r := range rows {
			f.logp[r] = gaussLogp(mb.actions[r*n:(r+1)*n], mu[r*n:(r+1)*n], a.logStd)
			f.ent[r] = h
		}
	}

	// The PPO loss per row and its gradient with respect to log π, the
	// entropy and the value. max and clip take their gradients as the
	// graph's relu-based maxNodes and clipNodes do: a tie goes to the
	// unclipped term, and clip′ is 0 at the bounds.
	c := a.cfg.ClipCoef
	lo, hi := float32(1-c), float32(1+c)
	cneg, cpos := float32(-c), float32(c)
	inv := 1 / wsum
	var pgSum, vSum, hSum, kl, clipped float64
	for i := range rows {
		wi := float64(w[i])
		lr := f.logp[i] - mb.logp[i]
		f.ratio[i] = lr
		ratio := float32(math.Exp(float64(lr)))
		negA := -f.adv[i]
		pg1 := negA * ratio
		cr, dcr := clip32(ratio, lo, hi)
		pg2 := negA * cr
		dRatio := negA
		pg := pg1
		if pg1-pg2 < 0 {
			pg, dRatio = pg2, negA*dcr
		}
		f.dlogp[i] = float32(wi * inv * float64(dRatio) * float64(ratio))

		v, ret, vOld := values[i], mb.ret[i], mb.values[i]
		vl1 := (v - ret) * (v - ret)
		cd, dcd := clip32(v-vOld, cneg, cpos)
		vc := vOld + cd
		vl2 := (vc - ret) * (vc - ret)
		vl, dv := vl1, 2*(v-ret)
		if vl1-vl2 < 0 {
			vl, dv = vl2, 2*(vc-ret)*dcd
		}
		f.dVal[i] = float32(a.cfg.VFCoef * 0.5 * wi * inv * float64(dv))
		f.dent[i] = float32(-a.cfg.EntCoef * wi * inv)

		pgSum += wi * float64(pg)
		vSum += wi * float64(vl)
		hSum += wi * float64(f.ent[i])
		if wi != 0 {
			r := math.Exp(float64(lr))
			kl += (r - 1) - float64(lr)
			if math.Abs(r-1) > c {
				clipped++
			}
		}
	}
	st.PolicyLoss = pgSum * inv
	st.ValueLoss = 0.5 * vSum * inv
	st.Entropy = hSum * inv
	st.Loss = st.PolicyLoss - a.cfg.EntCoef*st.Entropy + a.cfg.VFCoef*st.ValueLoss
	st.ApproxKL, st.ClipFrac = kl*inv, clipped*inv

	// Gradient of the actor's output (and of the log-std).
	switch d.kind {
	case categorical:
		for r := range rows {
			off := 0
			for c, k := range d.nvec {
				all := f.comp[c][r*k : (r+1)*k]
				g := f.scratch[:k]
				taken := int(mb.actions[r*len(d.nvec)+c]) - d.start
				sum := float32(0)
				for j, l := range all {
					p := float32(math.Exp(float64(l)))
					// ∂H/∂log p_j = −p_j·(log p_j + 1); p_j is exactly 0 for a
					// masked choice, so its logit gets exactly 0.
					gj := f.dent[r] * (-p * (l + 1))
					if j == taken {
						gj += f.dlogp[r]
					}
					g[j] = gj
					sum += gj
				}
				for j, l := range all {
					p := float32(math.Exp(float64(l)))
					f.dOut[r*n+off+j] = g[j] - p*sum
				}
				off += k
			}
		}
	case bernoulli:
		for r := range rows {
			for j := range n {
				i := r*n + j
				z := mu[i]
				s, sn := sigmoid32(z), sigmoid32(-z)
				dl := -s // ∂ log σ(−z)/∂z
				if mb.actions[i] == 1 {
					dl = sn // ∂ log σ(z)/∂z
				}
				f.dOut[i] = f.dlogp[r]*dl + f.dent[r]*(-z*s*sn)
			}
		}
	case gaussian:
		for j, ls := range a.logStd {
			std := float32(math.Exp(float64(ls)))
			gls := float64(0)
			for r := range rows {
				i := r*n + j
				z := (mb.actions[i] - mu[i]) / std
				f.dOut[i] = f.dlogp[r] * z / std
				gls += float64(f.dlogp[r]*(z*z-1) + f.dent[r])
			}
			f.gLogStd[j] += float32(gls)
		}
	}

	// Backward through the networks.
	dLatA, err := f.actor.BackwardHead(a.actor, f.gActor, f.dOut[:rows*n])
	if err != nil {
		return st, fmt.Errorf("actor gradient: %w", err)
	}
	if f.shared {
		dLatC, err := f.critic.BackwardHead(a.critic, f.gCritic, f.dVal[:rows])
		if err != nil {
			return st, fmt.Errorf("critic gradient: %w", err)
		}
		f.dLat = grow(f.dLat, len(dLatA))
		for i, g := range dLatA {
			f.dLat[i] = g + dLatC[i]
		}
		dLatA = f.dLat
	} else if err := f.critic.Backward(a.critic, f.gCritic, f.dVal[:rows]); err != nil {
		return st, fmt.Errorf("critic gradient: %w", err)
	}
	if err := f.actor.BackwardEncoder(a.actor, f.gActor, dLatA); err != nil {
		return st, fmt.Errorf("actor gradient: %w", err)
	}

	// The norm is finite exactly when every gradient is (float32 squares
	// cannot overflow float64), so it doubles as the check of the graph
	// path's separate pass.
	st.GradNorm = clipGradNorm(f.grads, a.cfg.MaxGradNorm)
	if math.IsNaN(st.GradNorm) || math.IsInf(st.GradNorm, 0) {
		zeroGrads(f.grads)
		return st, fmt.Errorf("%w (loss %v)", ErrNonFinite, st.Loss)
	}
	f.params = f.params[:0]
	for _, t := range a.actor {
		f.params = append(f.params, t.Data)
	}
	for _, t := range a.critic {
		f.params = append(f.params, t.Data)
	}
	if a.logStd != nil {
		f.params = append(f.params, a.logStd)
	}
	a.adam.Update(f.params, f.grads)
	zeroGrads(f.grads)
	a.Updates++
	return st, nil
}

// clip32 returns clip(x, lo, hi) and its derivative as the graph's
// clipNodes computes them: x − relu(x − hi) + relu(lo − x), whose
// derivative 1 − [x ≥ hi] − [x ≤ lo] is 0 at the bounds.
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

// sigmoid32 is 1/(1 + e^{−z}).
func sigmoid32(z float32) float32 { return float32(1 / (1 + math.Exp(-float64(z)))) }
