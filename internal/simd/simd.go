// Package simd holds the module's vector kernels (AVX2 and FMA on amd64, in
// assembly) behind the one CPU-feature check, HasAVX2FMA, with plain-Go
// fallbacks elsewhere. The kernels fix their order of summation, so a result
// depends only on its inputs and position, never on the batch around it:
// acting on N rows and training on a minibatch round the same way.
package simd

// VecMatAdd adds x·B to y: y[j] += Σ_l x[l]·b[l·ldb + j] for j < len(y) and
// l < len(x), summing over l in order. With AVX2 and FMA, blocks of 64, 32
// and 8 columns run in assembly with one fused multiply-add per term. The
// last len(y)%8 columns add each product rounded to float32, unfused, in
// assembly through a lane mask or in Go: the same bits either way.
func VecMatAdd(y, x, b []float32, ldb int) { VecMatAddInc(y, x, 1, len(x), b, ldb) }

// VecMatAddInc is VecMatAdd for k terms of x taken with stride incx, such as
// a column of a row-major matrix.
func VecMatAddInc(y, x []float32, incx, k int, b []float32, ldb int) {
	n := len(y)
	if n == 0 || k == 0 {
		return
	}
	_ = x[(k-1)*incx]    // the kernels read x[0], x[incx], …
	_ = b[(k-1)*ldb+n-1] // and rows 0..k-1, columns 0..n-1 of b
	j := 0
	if HasAVX2FMA {
		for ; j+64 <= n; j += 64 {
			vecMat64(&y[j], &x[0], &b[j], k, ldb, incx)
		}
		if j+32 <= n {
			vecMat32(&y[j], &x[0], &b[j], k, ldb, incx)
			j += 32
		}
		for ; j+8 <= n; j += 8 {
			vecMat8(&y[j], &x[0], &b[j], k, ldb, incx)
		}
	}
	if j == n {
		return
	}
	if HasAVX2FMA {
		vecMatTail(&y[j], &x[0], &b[j], k, ldb, incx, n-j)
		return
	}
	yt := y[j:n]
	for l := range k {
		xl := x[l*incx]
		br := b[l*ldb+j : l*ldb+n]
		for i := range yt {
			yt[i] += float32(xl * br[i]) // never fused, as vecMatTail
		}
	}
}

// Dot returns Σ x[i]·y[i] over len(x) (y at least as long): the largest
// multiple of 8 in assembly where available, the rest added in order in Go.
func Dot(x, y []float32) float32 {
	n := len(x)
	y = y[:n]
	s := float32(0)
	i := 0
	if HasAVX2FMA && n >= 8 {
		i = n &^ 7
		s = dot8(&x[0], &y[0], i)
	}
	for ; i < n; i++ {
		s += x[i] * y[i]
	}
	return s
}

// Relu writes max(u, 0) to y for the largest multiple of 8 elements of u
// and returns how many it wrote (0 without the kernels); the caller does
// the rest.
func Relu(y, u []float32) int {
	n8 := len(u) &^ 7
	if !HasAVX2FMA || n8 == 0 {
		return 0
	}
	_ = y[n8-1]
	relu8(&y[0], &u[0], n8)
	return n8
}

// ReluGrad writes dy where u ≥ 0 and 0 elsewhere to du for the largest
// multiple of 8 elements of u and returns how many it wrote (0 without the
// kernels).
func ReluGrad(du, u, dy []float32) int {
	n8 := len(u) &^ 7
	if !HasAVX2FMA || n8 == 0 {
		return 0
	}
	_, _ = du[n8-1], dy[n8-1]
	reluGrad8(&du[0], &u[0], &dy[0], n8)
	return n8
}
