package gorgonia

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/evolverl/evolve/netconf"
)

// forward runs s with weights p on rows input rows (Steps·Batch for an LSTM) and returns a
// copy of the output. starts may be nil.
func forward(t testing.TB, s netconf.Spec, p netconf.Params, x []float32, rows, steps int, starts []float32) []float32 {
	t.Helper()
	g := G.NewGraph()
	xn := NewInput(g, "x", append([]int{rows}, s.Input...)...)
	copy(Data(xn), x)
	n, err := Build(g, s, p, xn, Options{Steps: steps})
	if err != nil {
		t.Fatalf("build %s: %v", s, err)
	}
	if n.Windows != nil { // a Transformer reads its windows: from x, without a state
		n.Windows.Fill(x, nil, 0, starts, steps, nil)
	} else if starts != nil {
		copy(Data(n.Recurrent.Starts), starts)
	}
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatalf("run %s: %v", s, err)
	}
	return append([]float32(nil), Data(n.Out)...)
}

func randomInput(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

func maxAbsDiff(a, b []float32) float64 {
	e := 0.0
	for i := range a {
		e = max(e, math.Abs(float64(a[i]-b[i])))
	}
	return e
}

func TestGraphsOfDifferentBatchSizesShareWeights(t *testing.T) {
	for _, kind := range []netconf.EncoderKind{netconf.EncoderMLP, netconf.EncoderCNN, netconf.EncoderLSTM} {
		t.Run(string(kind), func(t *testing.T) {
			s := smallSpec(kind, netconf.Tanh, kind == netconf.EncoderMLP)
			rng := rand.New(rand.NewPCG(5, 6))
			p, err := netconf.Init(s, rng)
			if err != nil {
				t.Fatal(err)
			}
			randomise(p, rng)
			per := shapeSize(s.Input)
			x := randomInput(rng, 5*per)
			build := func(rows int) (*Net, G.VM) {
				g := G.NewGraph()
				xn := NewInput(g, "x", append([]int{rows}, s.Input...)...)
				copy(Data(xn), x[:rows*per])
				n, err := Build(g, s, p, xn, Options{})
				if err != nil {
					t.Fatal(err)
				}
				return n, G.NewTapeMachine(g)
			}
			one, m1 := build(1)
			five, m5 := build(5)
			defer m1.Close()
			defer m5.Close()
			run := func() {
				for _, m := range []G.VM{m1, m5} {
					m.Reset()
					if err := m.RunAll(); err != nil {
						t.Fatal(err)
					}
				}
			}
			run()
			if d := maxAbsDiff(Data(one.Out), Data(five.Out)[:s.Output]); d > 1e-6 {
				t.Fatalf("row 0 differs between batch 1 and batch 5 by %g", d)
			}
			before := append([]float32(nil), Data(five.Out)...)
			// One write to Params is seen by both graphs, without rebuilding them.
			for i := range p.Tensor("out.bias").Data {
				p.Tensor("out.bias").Data[i] += 1
			}
			run()
			for i, v := range Data(five.Out) {
				if math.Abs(float64(v-before[i]-1)) > 1e-5 {
					t.Fatalf("batch-5 output %d moved from %v to %v after out.bias += 1", i, before[i], v)
				}
			}
			if d := maxAbsDiff(Data(one.Out), Data(five.Out)[:s.Output]); d > 1e-6 {
				t.Fatalf("after the write, batch 1 and batch 5 differ by %g", d)
			}
		})
	}
}

func TestLSTMSingleStepsWithCarriedStateEqualUnrolled(t *testing.T) {
	s := smallSpec(netconf.EncoderLSTM, netconf.ReLU, false)
	s.LSTM.Hidden, s.LSTM.Layers = 5, 2
	rng := rand.New(rand.NewPCG(9, 10))
	p, err := netconf.Init(s, rng)
	if err != nil {
		t.Fatal(err)
	}
	randomise(p, rng)
	const steps, batch = 5, 2
	x := randomInput(rng, steps*batch*s.Input[0])
	starts := []float32{0, 0, 0, 1, 1, 0, 0, 0, 0, 1}
	unrolled := forward(t, s, p, x, steps*batch, steps, starts)

	g := G.NewGraph()
	xn := NewInput(g, "x", batch, s.Input[0])
	n, err := Build(g, s, p, xn, Options{Name: "act"})
	if err != nil {
		t.Fatal(err)
	}
	m := G.NewTapeMachine(g)
	defer m.Close()
	r := n.Recurrent
	for step := range steps {
		copy(Data(xn), x[step*batch*s.Input[0]:])
		copy(Data(r.Starts), starts[step*batch:(step+1)*batch])
		m.Reset()
		if err := m.RunAll(); err != nil {
			t.Fatal(err)
		}
		want := unrolled[step*batch*s.Output : (step+1)*batch*s.Output]
		if d := maxAbsDiff(Data(n.Out), want); d > 1e-6 {
			t.Fatalf("step %d: single-step output differs from the unrolled graph by %g", step, d)
		}
		for l := range r.Layers {
			copy(Data(r.H0[l]), r.H[l])
			copy(Data(r.C0[l]), r.C[l])
		}
	}
}

func TestSharedEncoderWithTwoHeads(t *testing.T) {
	actor := smallSpec(netconf.EncoderMLP, netconf.ReLU, false)
	critic := actor.Clone()
	critic.Output, critic.OutputGain = 1, netconf.ValueGain
	rng := rand.New(rand.NewPCG(1, 1))
	pa, err := netconf.Init(actor, rng)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := netconf.Init(critic, rng)
	if err != nil {
		t.Fatal(err)
	}
	pc = pc.Filter("head.", "out.")
	g := G.NewGraph()
	x := NewInput(g, "obs", 4, actor.Input[0])
	copy(Data(x), randomInput(rng, 4*actor.Input[0]))
	enc, err := BuildEncoder(g, actor, pa, x, Options{Name: "actor"})
	if err != nil {
		t.Fatal(err)
	}
	logits, headNodes, err := BuildHead(g, actor, pa, enc.Latent, Options{Name: "actor"})
	if err != nil {
		t.Fatal(err)
	}
	value, valueNodes, err := BuildHead(g, critic, pc, enc.Latent, Options{Name: "critic"})
	if err != nil {
		t.Fatal(err)
	}
	if len(valueNodes) != len(pc) || len(enc.Params)+len(headNodes) != len(pa) {
		t.Fatalf("%d encoder + %d head nodes for %d actor tensors, %d value nodes for %d critic tensors",
			len(enc.Params), len(headNodes), len(pa), len(valueNodes), len(pc))
	}
	l1, _ := G.Sum(logits)
	l2, _ := G.Sum(value)
	loss, _ := G.Add(l1, l2)
	var wrt G.Nodes
	for _, pn := range append(append(append([]ParamNode{}, enc.Params...), headNodes...), valueNodes...) {
		wrt = append(wrt, pn.Node)
	}
	runWithGrads(t, g, loss, wrt)
	if got := value.Shape(); got[0] != 4 || got[1] != 1 {
		t.Fatalf("value shape %v", got)
	}
	for _, pn := range enc.Params {
		if gr := gradOf(t, pn.Node); len(gr) != len(pa.Tensor(pn.Name).Data) {
			t.Fatalf("%s: gradient of %d values for a tensor of %d", pn.Name, len(gr), len(pa.Tensor(pn.Name).Data))
		}
	}
}

func TestBuildRejectsMismatchedInputs(t *testing.T) {
	s := smallSpec(netconf.EncoderMLP, netconf.ReLU, false)
	p, err := netconf.Init(s, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		params netconf.Params
		shape  []int
		opts   Options
		errHas string
	}{
		{"missing tensor", p.Filter("encoder.", "latent.", "head."), []int{2, 3}, Options{}, `param "out.weight": missing`},
		{"wrong tensor shape", func() netconf.Params {
			q := p.Clone()
			q.Tensor("head.0.bias").Shape = []int{5}
			return q
		}(), []int{2, 3}, Options{}, `param "head.0.bias": shape [5]`},
		{"wrong input width", p, []int{2, 4}, Options{}, "shape (2, 4), want (rows, 3)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := G.NewGraph()
			_, err := Build(g, s, c.params, NewInput(g, "x", c.shape...), c.opts)
			if err == nil || !strings.Contains(err.Error(), c.errHas) {
				t.Fatalf("Build error %v, want one containing %q", err, c.errHas)
			}
		})
	}
	ls := smallSpec(netconf.EncoderLSTM, netconf.ReLU, false)
	lp, _ := netconf.Init(ls, rand.New(rand.NewPCG(1, 2)))
	g := G.NewGraph()
	if _, err := Build(g, ls, lp, NewInput(g, "x", 5, 3), Options{Steps: 2}); err == nil || !strings.Contains(err.Error(), "5 rows do not split into 2 steps") {
		t.Fatalf("LSTM with 5 rows over 2 steps: %v", err)
	}
}

