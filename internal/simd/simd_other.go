//go:build !amd64

package simd

// HasAVX2FMA is false without the amd64 kernels: every caller takes its
// plain-Go path.
const HasAVX2FMA = false

func unsupported() { panic("simd: no vector kernel on this architecture") }

func vecMat64(y, x, b *float32, k, ldb, incx int)          { unsupported() }
func vecMat32(y, x, b *float32, k, ldb, incx int)          { unsupported() }
func vecMat8(y, x, b *float32, k, ldb, incx int)           { unsupported() }
func vecMatTail(y, x, b *float32, k, ldb, incx, r int)     { unsupported() }
func dot8(x, y *float32, n int) float32                    { unsupported(); return 0 }
func relu8(y, u *float32, n int)                           { unsupported() }
func reluGrad8(du, u, dy *float32, n int)                  { unsupported() }
func adamStep4(p, gr, m, v *float32, n int, c *AdamConsts) { unsupported() }
func tanh8(y, x *float32, n int)                           { unsupported() }

func matMul6x16(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k int) { unsupported() }
func matMul6x8(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k int)  { unsupported() }
func matMul4x16(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k int) { unsupported() }
func matMul4x8(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k int)  { unsupported() }
func matMul2x16(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k int) { unsupported() }
func matMul2x8(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k int)  { unsupported() }
func matMul6xTail(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k, r int) {
	unsupported()
}
func matMul4xTail(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k, r int) {
	unsupported()
}
func matMul2xTail(c *float32, ldc int, a *float32, ai, al int, b *float32, ldb, k, r int) {
	unsupported()
}
