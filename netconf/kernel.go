package netconf

// vecMatAdd adds x·B to y: y[j] += Σ_l x[l]·b[l·ldb + j] for j < len(y) and
// l < len(x), summing over l in order. On amd64 CPUs with AVX2 and FMA,
// blocks of 64, 32 and 8 columns run in assembly with one fused
// multiply-add per term (the remaining columns in Go); the result of a
// column depends only on the column's position, never on other rows or
// calls, so a row's outputs do not depend on the batch.
func vecMatAdd(y, x, b []float32, ldb int) { vecMatAddInc(y, x, 1, len(x), b, ldb) }

// vecMatAddInc is vecMatAdd for k terms of x taken with stride incx, such as
// a column of a row-major matrix.
func vecMatAddInc(y, x []float32, incx, k int, b []float32, ldb int) {
	n := len(y)
	if n == 0 || k == 0 {
		return
	}
	_ = x[(k-1)*incx]    // the kernels read x[0], x[incx], …
	_ = b[(k-1)*ldb+n-1] // and rows 0..k-1, columns 0..n-1 of b
	j := 0
	if hasFMA {
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
	yt := y[j:n]
	for l := range k {
		xl := x[l*incx]
		br := b[l*ldb+j : l*ldb+n]
		for i := range yt {
			yt[i] += xl * br[i]
		}
	}
}

// dot returns Σ x[i]·y[i] over len(x) (y at least as long): the largest
// multiple of 8 in assembly where available, the rest added in order in Go.
// The result depends only on the two vectors.
func dot(x, y []float32) float32 {
	n := len(x)
	y = y[:n]
	s := float32(0)
	i := 0
	if hasFMA && n >= 8 {
		i = n &^ 7
		s = dot8(&x[0], &y[0], i)
	}
	for ; i < n; i++ {
		s += x[i] * y[i]
	}
	return s
}
