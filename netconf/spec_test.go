package netconf

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func validSpec(kind EncoderKind) Spec {
	s := DefaultSpec(kind)
	s.Output, s.OutputGain = 2, PolicyGain
	if kind == EncoderCNN {
		s.Input = []int{3, 16, 16}
	} else {
		s.Input = []int{4}
	}
	return s
}

func TestDefaultSpecsAreValidAndFollowAgileRL(t *testing.T) {
	for _, k := range []EncoderKind{EncoderMLP, EncoderCNN, EncoderLSTM, EncoderGRU} {
		if err := validSpec(k).Validate(); err != nil {
			t.Errorf("default %s spec: %v", k, err)
		}
	}
	s := DefaultSpec(EncoderCNN)
	if !reflect.DeepEqual(s.CNN.Channels, []int{32, 32}) || !reflect.DeepEqual(s.CNN.Kernels, []int{3, 3}) ||
		!reflect.DeepEqual(s.CNN.Strides, []int{2, 2}) || s.CNN.MaxLayers != 6 || s.CNN.MinChannels != 8 || s.CNN.MaxChannels != 256 {
		t.Errorf("default CNN %+v", *s.CNN)
	}
	if m := DefaultSpec(EncoderMLP); !reflect.DeepEqual(m.MLP.Hidden, []int{64, 64}) || !reflect.DeepEqual(m.Head.Hidden, []int{64}) ||
		m.MLP.MinNodes != 16 || m.MLP.MaxNodes != 512 || m.MLP.MaxLayers != 3 {
		t.Errorf("default MLP %+v head %+v", *m.MLP, m.Head)
	}
	if l := DefaultSpec(EncoderLSTM).LSTM; l.Hidden != 64 || l.Layers != 1 || l.MaxLayers != 3 {
		t.Errorf("default LSTM %+v", *l)
	}
}

func TestValidateNamesWhatIsWrong(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(*Spec)
		kind   EncoderKind
		errHas string
	}{
		{"unknown encoder", func(s *Spec) { s.Encoder = "gru" }, EncoderMLP, `encoder "gru"`},
		{"missing mlp table", func(s *Spec) { s.MLP = nil }, EncoderMLP, "[mlp] table is missing"},
		{"too many mlp layers", func(s *Spec) { s.MLP.Hidden = []int{64, 64, 64, 64} }, EncoderMLP, "mlp: hidden [64 64 64 64] has 4 layers: want 1 to 3"},
		{"mlp layer too wide", func(s *Spec) { s.MLP.Hidden[1] = 1024 }, EncoderMLP, "mlp: hidden[1] = 1024: want 16 to 512"},
		{"unknown activation", func(s *Spec) { s.Head.Activation = "Swish" }, EncoderMLP, `head: activation "Swish"`},
		{"inverted bounds", func(s *Spec) { s.MLP.MinNodes = 600 }, EncoderMLP, "min_nodes 600, max_nodes 512"},
		{"latent out of bounds", func(s *Spec) { s.Latent.Size = 4 }, EncoderMLP, "latent: size 4: want 8 to 128"},
		{"no output", func(s *Spec) { s.Output = 0 }, EncoderMLP, "output 0"},
		{"no gain", func(s *Spec) { s.OutputGain = 0 }, EncoderMLP, "output_gain 0"},
		{"mlp input not a vector", func(s *Spec) { s.Input = []int{3, 4} }, EncoderMLP, "input [3 4]"},
		{"cnn lists of different length", func(s *Spec) { s.CNN.Strides = []int{2} }, EncoderCNN, "one entry per layer"},
		{"cnn channel too few", func(s *Spec) { s.CNN.Channels[0] = 4 }, EncoderCNN, "cnn: channels[0] = 4: want 8 to 256"},
		{"cnn zero stride", func(s *Spec) { s.CNN.Strides[1] = 0 }, EncoderCNN, "strides[1] = 0"},
		{"cnn output smaller than 1x1", func(s *Spec) { s.Input = []int{3, 5, 5} }, EncoderCNN, "cnn layer 1: kernel 3 does not fit its 2x2 input"},
		{"cnn input not CHW", func(s *Spec) { s.Input = []int{16} }, EncoderCNN, "want [channels, height, width]"},
		{"lstm hidden too small", func(s *Spec) { s.LSTM.Hidden = 8 }, EncoderLSTM, "lstm: hidden 8: want 16 to 512"},
		{"lstm too many layers", func(s *Spec) { s.LSTM.Layers = 4 }, EncoderLSTM, "lstm: layers 4: want 1 to 3"},
		{"gru hidden too large", func(s *Spec) { s.GRU.Hidden = 1024 }, EncoderGRU, "gru: hidden 1024: want 16 to 512"},
		{"gru without its table", func(s *Spec) { s.GRU, s.LSTM = nil, &LSTM{} }, EncoderGRU, `encoder "gru": the [gru] table is missing`},
		{"unknown encoder", func(s *Spec) { s.Encoder = "gpt" }, EncoderMLP, `encoder "gpt": want one of "mlp", "cnn", "lstm", "gru", "transformer"`},
		{"transformer heads", func(s *Spec) { s.Transformer.Heads = 3 }, EncoderTransformer, "transformer: heads 3: want a divisor of width 64"},
		{"transformer context", func(s *Spec) { s.Transformer.Context = 0 }, EncoderTransformer, "transformer: context 0: want 2 to 128"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := validSpec(c.kind)
			c.edit(&s)
			err := s.Validate()
			if err == nil || !strings.Contains(err.Error(), c.errHas) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, c.errHas)
			}
		})
	}
}

