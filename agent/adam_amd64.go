package agent

//go:noescape
func adamStep4(p, gr, m, v *float32, n int, c *adamConsts)

func cpuHasAVX() bool

// hasAVX is fixed at start-up from the CPU's features, like a constant.
var hasAVX = cpuHasAVX()
