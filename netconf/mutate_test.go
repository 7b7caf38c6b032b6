package netconf

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestMutationsApplyOrSayWhyNot(t *testing.T) {
	atMax := transferSpec(EncoderMLP, ReLU)
	atMax.MLP.Hidden = []int{64, 64, 64}
	atMin := transferSpec(EncoderMLP, ReLU)
	atMin.MLP.Hidden = []int{4}
	atMin.Latent.Size = 4
	lstmMax := transferSpec(EncoderLSTM, ReLU)
	lstmMax.LSTM.Layers, lstmMax.LSTM.Hidden = 3, 64
	tiny := transferSpec(EncoderCNN, ReLU) // input 11×10: kernels 5, 3 with strides 2, 1 leave 2×1
	tiny.CNN.Kernels = []int{5, 3}

	cases := []struct {
		op      string
		spec    Spec
		changed bool
		check   func(t *testing.T, s Spec)
		descHas string
	}{
		{"mlp.add_layer", transferSpec(EncoderMLP, ReLU), true, func(t *testing.T, s Spec) {
			if !reflect.DeepEqual(s.MLP.Hidden, []int{16, 12, 12}) {
				t.Errorf("hidden %v, want a copy of the last layer appended", s.MLP.Hidden)
			}
		}, "hidden [16 12] -> [16 12 12]"},
		{"mlp.add_layer", atMax, false, nil, "already at max_layers 3"},
		{"mlp.remove_layer", atMin, false, nil, "already at min_layers 1"},
		{"mlp.add_node", atMax, false, nil, "every layer already at the maximum of 64 nodes"},
		{"mlp.remove_node", atMin, false, nil, "every layer already at the minimum of 4 nodes"},
		{"mlp.add_node", transferSpec(EncoderMLP, ReLU), true, func(t *testing.T, s Spec) {
			d := s.MLP.Hidden[0] - 16 + s.MLP.Hidden[1] - 12
			if d != 16 && d != 32 && d != 64 {
				t.Errorf("hidden %v: grew by %d, want one of 16, 32, 64", s.MLP.Hidden, d)
			}
		}, "nodes"},
		{"mlp.add_layer", transferSpec(EncoderCNN, ReLU), false, nil, "no MLP encoder"},
		{"latent.remove_node", atMin, false, nil, "size 4 already at the minimum 4"},
		{"cnn.add_layer", transferSpec(EncoderCNN, ReLU), true, func(t *testing.T, s Spec) {
			if !reflect.DeepEqual(s.CNN.Channels, []int{4, 6, 6}) || s.CNN.Kernels[2] != 1 || s.CNN.Strides[2] != 1 {
				t.Errorf("cnn %+v, want a 1x1 stride-1 layer of 6 channels appended", *s.CNN)
			}
		}, "channels [4 6 6]"},
		{"cnn.change_kernel", tiny, true, func(t *testing.T, s Spec) {
			if _, err := s.CNN.OutputShape(s.Input); err != nil {
				t.Error(err)
			}
		}, "kernel"},
		{"lstm.add_layer", lstmMax, false, nil, "already at max_layers 3"},
		{"lstm.add_node", lstmMax, false, nil, "hidden 64 already at the maximum 64"},
		{"lstm.remove_layer", lstmMax, true, func(t *testing.T, s Spec) {
			if s.LSTM.Layers != 2 {
				t.Errorf("layers %d, want 2", s.LSTM.Layers)
			}
		}, "layers 3 -> 2"},
		{"dict.mlp.add_layer", transferSpec(EncoderDict, ReLU), true, func(t *testing.T, s Spec) {
			if !reflect.DeepEqual(s.Inputs[0].MLP.Hidden, []int{16, 12, 12}) || !reflect.DeepEqual(s.MLP.Hidden, []int{16, 12}) {
				t.Errorf("key pos hidden %v, template %v: want the key's mlp grown, the template kept", s.Inputs[0].MLP.Hidden, s.MLP.Hidden)
			}
		}, "key pos: hidden [16 12] -> [16 12 12]"},
		{"dict.cnn.change_kernel", transferSpec(EncoderDict, ReLU), true, func(t *testing.T, s Spec) {
			if err := s.Validate(); err != nil {
				t.Error(err)
			}
		}, "key img: layer"},
		{"mlp.add_layer", transferSpec(EncoderDict, ReLU), false, nil, "no MLP encoder"},
		{"dict.mlp.add_node", transferSpec(EncoderMLP, ReLU), false, nil, "no dict key with a mlp encoder"},
		{"change_activation", transferSpec(EncoderDict, ReLU), true, func(t *testing.T, s Spec) {
			if a := s.Head.Activation; a == ReLU || s.Inputs[0].MLP.Activation != a || s.Inputs[1].CNN.Activation != a {
				t.Errorf("activations %s: want one new activation everywhere", s)
			}
		}, "change_activation: ReLU -> "},
		{"change_activation", transferSpec(EncoderCNN, ReLU), true, func(t *testing.T, s Spec) {
			if s.CNN.Activation == ReLU || s.CNN.Activation != s.Head.Activation {
				t.Errorf("activations cnn %s head %s, want one new activation everywhere", s.CNN.Activation, s.Head.Activation)
			}
		}, "change_activation: ReLU -> "},
	}
	for _, c := range cases {
		t.Run(c.op+"/"+c.descHas, func(t *testing.T) {
			m, ok := LookupMutation(c.op)
			if !ok {
				t.Fatalf("no mutation %q", c.op)
			}
			before := c.spec.Clone()
			got, desc, changed := m.Apply(c.spec, rand.New(rand.NewPCG(1, 2)))
			if !reflect.DeepEqual(c.spec, before) {
				t.Fatalf("Apply modified its argument: %+v", c.spec)
			}
			if changed != c.changed || !strings.Contains(desc, c.descHas) || !strings.HasPrefix(desc, c.op) {
				t.Fatalf("Apply = (%q, %v), want changed %v and a description starting %q containing %q", desc, changed, c.changed, c.op, c.descHas)
			}
			if !changed && !reflect.DeepEqual(got, before) {
				t.Fatalf("unapplied mutation returned a different spec %+v", got)
			}
			if c.check != nil {
				c.check(t, got)
			}
		})
	}
}

