package gorgonia

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/evolverl/evolve/netconf"
)

// mutation returns a function that applies the named mutation, which must apply.
func mutation(name string) func(*netconf.Spec, *rand.Rand) {
	return func(s *netconf.Spec, rng *rand.Rand) {
		m, _ := netconf.LookupMutation(name)
		n, _, ok := m.Apply(*s, rng)
		if !ok {
			panic(name + " did not apply")
		}
		*s = n
	}
}

func TestTransferAfterGrowthComputesTheSameFunction(t *testing.T) {
	cases := []struct {
		name string
		kind netconf.EncoderKind
		act  netconf.Activation
		grow func(*netconf.Spec, *rand.Rand)
	}{
		{"mlp first layer gains nodes", netconf.EncoderMLP, netconf.Tanh, func(s *netconf.Spec, _ *rand.Rand) { s.MLP.Hidden[0] += 8 }},
		{"mlp last layer gains nodes", netconf.EncoderMLP, netconf.ELU, func(s *netconf.Spec, _ *rand.Rand) { s.MLP.Hidden[1] += 16 }},
		{"mlp every layer gains nodes", netconf.EncoderMLP, netconf.GELU, func(s *netconf.Spec, _ *rand.Rand) { s.MLP.Hidden = []int{40, 20} }},
		{"latent gains nodes", netconf.EncoderMLP, netconf.Sigmoid, func(s *netconf.Spec, _ *rand.Rand) { s.Latent.Size += 8 }},
		{"head gains nodes", netconf.EncoderMLP, netconf.Softsign, func(s *netconf.Spec, _ *rand.Rand) { s.Head.Hidden[0] += 32 }},
		{"lstm gains hidden units", netconf.EncoderLSTM, netconf.ReLU, func(s *netconf.Spec, _ *rand.Rand) { s.LSTM.Hidden += 8 }},
		{"cnn first layer gains channels", netconf.EncoderCNN, netconf.LeakyReLU, func(s *netconf.Spec, _ *rand.Rand) { s.CNN.Channels[0] += 8 }},
		{"cnn last layer gains channels", netconf.EncoderCNN, netconf.Tanh, func(s *netconf.Spec, _ *rand.Rand) { s.CNN.Channels[1] += 8 }},
		{"mlp.add_layer behind ReLU", netconf.EncoderMLP, netconf.ReLU, mutation("mlp.add_layer")},
		{"head.add_layer behind ReLU", netconf.EncoderMLP, netconf.ReLU, mutation("head.add_layer")},
		{"cnn.add_layer behind ReLU", netconf.EncoderCNN, netconf.ReLU, mutation("cnn.add_layer")},
		{"mlp.add_node", netconf.EncoderMLP, netconf.ReLU, mutation("mlp.add_node")},
		{"lstm.add_node", netconf.EncoderLSTM, netconf.Tanh, mutation("lstm.add_node")},
		{"gru gains hidden units", netconf.EncoderGRU, netconf.ReLU, func(s *netconf.Spec, _ *rand.Rand) { s.GRU.Hidden += 8 }},
		{"gru.add_node", netconf.EncoderGRU, netconf.Tanh, mutation("gru.add_node")},
		{"transformer.add_layer", netconf.EncoderTransformer, netconf.Tanh, mutation("transformer.add_layer")},
		{"latent.add_node", netconf.EncoderCNN, netconf.ReLU, mutation("latent.add_node")},
		{"cnn.add_channel", netconf.EncoderCNN, netconf.ELU, mutation("cnn.add_channel")},
		{"dict: one key's mlp gains nodes", netconf.EncoderDict, netconf.Tanh, func(s *netconf.Spec, _ *rand.Rand) { s.Inputs[0].MLP.Hidden[1] += 8 }},
		{"dict: one key's cnn gains channels", netconf.EncoderDict, netconf.ELU, func(s *netconf.Spec, _ *rand.Rand) { s.Inputs[1].CNN.Channels[1] += 8 }},
		{"dict: latent gains nodes", netconf.EncoderDict, netconf.Sigmoid, func(s *netconf.Spec, _ *rand.Rand) { s.Latent.Size += 8 }},
		{"dict: latent.add_node", netconf.EncoderDict, netconf.ReLU, mutation("latent.add_node")},
		{"dict.mlp.add_layer behind ReLU", netconf.EncoderDict, netconf.ReLU, mutation("dict.mlp.add_layer")},
		{"dict.cnn.add_layer behind ReLU", netconf.EncoderDict, netconf.ReLU, mutation("dict.cnn.add_layer")},
		{"dict.cnn.add_channel", netconf.EncoderDict, netconf.GELU, mutation("dict.cnn.add_channel")},
		{"dict: head.add_layer onto an empty head", netconf.EncoderDict, netconf.ReLU, mutation("head.add_layer")},
		{"head.add_layer onto an empty head", netconf.EncoderMLP, netconf.ReLU, func(s *netconf.Spec, rng *rand.Rand) {
			// s was built with no head layer (see below); the new layer follows the latent.
			mutation("head.add_layer")(s, rng)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, 12))
			s0 := transferSpec(c.kind, c.act)
			if strings.Contains(c.name, "empty head") {
				s0.Head.Hidden, s0.Head.MinLayers = nil, 0
			}
			p0, err := netconf.Init(s0, rng)
			if err != nil {
				t.Fatal(err)
			}
			for i := range p0 { // non-zero biases too, so nothing is trivially preserved
				if strings.Contains(p0[i].Name, "bias") || strings.Contains(p0[i].Name, ".b_") {
					for j := range p0[i].Data {
						p0[i].Data[j] = float32(rng.NormFloat64() * 0.3)
					}
				}
			}
			steps, batch := 1, 4
			var starts []float32
			if c.kind.Recurrent() {
				steps = 3
				starts = []float32{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}
			}
			x := randomInput(rng, steps*batch*shapeSize(s0.Input))
			before := forward(t, s0, p0, x, steps*batch, steps, starts)
			s1 := s0.Clone()
			c.grow(&s1, rng)
			if err := s1.Validate(); err != nil {
				t.Fatal(err)
			}
			p1, err := netconf.Transfer(p0, s1, rng)
			if err != nil {
				t.Fatal(err)
			}
			if p1.Size() <= p0.Size() {
				t.Fatalf("%s -> %s did not grow the network (%d -> %d values)", s0, s1, p0.Size(), p1.Size())
			}
			after := forward(t, s1, p1, x, steps*batch, steps, starts)
			scale := 1.0
			for _, v := range before {
				scale = max(scale, math.Abs(float64(v)))
			}
			if d := maxAbsDiff(before, after) / scale; d > 1e-6 {
				t.Fatalf("%s -> %s: outputs changed by %.2g (relative)", s0, s1, d)
			}
		})
	}
}

