//go:build !amd64

package netconf

// Without the amd64 kernels every product runs in plain Go.
const hasFMA = false

func vecMat64(y, x, b *float32, k, ldb, incx int) {
	panic("netconf: no vector kernel on this architecture")
}
func vecMat32(y, x, b *float32, k, ldb, incx int) {
	panic("netconf: no vector kernel on this architecture")
}
func vecMat8(y, x, b *float32, k, ldb, incx int) {
	panic("netconf: no vector kernel on this architecture")
}

func dot8(x, y *float32, n int) float32 { panic("netconf: no vector kernel on this architecture") }

func relu8(y, u *float32, n int)          { panic("netconf: no vector kernel on this architecture") }
func reluGrad8(du, u, dy *float32, n int) { panic("netconf: no vector kernel on this architecture") }
