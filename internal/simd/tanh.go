package simd

// The rational approximation of tanh that Tanh computes: for x clamped to
// [−9, 9], tanh(x) ≈ x·P(x²)/Q(x²) with P of degree 6 and Q of degree 3 in
// x² (the coefficients of Eigen's float tanh). Its largest error against
// math.Tanh is below 3 float32 ulps (TestTanhAccuracy); beyond ±9, tanh
// rounds to ±1 in float32 anyway.
var (
	tanhAlpha = [7]float32{4.89352455891786e-03, 6.37261928875436e-04, 1.48572235717979e-05,
		5.12229709037114e-08, -8.60467152213735e-11, 2.00018790482477e-13, -2.76076847742355e-16}
	tanhBeta = [4]float32{4.89352518554385e-03, 2.26843463243900e-03, 1.18534705686654e-04, 1.19825839466702e-06}
)

// Tanh writes tanh(x) to y (y may be x; y at least as long as x). With AVX2
// and FMA every element goes through the vector kernel — a tail shorter
// than eight lanes through a padded copy — so an element's result never
// depends on its position in x; elsewhere the same formula runs in Go.
func Tanh(y, x []float32) {
	n := len(x)
	if n == 0 {
		return
	}
	y = y[:n]
	if !HasAVX2FMA {
		for i, v := range x {
			y[i] = tanhScalar(v)
		}
		return
	}
	n8 := n &^ 7
	if n8 > 0 {
		tanh8(&y[0], &x[0], n8)
	}
	if n8 < n {
		var t [8]float32
		copy(t[:], x[n8:])
		tanh8(&t[0], &t[0], 8)
		copy(y[n8:], t[:n-n8])
	}
}

// tanhScalar is Tanh's formula in Go, for CPUs without the kernel.
func tanhScalar(x float32) float32 {
	if x > 9 {
		x = 9
	} else if x < -9 {
		x = -9
	}
	x2 := x * x
	p := tanhAlpha[6]
	for i := 5; i >= 0; i-- {
		p = p*x2 + tanhAlpha[i]
	}
	q := tanhBeta[3]
	for i := 2; i >= 0; i-- {
		q = q*x2 + tanhBeta[i]
	}
	return x * p / q
}

// Sigmoid writes σ(x) = 1/(1 + e^−x) to y (y may be x) as ½ + ½·tanh(x/2),
// through Tanh: its absolute error is below 2e-7, and its relative error
// grows where σ is tiny (σ(−10) ≈ 4.5e-5 is good to about 1e-3).
func Sigmoid(y, x []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = 0.5 * v
	}
	Tanh(y, y)
	for i, t := range y {
		y[i] = 0.5*t + 0.5
	}
}
