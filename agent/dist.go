package agent

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/internal/bufs"
)

// maskFill is the logit of an illegal action: exp(−1e9 − logsumexp) is
// exactly 0 in float32, so an illegal action is never sampled and its logit
// gets exactly zero gradient.
const maskFill = -1e9

// distKind is the family of the policy's action distribution.
type distKind int

const (
	categorical distKind = iota // Discrete and MultiDiscrete: independent categoricals
	bernoulli                   // MultiBinary: independent bits
	gaussian                    // Box: diagonal Gaussian, state-independent log-std or gSDE
)

// dist is the policy's distribution for one action space, over the
// actor's output row by row: logits (categorical, Bernoulli) or means
// (Gaussian, with the agent's log-std vector). Its methods compute
// log-probabilities, entropies and their gradients on plain slices; acting
// and training use the same operations, so that PPO's first ratio is
// exactly 1.
type dist struct {
	kind  distKind
	space envs.Space
	nvec  []int // categorical: choices per component (one component for Discrete)
	start int   // Discrete.Start: action value of choice 0
	size  int   // actor output width: sum(nvec), bits, or action dims
	low   []float32
	high  []float32 // gaussian: the bounds actions are clipped to for the env
	feat  int       // gaussian with gSDE: the actor's feature width; 0 without (see sde.go)
}

func newDist(s envs.Space) (*dist, error) {
	switch s := s.(type) {
	case envs.Discrete:
		return &dist{kind: categorical, space: s, nvec: []int{s.N}, start: s.Start, size: s.N}, nil
	case envs.MultiDiscrete:
		n := 0
		for _, k := range s.Nvec {
			n += k
		}
		return &dist{kind: categorical, space: s, nvec: append([]int(nil), s.Nvec...), size: n}, nil
	case envs.MultiBinary:
		return &dist{kind: bernoulli, space: s, size: s.N}, nil
	case envs.Box:
		if len(s.Dims) != 1 {
			return nil, fmt.Errorf("box action space %v: only one-dimensional Box actions are supported", s)
		}
		return &dist{kind: gaussian, space: s, size: s.Dims[0], low: s.Low, high: s.High}, nil
	}
	return nil, fmt.Errorf("action space %v is not supported (Discrete, MultiDiscrete, MultiBinary or a 1-D Box)", s)
}

// stdShape is the shape of the log-std parameter: [size] for a
// state-independent Gaussian, [feat, size] with gSDE, nil for other kinds.
func (d *dist) stdShape() []int {
	switch {
	case d.kind != gaussian:
		return nil
	case d.feat > 0:
		return []int{d.feat, d.size}
	}
	return []int{d.size}
}

// stdLen is the number of log-std parameters.
func (d *dist) stdLen() int {
	if d.kind != gaussian {
		return 0
	}
	return max(d.feat, 1) * d.size
}

// distBuffers are the per-row values the distribution's methods fill,
// grown to the largest row count seen and reused.
type distBuffers struct {
	add    []float32   // categorical: [rows·size] additive mask, 0 or maskFill
	logits []float32   // categorical: [rows·size] masked logits
	comp   [][]float32 // categorical: per component [rows·n_c] log-probabilities of every choice
	logp1  []float32   // bernoulli: [rows·size] log σ(z)
	logp0  []float32   // bernoulli: [rows·size] log σ(−z)
	action []float32   // gaussian: [rows·size] sampled actions
	logp   []float32   // [rows] log π(a|s) of the sampled or taken actions
	ent    []float32   // [rows] entropy
	g      []float32   // [size] one row's gradient with respect to the log-probabilities

	// gSDE: the caller points feat at the actor's features [rows·feat] and
	// expl at the exploration matrices [rows·feat·size] before each call.
	feat, expl      []float32
	sigma, logSigma []float32 // [rows·size] each row's standard deviations and their logs
	variance        []float64 // [rows·size] their squares
	std2, gStd      []float64 // [feat·size] σ² and the log-std matrix's gradient (before σ²)
}

