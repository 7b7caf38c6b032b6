package netconf

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// layoutSpecs is a spread of valid specs: every encoder kind, with and without LayerNorm,
// defaults, a head without layers, deeper LSTMs.
func layoutSpecs() map[string]Spec {
	specs := map[string]Spec{}
	for _, kind := range []EncoderKind{EncoderMLP, EncoderCNN, EncoderLSTM, EncoderGRU, EncoderTransformer, EncoderDict} {
		specs["small/"+string(kind)] = smallSpec(kind, ReLU, false)
		specs["small/"+string(kind)+"/layernorm"] = smallSpec(kind, Tanh, true)
		specs["transfer/"+string(kind)] = transferSpec(kind, ReLU)
		noHead := transferSpec(kind, ReLU)
		noHead.Head.Hidden, noHead.Head.MinLayers = nil, 0
		specs["transfer/"+string(kind)+"/no-head"] = noHead
	}
	for _, kind := range []EncoderKind{EncoderMLP, EncoderCNN, EncoderLSTM, EncoderGRU, EncoderTransformer} {
		specs["default/"+string(kind)] = validSpec(kind)
	}
	for _, kind := range []EncoderKind{EncoderLSTM, EncoderGRU} {
		for _, layers := range []int{1, 2, 3} {
			s := smallSpec(kind, ReLU, false)
			s.Memory().Layers = layers
			specs[fmt.Sprintf("%s/%d-layers", kind, layers)] = s
		}
	}
	return specs
}

func TestLayoutListsNamesShapesAndRoles(t *testing.T) {
	s := smallSpec(EncoderMLP, ReLU, true)
	s.MLP.Hidden = []int{5}
	l, err := Layout(s)
	if err != nil {
		t.Fatal(err)
	}
	want := []TensorSpec{
		{"encoder.mlp.0.weight", []int{3, 5}, RoleWeight},
		{"encoder.mlp.0.bias", []int{5}, RoleBias},
		{"encoder.mlp.0.norm.weight", []int{5}, RoleNormScale},
		{"encoder.mlp.0.norm.bias", []int{5}, RoleNormShift},
		{"latent.weight", []int{5, 3}, RoleWeight},
		{"latent.bias", []int{3}, RoleBias},
		{"head.0.weight", []int{3, 4}, RoleWeight},
		{"head.0.bias", []int{4}, RoleBias},
		{"head.0.norm.weight", []int{4}, RoleNormScale},
		{"head.0.norm.bias", []int{4}, RoleNormShift},
		{"out.weight", []int{4, 2}, RoleWeight},
		{"out.bias", []int{2}, RoleBias},
	}
	if !reflect.DeepEqual(l, want) {
		t.Fatalf("Layout\n%v\nwant\n%v", l, want)
	}
}

