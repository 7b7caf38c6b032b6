package netconf

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	G "gorgonia.org/gorgonia"
)

// denseSpec is an MLP network of CartPole-like size with the given encoder and head layers.
func denseSpec(act Activation, norm bool, enc, head []int) Spec {
	s := Spec{Encoder: EncoderMLP,
		MLP:    &MLP{Hidden: enc, Activation: act, LayerNorm: norm, MinLayers: 0, MaxLayers: 3, MinNodes: 1, MaxNodes: 256},
		Latent: Latent{Size: 7, Min: 1, Max: 64},
		Head:   MLP{Hidden: head, Activation: act, LayerNorm: norm, MinLayers: 0, MaxLayers: 3, MinNodes: 1, MaxNodes: 256},
		Input:  []int{5}, Output: 3, OutputGain: 1}
	return s
}

type denseCase struct {
	name string
	spec Spec
	rows int
}

func denseCases() []denseCase {
	var cases []denseCase
	for _, a := range Activations() {
		for _, norm := range []bool{false, true} {
			cases = append(cases, denseCase{fmt.Sprintf("%s/ln=%v/b64", a, norm), denseSpec(a, norm, []int{9, 6}, []int{8}), 64})
		}
	}
	cases = append(cases,
		denseCase{"ReLU/empty-head/b1", denseSpec(ReLU, false, []int{9}, nil), 1},
		denseCase{"Tanh/ln/empty-head/b64", denseSpec(Tanh, true, []int{9, 6}, nil), 64},
		denseCase{"GELU/empty-encoder/b3", denseSpec(GELU, false, nil, []int{4, 5}), 3},
		denseCase{"ELU/ln/b1", denseSpec(ELU, true, []int{9, 6}, []int{8}), 1},
		// Wider than gemm's 64×128 tiles, so the tiling is exercised.
		denseCase{"ReLU/wide/b130", denseSpec(ReLU, false, []int{70, 129}, []int{66}), 130},
		denseCase{"ReLU/wide/b20", denseSpec(ReLU, false, []int{150, 70}, []int{66}), 20},
	)
	return cases
}

// graphReference builds s over p with gorgonia, runs loss = sum(y·R) and returns y and every
// parameter gradient in layout order.
func graphReference(t *testing.T, s Spec, p Params, x, r []float32, rows int) ([]float32, [][]float64) {
	t.Helper()
	g := G.NewGraph()
	xn := NewInput(g, "x", rows, s.Input[0])
	copy(Data(xn), x)
	n, err := Build(g, s, p, xn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rn := NewInput(g, "R", rows, s.Output)
	copy(Data(rn), r)
	runWithGrads(t, g, weightedSum(t, n.Out, rn), n.Learnables())
	grads := make([][]float64, len(n.Params))
	for i, pn := range n.Params {
		grads[i] = gradOf(t, pn.Node)
	}
	return append([]float32(nil), Data(n.Out)...), grads
}

func toF64(x []float32) []float64 {
	o := make([]float64, len(x))
	for i, v := range x {
		o[i] = float64(v)
	}
	return o
}

// TestDenseMatchesGraph checks outputs and every parameter gradient of the plain-Go evaluator
// against the gorgonia graph of the same spec and weights, for each activation with and
// without LayerNorm, empty heads and encoders, and batches of 1 to 130 rows.
func TestDenseMatchesGraph(t *testing.T) {
	for _, c := range denseCases() {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(4, 2))
			p, err := Init(c.spec, rng)
			if err != nil {
				t.Fatal(err)
			}
			randomise(p, rng)
			x := randomInput(rng, c.rows*c.spec.Input[0])
			if c.rows > 1 {
				clear(x[:c.spec.Input[0]]) // a zero row: pre-activations equal to the biases
			}
			r := randomInput(rng, c.rows*c.spec.Output)
			wantY, wantG := graphReference(t, c.spec, p, x, r, c.rows)

			d, err := NewDense(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			grad, _ := Zeros(c.spec)
			for pass := range 2 { // the second pass reuses every buffer and accumulates
				y, err := d.Forward(p, x, c.rows)
				if err != nil {
					t.Fatal(err)
				}
				if e := relErr(toF64(y), toF64(wantY), 1e-3); e > 1e-5 {
					t.Errorf("pass %d: output off by %.3g relative", pass, e)
				}
				if err := d.Backward(p, grad, r); err != nil {
					t.Fatal(err)
				}
			}
			for i, g := range grad {
				got := toF64(g.Data)
				for j := range got {
					got[j] /= 2
				}
				if e := relErr(got, wantG[i], 1e-3); e > 1e-5 {
					t.Errorf("gradient of %s off by %.3g relative", g.Name, e)
				}
			}
		})
	}
}