func (b *distBuffers) resize(d *dist, rows int) {
	b.add = bufs.Grow(b.add, rows*d.size)
	b.logits = bufs.Grow(b.logits, rows*d.size)
	if len(b.comp) != len(d.nvec) {
		b.comp = make([][]float32, len(d.nvec))
	}
	for c, n := range d.nvec {
		b.comp[c] = bufs.Grow(b.comp[c], rows*n)
	}
	if d.kind == bernoulli {
		b.logp1, b.logp0 = bufs.Grow(b.logp1, rows*d.size), bufs.Grow(b.logp0, rows*d.size)
	}
	if d.kind == gaussian {
		b.action = bufs.Grow(b.action, rows*d.size)
	}
	if d.feat > 0 {
		b.sigma, b.logSigma = bufs.Grow(b.sigma, rows*d.size), bufs.Grow(b.logSigma, rows*d.size)
		b.variance = bufs.Grow(b.variance, rows*d.size)
	}
	b.logp, b.ent = bufs.Grow(b.logp, rows), bufs.Grow(b.ent, rows)
	b.g = bufs.Grow(b.g, d.size)
}

// categoricals writes the log-probabilities of every choice of every
// component into b.comp from the actor's output out and the mask b.add.
func (d *dist) categoricals(b *distBuffers, out []float32, rows int) {
	for i := range b.logits[:rows*d.size] {
		b.logits[i] = out[i] + b.add[i]
	}
	off := 0
	for c, n := range d.nvec {
		for r := range rows {
			logSoftmaxRow(b.comp[c][r*n:(r+1)*n], b.logits[r*d.size+off:r*d.size+off+n])
		}
		off += n
	}
}

// logSoftmaxRow writes x − m − log Σ exp(x − m) (m = max x) to dst. A
// masked logit (maskFill) gets a log-probability whose exp is exactly 0.
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

// sample draws (or picks, when deterministic) each row's action from the
// actor's output and records its log-probability in b.logp. Categorical
// masks must be in b.add. actions are as stored for training (a Gaussian's
// unclipped sample).
func (d *dist) sample(b *distBuffers, out, logStd []float32, rows int, deterministic bool, rng *rand.Rand, actions []float32) {
	switch d.kind {
	case categorical:
		d.categoricals(b, out, rows)
		nc := len(d.nvec)
		for r := range rows {
			lp := float32(0)
			for c, n := range d.nvec {
				all := b.comp[c][r*n : (r+1)*n]
				k := pickCategorical(all, deterministic, rng)
				if c == 0 {
					lp = all[k]
				} else {
					lp += all[k]
				}
				actions[r*nc+c] = float32(k + d.start)
			}
			b.logp[r] = lp
		}
	case bernoulli:
		n := d.size
		for i, z := range out[:rows*n] {
			b.logp1[i], b.logp0[i] = logSigmoids(z)
		}
		for r := range rows {
			lp := float32(0)
			for j := range n {
				i := r*n + j
				p1 := math.Exp(float64(b.logp1[i]))
				bit := p1 >= 0.5
				if !deterministic {
					bit = rng.Float64() < p1
				}
				v, term := float32(0), b.logp0[i]
				if bit {
					v, term = 1, b.logp1[i]
				}
				if j == 0 {
					lp = term
				} else {
					lp += term
				}
				actions[i] = v
			}
			b.logp[r] = lp
		}
	case gaussian:
		n := d.size
		if d.feat > 0 {
			d.sdeSample(b, out, logStd, b.expl, rows, deterministic)
			copy(actions, b.action[:rows*n])
			return
		}
		for i := range b.action[:rows*n] {
			noise := float32(0)
			if !deterministic {
				noise = float32(rng.NormFloat64())
			}
			b.action[i] = out[i] + noise*float32(math.Exp(float64(logStd[i%n])))
		}
		for r := range rows {
			b.logp[r] = gaussLogp(b.action[r*n:(r+1)*n], out[r*n:(r+1)*n], logStd)
		}
		copy(actions, b.action[:rows*n])
	}
}

// pickCategorical returns the arg-max of the log-probabilities, or a draw
// from them by inverse CDF. Masked choices have probability exactly 0 and
// are never drawn.
func pickCategorical(logp []float32, deterministic bool, rng *rand.Rand) int {
	if deterministic {
		best := 0
		for k, v := range logp {
			if v > logp[best] {
				best = k
			}
		}
		return best
	}
	u := rng.Float64()
	cum := 0.0
	last := 0
	for k, v := range logp {
		p := math.Exp(float64(v))
		if p == 0 {
			continue
		}
		last = k
		cum += p
		if u < cum {
			return k
		}
	}
	return last // rounding left the total just under u
}