func TestMutationRegistry(t *testing.T) {
	want := []string{"mlp.add_layer", "mlp.remove_layer", "mlp.add_node", "mlp.remove_node",
		"cnn.add_layer", "cnn.remove_layer", "cnn.add_channel", "cnn.remove_channel", "cnn.change_kernel",
		"lstm.add_layer", "lstm.remove_layer", "lstm.add_node", "lstm.remove_node",
		"gru.add_layer", "gru.remove_layer", "gru.add_node", "gru.remove_node",
		"transformer.add_layer", "transformer.remove_layer", "transformer.add_node", "transformer.remove_node", "memory.switch",
		"dict.mlp.add_layer", "dict.mlp.remove_layer", "dict.mlp.add_node", "dict.mlp.remove_node",
		"dict.cnn.add_layer", "dict.cnn.remove_layer", "dict.cnn.add_channel", "dict.cnn.remove_channel",
		"dict.cnn.change_kernel", "latent.add_node", "latent.remove_node", "head.add_layer", "head.remove_layer", "head.add_node",
		"head.remove_node", "change_activation"}
	var got []string
	for _, m := range Mutations() {
		got = append(got, m.Name)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("mutations %v", got)
	}
	for _, m := range MutationsFor(transferSpec(EncoderLSTM, ReLU)) {
		if strings.HasPrefix(m.Name, "mlp.") || strings.HasPrefix(m.Name, "cnn.") || strings.HasPrefix(m.Name, "dict.") || strings.HasPrefix(m.Name, "gru.") {
			t.Fatalf("MutationsFor(lstm) offers %s", m.Name)
		}
	}
	for _, m := range MutationsFor(transferSpec(EncoderGRU, ReLU)) {
		if strings.HasPrefix(m.Name, "mlp.") || strings.HasPrefix(m.Name, "cnn.") || strings.HasPrefix(m.Name, "dict.") || strings.HasPrefix(m.Name, "lstm.") {
			t.Fatalf("MutationsFor(gru) offers %s", m.Name)
		}
	}
	for _, m := range MutationsFor(transferSpec(EncoderDict, ReLU)) {
		if strings.HasPrefix(m.Name, "mlp.") || strings.HasPrefix(m.Name, "cnn.") || strings.HasPrefix(m.Name, "lstm.") {
			t.Fatalf("MutationsFor(dict) offers %s", m.Name)
		}
	}
}

