package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// matMulCase is one product C += A·B stored with padding: C [m, ldc] with
// ldc > n, B [k, ldb], and A row-major [m, lda] (ai = lda, al = 1) or
// transposed, stored [k, lda] (ai = 1, al = lda), with lda beyond the
// matrix so that the strides are not the shape.
type matMulCase struct {
	m, n, k      int
	transposed   bool
	ldc, ldb     int
	ai, al       int
	a, b, c0     []float32
	cRef, cTiled []float32
}

func newMatMulCase(rng *rand.Rand, m, n, k int, transposed bool) *matMulCase {
	t := &matMulCase{m: m, n: n, k: k, transposed: transposed, ldc: n + 3, ldb: n + 5}
	var size int
	if transposed {
		lda := m + 2
		t.ai, t.al, size = 1, lda, k*lda
	} else {
		lda := k + 2
		t.ai, t.al, size = lda, 1, m*lda
	}
	// Values of mixed magnitudes, so that a different order of summation or
	// a fused product instead of an unfused one shows in the last bits.
	randn := func(s []float32) {
		for i := range s {
			s[i] = float32(rng.NormFloat64() * math.Exp(rng.NormFloat64()))
		}
	}
	t.a = make([]float32, size)
	t.b = make([]float32, k*t.ldb)
	t.c0 = make([]float32, m*t.ldc)
	randn(t.a)
	randn(t.b)
	randn(t.c0)
	t.cRef = append([]float32(nil), t.c0...)
	t.cTiled = append([]float32(nil), t.c0...)
	return t
}

// rows is the reference: one VecMatAddInc per row of C.
func (t *matMulCase) rows(c []float32) {
	for i := range t.m {
		VecMatAddInc(c[i*t.ldc:i*t.ldc+t.n], t.a[i*t.ai:], t.al, t.k, t.b, t.ldb)
	}
}

func (t *matMulCase) tiled(c []float32) {
	MatMulAdd(c, t.ldc, t.a, t.ai, t.al, t.b, t.ldb, t.m, t.n, t.k)
}

func (t *matMulCase) String() string {
	layout := "A row-major"
	if t.transposed {
		layout = "A transposed"
	}
	return fmt.Sprintf("%d×%d·%d×%d, %s", t.m, t.k, t.k, t.n, layout)
}

// TestMatMulAddIsRowByRow: MatMulAdd gives every element of C, padding
// included, the bits of the row-by-row VecMatAddInc, for shapes that cover
// every tile (6, 4 and 2 rows; 16 and 8 columns), an odd last row, the Go
// tail of n%8 columns, several passes over k, and both layouts of A.
func TestMatMulAddIsRowByRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	sizes := []int{1, 3, 4, 5, 7, 8, 15, 16, 17, 23, 24, 25, 63, 64, 65, 129, 1200}
	for _, m := range sizes {
		for _, n := range sizes {
			for _, k := range sizes {
				if m*n*k > 2_000_000 {
					continue
				}
				for _, transposed := range []bool{false, true} {
					checkMatMulCase(t, newMatMulCase(rng, m, n, k, transposed))
				}
			}
		}
	}
	// The networks' shapes (see BenchmarkMatMulAdd).
	for _, s := range matMulShapes {
		checkMatMulCase(t, newMatMulCase(rng, s.m, s.n, s.k, s.transposed))
	}
}

func checkMatMulCase(t *testing.T, c *matMulCase) {
	t.Helper()
	c.rows(c.cRef)
	c.tiled(c.cTiled)
	for i, v := range c.cTiled {
		if math.Float32bits(v) != math.Float32bits(c.cRef[i]) {
			t.Fatalf("%v: C[%d, %d] = %v, row by row %v (was %v)", c, i/c.ldc, i%c.ldc, v, c.cRef[i], c.c0[i])
		}
	}
}

// TestMatMulAddEmpty: an empty product changes nothing and reads nothing.
func TestMatMulAddEmpty(t *testing.T) {
	c := []float32{1, 2}
	MatMulAdd(c, 2, nil, 0, 0, nil, 0, 1, 2, 0)
	MatMulAdd(c, 2, nil, 0, 0, nil, 0, 0, 2, 5)
	MatMulAdd(nil, 0, nil, 0, 0, nil, 0, 3, 0, 5)
	if c[0] != 1 || c[1] != 2 {
		t.Errorf("C = %v, want [1 2]", c)
	}
}

// matMulShapes are the products of the benchmarked agents: the CNN's latent
// layer (forward and weight gradient), an LSTM's four gates, an MLP layer,
// a policy head of 2 actions (forward and weight gradient) and a GRU of 74
// units at one step of 8 envs (its gates forward, their gradient back to
// h): these last have the n%8 columns of the masked tail kernels.
var matMulShapes = []struct {
	name       string
	m, n, k    int
	transposed bool
}{
	{"cnn-latent/256×1200·1200×128", 256, 128, 1200, false},
	{"cnn-latent-dW/(256×1200)ᵀ·256×128", 1200, 128, 256, true},
	{"lstm-gates/256×64·64×256", 256, 256, 64, false},
	{"mlp/256×64·64×64", 256, 64, 64, false},
	{"head/256×64·64×2", 256, 2, 64, false},
	{"head-dW/(256×64)ᵀ·256×2", 64, 2, 256, true},
	{"gru74-gates/8×74·74×222", 8, 222, 74, false},
	{"gru74-dh/8×222·222×74", 8, 74, 222, false},
}

// BenchmarkMatMulAdd compares MatMulAdd with the row-by-row VecMatAddInc
// it replaces, in GFLOP/s (2·m·n·k flops per product).
func BenchmarkMatMulAdd(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, s := range matMulShapes {
		c := newMatMulCase(rng, s.m, s.n, s.k, s.transposed)
		flops := 2 * float64(s.m*s.n*s.k)
		for _, v := range []struct {
			name string
			run  func([]float32)
		}{{"MatMulAdd", c.tiled}, {"rows", c.rows}} {
			b.Run(s.name+"/"+v.name, func(b *testing.B) {
				for b.Loop() {
					v.run(c.cTiled)
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