// logProbEntropy writes the log-probability of each row's taken action
// into b.logp and the distribution's entropy into b.ent. Categorical masks
// must be in b.add.
func (d *dist) logProbEntropy(b *distBuffers, out, logStd, actions []float32, rows int) {
	n := d.size
	switch d.kind {
	case categorical:
		d.categoricals(b, out, rows)
		nc := len(d.nvec)
		for r := range rows {
			var lp, h float32
			for c, k := range d.nvec {
				all := b.comp[c][r*k : (r+1)*k]
				t := float32(0)
				if j := int(actions[r*nc+c]) - d.start; j >= 0 && j < k {
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
			b.logp[r], b.ent[r] = lp, h
		}
	case bernoulli:
		for r := range rows {
			var lp, h float32
			for j := range n {
				z := out[r*n+j]
				l1, l0 := logSigmoids(z)
				t := l0
				if actions[r*n+j] == 1 {
					t = l1
				}
				e := softplus(z) - z*sigmoid32(z)
				if j == 0 {
					lp, h = t, e
				} else {
					lp, h = lp+t, h+e
				}
			}
			b.logp[r], b.ent[r] = lp, h
		}
	case gaussian:
		if d.feat > 0 {
			d.sdeLogProbEntropy(b, out, logStd, actions, rows)
			return
		}
		h := float32(0)
		for _, ls := range logStd {
			h += ls + 0.5 + halfLog2Pi
		}
		for r := range rows {
			b.logp[r] = gaussLogp(actions[r*n:(r+1)*n], out[r*n:(r+1)*n], logStd)
			b.ent[r] = h
		}
	}
}

// backward writes into dOut [rows·size] the gradient of the loss with
// respect to the actor's output, and adds into dLogStd the gradient with
// respect to the log-std (Gaussian), given the loss's gradients dlogp and
// dent with respect to each row's log-probability and entropy. It reads
// what logProbEntropy left in b.
func (d *dist) backward(b *distBuffers, dOut, dLogStd, out, logStd, actions, dlogp, dent []float32, rows int) {
	n := d.size
	switch d.kind {
	case categorical:
		for r := range rows {
			off := 0
			for c, k := range d.nvec {
				all := b.comp[c][r*k : (r+1)*k]
				g := b.g[:k]
				taken := int(actions[r*len(d.nvec)+c]) - d.start
				sum := float32(0)
				for j, l := range all {
					p := float32(math.Exp(float64(l)))
					// ∂H/∂log p_j = −p_j·(log p_j + 1); p_j is exactly 0 for a
					// masked choice, so its logit gets exactly 0.
					gj := dent[r] * (-p * (l + 1))
					if j == taken {
						gj += dlogp[r]
					}
					g[j] = gj
					sum += gj
				}
				// Through the log-softmax: ∂/∂z_j = g_j − p_j·Σ g.
				for j, l := range all {
					p := float32(math.Exp(float64(l)))
					dOut[r*n+off+j] = g[j] - p*sum
				}
				off += k
			}
		}
	case bernoulli:
		for r := range rows {
			for j := range n {
				i := r*n + j
				z := out[i]
				s, sn := sigmoid32(z), sigmoid32(-z)
				dl := -s // ∂ log σ(−z)/∂z
				if actions[i] == 1 {
					dl = sn // ∂ log σ(z)/∂z
				}
				// ∂H/∂z = −z·σ(z)·σ(−z) for H = softplus(z) − z·σ(z).
				dOut[i] = dlogp[r]*dl + dent[r]*(-z*s*sn)
			}
		}
	case gaussian:
		if d.feat > 0 {
			d.sdeBackward(b, dOut, dLogStd, out, actions, dlogp, dent, rows)
			return
		}
		for j, ls := range logStd {
			std := float32(math.Exp(float64(ls)))
			gls := float64(0)
			for r := range rows {
				i := r*n + j
				z := (actions[i] - out[i]) / std
				// ∂ log N/∂μ = z/σ, ∂ log N/∂ log σ = z² − 1, ∂H/∂ log σ = 1.
				dOut[i] = dlogp[r] * z / std
				gls += float64(dlogp[r]*(z*z-1) + dent[r])
			}
			dLogStd[j] += float32(gls)
		}
	}
}

// softplus is log(1 + eˣ), exact to float32 beyond its cut-offs.
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

// sigmoid32 is 1/(1 + e^{−z}).
func sigmoid32(z float32) float32 { return float32(1 / (1 + math.Exp(-float64(z)))) }

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