func TestActivationsComputeTheirFormulas(t *testing.T) {
	xs := []float64{-3, -1, -0.25, 0, 0.5, 2}
	formulas := map[netconf.Activation]func(float64) float64{
		netconf.ReLU:      func(x float64) float64 { return max(x, 0) },
		netconf.Tanh:      math.Tanh,
		netconf.Sigmoid:   func(x float64) float64 { return 1 / (1 + math.Exp(-x)) },
		netconf.ELU:       func(x float64) float64 { return max(x, 0) + math.Expm1(min(x, 0)) },
		netconf.LeakyReLU: func(x float64) float64 { return max(x, 0) + 0.01*min(x, 0) },
		netconf.Softsign:  func(x float64) float64 { return x / (1 + math.Abs(x)) },
		netconf.GELU: func(x float64) float64 {
			return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
		},
	}
	for _, a := range netconf.Activations() {
		t.Run(string(a), func(t *testing.T) {
			g := G.NewGraph()
			x := NewInput(g, "x", 2, 3)
			for i, v := range xs {
				Data(x)[i] = float32(v)
			}
			b := newBuilder(g, x.Dtype(), nil, Options{})
			y, err := b.act(x, a)
			if err != nil {
				t.Fatal(err)
			}
			m := G.NewTapeMachine(g)
			defer m.Close()
			if err := m.RunAll(); err != nil {
				t.Fatal(err)
			}
			for i, v := range Data(y) {
				if want := formulas[a](xs[i]); math.Abs(float64(v)-want) > 1e-6 {
					t.Errorf("%s(%v) = %v, want %v", a, xs[i], v, want)
				}
			}
		})
	}
}

