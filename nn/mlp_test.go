package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/evolverl/evolve/internal/simd"
	"github.com/evolverl/evolve/netconf"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// denseSpec is an MLP network of CartPole-like size with the given encoder and head layers.
func denseSpec(act netconf.Activation, norm bool, enc, head []int) netconf.Spec {
	s := netconf.Spec{Encoder: netconf.EncoderMLP,
		MLP:    &netconf.MLP{Hidden: enc, Activation: act, LayerNorm: norm, MinLayers: 0, MaxLayers: 3, MinNodes: 1, MaxNodes: 256},
		Latent: netconf.Latent{Size: 7, Min: 1, Max: 64},
		Head:   netconf.MLP{Hidden: head, Activation: act, LayerNorm: norm, MinLayers: 0, MaxLayers: 3, MinNodes: 1, MaxNodes: 256},
		Input:  []int{5}, Output: 3, OutputGain: 1}
	return s
}

// TestDenseRowsDoNotDependOnBatch checks that each row's output is bit for bit the same
// whether it is evaluated alone or in a batch.
func TestDenseRowsDoNotDependOnBatch(t *testing.T) {
	s := denseSpec(netconf.ReLU, false, []int{64, 64}, []int{64})
	s.MLP.MaxNodes, s.Head.MaxNodes = 512, 512
	rng := rand.New(rand.NewPCG(3, 3))
	p, _ := netconf.Init(s, rng)
	randomise(p, rng)
	const rows = 70
	x := randomInput(rng, rows*s.Input[0])
	d, _ := New(s)
	all, err := d.Forward(p, x, rows, nil)
	if err != nil {
		t.Fatal(err)
	}
	all = append([]float32(nil), all...)
	one, _ := New(s)
	for r := range rows {
		y, err := one.Forward(p, x[r*s.Input[0]:(r+1)*s.Input[0]], 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range y {
			if v != all[r*s.Output+j] {
				t.Fatalf("row %d output %d: %v alone, %v in the batch", r, j, v, all[r*s.Output+j])
			}
		}
	}
}

// TestDenseNoAllocations checks that forward and backward allocate nothing once warm.
func TestDenseNoAllocations(t *testing.T) {
	s := denseSpec(netconf.GELU, true, []int{64, 64}, []int{64})
	rng := rand.New(rand.NewPCG(5, 5))
	p, _ := netconf.Init(s, rng)
	grad, _ := netconf.Zeros(s)
	x := randomInput(rng, 64*s.Input[0])
	r := randomInput(rng, 64*s.Output)
	d, _ := New(s)
	run := func() {
		if _, err := d.Forward(p, x, 64, nil); err != nil {
			t.Fatal(err)
		}
		if err := d.Backward(p, grad, r); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Forward(p, x[:8*s.Input[0]], 8, nil); err != nil { // acting batch between updates
			t.Fatal(err)
		}
	}
	run()
	if n := testing.AllocsPerRun(20, run); n != 0 {
		t.Fatalf("%v allocations per forward + backward, want 0", n)
	}
}

// TestDenseRejectsBadParams checks the errors for a missing tensor, a resized tensor and a
// backward pass without a forward pass.
func TestDenseRejectsBadParams(t *testing.T) {
	s := denseSpec(netconf.ReLU, false, []int{9}, []int{8})
	p, _ := netconf.Init(s, rand.New(rand.NewPCG(1, 1)))
	d, _ := New(s)
	grad, _ := netconf.Zeros(s)
	if err := d.Backward(p, grad, make([]float32, 3)); err == nil {
		t.Error("backward before forward: no error")
	}
	x := make([]float32, 2*5)
	if _, err := d.Forward(p.Filter("head.", "out."), x, 2, nil); err == nil {
		t.Error("params without the encoder: no error")
	}
	bad := p.Clone()
	bad.Tensor("latent.bias").Data = make([]float32, 3)
	if _, err := d.Forward(bad, x, 2, nil); err == nil {
		t.Error("resized latent.bias: no error")
	}
	if _, err := d.Forward(p, x[:7], 2, nil); err == nil {
		t.Error("short input: no error")
	}
}

// BenchmarkMatMul compares the products Dense uses (vecMatAdd row by row)
// with gonum's Sgemm and a plain Go loop, at the sizes of the default
// network: [rows, k]·[k, n].
func BenchmarkMatMul(b *testing.B) {
	impl := blas32.Implementation()
	for _, sz := range [][3]int{{8, 64, 64}, {64, 64, 64}, {64, 32, 64}, {64, 64, 4}, {64, 2, 64}} {
		m, n, k := sz[0], sz[1], sz[2]
		rng := rand.New(rand.NewPCG(1, 1))
		a, bm, c := randomInput(rng, m*k), randomInput(rng, k*n), make([]float32, m*n)
		b.Run(fmt.Sprintf("vecMatAdd/%dx%dx%d", m, n, k), func(b *testing.B) {
			for b.Loop() {
				for r := range m {
					simd.VecMatAdd(c[r*n:(r+1)*n], a[r*k:(r+1)*k], bm, n)
				}
			}
		})
		b.Run(fmt.Sprintf("gonum/%dx%dx%d", m, n, k), func(b *testing.B) {
			for b.Loop() {
				impl.Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, k, bm, n, 1, c, n)
			}
		})
		b.Run(fmt.Sprintf("loop/%dx%dx%d", m, n, k), func(b *testing.B) {
			for b.Loop() {
				for i := range m {
					cr := c[i*n : (i+1)*n]
					for l, av := range a[i*k : (i+1)*k] {
						br := bm[l*n : (l+1)*n]
						for j := range cr {
							cr[j] += av * br[j]
						}
					}
				}
			}
		})
	}
}