// TestDenseSplitAtLatent runs an actor and a critic head on one encoder through the split
// calls and compares with gorgonia's BuildEncoder + two BuildHead.
func TestDenseSplitAtLatent(t *testing.T) {
	actor := denseSpec(Tanh, true, []int{9, 6}, []int{8})
	critic := actor.Clone()
	critic.Output, critic.Head.Hidden = 1, []int{5}
	rng := rand.New(rand.NewPCG(8, 1))
	pa, _ := Init(actor, rng)
	pcFull, _ := Init(critic, rng)
	randomise(pa, rng)
	randomise(pcFull, rng)
	pc := pcFull.Filter("head.", "out.")
	const rows = 16
	x := randomInput(rng, rows*actor.Input[0])
	ra, rc := randomInput(rng, rows*actor.Output), randomInput(rng, rows)

	g := G.NewGraph()
	xn := NewInput(g, "x", rows, actor.Input[0])
	copy(Data(xn), x)
	enc, err := BuildEncoder(g, actor, pa, xn, Options{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	outA, headA, err := BuildHead(g, actor, pa, enc.Latent, Options{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	outC, headC, err := BuildHead(g, critic, pc, enc.Latent, Options{Name: "c"})
	if err != nil {
		t.Fatal(err)
	}
	ran, rcn := NewInput(g, "ra", rows, actor.Output), NewInput(g, "rc", rows, 1)
	copy(Data(ran), ra)
	copy(Data(rcn), rc)
	loss, err := G.Add(weightedSum(t, outA, ran), weightedSum(t, outC, rcn))
	if err != nil {
		t.Fatal(err)
	}
	params := append(append(append([]ParamNode(nil), enc.Params...), headA...), headC...)
	wrt := make(G.Nodes, len(params))
	for i, pn := range params {
		wrt[i] = pn.Node
	}
	runWithGrads(t, g, loss, wrt)

	da, _ := NewDense(actor)
	dc, _ := NewDense(critic)
	ga, _ := Zeros(actor)
	gcFull, _ := Zeros(critic)
	gc := gcFull.Filter("head.", "out.")
	lat, err := da.ForwardEncoder(pa, x, rows)
	if err != nil {
		t.Fatal(err)
	}
	ya, err := da.ForwardHead(pa, lat, rows)
	if err != nil {
		t.Fatal(err)
	}
	yc, err := dc.ForwardHead(pc, lat, rows)
	if err != nil {
		t.Fatal(err)
	}
	if e := relErr(toF64(ya), toF64(Data(outA)), 1e-3); e > 1e-5 {
		t.Errorf("actor output off by %.3g", e)
	}
	if e := relErr(toF64(yc), toF64(Data(outC)), 1e-3); e > 1e-5 {
		t.Errorf("critic output off by %.3g", e)
	}
	dla, err := da.BackwardHead(pa, ga, ra)
	if err != nil {
		t.Fatal(err)
	}
	dLat := append([]float32(nil), dla...)
	dlc, err := dc.BackwardHead(pc, gc, rc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range dLat {
		dLat[i] += dlc[i]
	}
	if err := da.BackwardEncoder(pa, ga, dLat); err != nil {
		t.Fatal(err)
	}
	got := map[string][]float32{}
	for _, t := range ga {
		got["a/"+t.Name] = t.Data
	}
	for _, t := range gc {
		got["c/"+t.Name] = t.Data
	}
	check := func(prefix string, ps []ParamNode) {
		for _, pn := range ps {
			if e := relErr(toF64(got[prefix+pn.Name]), gradOf(t, pn.Node), 1e-3); e > 1e-5 {
				t.Errorf("gradient of %s%s off by %.3g relative", prefix, pn.Name, e)
			}
		}
	}
	check("a/", enc.Params)
	check("a/", headA)
	check("c/", headC)
}

// TestDenseRowsDoNotDependOnBatch checks that each row's output is bit for bit the same
// whether it is evaluated alone or in a batch.
func TestDenseRowsDoNotDependOnBatch(t *testing.T) {
	s := denseSpec(ReLU, false, []int{64, 64}, []int{64})
	s.MLP.MaxNodes, s.Head.MaxNodes = 512, 512
	rng := rand.New(rand.NewPCG(3, 3))
	p, _ := Init(s, rng)
	randomise(p, rng)
	const rows = 70
	x := randomInput(rng, rows*s.Input[0])
	d, _ := NewDense(s)
	all, err := d.Forward(p, x, rows)
	if err != nil {
		t.Fatal(err)
	}
	all = append([]float32(nil), all...)
	one, _ := NewDense(s)
	for r := range rows {
		y, err := one.Forward(p, x[r*s.Input[0]:(r+1)*s.Input[0]], 1)
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
	s := denseSpec(GELU, true, []int{64, 64}, []int{64})
	rng := rand.New(rand.NewPCG(5, 5))
	p, _ := Init(s, rng)
	grad, _ := Zeros(s)
	x := randomInput(rng, 64*s.Input[0])
	r := randomInput(rng, 64*s.Output)
	d, _ := NewDense(s)
	run := func() {
		if _, err := d.Forward(p, x, 64); err != nil {
			t.Fatal(err)
		}
		if err := d.Backward(p, grad, r); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Forward(p, x[:8*s.Input[0]], 8); err != nil { // acting batch between updates
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
	s := denseSpec(ReLU, false, []int{9}, []int{8})
	p, _ := Init(s, rand.New(rand.NewPCG(1, 1)))
	d, _ := NewDense(s)
	grad, _ := Zeros(s)
	if err := d.Backward(p, grad, make([]float32, 3)); err == nil {
		t.Error("backward before forward: no error")
	}
	x := make([]float32, 2*5)
	if _, err := d.Forward(p.Filter("head.", "out."), x, 2); err == nil {
		t.Error("params without the encoder: no error")
	}
	bad := p.Clone()
	bad.Tensor("latent.bias").Data = make([]float32, 3)
	if _, err := d.Forward(bad, x, 2); err == nil {
		t.Error("resized latent.bias: no error")
	}
	if _, err := d.Forward(p, x[:7], 2); err == nil {
		t.Error("short input: no error")
	}
	cnn := smallSpec(EncoderCNN, ReLU, false)
	if _, err := NewDense(cnn); err == nil {
		t.Error("cnn spec: no error")
	}
}

// BenchmarkDense times the plain-Go evaluator on the MLP case of BenchmarkForwardBackward and
// BenchmarkActingForward (compare with those for the gorgonia graph).
func BenchmarkDense(b *testing.B) {
	c := benchCases()[0]
	p, err := Init(c.spec, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		b.Fatal(err)
	}
	grad, _ := Zeros(c.spec)
	rng := rand.New(rand.NewPCG(1, 3))
	x := randomInput(rng, c.rows*c.spec.Input[0])
	dy := randomInput(rng, c.rows*c.spec.Output)
	d, _ := NewDense(c.spec)
	b.Run("forward-backward/"+c.name, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.Forward(p, x, c.rows); err != nil {
				b.Fatal(err)
			}
			if err := d.Backward(p, grad, dy); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("acting-forward/"+c.name, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.Forward(p, x[:c.actRows*c.spec.Input[0]], c.actRows); err != nil {
				b.Fatal(err)
			}
		}
	})
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
					vecMatAdd(c[r*n:(r+1)*n], a[r*k:(r+1)*k], bm, n)
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
	activate(ReLU, u, y)
	activateGrad(ReLU, u, y, dy, du)
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
		activate(ReLU, u, y)
		if y[3] == y[3] || y[n-1] == y[n-1] {
			t.Errorf("n %d: relu of NaN gives %v and %v, want NaN", n, y[3], y[n-1])
		}
	}
}
