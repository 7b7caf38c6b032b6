package agent

import (
	"math"

	"github.com/evolverl/evolve/internal/simd"
)

// Adam is Kingma & Ba's optimizer with PyTorch's bias correction, over
// plain float32 slices, so its moments can be saved, cloned and resized
// together with the weights:
//
//	m ← β1·m + (1−β1)·g        v ← β2·v + (1−β2)·g²
//	p ← p − lr/(1−β1^t) · m / (√v/√(1−β2^t) + ε)
//
// Each element is updated in float64 and stored as float32. Moments that
// fall below float32's smallest normal number are flushed to zero: a
// parameter whose gradient is always zero (the logit of an always-masked
// action) would otherwise decay into subnormals, which are ~50× slower.
type Adam struct {
	LR, Beta1, Beta2, Eps float64
	// Step counts the updates made (t above).
	Step int
	// M and V hold the first and second moments, one slice per parameter
	// tensor, in the order of the params passed to Update.
	M, V [][]float32
}

// NewAdam returns an Adam with PyTorch's defaults β = (0.9, 0.999) and the
// ε = 1e-5 that PPO implementations use, for parameter tensors of the given
// sizes.
func NewAdam(lr float64, sizes []int) *Adam {
	a := &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-5}
	a.M = make([][]float32, len(sizes))
	a.V = make([][]float32, len(sizes))
	for i, n := range sizes {
		a.M[i] = make([]float32, n)
		a.V[i] = make([]float32, n)
	}
	return a
}

// smallestNormal32 is the smallest positive normal float32.
const smallestNormal32 = 0x1p-126

// Update applies one step to params given their gradients. Where the CPU
// has AVX2 (internal/simd/adam_amd64.s) four elements go through the vector kernel at a
// time; it performs the same float64 operations in the same order, so the
// result is bit for bit the scalar loop's (TestAdamVectorMatchesScalar).
func (a *Adam) Update(params, grads [][]float32) { a.update(params, grads, simd.HasAVX2FMA) }

// update is Update with the vector kernel on or off.
func (a *Adam) update(params, grads [][]float32, vector bool) {
	if len(params) != len(a.M) || len(grads) != len(a.M) {
		panic("agent: Adam.Update: params, grads and moments differ in count")
	}
	a.Step++
	t := float64(a.Step)
	bc1 := 1 - math.Pow(a.Beta1, t)
	bc2 := 1 - math.Pow(a.Beta2, t)
	c := simd.AdamConsts{B1: a.Beta1, C1: 1 - a.Beta1, B2: a.Beta2, C2: 1 - a.Beta2,
		Step: a.LR / bc1, SqrtBC2: math.Sqrt(bc2), Eps: a.Eps, Tiny: smallestNormal32}
	for i := range c.Abs {
		c.Abs[i] = 1<<63 - 1
	}
	for k, p := range params {
		g, m, v := grads[k], a.M[k], a.V[k]
		if len(g) != len(p) || len(m) != len(p) || len(v) != len(p) {
			panic("agent: Adam.Update: a parameter, its gradient and its moments differ in size")
		}
		start := 0
		if vector {
			start = len(p) &^ 3
			if start > 0 {
				simd.AdamStep4(p, g, m, v, start, &c)
			}
		}
		for i := start; i < len(p); i++ {
			gi := float64(g[i])
			mi := c.B1*float64(m[i]) + c.C1*gi
			vi := c.B2*float64(v[i]) + c.C2*gi*gi
			p[i] = float32(float64(p[i]) - c.Step*mi/(math.Sqrt(vi)/c.SqrtBC2+c.Eps))
			m[i], v[i] = flush(mi), flush(vi)
		}
	}
}

func flush(x float64) float32 {
	if math.Abs(x) < smallestNormal32 {
		return 0
	}
	return float32(x)
}

// clipGradNorm scales all gradients together so that their global L2 norm
// is at most maxNorm, as PyTorch's clip_grad_norm_ (scale maxNorm/(norm+1e-6)
// when that is below 1), and returns the norm before clipping.
func clipGradNorm(grads [][]float32, maxNorm float64) float64 {
	sum := 0.0
	for _, g := range grads {
		for _, x := range g {
			sum += float64(x) * float64(x)
		}
	}
	norm := math.Sqrt(sum)
	if coef := maxNorm / (norm + 1e-6); coef < 1 {
		for _, g := range grads {
			for i := range g {
				g[i] = float32(float64(g[i]) * coef)
			}
		}
	}
	return norm
}
