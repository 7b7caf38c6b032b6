package gorgonia

import (
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/evolverl/evolve/netconf"
	"github.com/evolverl/evolve/nn"
)

// benchCase is a typical network: the default architecture of each encoder on a
// CartPole-sized vector, a small image, or a sequence.
type benchCase struct {
	name        string
	spec        netconf.Spec
	rows, steps int // training batch (rows = steps·batch for the LSTM)
	actRows     int // acting batch: one step of a vector env of 8
}

func benchCases() []benchCase {
	mlp := netconf.DefaultSpec(netconf.EncoderMLP)
	mlp.Input, mlp.Output, mlp.OutputGain = []int{8}, 4, netconf.PolicyGain
	cnn := netconf.DefaultSpec(netconf.EncoderCNN)
	cnn.Input, cnn.Output, cnn.OutputGain = []int{3, 32, 32}, 4, netconf.PolicyGain
	cnn16 := netconf.DefaultSpec(netconf.EncoderCNN)
	cnn16.Input, cnn16.Output, cnn16.OutputGain = []int{3, 16, 16}, 4, netconf.PolicyGain
	lstm := netconf.DefaultSpec(netconf.EncoderLSTM)
	lstm.Input, lstm.Output, lstm.OutputGain = []int{8}, 4, netconf.PolicyGain
	return []benchCase{
		{"mlp-8-64x64-b64", mlp, 64, 1, 8},
		{"cnn-3x16x16-32x32-b32", cnn16, 32, 1, 8},
		{"cnn-3x32x32-32x32-b32", cnn, 32, 1, 8},
		{"lstm-8-h64-T16-b8", lstm, 16 * 8, 16, 8},
	}
}

// trainingGraph builds what a learner builds: the network, a scalar loss, its gradient and a
// tape machine.
func trainingGraph(b *testing.B, c benchCase, p netconf.Params) G.VM {
	g := G.NewGraph()
	x := NewInput(g, "x", append([]int{c.rows}, c.spec.Input...)...)
	n, err := Build(g, c.spec, p, x, Options{Steps: c.steps})
	if err != nil {
		b.Fatal(err)
	}
	loss, err := G.Sum(n.Out)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := G.Grad(loss, n.Learnables()...); err != nil {
		b.Fatal(err)
	}
	return G.NewTapeMachine(g, G.BindDualValues(n.Learnables()...))
}

func BenchmarkBuildTrainingGraph(b *testing.B) {
	for _, c := range benchCases() {
		p, err := netconf.Init(c.spec, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				trainingGraph(b, c, p).Close()
			}
		})
	}
}

func BenchmarkForwardBackward(b *testing.B) {
	for _, c := range benchCases() {
		p, err := netconf.Init(c.spec, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			m := trainingGraph(b, c, p)
			defer m.Close()
			runMachine(b, m)
		})
	}
}

func BenchmarkActingForward(b *testing.B) {
	for _, c := range benchCases() {
		p, err := netconf.Init(c.spec, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			g := G.NewGraph()
			x := NewInput(g, "x", append([]int{c.actRows}, c.spec.Input...)...)
			if _, err := Build(g, c.spec, p, x, Options{}); err != nil {
				b.Fatal(err)
			}
			m := G.NewTapeMachine(g)
			defer m.Close()
			runMachine(b, m)
		})
	}
}

func BenchmarkInit(b *testing.B) {
	for _, c := range benchCases() {
		b.Run(c.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := netconf.Init(c.spec, rng); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkTransferAfterAddNode(b *testing.B) {
	for _, c := range benchCases() {
		p, err := netconf.Init(c.spec, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			b.Fatal(err)
		}
		grown := c.spec.Clone()
		grown.Latent.Size += 16
		b.Run(c.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := netconf.Transfer(p, grown, rng); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkModelForwardBackward is one training step of the backend: actor and a separate
// critic of the same architecture, forward and backward.
func BenchmarkModelForwardBackward(b *testing.B) {
	for _, c := range benchCases() {
		b.Run(c.name, func(b *testing.B) {
			critic := c.spec.Clone()
			critic.Output, critic.OutputGain = 1, netconf.ValueGain
			rng := rand.New(rand.NewPCG(1, 2))
			pa, _ := netconf.Init(c.spec, rng)
			pc, _ := netconf.Init(critic, rng)
			m, err := Backend{}.NewModel(c.spec, critic, false)
			if err != nil {
				b.Fatal(err)
			}
			batch := nn.Batch{Actor: pa, Critic: pc, Rows: c.rows, Steps: c.steps,
				Obs: randomInput(rng, c.rows*shapeSize(c.spec.Input))}
			dOut, dValues := randomInput(rng, c.rows*c.spec.Output), randomInput(rng, c.rows)
			ga, gc := zerosLike(pa), zerosLike(pc)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := m.Forward(batch); err != nil {
					b.Fatal(err)
				}
				if err := m.Backward(dOut, dValues, ga, gc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// runMachine times one run of m per iteration.
func runMachine(b *testing.B, m G.VM) {
	b.ReportAllocs()
	for b.Loop() {
		if err := m.RunAll(); err != nil {
			b.Fatal(err)
		}
		m.Reset()
	}
}
