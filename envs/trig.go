package envs

import "math"

// Gymnasium's physics calls the C library's sin and cos, which are correctly
// rounded for practically every argument; Go's math.Sin and math.Cos are
// within about an ulp but differ from them in a few percent of cases. Over a
// 500-step CartPole episode those last-bit differences grow past 1e-9, so the
// classic-control envs use sinCos below: a Taylor series in double-double
// arithmetic, rounded once at the end, which agrees with a correctly rounded
// result except in vanishingly rare ties.

// dd is an unevaluated sum hi + lo of two float64s (double-double).
type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func twoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

func (a dd) add(b dd) dd {
	s := twoSum(a.hi, b.hi)
	return quickTwoSum(s.hi, s.lo+a.lo+b.lo)
}

func (a dd) neg() dd { return dd{-a.hi, -a.lo} }

func (a dd) mul(b dd) dd {
	p := twoProd(a.hi, b.hi)
	return quickTwoSum(p.hi, p.lo+a.hi*b.lo+a.lo*b.hi)
}

func (a dd) divFloat(b float64) dd {
	q1 := a.hi / b
	r := a.add(twoProd(q1, b).neg())
	return quickTwoSum(q1, r.hi/b)
}

// π/2 split into three float64s whose sum carries about 160 bits.
const (
	halfPi1 = 1.5707963267948966
	halfPi2 = 6.123233995736766e-17
	halfPi3 = -1.4973849048591698e-33
)

// sinCos returns sin(x) and cos(x), correctly rounded in all but rare cases
// for |x| < 2^20 (math.Sincos beyond).
func sinCos(x float64) (sin, cos float64) {
	if !(math.Abs(x) < 1<<20) {
		return math.Sincos(x)
	}
	k := math.Round(x / halfPi1)
	r := dd{x, 0}
	if k != 0 {
		r = r.add(twoProd(k, halfPi1).neg()).add(twoProd(k, halfPi2).neg()).add(dd{-k * halfPi3, 0})
	}
	s, c := taylorSinCos(r)
	switch int64(k) & 3 {
	case 0:
		return s, c
	case 1:
		return c, -s
	case 2:
		return -s, -c
	default:
		return -c, s
	}
}

// invFact[n] is 1/n! in double-double, for the series below.
var invFact = func() (f [23]dd) {
	f[0] = dd{1, 0}
	for n := 1; n < len(f); n++ {
		f[n] = f[n-1].divFloat(float64(n))
	}
	return f
}()

// taylorSinCos evaluates the sine and cosine series of r (|r| <= π/4) by
// Horner's rule in r². The terms up to r⁷ (sine) and r⁶ (cosine) are summed
// in double-double; the rest, below 3e-5 of the result, need only float64.
// Stopping after r²¹ and r²⁰ leaves an error under 1e-20 of an ulp-sized
// 1e-16, so the final rounding is the correct one.
func taylorSinCos(r dd) (float64, float64) {
	r2 := r.mul(r)
	x := r2.hi
	// Tails in float64: sine from r⁹/9!, cosine from r⁸/8!, alternating in
	// sign, the first positive.
	sinTail, cosTail := 0.0, 0.0
	for n := 21; n >= 9; n -= 2 {
		sign := 1.0
		if (n-9)%4 != 0 {
			sign = -1
		}
		sinTail = sign*invFact[n].hi + x*sinTail
		cosTail = sign*invFact[n-1].hi + x*cosTail
	}
	sinAcc, cosAcc := dd{sinTail, 0}, dd{cosTail, 0}
	for k := 3; k >= 0; k-- {
		sign := 1.0
		if k%2 == 1 {
			sign = -1
		}
		s, c := invFact[2*k+1], invFact[2*k]
		sinAcc = r2.mul(sinAcc).add(dd{sign * s.hi, sign * s.lo})
		cosAcc = r2.mul(cosAcc).add(dd{sign * c.hi, sign * c.lo})
	}
	sin := r.mul(sinAcc)
	return sin.hi + sin.lo, cosAcc.hi + cosAcc.lo
}

func accurateSin(x float64) float64 { s, _ := sinCos(x); return s }
func accurateCos(x float64) float64 { _, c := sinCos(x); return c }