// TestLayoutRolesFollowTheNames checks every tensor of every kind of network: LayerNorm
// scales and shifts, biases (LSTM's two per gate included), and weights, which are matrices
// or conv kernels.
func TestLayoutRolesFollowTheNames(t *testing.T) {
	for name, s := range layoutSpecs() {
		l, err := Layout(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, ts := range l {
			var want Role
			switch {
			case strings.HasSuffix(ts.Name, ".norm.weight"):
				want = RoleNormScale
			case strings.HasSuffix(ts.Name, ".norm.bias"):
				want = RoleNormShift
			case strings.HasSuffix(ts.Name, ".bias") || strings.Contains(ts.Name, ".b_ih.") || strings.Contains(ts.Name, ".b_hh."):
				want = RoleBias
			default:
				want = RoleWeight
			}
			if ts.Role != want {
				t.Errorf("%s: %s has role %v, want %v", name, ts.Name, ts.Role, want)
			}
			if dims := len(ts.Shape); ts.Role == RoleWeight && dims != 2 && dims != 4 || ts.Role != RoleWeight && dims != 1 {
				t.Errorf("%s: %s (%v) has shape %v", name, ts.Name, ts.Role, ts.Shape)
			}
		}
	}
}

func TestLayoutIsTheLayoutOfInitAndZeros(t *testing.T) {
	for name, s := range layoutSpecs() {
		l, err := Layout(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p, err := Init(s, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		z, _ := Zeros(s)
		if len(p) != len(l) || len(z) != len(l) {
			t.Fatalf("%s: %d tensors in the layout, %d from Init, %d from Zeros", name, len(l), len(p), len(z))
		}
		for i, ts := range l {
			if p[i].Name != ts.Name || !slices.Equal(p[i].Shape, ts.Shape) || z[i].Name != ts.Name || !slices.Equal(z[i].Shape, ts.Shape) {
				t.Fatalf("%s: tensor %d is %s %v from Init, %s %v from Zeros; the layout says %s %v",
					name, i, p[i].Name, p[i].Shape, z[i].Name, z[i].Shape, ts.Name, ts.Shape)
			}
			want := map[Role]float32{RoleBias: 0, RoleNormScale: 1, RoleNormShift: 0}
			if v, ok := want[ts.Role]; ok {
				for _, x := range p[i].Data {
					if x != v {
						t.Fatalf("%s: %s (%v) initialised with %v, want all %v", name, ts.Name, ts.Role, x, v)
					}
				}
			}
		}
		if err := p.CheckLayout(l); err != nil {
			t.Errorf("%s: Init's params do not fit the layout: %v", name, err)
		}
	}
}

func TestLayoutReturnsCopies(t *testing.T) {
	s := smallSpec(EncoderCNN, ReLU, false)
	l, _ := Layout(s)
	l[0].Shape[0] = 99
	if l2, _ := Layout(s); l2[0].Shape[0] == 99 {
		t.Fatal("editing one Layout's shapes changed the next")
	}
}

func TestParamCountIsTheLayoutSize(t *testing.T) {
	for name, s := range layoutSpecs() {
		l, err := Layout(s)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0
		for _, ts := range l {
			sum += ts.Size()
		}
		n, err := ParamCount(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p, _ := Zeros(s)
		if n != int64(sum) || n != int64(p.Size()) {
			t.Errorf("%s: ParamCount %d, layout sizes sum to %d, Zeros holds %d values", name, n, sum, p.Size())
		}
	}
}

func TestParamCountOfHugeSpecsSaturatesWithoutAllocating(t *testing.T) {
	// One LSTM layer after the first, input and hidden 1: four gates of w_ih, w_hh, b_ih, b_hh.
	const perLayer = 4 * (1 + 1 + 1 + 1)
	deep := func(layers int) Spec {
		s := smallSpec(EncoderLSTM, ReLU, false)
		s.Input = []int{1}
		s.LSTM.Hidden, s.LSTM.Layers, s.LSTM.MaxLayers = 1, layers, layers
		return s
	}
	two, _ := ParamCount(deep(2))
	deepGRU := deep(1 << 50)
	deepGRU.Encoder, deepGRU.GRU, deepGRU.LSTM = EncoderGRU, deepGRU.LSTM, nil
	gru2 := deep(2)
	gru2.Encoder, gru2.GRU, gru2.LSTM = EncoderGRU, gru2.LSTM, nil
	twoGRU, _ := ParamCount(gru2)
	wide := smallSpec(EncoderMLP, ReLU, false)
	wide.MLP.Hidden, wide.MLP.MaxNodes, wide.Input = []int{1 << 40, 1 << 40}, 1<<40, []int{1 << 30}
	cases := []struct {
		name string
		spec Spec
		want int64
	}{
		{"2^50 LSTM layers (counted, not iterated)", deep(1 << 50), two + (1<<50-2)*perLayer},
		{"2^50 GRU layers", deepGRU, twoGRU + (1<<50-2)*perLayer*3/4},
		{"2^61 LSTM layers", deep(1 << 61), 1 << 62},
		{"2^40 × 2^40 hidden layers", wide, 1 << 62},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParamCount(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("ParamCount = %d, want %d", got, c.want)
			}
		})
	}
	allocs := testing.AllocsPerRun(3, func() { _, _ = ParamCount(wide) })
	if allocs > 20 {
		t.Errorf("ParamCount of an MLP allocated %v times, want a handful (none per value)", allocs)
	}
}

func TestParamCountRejectsInvalidSpecs(t *testing.T) {
	s := smallSpec(EncoderMLP, ReLU, false)
	s.Output = 0
	if _, err := ParamCount(s); err == nil || !strings.Contains(err.Error(), "output 0") {
		t.Fatalf("ParamCount of a spec without outputs: %v, want Validate's error", err)
	}
}

func TestStateSize(t *testing.T) {
	lstm := smallSpec(EncoderLSTM, ReLU, false) // 2 layers of 3
	if !lstm.Recurrent() || lstm.StateSize() != 2*2*3 {
		t.Errorf("LSTM 2×3: Recurrent %v, StateSize %d, want true, 12", lstm.Recurrent(), lstm.StateSize())
	}
	tr := smallSpec(EncoderTransformer, ReLU, false) // context 3, input 3
	if !tr.Recurrent() || tr.StateSize() != 2*3+1 || tr.Memory() != nil {
		t.Errorf("Transformer k3 on 3 inputs: Recurrent %v, StateSize %d, want true, 7", tr.Recurrent(), tr.StateSize())
	}
	gru := smallSpec(EncoderGRU, ReLU, false) // h only
	if !gru.Recurrent() || gru.StateSize() != 2*3 || gru.Memory() != gru.GRU {
		t.Errorf("GRU 2×3: Recurrent %v, StateSize %d, want true, 6", gru.Recurrent(), gru.StateSize())
	}
	for _, kind := range []EncoderKind{EncoderMLP, EncoderCNN, EncoderDict} {
		if s := smallSpec(kind, ReLU, false); s.Recurrent() || s.StateSize() != 0 {
			t.Errorf("%s: Recurrent %v, StateSize %d, want false, 0", kind, s.Recurrent(), s.StateSize())
		}
	}
}
