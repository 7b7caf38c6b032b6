package envs

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestSinCosWithinHalfULP compares sinCos with values computed to 200 bits
// by big.Float series (slow but plainly correct) and requires the result to
// be the correctly rounded one, across the ranges the envs use.
func TestSinCosWithinHalfULP(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	var xs []float64
	for range 300 {
		xs = append(xs, (rng.Float64()-0.5)*0.5)       // CartPole angles
		xs = append(xs, (rng.Float64()-0.5)*8*math.Pi) // Acrobot, Pendulum
	}
	xs = append(xs, 0, 1e-300, -math.Pi, math.Pi/2, 3*math.Pi/4, 100)
	for _, x := range xs {
		s, c := sinCos(x)
		ws, wc := bigSinCos(x)
		if s != ws || c != wc {
			t.Errorf("sinCos(%v) = %v, %v; correctly rounded %v, %v", x, s, c, ws, wc)
		}
	}
	if s, c := sinCos(math.Inf(1)); !math.IsNaN(s) || !math.IsNaN(c) {
		t.Errorf("sinCos(Inf) = %v, %v, want NaN", s, c)
	}
}

// bigSinCos reduces x modulo 2π with a 200-bit π and sums the Taylor series.
func bigSinCos(x float64) (float64, float64) {
	const prec = 200
	pi, _ := new(big.Float).SetPrec(prec).SetString("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862803482534211706798")
	twoPi := new(big.Float).SetPrec(prec).Mul(pi, big.NewFloat(2))
	r := new(big.Float).SetPrec(prec).SetFloat64(x)
	q := new(big.Float).SetPrec(prec).Quo(r, twoPi)
	k, _ := q.Int(nil)
	r.Sub(r, new(big.Float).SetPrec(prec).Mul(new(big.Float).SetInt(k), twoPi))
	r2 := new(big.Float).SetPrec(prec).Mul(r, r)
	sin := new(big.Float).SetPrec(prec).Set(r)
	cos := new(big.Float).SetPrec(prec).SetFloat64(1)
	st := new(big.Float).SetPrec(prec).Set(r)
	ct := new(big.Float).SetPrec(prec).SetFloat64(1)
	for n := 1; n < 80; n++ {
		ct.Mul(ct, r2).Quo(ct, big.NewFloat(float64((2*n-1)*(2*n)))).Neg(ct)
		st.Mul(st, r2).Quo(st, big.NewFloat(float64((2*n)*(2*n+1)))).Neg(st)
		cos.Add(cos, ct)
		sin.Add(sin, st)
	}
	s, _ := sin.Float64()
	c, _ := cos.Float64()
	return s, c
}

func BenchmarkSinCos(b *testing.B) {
	x := 0.1
	for b.Loop() {
		s, c := sinCos(x)
		x += (s + c) * 1e-9
	}
}
