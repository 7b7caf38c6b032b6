//go:build !amd64

package agent

// Without the amd64 kernel, Adam's step runs in Go.
const hasAVX = false

func adamStep4(p, gr, m, v *float32, n int, c *adamConsts) {
	panic("agent: no vector Adam kernel on this architecture")
}