func BenchmarkTranspose(b *testing.B) {
	m := randomInput(rand.New(rand.NewPCG(1, 1)), 64*64)
	var dst []float32
	for b.Loop() {
		dst = transpose(dst, m, 64, 64)
	}
}

// TestReLUKernelsAtZero checks ReLU and its derivative, in the vector
// kernel and in the scalar tail, against the graph's definition y = x·[x ≥ 0]
// and dy·[x ≥ 0], at ±0 and on either side of it.
func TestReLUKernelsAtZero(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	u := []float32{0, negZero, -1e-30, 1e-30, -2, 3, 0.5, -0.5, 1, negZero, 0, -7, 8, 1e-45, -1e-45, 2, -3, 0, negZero}
	dy := make([]float32, len(u))
	for i := range dy {
		dy[i] = float32(i + 1)
	}
	y, du := make([]float32, len(u)), make([]float32, len(u))
	activate(netconf.ReLU, u, y)
	activateGrad(netconf.ReLU, u, y, dy, du)
	for i, v := range u {
		wantY, wantD := float32(0), float32(0)
		if v >= 0 {
			wantY, wantD = v, dy[i]
		}
		if y[i] != wantY || du[i] != wantD {
			t.Errorf("u[%d] = %g: relu %g, derivative·dy %g; want %g, %g", i, v, y[i], du[i], wantY, wantD)
		}
	}
	// A NaN passes through, in the kernel (index 3 of 8) and in the tail,
	// so a broken weight reaches the loss instead of being silently zeroed.
	nan := float32(math.NaN())
	for _, n := range []int{8, 11} {
		u := make([]float32, n)
		u[3], u[n-1] = nan, -nan
		y := make([]float32, n)
		activate(netconf.ReLU, u, y)
		if y[3] == y[3] || y[n-1] == y[n-1] {
			t.Errorf("n %d: relu of NaN gives %v and %v, want NaN", n, y[3], y[n-1])
		}
	}
}

// randomise gives every tensor (biases and norms included) random values, so no gradient is
// trivially zero.
func randomise(p netconf.Params, rng *rand.Rand) {
	for _, t := range p {
		for i := range t.Data {
			t.Data[i] = float32(rng.NormFloat64() * 0.7)
		}
	}
}
