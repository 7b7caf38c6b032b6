package simd

// AdamConsts are the per-step constants of AdamStep4, laid out as
// adam_amd64.s reads them.
type AdamConsts struct {
	B1, C1, B2, C2, Step, SqrtBC2, Eps, Tiny float64
	Abs                                      [4]uint64 // clears a float64's sign bit
}

// AdamStep4 applies Adam's per-element step to the first n elements (a
// multiple of 4) of p, with gradients gr and moments m and v, four float64
// lanes at a time. It performs the scalar update's operations in the same
// order without fused multiply-adds, so the result is bit for bit the
// scalar loop's. Only call it when HasAVX2FMA.
func AdamStep4(p, gr, m, v []float32, n int, c *AdamConsts) {
	if n == 0 {
		return
	}
	_, _, _, _ = p[n-1], gr[n-1], m[n-1], v[n-1]
	adamStep4(&p[0], &gr[0], &m[0], &v[0], n, c)
}
