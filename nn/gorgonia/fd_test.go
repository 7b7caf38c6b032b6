package gorgonia

import (
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/evolverl/evolve/netconf"
)

// fdCase is a small network whose gradients are checked against central differences.
type fdCase struct {
	name  string
	spec  netconf.Spec
	rows  int        // input rows (Steps·Batch for an LSTM)
	steps int        // LSTM unroll length
	setup func(*Net) // writes recurrent inputs (starts, initial state)
	wrt   func(*Net) G.Nodes
}

func TestGradientsMatchFiniteDifferences(t *testing.T) {
	var cases []fdCase
	for _, a := range netconf.Activations() {
		cases = append(cases, fdCase{name: "mlp/" + string(a) + "/layernorm", spec: smallSpec(netconf.EncoderMLP, a, true), rows: 4})
	}
	cases = append(cases,
		fdCase{name: "mlp/ReLU", spec: smallSpec(netconf.EncoderMLP, netconf.ReLU, false), rows: 1},
		fdCase{name: "cnn/ReLU", spec: smallSpec(netconf.EncoderCNN, netconf.ReLU, false), rows: 2},
		fdCase{name: "cnn/ELU", spec: smallSpec(netconf.EncoderCNN, netconf.ELU, false), rows: 1},
		fdCase{name: "dict/Tanh", spec: smallSpec(netconf.EncoderDict, netconf.Tanh, false), rows: 3},
		fdCase{name: "dict/ELU/layernorm/batch-of-one", spec: smallSpec(netconf.EncoderDict, netconf.ELU, true), rows: 1},
		fdCase{name: "lstm/resets", spec: smallSpec(netconf.EncoderLSTM, netconf.Tanh, false), rows: 4 * 2, steps: 4,
			setup: func(n *Net) {
				// sequence 0 starts a new episode at step 2, sequence 1 at step 0 and 3
				copy(Data64(n.Recurrent.Starts), []float64{0, 1, 0, 0, 1, 0, 0, 1})
				rng := rand.New(rand.NewPCG(7, 8))
				for l := range n.Recurrent.Layers {
					for _, s := range []*G.Node{n.Recurrent.H0[l], n.Recurrent.C0[l]} {
						for i := range Data64(s) {
							Data64(s)[i] = rng.NormFloat64() * 0.5
						}
					}
				}
			},
			wrt: func(n *Net) G.Nodes {
				// The mask itself too: h and c are scaled by 1 − starts.
				return append(append(G.Nodes{n.Recurrent.Starts}, n.Recurrent.H0...), n.Recurrent.C0...)
			}},
		fdCase{name: "gru/resets", spec: smallSpec(netconf.EncoderGRU, netconf.Tanh, false), rows: 4 * 2, steps: 4,
			setup: func(n *Net) {
				copy(Data64(n.Recurrent.Starts), []float64{0, 1, 0, 0, 1, 0, 0, 1})
				rng := rand.New(rand.NewPCG(7, 9))
				for _, s := range n.Recurrent.H0 {
					for i := range Data64(s) {
						Data64(s)[i] = rng.NormFloat64() * 0.5
					}
				}
			},
			wrt: func(n *Net) G.Nodes { return append(G.Nodes{n.Recurrent.Starts}, n.Recurrent.H0...) }},
		fdCase{name: "lstm/single-step", spec: smallSpec(netconf.EncoderLSTM, netconf.ReLU, true), rows: 3, steps: 1},
		fdCase{name: "lstm/batch-of-one", spec: smallSpec(netconf.EncoderLSTM, netconf.GELU, false), rows: 3, steps: 3,
			setup: func(n *Net) { copy(Data64(n.Recurrent.Starts), []float64{1, 0, 1}) }},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			p, err := netconf.Init(c.spec, rng)
			if err != nil {
				t.Fatal(err)
			}
			randomise(p, rng)
			g := G.NewGraph()
			inShape := append([]int{c.rows}, c.spec.Input...)
			xd := make([]float64, shapeSize(inShape))
			for i := range xd {
				xd[i] = rng.NormFloat64()
			}
			x := newValueInput(g, tensor.Float64, "x", xd, inShape...)
			n, err := newBuilder(g, tensor.Float64, p, Options{Steps: c.steps}).network(c.spec, x, true)
			if err != nil {
				t.Fatal(err)
			}
			if c.setup != nil {
				c.setup(n)
			}
			rd := make([]float64, n.Out.Shape().TotalSize())
			for i := range rd {
				rd[i] = rng.NormFloat64()
			}
			loss := weightedSum(t, n.Out, newValueInput(g, tensor.Float64, "R", rd, n.Out.Shape()...))
			wrt := append(n.Learnables(), x)
			if c.wrt != nil {
				wrt = append(wrt, c.wrt(n)...)
			}
			if _, err := G.Grad(loss, wrt...); err != nil {
				t.Fatal(err)
			}
			m := G.NewTapeMachine(g, G.BindDualValues(wrt...))
			defer m.Close()
			run := func() float64 {
				m.Reset()
				if err := m.RunAll(); err != nil {
					t.Fatal(err)
				}
				return loss.Value().Data().(float64)
			}
			run()
			analytic := make([][]float64, len(wrt))
			for i, w := range wrt {
				analytic[i] = gradOf(t, w)
			}
			const eps = 1e-6
			for i, w := range wrt {
				d := Data64(w)
				fd := make([]float64, len(d))
				for j := range d {
					v := d[j]
					d[j] = v + eps
					lp := run()
					d[j] = v - eps
					lm := run()
					d[j] = v
					fd[j] = (lp - lm) / (2 * eps)
				}
				// 1e-5: float64 differences are exact to ~1e-9 except where a step of eps
				// crosses a ReLU kink.
				if e := relErr(analytic[i], fd, 1e-3); e > 1e-5 {
					t.Errorf("%s: analytic and central-difference gradients differ, relative error %.2g", w.Name(), e)
				}
			}
		})
	}
}

// Data64 is Data for the float64 graphs of these tests.
func Data64(n *G.Node) []float64 { return n.Value().Data().([]float64) }

func TestFiniteDifferenceCheckSeesResets(t *testing.T) {
	// A reset before step 1 cuts every path from the initial state to later outputs: with a
	// single step after it, the gradient with respect to h0 and c0 must be exactly zero.
	s := smallSpec(netconf.EncoderLSTM, netconf.ReLU, false)
	p, err := netconf.Init(s, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	g := G.NewGraph()
	x := newValueInput(g, tensor.Float64, "x", []float64{1, 2, 3, 4, 5, 6}, 2, 3)
	n, err := newBuilder(g, tensor.Float64, p, Options{Steps: 2}).network(s, x, true)
	if err != nil {
		t.Fatal(err)
	}
	copy(Data64(n.Recurrent.Starts), []float64{0, 1})
	loss := weightedSum(t, n.Out, newValueInput(g, tensor.Float64, "R", []float64{0, 0, 1, 1}, 2, 2))
	wrt := append(G.Nodes{}, n.Recurrent.H0...)
	wrt = append(wrt, n.Recurrent.C0...)
	runWithGrads(t, g, loss, wrt)
	for _, w := range wrt {
		for _, v := range gradOf(t, w) {
			if v != 0 {
				t.Fatalf("%s: gradient %v through a reset, want 0", w.Name(), v)
			}
		}
	}
}