// TestRandomMutationSequencesBuildAndRun applies random operators in sequence and checks
// that every result transfers, builds and computes finite outputs.
func TestRandomMutationSequencesBuildAndRun(t *testing.T) {
	steps := 700
	if testing.Short() {
		steps = 200
	}
	for _, kind := range []netconf.EncoderKind{netconf.EncoderMLP, netconf.EncoderCNN, netconf.EncoderLSTM, netconf.EncoderGRU, netconf.EncoderTransformer, netconf.EncoderDict} {
		t.Run(string(kind), func(t *testing.T) {
			// Small bounds keep thousands of builds fast; the operators only see the bounds.
			s := transferSpec(kind, netconf.ReLU)
			s.Head.MaxNodes, s.Latent.Max = 40, 40
			switch kind {
			case netconf.EncoderMLP:
				s.MLP.MaxNodes, s.MLP.LayerNorm = 40, true
			case netconf.EncoderCNN:
				s.CNN.MaxChannels, s.CNN.MaxLayers = 16, 5
			case netconf.EncoderLSTM, netconf.EncoderGRU:
				s.Memory().MaxHidden = 24
			case netconf.EncoderTransformer:
				steps = min(steps, 150) // each step builds a graph window by window
			case netconf.EncoderDict:
				s.Inputs[0].MLP.MaxNodes, s.Inputs[0].MLP.LayerNorm = 40, true
				s.Inputs[1].CNN.MaxChannels, s.Inputs[1].CNN.MaxLayers = 16, 5
			}
			rng := rand.New(rand.NewPCG(uint64(len(kind)), 99))
			p, err := netconf.Init(s, rng)
			if err != nil {
				t.Fatal(err)
			}
			ops := netconf.MutationsFor(s)
			for i := range steps {
				m := ops[rng.IntN(len(ops))]
				n, _, changed := m.Apply(s, rng)
				if !changed {
					continue
				}
				if p, err = netconf.Transfer(p, n, rng); err != nil {
					t.Fatalf("step %d %s: transfer: %v", i, m.Name, err)
				}
				s = n
				rows, st := 2, 1
				if kind.Recurrent() {
					rows, st = 4, 2
				}
				for _, v := range forward(t, s, p, randomInput(rng, rows*shapeSize(s.Input)), rows, st, nil) {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
						t.Fatalf("step %d %s: %s gives %v", i, m.Name, s, v)
					}
				}
			}
		})
	}
}
