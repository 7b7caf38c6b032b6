package agent

import "math"

// adamConsts are the per-step constants of the vector kernel, laid out as
// adam_amd64.s reads them.
type adamConsts struct {
	b1, c1, b2, c2, step, sqrtBC2, eps, tiny float64
	abs                                      [4]uint64 // clears a float64's sign bit
}

// step is Update computed four elements at a time where the CPU has AVX:
// the same float64 operations in the same order, so parameters and moments
// come out bit for bit as Update leaves them (TestAdamStepMatchesUpdate),
// at a fraction of the cost. Update's scalar loop was the largest single
// cost of a plain-Go PPO minibatch.
func (a *Adam) step(params, grads [][]float32) {
	if !hasAVX {
		a.Update(params, grads)
		return
	}
	if len(params) != len(a.M) || len(grads) != len(a.M) {
		panic("agent: Adam.step: params, grads and moments differ in count")
	}
	a.Step++
	t := float64(a.Step)
	bc1 := 1 - math.Pow(a.Beta1, t)
	bc2 := 1 - math.Pow(a.Beta2, t)
	c := adamConsts{b1: a.Beta1, c1: 1 - a.Beta1, b2: a.Beta2, c2: 1 - a.Beta2,
		step: a.LR / bc1, sqrtBC2: math.Sqrt(bc2), eps: a.Eps, tiny: smallestNormal32}
	for i := range c.abs {
		c.abs[i] = 1<<63 - 1
	}
	for k, p := range params {
		g, m, v := grads[k], a.M[k], a.V[k]
		if len(g) != len(p) || len(m) != len(p) || len(v) != len(p) {
			panic("agent: Adam.step: a parameter, its gradient and its moments differ in size")
		}
		n4 := len(p) &^ 3
		if n4 > 0 {
			adamStep4(&p[0], &g[0], &m[0], &v[0], n4, &c)
		}
		for i := n4; i < len(p); i++ {
			gi := float64(g[i])
			mi := c.b1*float64(m[i]) + c.c1*gi
			vi := c.b2*float64(v[i]) + c.c2*gi*gi
			p[i] = float32(float64(p[i]) - c.step*mi/(math.Sqrt(vi)/c.sqrtBC2+c.eps))
			m[i], v[i] = flush(mi), flush(vi)
		}
	}
}