// TestRandomMutationSequencesStayValid applies random operators in sequence and checks that
// every result validates and transfers into params of its layout. (The reference network
// backend's tests run the same sequences through networks.)
func TestRandomMutationSequencesStayValid(t *testing.T) {
	steps := 700
	if testing.Short() {
		steps = 200
	}
	for _, kind := range []EncoderKind{EncoderMLP, EncoderCNN, EncoderLSTM, EncoderGRU, EncoderTransformer, EncoderDict} {
		t.Run(string(kind), func(t *testing.T) {
			// Small bounds keep thousands of transfers fast; the operators only see the bounds.
			s := transferSpec(kind, ReLU)
			s.Head.MaxNodes, s.Latent.Max = 40, 40
			switch kind {
			case EncoderMLP:
				s.MLP.MaxNodes, s.MLP.LayerNorm = 40, true
			case EncoderCNN:
				s.CNN.MaxChannels, s.CNN.MaxLayers = 16, 5
			case EncoderLSTM, EncoderGRU:
				s.Memory().MaxHidden = 24
			case EncoderDict:
				s.Inputs[0].MLP.MaxNodes, s.Inputs[0].MLP.LayerNorm = 40, true
				s.Inputs[1].CNN.MaxChannels, s.Inputs[1].CNN.MaxLayers = 16, 5
			}
			rng := rand.New(rand.NewPCG(uint64(len(kind)), 99))
			p, err := Init(s, rng)
			if err != nil {
				t.Fatal(err)
			}
			ops := MutationsFor(s)
			applied := map[string]int{}
			for i := range steps {
				m := ops[rng.IntN(len(ops))]
				n, desc, changed := m.Apply(s, rng)
				if err := n.Validate(); err != nil {
					t.Fatalf("step %d %s (%s): invalid result: %v", i, m.Name, desc, err)
				}
				if !changed {
					if !reflect.DeepEqual(n, s) {
						t.Fatalf("step %d %s said unchanged but changed the spec", i, m.Name)
					}
					continue
				}
				applied[m.Name]++
				if p, err = Transfer(p, n, rng); err != nil {
					t.Fatalf("step %d %s: transfer: %v", i, m.Name, err)
				}
				s = n
				l, err := Layout(s)
				if err != nil {
					t.Fatalf("step %d %s: layout: %v", i, m.Name, err)
				}
				if err := p.CheckLayout(l); err != nil {
					t.Fatalf("step %d %s: transferred params do not fit %s: %v", i, m.Name, s, err)
				}
				if n, _ := ParamCount(s); n != int64(p.Size()) {
					t.Fatalf("step %d %s: ParamCount(%s) = %d, params hold %d values", i, m.Name, s, n, p.Size())
				}
			}
			for _, m := range ops {
				if applied[m.Name] == 0 {
					t.Errorf("%s never applied in %d steps", m.Name, steps)
				}
			}
		})
	}
}

// TestTransformerMLPStaysWithinItsBounds: remove_node never takes the
// Transformer's MLP below min_width (it once cut 64 units to 1 in one step)
// and add_node never above 4 × max_width.
func TestTransformerMLPStaysWithinItsBounds(t *testing.T) {
	s := transferSpec(EncoderTransformer, ReLU)
	s.Transformer.Width, s.Transformer.MLP, s.Transformer.MinWidth, s.Transformer.MaxWidth = 16, 64, 16, 32
	rng := rand.New(rand.NewPCG(4, 4))
	for _, name := range []string{"transformer.remove_node", "transformer.add_node"} {
		m, ok := LookupMutation(name)
		if !ok {
			t.Fatalf("no mutation %s", name)
		}
		cur := s.Clone()
		for range 200 {
			next, desc, changed := m.Apply(cur, rng)
			if changed {
				cur = next
			}
			if mlp := cur.Transformer.MLP; mlp < 16 || mlp > 4*32 {
				t.Fatalf("%s (%s): mlp %d, want 16 to 128", name, desc, mlp)
			}
		}
	}
}
