package netconf

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestDictParamNamesAreStableAndReadable(t *testing.T) {
	s := smallSpec(EncoderDict, ReLU, false)
	s.Inputs[0].MLP.Hidden = []int{5}
	p, err := Zeros(s)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"encoder.pos.mlp.0.weight", "encoder.pos.mlp.0.bias", "latent.pos.weight", "latent.pos.bias",
		"encoder.img.cnn.0.weight", "encoder.img.cnn.0.bias", "latent.img.weight", "latent.img.bias",
		"encoder.flag.mlp.0.weight", "encoder.flag.mlp.0.bias", "latent.flag.weight", "latent.flag.bias",
		"head.0.weight", "head.0.bias", "out.weight", "out.bias"}
	if got := p.Names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("names\n%v\nwant\n%v", got, want)
	}
	shapes := map[string][]int{"latent.img.weight": {2, 2, 2, 3}, "encoder.img.cnn.0.weight": {2, 2, 3, 3},
		"head.0.weight": {9, 4}, "encoder.flag.mlp.0.weight": {1, 2}}
	for name, want := range shapes {
		if got := p.Tensor(name).Shape; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: shape %v, want %v", name, got, want)
		}
	}
	if got, want := s.String(), "dict{pos: mlp[5] ReLU, img: cnn[2] k[3] s[2] ReLU, flag: mlp[2] ReLU} latent 3 head[4] ReLU"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if s.LatentWidth() != 9 {
		t.Errorf("latent width %d, want 3 keys x 3", s.LatentWidth())
	}
}

func TestDictSpecValidation(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Spec)
		want string
	}{
		{"input not the keys' total", func(s *Spec) { s.Input = []int{20} }, "input [20]: a dict network wants [54]"},
		{"repeated key", func(s *Spec) { s.Inputs[2].Key = "pos" }, `key "pos" repeated`},
		{"dotted key", func(s *Spec) { s.Inputs[0].Key = "a.b" }, `key "a.b": tensors are named after keys`},
		{"lstm key", func(s *Spec) { s.Inputs[0].Encoder = EncoderLSTM }, `key "pos": encoder "lstm"`},
		{"image too small", func(s *Spec) { s.Inputs[1].CNN.Kernels = []int{7} }, `key "img": cnn layer 0: kernel 7`},
		{"missing mlp", func(s *Spec) { s.Inputs[2].MLP = nil }, `key "flag": encoder "mlp" without its mlp table`},
		{"flat key with an image input", func(s *Spec) { s.Inputs[0].Input = []int{1, 3} }, `key "pos": input [1 3]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := smallSpec(EncoderDict, ReLU, false)
			c.edit(&s)
			if err := s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, c.want)
			}
		})
	}
	if err := smallSpec(EncoderDict, ReLU, false).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestDictSpecCloneSharesNothing(t *testing.T) {
	s := smallSpec(EncoderDict, ReLU, false)
	c := s.Clone()
	c.Inputs[0].MLP.Hidden[0] = 7
	c.Inputs[1].CNN.Channels[0] = 7
	c.Inputs[1].Input[1] = 7
	c.Inputs[2].Key = "x"
	if !reflect.DeepEqual(s, smallSpec(EncoderDict, ReLU, false)) {
		t.Fatalf("editing the clone changed the original: %+v", s.Inputs)
	}
}

// TestDictTransferKeepsEachKeysRows: after the latent grows, each key's
// block of rows of the head's first weight holds that key's old rows, and
// the rows of new latent units are zero.
func TestDictTransferKeepsEachKeysRows(t *testing.T) {
	s0 := smallSpec(EncoderDict, ReLU, false)
	rng := rand.New(rand.NewPCG(5, 5))
	p0, _ := Init(s0, rng)
	s1 := s0.Clone()
	s1.Latent.Size = 5
	p1, err := Transfer(p0, s1, rng)
	if err != nil {
		t.Fatal(err)
	}
	w0, w1 := p0.Tensor("head.0.weight"), p1.Tensor("head.0.weight") // [9, 4] -> [15, 4]
	for k := range 3 {
		for r := range 5 {
			for c := range 4 {
				got := w1.Data[(k*5+r)*4+c]
				want := float32(0)
				if r < 3 {
					want = w0.Data[(k*3+r)*4+c]
				}
				if got != want {
					t.Fatalf("key %d row %d col %d: %v, want %v", k, r, c, got, want)
				}
			}
		}
	}
}
