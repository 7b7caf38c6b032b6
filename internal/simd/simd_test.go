package simd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTanhAccuracy compares Tanh with math.Tanh over [−12, 12] densely and
// near 0, and checks NaN and the infinities.
func TestTanhAccuracy(t *testing.T) {
	var x []float32
	for i := -1_200_000; i <= 1_200_000; i++ {
		x = append(x, float32(i)*1e-5, float32(i)*1e-11)
	}
	x = append(x, float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)))
	y := make([]float32, len(x))
	Tanh(y, x)
	worst, at := 0.0, float32(0)
	for i, v := range x {
		want := math.Tanh(float64(v))
		got := float64(y[i])
		// 3 ulps of float32 relative to the result, or absolute near 0.
		e := math.Abs(got-want) / max(math.Abs(want), 1e-30)
		if e > worst {
			worst, at = e, v
		}
	}
	if worst > 3.0/(1<<23) {
		t.Errorf("largest relative error %.3g at %v: more than 3 ulps", worst, at)
	}
	nan := []float32{float32(math.NaN()), 1, 2, 3, 4, 5, 6, 7, float32(math.NaN())}
	Tanh(nan, nan)
	if !math.IsNaN(float64(nan[0])) || !math.IsNaN(float64(nan[8])) {
		t.Errorf("tanh(NaN) = %v, %v: want NaN", nan[0], nan[8])
	}
}

// TestTanhDoesNotDependOnPosition: an element's tanh is the same bits at
// any offset and in any slice length, tail included.
func TestTanhDoesNotDependOnPosition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 37)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * 3)
	}
	ref := make([]float32, len(x))
	Tanh(ref, x)
	for off := range 9 {
		for n := 1; off+n <= len(x); n++ {
			y := make([]float32, n)
			Tanh(y, x[off:off+n])
			for i := range y {
				if math.Float32bits(y[i]) != math.Float32bits(ref[off+i]) {
					t.Fatalf("offset %d length %d: element %d differs", off, n, i)
				}
			}
		}
	}
	if HasAVX2FMA {
		for i, v := range x {
			if s := tanhScalar(v); math.Abs(float64(s-ref[i])) > 4e-7 {
				t.Errorf("the Go formula gives %v, the kernel %v for %v", s, ref[i], v)
			}
		}
	}
}

// TestVecMatAddMatchesNaive checks the product kernels against plain loops
// for widths that exercise every block size and the Go tail.
func TestVecMatAddMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 7, 8, 9, 31, 32, 40, 64, 65, 100, 129} {
		for _, k := range []int{1, 3, 17} {
			x := make([]float32, k*2)
			b := make([]float32, k*n)
			y := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			for i := range b {
				b[i] = float32(rng.NormFloat64())
			}
			want := make([]float64, n)
			for j := range n {
				for l := range k {
					want[j] += float64(x[2*l]) * float64(b[l*n+j])
				}
			}
			VecMatAddInc(y, x, 2, k, b, n)
			for j := range n {
				if math.Abs(float64(y[j])-want[j]) > 1e-5*(1+math.Abs(want[j])) {
					t.Fatalf("n %d k %d: y[%d] = %v, want %v", n, k, j, y[j], want[j])
				}
			}
			if d := Dot(x[:k], b[:k]); math.Abs(float64(d)-dot64(x[:k], b[:k])) > 1e-5*(1+math.Abs(dot64(x[:k], b[:k]))) {
				t.Fatalf("dot of %d: %v, want %v", k, d, dot64(x[:k], b[:k]))
			}
		}
	}
}

func dot64(x, y []float32) float64 {
	s := 0.0
	for i := range x {
		s += float64(x[i]) * float64(y[i])
	}
	return s
}

func BenchmarkTanh(b *testing.B) {
	x := make([]float32, 4096)
	for i := range x {
		x[i] = float32(i-2048) / 300
	}
	y := make([]float32, len(x))
	b.Run("simd", func(b *testing.B) {
		for b.Loop() {
			Tanh(y, x)
		}
	})
	b.Run("math.Tanh", func(b *testing.B) {
		for b.Loop() {
			for i, v := range x {
				y[i] = float32(math.Tanh(float64(v)))
			}
		}
	})
}

// TestVecMatTailBits holds the columns past the last block of 8 to the bits
// of a multiply, a rounding and an add per term, in order — what the Go loop
// computes and what results were made with before the masked kernel — and
// checks that the lanes past the row are neither read into the result nor
// written: the row ends at its array's end, beside a guard column.
func TestVecMatTailBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 5, 7, 9, 14, 15, 23, 70, 74, 222} {
		for _, k := range []int{0, 1, 2, 33, 300} {
			const incx, guard = 3, float32(1234.5)
			ldb := n + 1 // one guard column after each row of B
			x := make([]float32, max(1, k*incx))
			b := make([]float32, max(1, k*ldb))
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			for i := range b {
				b[i] = float32(rng.NormFloat64())
				if i%ldb == n {
					b[i] = float32(math.NaN())
				}
			}
			buf := make([]float32, n+1)
			for i := range buf {
				buf[i] = float32(rng.NormFloat64())
			}
			buf[n] = guard
			y := buf[:n:n]
			want := append([]float32(nil), y...)
			VecMatAddInc(y, x, incx, k, b, ldb)
			for j := n &^ 7; j < n; j++ {
				for l := range k {
					want[j] += float32(x[l*incx] * b[l*ldb+j])
				}
				if math.Float32bits(y[j]) != math.Float32bits(want[j]) {
					t.Fatalf("n %d k %d: y[%d] = %v, want the bits of %v", n, k, j, y[j], want[j])
				}
			}
			if buf[n] != guard {
				t.Fatalf("n %d k %d: the lane past the row was written: %v", n, k, buf[n])
			}
		}
	}
}