func TestRunningGraphsNeverWritesParams(t *testing.T) {
	// The tape machine reuses memory between nodes; the weights an optimizer owns must never
	// be part of that.
	for _, kind := range []netconf.EncoderKind{netconf.EncoderMLP, netconf.EncoderCNN, netconf.EncoderLSTM} {
		t.Run(string(kind), func(t *testing.T) {
			s := smallSpec(kind, netconf.ReLU, true)
			rng := rand.New(rand.NewPCG(8, 8))
			p, _ := netconf.Init(s, rng)
			randomise(p, rng)
			before := p.Clone()
			g := G.NewGraph()
			steps := 1
			if kind == netconf.EncoderLSTM {
				steps = 3
			}
			x := NewInput(g, "x", append([]int{3 * steps}, s.Input...)...)
			copy(Data(x), randomInput(rng, len(Data(x))))
			n, err := Build(g, s, p, x, Options{Steps: steps})
			if err != nil {
				t.Fatal(err)
			}
			loss, _ := G.Sum(n.Out)
			if _, err := G.Grad(loss, n.Learnables()...); err != nil {
				t.Fatal(err)
			}
			m := G.NewTapeMachine(g, G.BindDualValues(n.Learnables()...))
			defer m.Close()
			for range 3 {
				if err := m.RunAll(); err != nil {
					t.Fatal(err)
				}
				m.Reset()
			}
			if !reflect.DeepEqual(p, before) {
				t.Fatal("running forward and backward changed the weights")
			}
		})
	}
}

func TestNetParamsFollowTheParamsOrder(t *testing.T) {
	for _, kind := range []netconf.EncoderKind{netconf.EncoderMLP, netconf.EncoderCNN, netconf.EncoderLSTM} {
		s := smallSpec(kind, netconf.ReLU, true)
		p, _ := netconf.Init(s, rand.New(rand.NewPCG(1, 2)))
		g := G.NewGraph()
		n, err := Build(g, s, p, NewInput(g, "x", append([]int{2}, s.Input...)...), Options{Name: "pi"})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, pn := range n.Params {
			names = append(names, pn.Name)
			if want := "pi/" + pn.Name; pn.Node.Name() != want {
				t.Errorf("node %q, want %q", pn.Node.Name(), want)
			}
		}
		if !reflect.DeepEqual(names, p.Names()) {
			t.Errorf("%s: Net.Params %v\nParams %v", kind, names, p.Names())
		}
	}
}
