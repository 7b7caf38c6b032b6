package netconf

// Assembly kernels of kernel_amd64.s (AVX2 + FMA). Each adds x·B to a block
// of y's columns: B row-major with ldb columns and k rows, x with stride incx.

//go:noescape
func vecMat64(y, x, b *float32, k, ldb, incx int)

//go:noescape
func vecMat32(y, x, b *float32, k, ldb, incx int)

//go:noescape
func vecMat8(y, x, b *float32, k, ldb, incx int)

func cpuHasAVX2FMA() bool

// hasFMA is fixed at start-up from the CPU's features, like a constant.
var hasFMA = cpuHasAVX2FMA()

//go:noescape
func dot8(x, y *float32, n int) float32

//go:noescape
func relu8(y, u *float32, n int)

//go:noescape
func reluGrad8(du, u, dy *float32, n int)
