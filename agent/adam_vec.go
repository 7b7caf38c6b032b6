package agent

// adamConsts are the per-step constants of the vector kernel, laid out as
// adam_amd64.s reads them.
type adamConsts struct {
	b1, c1, b2, c2, step, sqrtBC2, eps, tiny float64
	abs                                      [4]uint64 // clears a float64's sign bit
}
