package simd

// Assembly kernels of simd_amd64.s (AVX2 + FMA) and adam_amd64.s (AVX).
// Each vecMat kernel adds x·B to a block of y's columns: B row-major with
// ldb columns and k rows, x with stride incx.

//go:noescape
func vecMat64(y, x, b *float32, k, ldb, incx int)

//go:noescape
func vecMat32(y, x, b *float32, k, ldb, incx int)

//go:noescape
func vecMat8(y, x, b *float32, k, ldb, incx int)

// vecMatTail is vecMat8 for r < 8 columns, with a multiply and an add in
// place of the FMA.
//
//go:noescape
func vecMatTail(y, x, b *float32, k, ldb, incx, r int)

// The tile kernels of matmul_amd64.s: each adds A·B to a rows×cols tile of
// C (see MatMulAdd for the strides), k ≥ 1.

//go:noescape
func matMul6x16(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k int)

//go:noescape
func matMul6x8(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k int)

//go:noescape
func matMul4x16(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k int)

//go:noescape
func matMul4x8(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k int)

//go:noescape
func matMul2x16(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k int)

//go:noescape
func matMul2x8(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k int)

// matMul6xTail, matMul4xTail and matMul2xTail add A·B to the r < 8 columns
// of 6, 4 or 2 rows of C, k ≥ 1, by multiplies and adds (the bits of
// vecMatTail, row by row).
//
//go:noescape
func matMul6xTail(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k, r int)

//go:noescape
func matMul4xTail(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k, r int)

//go:noescape
func matMul2xTail(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k, r int)

func cpuHasAVX2FMA() bool

// HasAVX2FMA reports whether the CPU (and the OS) support AVX2 and FMA: the
// one feature check of the module, fixed at start-up like a constant. Every
// kernel of this package is used only when it is set.
var HasAVX2FMA = cpuHasAVX2FMA()

//go:noescape
func dot8(x, y *float32, n int) float32

//go:noescape
func relu8(y, u *float32, n int)

//go:noescape
func reluGrad8(du, u, dy *float32, n int)

//go:noescape
func adamStep4(p, gr, m, v *float32, n int, c *AdamConsts)

//go:noescape
func tanh8(y, x *float32, n int)