func TestCNNOutputShape(t *testing.T) {
	c := CNN{Channels: []int{4, 8}, Kernels: []int{3, 3}, Strides: []int{2, 1}}
	got, err := c.OutputShape([]int{3, 11, 11})
	if err != nil || got != [3]int{8, 3, 3} {
		t.Fatalf("OutputShape = %v, %v; want [8 3 3] (the reference CNN's 72 features)", got, err)
	}
	// An image that does not fit and looks channels-last ([H, W, C], as
	// Gymnasium's are) gets a hint; a channels-first one does not.
	c = CNN{Channels: []int{16}, Kernels: []int{3}, Strides: []int{1}}
	for _, tc := range []struct {
		in   []int
		hint bool
	}{{[]int{8, 8, 2}, true}, {[]int{8, 2, 8}, false}} {
		_, err := c.OutputShape(tc.in)
		if err == nil {
			t.Fatalf("OutputShape(%v): no error", tc.in)
		}
		if got := strings.Contains(err.Error(), "looks channels-last"); got != tc.hint {
			t.Errorf("OutputShape(%v): %v; hint %v, want %v", tc.in, err, got, tc.hint)
		}
	}
}

func TestSpecRoundTripsThroughJSON(t *testing.T) {
	for _, k := range []EncoderKind{EncoderMLP, EncoderCNN, EncoderLSTM, EncoderGRU} {
		s := validSpec(k)
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back Spec
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(s, back) {
			t.Errorf("%s: %s decoded to %+v", k, b, back)
		}
	}
}

func TestFillDefaultsKeepsWhatIsSet(t *testing.T) {
	s := Spec{Encoder: EncoderMLP, MLP: &MLP{Hidden: []int{128}}, Head: MLP{Activation: Tanh}}
	s.FillDefaults()
	if !reflect.DeepEqual(s.MLP.Hidden, []int{128}) || s.MLP.Activation != ReLU || s.MLP.MaxNodes != 512 ||
		s.Head.Activation != Tanh || !reflect.DeepEqual(s.Head.Hidden, []int{64}) || s.Latent != DefaultLatent() {
		t.Fatalf("FillDefaults gave %+v, mlp %+v", s, *s.MLP)
	}
	if err := s.ValidateArchitecture(); err != nil {
		t.Fatal(err)
	}
}

func TestCloneSharesNothing(t *testing.T) {
	s := validSpec(EncoderCNN)
	c := s.Clone()
	c.CNN.Channels[0]++
	c.CNN.Kernels[0]++
	c.Head.Hidden[0]++
	c.Input[0]++
	if s.CNN.Channels[0] != 32 || s.CNN.Kernels[0] != 3 || s.Head.Hidden[0] != 64 || s.Input[0] != 3 {
		t.Fatalf("editing a clone changed the original: %+v", s)
	}
}

func TestEveryConfigFieldHasMatchingTOMLAndJSONTags(t *testing.T) {
	for _, v := range []any{Spec{}, MLP{}, CNN{}, LSTM{}, Latent{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			f := typ.Field(i)
			tt, jt := f.Tag.Get("toml"), f.Tag.Get("json")
			if tt == "" || tt != jt {
				t.Errorf("%s.%s: toml tag %q, json tag %q: want the same non-empty name", typ.Name(), f.Name, tt, jt)
			}
		}
	}
}

// TestMLPWithoutHiddenLayers: min_layers 0 allows an MLP (a head, most
// usefully) with no hidden layer; without it, the error says how to ask for one.
func TestMLPWithoutHiddenLayers(t *testing.T) {
	m := DefaultHead()
	m.Hidden, m.MinLayers = []int{}, 0
	if err := m.Validate(); err != nil {
		t.Fatalf("an MLP without hidden layers and min_layers 0: %v", err)
	}
	m.MinLayers = 1
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "min_layers = 0 allows none") {
		t.Fatalf("err = %v, want one that names min_layers = 0", err)
	}
	// FillDefaults cannot tell a zero min_layers from an absent one.
	s := Spec{Encoder: EncoderMLP, Head: MLP{Hidden: []int{}}}
	s.FillDefaults()
	if len(s.Head.Hidden) != 0 || s.Head.MinLayers != DefaultMinMLPLayers {
		t.Fatalf("FillDefaults gave head %+v, want the empty hidden kept and min_layers defaulted", s.Head)
	}
}
